#include "params.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char *const type_names[] = {
    [CBK_SIZE] = "size", [CBK_INT] = "int", [CBK_REAL] = "real",
    [CBK_CHOICE] = "choice", [CBK_BOOL] = "bool", [CBK_STRING] = "string",
    [CBK_PATH] = "path", [CBK_CHOICE_LIST] = "choice-list",
};

int cbk_parse_size(const char *text, uint64_t *out)
{
    if (!text || !isdigit((unsigned char)*text))
        return CBK_SIZE_INVALID;
    errno = 0;
    char *end;
    unsigned long long n = strtoull(text, &end, 10);
    /* too many digits: said once the rest is known to be a size's */
    bool too_large = errno == ERANGE;
    /* decimals, as frac / scale: at most 9 digits, so the exact test below cannot overflow */
    uint64_t frac = 0, scale = 1;
    if (*end == '.') {
        end++;
        if (!isdigit((unsigned char)*end))
            return CBK_SIZE_INVALID;
        for (; isdigit((unsigned char)*end); end++) {
            if (scale == 1000000000ULL)
                return CBK_SIZE_INVALID;
            frac = frac * 10 + (uint64_t)(*end - '0');
            scale *= 10;
        }
    }
    unsigned shift = 0;
    switch (*end) {
    case 'k': case 'K': shift = 10; break;
    case 'm': case 'M': shift = 20; break;
    case 'g': case 'G': shift = 30; break;
    case 't': case 'T': shift = 40; break;
    case '\0': break;
    default: return CBK_SIZE_INVALID;
    }
    if (*end) {
        end++;
        /* accept "4KiB", "4kb" and "4k" alike */
        if (*end == 'i' || *end == 'I')
            end++;
        if (*end == 'b' || *end == 'B')
            end++;
        if (*end)
            return CBK_SIZE_INVALID;
    }
    if (too_large || (shift && n > (UINT64_MAX >> shift)))
        return CBK_SIZE_TOO_LARGE;
    /* frac / scale of 2^shift bytes must be whole bytes ("1.5g" is, "1.3" is not).
     * scale is 2^d 5^d: cancel the 2s against the shift first, then frac << rest
     * < 10^d 2^(40-d) <= 5^9 2^40 < 2^62. */
    unsigned rest = shift;
    while (rest && scale % 2 == 0) {
        scale /= 2;
        rest--;
    }
    uint64_t part = frac << rest;
    if (part % scale)
        return CBK_SIZE_NOT_WHOLE;
    uint64_t whole = (uint64_t)n << shift;
    if (whole > UINT64_MAX - part / scale)
        return CBK_SIZE_TOO_LARGE;
    *out = whole + part / scale;
    return 0;
}

/* parse_int and parse_real: 0, NOT_NUMBER, or PAST_TYPE for a well-formed
 * number its C type cannot hold (2^63, 1e400), which is out of range, not
 * malformed */
enum { NOT_NUMBER = -1, PAST_TYPE = -2 };

/* Decimal notation only: strtoll and strtod also take leading blanks, and
 * strtod hexadecimal ("0x10" ran 16 s of null while the store kept the
 * text, which no run of --seconds=16 matches). */
static bool decimal_text(const char *text, bool real)
{
    const char *allowed = real ? "0123456789+-.eE" : "0123456789+-";
    if (!*text || !strchr(real ? "0123456789+-." : "0123456789+-", *text))
        return false;
    return text[strspn(text, allowed)] == '\0';
}

static int parse_int(const char *text, int64_t *out)
{
    if (!text || !decimal_text(text, false))
        return NOT_NUMBER;
    errno = 0;
    char *end;
    long long n = strtoll(text, &end, 10);
    if (*end || end == text)
        return NOT_NUMBER;
    if (errno == ERANGE)
        return PAST_TYPE;
    if (errno)
        return NOT_NUMBER;
    *out = n;
    return 0;
}

