/* Record output: every line cbk prints on stdout or stderr starts here,
 * so the schema number and the common keys are written in one place. */
#ifndef CBK_RECORD_H
#define CBK_RECORD_H

#include "cbk.h"
#include "json.h"

/* Opens a record of `type` ("measurement", "run", "error", ...) with the
 * schema, kernel and repetition keys; add fields, then cbk_json_end(). */
void cbk_record_begin(struct cbk_json *j, FILE *f, const struct cbk_ctx *c, const char *type);

void cbk_write_field(struct cbk_json *j, const struct cbk_field *f);

#endif
