/* A strict JSON-lines writer: every string escaped, doubles printed with
 * %.17g, non-finite values as null. One object per line. */
#ifndef CBK_JSON_H
#define CBK_JSON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define CBK_JSON_DEPTH 8

struct cbk_json {
    FILE *f;
    int depth;
    bool need_comma[CBK_JSON_DEPTH];
    char closer[CBK_JSON_DEPTH]; /* '}' or ']' for each open level */
};

void cbk_json_begin(struct cbk_json *j, FILE *f);  /* opens the top object */
int cbk_json_end(struct cbk_json *j);              /* closes it, newline, flush: 0, or the errno of a failed write */
void cbk_json_key(struct cbk_json *j, const char *key);
void cbk_json_object(struct cbk_json *j, const char *key); /* key NULL inside arrays */
void cbk_json_array(struct cbk_json *j, const char *key);
void cbk_json_close(struct cbk_json *j);           /* closes object or array */
void cbk_json_text(struct cbk_json *j, const char *key, const char *value); /* NULL -> null */
void cbk_json_u64(struct cbk_json *j, const char *key, uint64_t value);
void cbk_json_i64(struct cbk_json *j, const char *key, int64_t value);
void cbk_json_real(struct cbk_json *j, const char *key, double value);
void cbk_json_bool(struct cbk_json *j, const char *key, bool value);
void cbk_json_null(struct cbk_json *j, const char *key);

/* Length of the valid UTF-8 sequence at p (1 for ASCII), 0 if invalid. */
size_t cbk_utf8_sequence(const unsigned char *p);

/* Cuts a multibyte character a truncation (snprintf) split at the end of s. */
void cbk_utf8_trim(char *s);

#endif