static int parse_real(const char *text, double *out)
{
    if (!text || !decimal_text(text, true))
        return NOT_NUMBER;
    errno = 0;
    char *end;
    double d = strtod(text, &end);
    if (*end || end == text)
        return NOT_NUMBER;
    /* ERANGE below DBL_MIN is an underflow: the value, as near 0 as a double
     * goes, is judged by the bounds like any other */
    if (errno == ERANGE && isinf(d))
        return PAST_TYPE;
    if (!isfinite(d))
        return NOT_NUMBER; /* "inf", "nan" */
    *out = d;
    return 0;
}

int cbk_parse_real(const char *text, double *out)
{
    return parse_real(text, out) ? -1 : 0;
}

static int parse_flag(const char *text, bool *out)
{
    static const char *const yes[] = { "1", "true", "yes", "on" };
    static const char *const no[] = { "0", "false", "no", "off" };
    for (size_t i = 0; i < 4; i++) {
        if (!strcasecmp(text, yes[i])) { *out = true; return 0; }
        if (!strcasecmp(text, no[i])) { *out = false; return 0; }
    }
    return -1;
}

static int choice_index(const char *const *choices, const char *text)
{
    for (int i = 0; choices && choices[i]; i++)
        if (!strcmp(choices[i], text))
            return i;
    return -1;
}

const char *cbk_format_choices(const struct cbk_param *p, char *buf, size_t len)
{
    size_t n = 0;
    buf[0] = '\0';
    for (int i = 0; p->choices && p->choices[i] && n < len; i++)
        n += (size_t)snprintf(buf + n, len - n, "%s%s", i ? "," : "", p->choices[i]);
    return buf;
}

/* "pingpong,allreduce": distinct names of the choices, in the order given. */
static int convert_list(const struct cbk_param *p, const char *text, struct cbk_choice_list *l,
                        char *why, size_t why_len)
{
    char names[256];
    l->count = 0;
    for (const char *item = text;; item++) {
        size_t n = strcspn(item, ",");
        char name[64];
        snprintf(name, sizeof name, "%.*s", (int)(n < sizeof name ? n : sizeof name - 1), item);
        int i = n < sizeof name ? choice_index(p->choices, name) : -1;
        if (i < 0) {
            snprintf(why, why_len, "--%s=%s: '%.*s' is not one of: %s", p->name, text, (int)n, item,
                     cbk_format_choices(p, names, sizeof names));
            return -1;
        }
        for (int k = 0; k < l->count; k++)
            if (l->index[k] == i) {
                snprintf(why, why_len, "--%s=%s names %s twice", p->name, text, name);
                return -1;
            }
        if (l->count == CBK_MAX_CHOICE_LIST) {
            snprintf(why, why_len, "--%s=%s lists more than %d values", p->name, text, CBK_MAX_CHOICE_LIST);
            return -1;
        }
        l->index[l->count++] = i;
        item += n;
        if (!*item)
            return 0;
    }
}

/* "--NAME=TEXT is out of range [LO, HI] (UNIT)": the unit where the
 * parameter has one, so "[0, 86400]" is read as seconds, not guessed. */
static void out_of_range(const struct cbk_param *p, const char *text, const char *lo, const char *hi, char *why,
                         size_t why_len)
{
    snprintf(why, why_len, "--%s=%s is out of range [%s, %s]%s%s%s", p->name, text, lo, hi, p->unit ? " (" : "",
             p->unit ? p->unit : "", p->unit ? ")" : "");
}

