/* See seconds_knob.h. */
#include "seconds_knob.h"

#include "params.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const KNOBS[] = { "CBK_WAIT_NOTE_S", "CBK_FINALIZE_TIMEOUT_S" };

bool cbk_seconds_knob(const char *name, double unset, double *seconds)
{
    const char *text = getenv(name);
    double v;
    *seconds = unset;
    if (!text || !*text)
        return true;
    if (!strcmp(text, "inf")) {   /* no bound, no note: as the docs have it */
        *seconds = INFINITY;
        return true;
    }
    if (cbk_parse_real(text, &v) || !(v >= 0))
        return false;
    *seconds = v;
    return true;
}

const char *cbk_seconds_knobs_refusal(char *why, size_t len)
{
    for (size_t i = 0; i < sizeof KNOBS / sizeof *KNOBS; i++) {
        double ignored;
        if (!cbk_seconds_knob(KNOBS[i], 0, &ignored)) {
            snprintf(why, len, "%s=%.200s is no number of seconds (a decimal number of 0 or more, or inf)", KNOBS[i],
                     getenv(KNOBS[i]));
            return why;
        }
    }
    return NULL;
}
