/* Parameters are data (struct cbk_param tables): parsing, bounds checks and
 * --describe are all generated from the tables, never written per kernel. */
#ifndef CBK_PARAMS_H
#define CBK_PARAMS_H

#include "cbk.h"
#include "json.h"

/* Parses "1g", "4k", "512" (binary suffixes, as IOR and fio) and decimals
 * that come to whole bytes ("1.5g"; fio's strtoll reads that as 1g).
 * 0 on success, else one of (TOO_LARGE: well formed, past 2^64 - 1 bytes): */
enum { CBK_SIZE_INVALID = -1, CBK_SIZE_NOT_WHOLE = -2, CBK_SIZE_TOO_LARGE = -3 };
int cbk_parse_size(const char *text, uint64_t *out);

/* A finite real in decimal notation ("0.5", "1e-3"; not "0x10", " 1",
 * "inf"), as a real parameter is read: 0, or -1 for any other text. */
int cbk_parse_real(const char *text, double *out);

/* Fills `a` from defaults and argv ("--name=value" or "--flag"). Returns 0,
 * or writes one line to `why`. */
int cbk_parse_args(const struct cbk_kernel *k, int argc, char **argv,
                   struct cbk_args *a, char *why, size_t why_len);

/* Checks a parameter table against the struct it binds into: bindings
 * inside the struct, choices where they belong, no name twice. Returns 0,
 * or writes one line to `why`. */
int cbk_check_params(const struct cbk_param *table, size_t options_size, char *why, size_t why_len);

/* Whether --name was on the command line, not defaulted: for a rule
 * between two parameters that only a value the user chose can break. */
bool cbk_param_given(const struct cbk_args *a, const char *name);

/* "a,b,c": a choice parameter's names, for messages and --help. */
const char *cbk_format_choices(const struct cbk_param *p, char *buf, size_t len);

/* Writes the kernel's parameters as a JSON array under `key`. */
void cbk_describe_params(struct cbk_json *j, const char *key, const struct cbk_param *params);

/* Writes every parameter's value as given or defaulted. */
void cbk_write_args(struct cbk_json *j, const char *key, const struct cbk_args *a);

/* Formats bytes with a binary unit ("1 GiB", "32 KiB"), for messages. */
const char *cbk_format_size(uint64_t bytes, char *buf, size_t len);

/* Why a kernel's own comma list (--sizes, --phases) cannot be split as given,
 * into why, or 0: an empty item (",8", "8,,16", "8,"), which strtok_r would
 * skip in silence, or a list longer than the kernel's copy of it (max_len),
 * which snprintf would cut mid-item ("1048576" read as "1048"). */
int cbk_check_list(const char *name, const char *list, size_t max_len, char *why, size_t why_len);

#endif