/* Converts one value and checks its bounds. */
static int convert(const struct cbk_param *p, const char *text, union cbk_value *v,
                   char *why, size_t why_len)
{
    switch (p->type) {
    case CBK_SIZE: {
        uint64_t lo = 0, hi = UINT64_MAX;
        int bad = cbk_parse_size(text, &v->size);
        if (bad == CBK_SIZE_TOO_LARGE) {
            out_of_range(p, text, p->min ? p->min : "0", p->max ? p->max : "18446744073709551615", why, why_len);
            return -1;
        }
        if (bad == CBK_SIZE_NOT_WHOLE) {
            snprintf(why, why_len, "--%s=%s is not a whole number of bytes", p->name, text);
            return -1;
        }
        if (bad) {
            snprintf(why, why_len, "--%s=%s is not a size (use a number with an optional k, m, g or t suffix, "
                     "e.g. 4m or 1.5g)", p->name, text);
            return -1;
        }
        if ((p->min && !cbk_parse_size(p->min, &lo) && v->size < lo) ||
            (p->max && !cbk_parse_size(p->max, &hi) && v->size > hi)) {
            out_of_range(p, text, p->min ? p->min : "0", p->max ? p->max : "unbounded", why, why_len);
            return -1;
        }
        return 0;
    }
    case CBK_INT: {
        int64_t lo, hi;
        int bad = parse_int(text, &v->integer);
        if (bad == PAST_TYPE) {
            out_of_range(p, text, p->min ? p->min : "-9223372036854775808", p->max ? p->max : "9223372036854775807",
                         why, why_len);
            return -1;
        }
        if (bad) {
            snprintf(why, why_len, "--%s=%s is not an integer", p->name, text);
            return -1;
        }
        if ((p->min && !parse_int(p->min, &lo) && v->integer < lo) ||
            (p->max && !parse_int(p->max, &hi) && v->integer > hi)) {
            out_of_range(p, text, p->min ? p->min : "-inf", p->max ? p->max : "inf", why, why_len);
            return -1;
        }
        return 0;
    }
    case CBK_REAL: {
        double lo, hi;
        int bad = parse_real(text, &v->real);
        if (bad == PAST_TYPE) {
            out_of_range(p, text, p->min ? p->min : "-1.7976931348623157e308",
                         p->max ? p->max : "1.7976931348623157e308", why, why_len);
            return -1;
        }
        if (bad) {
            snprintf(why, why_len, "--%s=%s is not a number", p->name, text);
            return -1;
        }
        if ((p->min && !parse_real(p->min, &lo) && v->real < lo) ||
            (p->max && !parse_real(p->max, &hi) && v->real > hi)) {
            out_of_range(p, text, p->min ? p->min : "-inf", p->max ? p->max : "inf", why, why_len);
            return -1;
        }
        return 0;
    }
    case CBK_BOOL:
        if (parse_flag(text, &v->flag)) {
            snprintf(why, why_len, "--%s=%s is not a boolean (true or false)", p->name, text);
            return -1;
        }
        return 0;
    case CBK_CHOICE: {
        char names[256];
        v->choice = choice_index(p->choices, text);
        if (v->choice < 0) {
            snprintf(why, why_len, "--%s=%s is not one of: %s", p->name, text,
                     cbk_format_choices(p, names, sizeof names));
            return -1;
        }
        return 0;
    }
    case CBK_CHOICE_LIST:
        return convert_list(p, text, &v->list, why, why_len);
    case CBK_STRING:
    case CBK_PATH:
        if (!*text) {
            snprintf(why, why_len, "--%s is empty", p->name);
            return -1;
        }
        v->text = text;
        return 0;
    }
    return -1;
}

static size_t value_bytes(enum cbk_param_type t)
{
    switch (t) {
    case CBK_SIZE: return sizeof(uint64_t);
    case CBK_INT: return sizeof(int64_t);
    case CBK_REAL: return sizeof(double);
    case CBK_CHOICE: return sizeof(int);
    case CBK_CHOICE_LIST: return sizeof(struct cbk_choice_list);
    case CBK_BOOL: return sizeof(bool);
    default: return sizeof(const char *);
    }
}

/* Copies a converted value into its bound field (the binding macros made
 * sure at compile time that the field has this type). */
static void store(const struct cbk_param *p, const union cbk_value *v, unsigned char *base)
{
    unsigned char *field = base + p->offset;
    switch (p->type) {
    case CBK_SIZE: memcpy(field, &v->size, sizeof v->size); break;
    case CBK_INT: memcpy(field, &v->integer, sizeof v->integer); break;
    case CBK_REAL: memcpy(field, &v->real, sizeof v->real); break;
    case CBK_CHOICE: memcpy(field, &v->choice, sizeof v->choice); break;
    case CBK_CHOICE_LIST: memcpy(field, &v->list, sizeof v->list); break;
    case CBK_BOOL: memcpy(field, &v->flag, sizeof v->flag); break;
    default: {
        const char *text = p->keyword && !strcmp(v->text, p->keyword) ? NULL : v->text;
        memcpy(field, &text, sizeof text);
        break;
    }
    }
}

