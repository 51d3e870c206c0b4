/* The null kernel does no work: it reports a phase of a chosen length so
 * the Python side (runner, store, statistics, reports) can be tested fast
 * and deterministically, as IOR's DUMMY backend tests IOR's driver. */
#include "../core/cbk.h"

#include <time.h>

struct null_options {
    double seconds;
    uint64_t bytes;
    int64_t fail_at;
};

static const struct cbk_param params[] = {
    { .name = "seconds", CBK_AT_REAL(struct null_options, seconds), .default_value = "0", .unit = "s", .min = "0", .max = "3600",
      .help = "time each repetition sleeps inside its timed phase" },
    /* at most what the store's signed 64-bit bytes column holds: 16777215t was stored as a traceback */
    { .name = "bytes", CBK_AT_SIZE(struct null_options, bytes), .default_value = "1m", .unit = "bytes",
      .max = "9223372036854775807", .help = "bytes the phase claims to have moved" },
    { .name = "fail-at", CBK_AT_INT(struct null_options, fail_at), .default_value = "-1", .unit = "repetition",
      .help = "repetition that fails with exit status 1 (-1: none), to test error handling" },
    { 0 },
};

static int run(const struct cbk_args *a, struct cbk_ctx *c)
{
    const struct null_options *o = cbk_options(a);
    if (o->fail_at == c->repetition)
        cbk_fail(c, CBK_EXIT_FAILED, "null: failing at repetition %d as asked", c->repetition);
    double s = o->seconds;
    struct cbk_phase p = { .phase = "null", .bytes = o->bytes, .ops = 1 };
    p.begin_s = cbk_now(c);
    struct timespec ts = { (time_t)s, (long)((s - (double)(time_t)s) * 1e9) };
    while (nanosleep(&ts, &ts))
        ;
    p.end_s = cbk_now(c);
    cbk_report(c, &p);
    return 0;
}

const struct cbk_kernel cbk_kernel_null = {
    .name = "null",
    .summary = "does nothing for a given time; tests the harness",
    .family = CBK_FAMILY_DEBUG,
    .flags = CBK_PARALLEL,
    .params = params,
    .options_size = sizeof(struct null_options),
    .run = run,
};
