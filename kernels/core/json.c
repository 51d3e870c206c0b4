#include "json.h"

#include <errno.h>
#include <math.h>
#include <string.h>

static void separator(struct cbk_json *j)
{
    if (j->need_comma[j->depth])
        fputc(',', j->f);
    j->need_comma[j->depth] = true;
}

size_t cbk_utf8_sequence(const unsigned char *p)
{
    unsigned c = p[0];
    size_t n;
    unsigned min;
    if (c < 0x80)
        return 1;
    if (c >= 0xc2 && c <= 0xdf)
        n = 2, min = 0x80;
    else if (c >= 0xe0 && c <= 0xef)
        n = 3, min = 0x800;
    else if (c >= 0xf0 && c <= 0xf4)
        n = 4, min = 0x10000;
    else
        return 0;
    unsigned cp = c & (0x3fu >> (n - 1));
    for (size_t i = 1; i < n; i++) {
        if ((p[i] & 0xc0) != 0x80) /* also stops at the terminating NUL */
            return 0;
        cp = cp << 6 | (p[i] & 0x3fu);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    return n;
}

void cbk_utf8_trim(char *s)
{
    size_t len = strlen(s), i = 0, keep = 0;
    while (i < len) {
        size_t n = cbk_utf8_sequence((const unsigned char *)s + i);
        if (!n) { /* an invalid byte stays (string() escapes it), a cut sequence at the end goes */
            size_t lead = ((unsigned char)s[i] & 0xc0) == 0xc0 ? 1 : 0;
            if (lead && len - i < 4)
                break;
            n = 1;
        }
        i += n;
        keep = i;
    }
    s[keep] = '\0';
}

/* Valid UTF-8 is copied; every other byte (a non-UTF-8 file name, say)
 * becomes the lone surrogate \udcXX, Python's surrogateescape convention,
 * so os.fsencode() of the parsed string gives back the original bytes. */
static void string(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        size_t n = cbk_utf8_sequence(p);
        if (n == 0) {
            fprintf(f, "\\u%04x", 0xdc00u | *p);
            continue;
        }
        if (n > 1) {
            fwrite(p, 1, n, f);
            p += n - 1;
            continue;
        }
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

int cbk_json_end(struct cbk_json *j)
{
    fputs("}\n", j->f);
    /* stdio keeps no errno: a failed flush's is only known here, and a
     * buffer that failed to go is dropped, so a later flush says nothing */
    if (fflush(j->f) == 0 && !ferror(j->f))
        return 0;
    return errno ? errno : EIO;
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