int cbk_check_params(const struct cbk_param *table, size_t options_size, char *why, size_t why_len)
{
    for (const struct cbk_param *p = table; p && p->name; p++) {
        if (p->offset + value_bytes(p->type) > options_size) {
            snprintf(why, why_len, "parameter --%s is bound outside its options struct", p->name);
            return -1;
        }
        if (p->role && strcmp(p->role, CBK_ROLE_WHERE)) {
            snprintf(why, why_len, "parameter --%s: role %s is not one of: " CBK_ROLE_WHERE, p->name, p->role);
            return -1;
        }
        if (p->keyword && p->type != CBK_STRING) {
            snprintf(why, why_len, "parameter --%s: only a string parameter has a keyword", p->name);
            return -1;
        }
        if ((p->type == CBK_CHOICE || p->type == CBK_CHOICE_LIST) != (p->choices != NULL) || (p->choices && !p->choices[0])) {
            snprintf(why, why_len, "parameter --%s: choices belong to choice parameters, and at least one", p->name);
            return -1;
        }
        for (const struct cbk_param *q = table; q != p; q++)
            if (!strcmp(q->name, p->name)) {
                snprintf(why, why_len, "parameter --%s is declared twice", p->name);
                return -1;
            }
    }
    return 0;
}

bool cbk_param_given(const struct cbk_args *a, const char *name)
{
    for (int s = 0; s < a->count; s++)
        if (!strcmp(a->param[s]->name, name))
            return a->text[s] != a->param[s]->default_value; /* add_table's pointer until an argument replaces it */
    return false;
}

static int add_table(struct cbk_args *a, const struct cbk_param *table)
{
    for (const struct cbk_param *p = table; p && p->name; p++) {
        if (a->count == CBK_MAX_PARAMS)
            return -1;
        a->param[a->count] = p;
        a->text[a->count] = p->default_value;
        a->count++;
    }
    return 0;
}

int cbk_parse_args(const struct cbk_kernel *k, int argc, char **argv,
                   struct cbk_args *a, char *why, size_t why_len)
{
    memset(a, 0, sizeof *a);
    a->kernel = k;
    char bad[256];
    if (k->options_size > sizeof a->option_bytes ||
        cbk_check_params(k->params, k->options_size, bad, sizeof bad) ||
        cbk_check_params(cbk_common_params, sizeof a->common, bad, sizeof bad)) {
        /* a kernel's table is wrong: a bug in cbk, caught at start-up on every path */
        fprintf(stderr, "cbk internal error: kernel %s: %s\n", k->name,
                k->options_size > sizeof a->option_bytes ? "options struct larger than CBK_MAX_OPTION_BYTES" : bad);
        abort();
    }
    int own = 0;
    while (k->params && k->params[own].name)
        own++;
    if (add_table(a, k->params) || add_table(a, cbk_common_params)) {
        snprintf(why, why_len, "kernel %s has more than %d parameters", k->name, CBK_MAX_PARAMS);
        return -1;
    }
    bool given[CBK_MAX_PARAMS] = {false};
    for (int i = 0; i < argc; i++) {
        const char *arg = argv[i];
        if (strncmp(arg, "--", 2) || !arg[2]) {
            snprintf(why, why_len, "unexpected argument '%s' (parameters are --name=value)", arg);
            return -1;
        }
        const char *name = arg + 2;
        const char *eq = strchr(name, '=');
        size_t name_len = eq ? (size_t)(eq - name) : strlen(name);
        int slot = -1;
        for (int s = 0; s < a->count; s++)
            if (strlen(a->param[s]->name) == name_len && !strncmp(a->param[s]->name, name, name_len))
                slot = s;
        if (slot < 0) {
            snprintf(why, why_len, "kernel %s has no parameter --%.*s (see cbk --describe)",
                     k->name, (int)name_len, name);
            return -1;
        }
        if (!eq && a->param[slot]->type != CBK_BOOL) {
            snprintf(why, why_len, "--%s needs a value (--%s=VALUE)", a->param[slot]->name, a->param[slot]->name);
            return -1;
        }
        /* the last one winning in silence ran what the user did not read last (--file-size=1m ... --file-size=1g) */
        if (given[slot]) {
            snprintf(why, why_len, "--%s given twice (%s, then %s): give it once",
                     a->param[slot]->name, a->text[slot], eq ? eq + 1 : "true");
            return -1;
        }
        given[slot] = true;
        a->text[slot] = eq ? eq + 1 : "true";
    }
    for (int s = 0; s < a->count; s++) {
        if (!a->text[s]) {
            snprintf(why, why_len, "--%s is required", a->param[s]->name);
            return -1;
        }
        if (convert(a->param[s], a->text[s], &a->value[s], why, why_len))
            return -1;
        store(a->param[s], &a->value[s], s < own ? a->option_bytes : (unsigned char *)&a->common);
    }
    return 0;
}

