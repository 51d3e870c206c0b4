/* Record output: every line cbk prints on stdout or stderr starts here,
 * so the schema number and the common keys are written in one place. */
#ifndef CBK_RECORD_H
#define CBK_RECORD_H

#include "cbk.h"
#include "json.h"

/* Opens a record of `type` ("measurement", "run", "error", ...) with the
 * schema, kernel and repetition keys; add fields, then cbk_json_end(). */
void cbk_record_begin(struct cbk_json *j, FILE *f, const struct cbk_ctx *c, const char *type);

/* Ends a record of c->out. A record that could not be written (a full
 * disk under `cbk ... > records.json`, a quota, EIO) is a lost result: the
 * run stops there, exit 1 with the reason, its files removed, never exit 0. */
void cbk_record_end(struct cbk_json *j, struct cbk_ctx *c);

/* Checks that the records' stream `out` (stdout) can be written: a run
 * started with it closed (`cbk ... >&-`) or open for reading only found out
 * at its first record, after the measurement (minutes of I/O). Call it
 * before MPI or anything else opens a file: a closed descriptor is held on
 * /dev/null from here on, so no file opened later takes it and is handed
 * the records. Returns 0, or a line in `why`. A pipe whose reader is gone
 * is not found here: SIGPIPE at the first record ends the run, its files
 * removed. */
int cbk_check_records_out(FILE *out, char *why, size_t why_len);

/* The `started` record, on rank 0 of a job of more than one rank, once
 * every rank is past MPI_Init (call it after a collective of them all): the
 * orchestrator bounds a launch's start by it (--start-timeout), as a rank
 * that dies before MPI_Init (a node's loader missing a library) holds the
 * others there for ever under MPICH's Hydra. */
void cbk_started_record(struct cbk_ctx *c);

void cbk_write_field(struct cbk_json *j, const struct cbk_field *f);

/* A kernel's phases in words (struct cbk_kernel's phase_words), as the
 * object `phase_words`: {} for a kernel that names none. In --describe and
 * in each run record, so a stored run reads in words without a cbk that
 * has its kernel. */
void cbk_write_phase_words(struct cbk_json *j, const struct cbk_kernel *k);

/* The one error record, on stderr: status (2 bad input, 1 failed
 * measurement), the rank the error concerns, one line a person can act on,
 * and optional facts (the offset of a wrong byte, ...). `c` may be NULL
 * before a kernel runs. */
void cbk_error_record(const struct cbk_ctx *c, int status, int rank, const char *message,
                      const struct cbk_field *facts, int nfacts);

#endif
