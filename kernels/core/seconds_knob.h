/* Seconds a person sets in cbk's environment: CBK_WAIT_NOTE_S (when a rank
 * says it waits) and CBK_FINALIZE_TIMEOUT_S (the bound on MPI_Finalize).
 * A value neither reader could take fell back to its default unsaid:
 * CBK_WAIT_NOTE_S=5s waited 30 s before its first note. */
#ifndef CBK_SECONDS_KNOB_H
#define CBK_SECONDS_KNOB_H

#include <stdbool.h>
#include <stddef.h>

/* *seconds: the variable's value (a decimal number >= 0, or "inf"), or
 * `unset` where it is unset or empty. false where it is set to anything
 * else (*seconds is then `unset`). */
bool cbk_seconds_knob(const char *name, double unset, double *seconds);

/* Why one of cbk's seconds knobs holds a value it cannot take, written
 * to why, naming the variable and the value as given; NULL when none does. */
const char *cbk_seconds_knobs_refusal(char *why, size_t len);

#endif