void cbk_describe_params(struct cbk_json *j, const char *key, const struct cbk_param *params)
{
    cbk_json_array(j, key);
    for (const struct cbk_param *p = params; p && p->name; p++) {
        cbk_json_object(j, NULL);
        cbk_json_text(j, "name", p->name);
        cbk_json_text(j, "type", type_names[p->type]);
        cbk_json_text(j, "default", p->default_value);
        cbk_json_text(j, "unit", p->unit);
        if (p->choices) {
            cbk_json_array(j, "choices");
            for (int i = 0; p->choices[i]; i++)
                cbk_json_text(j, NULL, p->choices[i]);
            cbk_json_close(j);
        } else {
            cbk_json_null(j, "choices");
        }
        cbk_json_text(j, "min", p->min);
        cbk_json_text(j, "max", p->max);
        cbk_json_text(j, "help", p->help);
        cbk_json_text(j, "role", p->role ? p->role : p->type == CBK_PATH ? CBK_ROLE_WHERE : NULL);
        cbk_json_text(j, "before", p->before);
        cbk_json_close(j);
    }
    cbk_json_close(j);
}

void cbk_write_args(struct cbk_json *j, const char *key, const struct cbk_args *a)
{
    cbk_json_object(j, key);
    for (int s = 0; s < a->count; s++) {
        const struct cbk_param *p = a->param[s];
        const union cbk_value *v = &a->value[s];
        switch (p->type) {
        case CBK_SIZE: cbk_json_u64(j, p->name, v->size); break;
        case CBK_INT: cbk_json_i64(j, p->name, v->integer); break;
        case CBK_REAL: cbk_json_real(j, p->name, v->real); break;
        case CBK_BOOL: cbk_json_bool(j, p->name, v->flag); break;
        case CBK_CHOICE: cbk_json_text(j, p->name, p->choices[v->choice]); break;
        case CBK_CHOICE_LIST: {
            /* the names, normalised: "pingpong,allreduce" */
            char buf[1024];
            size_t n = 0;
            buf[0] = '\0';
            for (int i = 0; i < v->list.count && n < sizeof buf; i++)
                n += (size_t)snprintf(buf + n, sizeof buf - n, "%s%s", i ? "," : "", p->choices[v->list.index[i]]);
            cbk_json_text(j, p->name, buf);
            break;
        }
        default: cbk_json_text(j, p->name, v->text); break;
        }
    }
    cbk_json_close(j);
}

const char *cbk_format_size(uint64_t bytes, char *buf, size_t len)
{
    static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB" };
    int u = 0;
    double v = (double)bytes;
    while (v >= 1024 && u < 4 && fmod(v, 1024) == 0) {
        v /= 1024;
        u++;
    }
    snprintf(buf, len, "%.0f %s", v, units[u]);
    return buf;
}

int cbk_check_list(const char *name, const char *list, size_t max_len, char *why, size_t why_len)
{
    size_t n = strlen(list);
    if (n >= max_len) {
        snprintf(why, why_len, "--%s is %zu characters long, more than the %zu it may have", name, n, max_len - 1);
        return -1;
    }
    if (n == 0 || list[0] == ',' || list[n - 1] == ',' || strstr(list, ",,")) {
        snprintf(why, why_len, "--%s=%s has an empty item (a comma too many?)", name, list);
        return -1;
    }
    return 0;
}
