#include "json.h"

#include <math.h>

static void separator(struct cbk_json *j)
{
    if (j->need_comma[j->depth])
        fputc(',', j->f);
    j->need_comma[j->depth] = true;
}

static void string(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        switch (*p) {
        case '"': fputs("\\\"", f); break;
        case '\\': fputs("\\\\", f); break;
        case '\n': fputs("\\n", f); break;
        case '\r': fputs("\\r", f); break;
        case '\t': fputs("\\t", f); break;
        default:
            if (*p < 0x20)
                fprintf(f, "\\u%04x", *p);
            else
                fputc(*p, f);
        }
    }
    fputc('"', f);
}

void cbk_json_key(struct cbk_json *j, const char *key)
{
    separator(j);
    if (key) {
        string(j->f, key);
        fputc(':', j->f);
    }
}

void cbk_json_begin(struct cbk_json *j, FILE *f)
{
    j->f = f;
    j->depth = 0;
    j->need_comma[0] = false;
    fputc('{', f);
}

void cbk_json_end(struct cbk_json *j)
{
    fputs("}\n", j->f);
    fflush(j->f);
}

static void open_nested(struct cbk_json *j, const char *key, char c)
{
    cbk_json_key(j, key);
    fputc(c, j->f);
    if (j->depth + 1 < CBK_JSON_DEPTH)
        j->depth++;
    j->need_comma[j->depth] = false;
    j->closer[j->depth] = c == '{' ? '}' : ']';
}

void cbk_json_object(struct cbk_json *j, const char *key) { open_nested(j, key, '{'); }
void cbk_json_array(struct cbk_json *j, const char *key) { open_nested(j, key, '['); }

void cbk_json_close(struct cbk_json *j)
{
    fputc(j->closer[j->depth], j->f);
    if (j->depth > 0)
        j->depth--;
}

void cbk_json_text(struct cbk_json *j, const char *key, const char *value)
{
    cbk_json_key(j, key);
    if (value)
        string(j->f, value);
    else
        fputs("null", j->f);
}

void cbk_json_u64(struct cbk_json *j, const char *key, uint64_t value)
{
    cbk_json_key(j, key);
    fprintf(j->f, "%llu", (unsigned long long)value);
}

void cbk_json_i64(struct cbk_json *j, const char *key, int64_t value)
{
    cbk_json_key(j, key);
    fprintf(j->f, "%lld", (long long)value);
}

void cbk_json_real(struct cbk_json *j, const char *key, double value)
{
    cbk_json_key(j, key);
    if (isfinite(value))
        fprintf(j->f, "%.17g", value);
    else
        fputs("null", j->f);
}

void cbk_json_bool(struct cbk_json *j, const char *key, bool value)
{
    cbk_json_key(j, key);
    fputs(value ? "true" : "false", j->f);
}

void cbk_json_null(struct cbk_json *j, const char *key)
{
    cbk_json_key(j, key);
    fputs("null", j->f);
}
