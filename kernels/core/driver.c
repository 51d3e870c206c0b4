/* The driver owns everything around a kernel's timed work: validation on
 * every rank, setup, the repetition loop with its barrier and time origin,
 * reduction over ranks, the records, and the final run description. */
#include "build_features.h"
#include "cbk.h"

#include "cleanup.h"
#include "histogram.h"
#include "json.h"
#include "mpich_slab.h"
#include "neighbours.h"
#include "params.h"
#include "record.h"
#include "test_stop.h"
#include "timer.h"
#ifdef CBK_HAVE_MPI
#include "patient_wait.h"
#endif

#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>


const struct cbk_param cbk_common_params[] = {
    { .name = "repetitions", CBK_AT_INT(struct cbk_common_options, repetitions), .default_value = "1", .unit = "count", .min = "1",
      .max = "100000", .help = "times the measurement is repeated in this invocation; each repetition is reported" },
    { 0 },
};

double cbk_now(const struct cbk_ctx *c) { return cbk_clock() - c->epoch_s; }

void cbk_barrier(struct cbk_ctx *c)
{
#ifdef CBK_HAVE_MPI
    if (c->size > 1)
        MPI_Barrier(c->comm);
#else
    (void)c;
#endif
}

int cbk_all_max_int(struct cbk_ctx *c, int v)
{
#ifdef CBK_HAVE_MPI
    if (c->size > 1) {
        int out;
        MPI_Allreduce(&v, &out, 1, MPI_INT, MPI_MAX, c->comm);
        return out;
    }
#else
    (void)c;
#endif
    return v;
}

void cbk_reduce_histogram(struct cbk_ctx *c, const struct cbk_histogram *h, struct cbk_histogram *sum)
{
#ifdef CBK_HAVE_MPI
    if (c->size > 1) {
        MPI_Reduce(h->counts, c->rank == 0 ? sum->counts : NULL, (int)h->buckets, MPI_UINT64_T, MPI_SUM, 0, c->comm);
        uint64_t counts[2] = { h->count, h->clamped }, total[2] = { 0, 0 };
        MPI_Reduce(counts, total, 2, MPI_UINT64_T, MPI_SUM, 0, c->comm);
        /* an empty histogram's min_seen says nothing. As signed 64-bit values: Debian's
         * MPICH 4.0.2 compares MPI_UINT64_T as signed in MPI_MIN/MPI_MAX, so an
         * UINT64_MAX "none" won every minimum there (tcp pairs rr: the servers' empty
         * histograms made every merged percentile the maximum); nanoseconds stay
         * far below 2^63 */
        int64_t lo = h->count ? (int64_t)h->min_seen : INT64_MAX, hi = (int64_t)h->max_seen, lo_all = 0, hi_all = 0;
        double total_sum = 0;
        MPI_Reduce(&lo, &lo_all, 1, MPI_INT64_T, MPI_MIN, 0, c->comm);
        MPI_Reduce(&hi, &hi_all, 1, MPI_INT64_T, MPI_MAX, 0, c->comm);
        MPI_Reduce(&h->sum, &total_sum, 1, MPI_DOUBLE, MPI_SUM, 0, c->comm);
        if (c->rank == 0) {
            sum->count = total[0];
            sum->clamped = total[1];
            sum->min_seen = lo_all == INT64_MAX ? UINT64_MAX : (uint64_t)lo_all;
            sum->max_seen = (uint64_t)hi_all;
            sum->sum = total_sum;
        }
        return;
    }
#else
    (void)c;
#endif
    cbk_histogram_reset(sum);
    cbk_histogram_merge(sum, h);
}

/* The driver's own waits, between a kernel's (patient_wait.h): a rank
 * stopped before the agreement on validation or before a repetition's
 * barrier (a node frozen) is named in the others' notes, as in a kernel's
 * waits; MPI's own calls left them silent until the step's time limit.
 * Never in a timed region. */

/* The lowest rank whose validation failed (c->size: none), on every rank. */
static int agree_first_bad(struct cbk_ctx *c, int bad)
{
    int mine = bad ? c->rank : c->size;
    cbk_test_stop_at(c->rank, "validation");
#ifdef CBK_HAVE_MPI
    if (c->waits_on) {
        char what[sizeof c->waits_on->every_rank + 96];
        snprintf(what, sizeof what, "the agreement on validation, a collective of %s: a rank that does not say so holds it",
                 c->waits_on->every_rank);
        int first = mine;
        MPI_Request req;
        MPI_Iallreduce(&mine, &first, 1, MPI_INT, MPI_MIN, c->comm, &req);
        cbk_patient_wait_in(&req, what, c->waits_on);
        return first;
    }
#endif
    return -cbk_all_max_int(c, -mine);
}

/* Before each repetition, outside any timed region: the patient barrier
 * (each rank's long wait names the peer of its round; log2 of the ranks in
 * rounds), then MPI's own, whose tight release stays each rank's time
 * origin (a patient wait's sleeps let ranks go up to 1 ms apart). */
static void repetition_barrier(struct cbk_ctx *c)
{
#ifdef CBK_HAVE_MPI
    if (c->waits_on)
        cbk_patient_barrier(c->comm, c->waits_on);
#endif
    cbk_barrier(c);
}

/* The repetition's time origin: the moment the barrier before it released
 * this node's ranks, the earliest of their clock reads (a node's ranks read
 * one CLOCK_MONOTONIC). Each rank's own read was its origin: a rank
 * descheduled as it left the barrier (milliseconds on a loaded node) read a
 * later one, its begin looked that much earlier, and every span across ranks
 * (latest end minus earliest begin: pario's and metadata's rates) that much
 * longer: a 1000-item stat phase of 1 ms read as 3 beside mdtest
 * (bench/mdtest_vs_mdtest, 2026-12-07). A node's ranks share its origin; the
 * nodes keep their own, their clocks being other clocks.
 * CBK_TEST_LATE_ORIGIN=RANK:SECONDS (tests): that rank reads its clock that
 * long after the barrier, as a descheduled rank does. */
static double repetition_origin(const struct cbk_ctx *c)
{
    const char *late = getenv("CBK_TEST_LATE_ORIGIN");
    int late_rank;
    double late_s;
    if (late && sscanf(late, "%d:%lf", &late_rank, &late_s) == 2 && late_rank == c->rank && isfinite(late_s))
        cbk_sleep_s(late_s);
    double origin = cbk_clock();
#ifdef CBK_HAVE_MPI
    if (c->size > 1 && c->node_size > 1)
        MPI_Allreduce(MPI_IN_PLACE, &origin, 1, MPI_DOUBLE, MPI_MIN, c->node_comm);
#endif
    return origin;
}

_Noreturn void cbk_fail(struct cbk_ctx *c, int status, const char *fmt, ...)
{
    char msg[CBK_MESSAGE_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    cbk_error_record(c, status, c ? c->rank : 0, msg, NULL, 0);
    cbk_cleanup_run();
#ifdef CBK_HAVE_MPI
    /* One rank failing alone must not leave the others waiting in a
     * collective: abort the job. */
    if (c && c->size > 1) {
        cbk_mpich_remove_slabs();
        MPI_Abort(c->comm, status);
    }
    int up = 0;
    MPI_Initialized(&up);
    if (up)
        MPI_Finalize();
#endif
    exit(status);
}

/* Keys cbk_report() writes itself: a kernel field of the same name would
 * make a record with a duplicate key (a strict parser rejects it, most keep
 * the last), so it is a bug in the kernel, caught on its first run. */
static const char *const driver_keys[] = {
    "schema", "type", "kernel", "repetition", "phase", "mode", "sweep_key", "qualifiers", "ranks", "bytes", "ops", "seconds",
    "rate", "rate_unit", "rate_decimal", "rate_decimal_unit", "ops_per_s", "rank_seconds_min",
    "rank_seconds_max", "slowest_rank", "warnings", "t_avg_us", "t_min_us", "t_max_us", "median_us", "p99_us",
    "iteration_min_us", "messages_per_s", "bandwidth_mib_s", "bandwidth_mb_s", NULL,
};

static _Noreturn void duplicate_key(const char *key)
{
    fprintf(stderr, "cbk internal error: a measurement record would hold the key %s twice\n", key);
    abort();
}

void cbk_phase_field(struct cbk_phase *p, struct cbk_field f)
{
    for (const char *const *k = driver_keys; *k; k++)
        if (!strcmp(*k, f.key))
            duplicate_key(f.key);
    for (int i = 0; i < p->fields; i++)
        if (!strcmp(p->field[i].key, f.key))
            duplicate_key(f.key);
    if (p->fields < CBK_MAX_FIELDS)
        p->field[p->fields++] = f;
}

void cbk_phase_qualifier(struct cbk_phase *p, const char *key, const char *value)
{
    cbk_phase_field(p, CBK_TEXT(key, value));
    if (p->qualifiers < CBK_MAX_QUALIFIERS)
        p->qualifier[p->qualifiers++] = key;
}

void cbk_phase_warn(struct cbk_phase *p, const char *warning)
{
    if (p->warnings < CBK_MAX_WARNINGS)
        p->warning[p->warnings++] = warning;
}

struct reduced {
    uint64_t bytes, ops;
    double value, begin_s, end_s, rank_min_s, rank_max_s;
    int slowest_rank;
};

static struct reduced reduce_phase(struct cbk_ctx *c, const struct cbk_phase *p)
{
    double own = p->end_s - p->begin_s;
    struct reduced r = { p->bytes, p->ops, p->value, p->begin_s, p->end_s, own, own, c->rank };
#ifdef CBK_HAVE_MPI
    if (c->size > 1) {
        uint64_t counts[2] = { p->bytes, p->ops }, sums[2];
        MPI_Reduce(counts, sums, 2, MPI_UINT64_T, MPI_SUM, 0, c->comm);
        MPI_Reduce(&p->value, &r.value, 1, MPI_DOUBLE, MPI_SUM, 0, c->comm);
        MPI_Reduce(&p->begin_s, &r.begin_s, 1, MPI_DOUBLE, MPI_MIN, 0, c->comm);
        MPI_Reduce(&p->end_s, &r.end_s, 1, MPI_DOUBLE, MPI_MAX, 0, c->comm);
        struct { double v; int rank; } in = { own, c->rank }, lo, hi;
        MPI_Reduce(&in, &lo, 1, MPI_DOUBLE_INT, MPI_MINLOC, 0, c->comm);
        MPI_Reduce(&in, &hi, 1, MPI_DOUBLE_INT, MPI_MAXLOC, 0, c->comm);
        r.bytes = sums[0];
        r.ops = sums[1];
        r.rank_min_s = lo.v;
        r.rank_max_s = hi.v;
        r.slowest_rank = hi.rank;
    }
#endif
    return r;
}

/* The head of a measurement record: what was measured, under which state,
 * and which fields tell it apart (docs/records.md). */
static void write_head(struct cbk_json *j, struct cbk_ctx *c, const struct cbk_phase *p)
{
    bool found = !p->sweep_key;
    for (const char *const *k = driver_keys; *k && !found; k++)
        found = !strcmp(*k, p->sweep_key);
    for (int i = 0; i < p->fields && !found; i++)
        found = !strcmp(p->field[i].key, p->sweep_key);
    if (!found) {
        fprintf(stderr, "cbk internal error: sweep key %s names no field of the record\n", p->sweep_key);
        abort();
    }
    cbk_record_begin(j, c->out, c, "measurement");
    cbk_json_text(j, "phase", p->phase);
    cbk_json_text(j, "mode", p->mode ? p->mode : "n/a");
    cbk_json_text(j, "sweep_key", p->sweep_key);
    cbk_json_array(j, "qualifiers");
    for (int i = 0; i < p->qualifiers; i++)
        cbk_json_text(j, NULL, p->qualifier[i]);
    cbk_json_close(j);
    cbk_json_i64(j, "ranks", c->size);
}

/* The tail: the kernel's fields, its series, the warnings. */
static void write_tail(struct cbk_json *j, struct cbk_ctx *c, const struct cbk_phase *p)
{
    for (int i = 0; i < p->fields; i++)
        cbk_write_field(j, &p->field[i]);
    if (p->series_key) {
        cbk_json_array(j, p->series_key);
        for (int i = 0; i < p->series_len; i++)
            cbk_json_real(j, NULL, p->series[i]);
        cbk_json_close(j);
    }
    cbk_json_array(j, "warnings");
    for (int i = 0; i < p->warnings; i++)
        cbk_json_text(j, NULL, p->warning[i]);
    char beside[CBK_PATH_MAX + 256];
    if (cbk_neighbour_seen(beside, sizeof beside))
        cbk_json_text(j, NULL, beside);
    cbk_json_close(j);
    cbk_record_end(j, c);
}

static void write_rate(struct cbk_json *j, double bytes, double seconds)
{
    cbk_json_real(j, "rate", bytes / seconds / 1048576.0);
    cbk_json_text(j, "rate_unit", "MiB/s");
    cbk_json_real(j, "rate_decimal", bytes / seconds / 1e6);
    cbk_json_text(j, "rate_decimal_unit", "MB/s");
}

void cbk_report(struct cbk_ctx *c, const struct cbk_phase *p)
{
    struct reduced r = reduce_phase(c, p);
    if (c->rank != 0)
        return;
    double seconds = r.end_s - r.begin_s;
    struct cbk_json j;
    write_head(&j, c, p);
    cbk_json_u64(&j, "bytes", r.bytes);
    cbk_json_u64(&j, "ops", r.ops);
    cbk_json_real(&j, "seconds", seconds);
    if (p->value_unit) {
        cbk_json_real(&j, "rate", r.value / seconds);
        cbk_json_text(&j, "rate_unit", p->value_unit);
    } else {
        write_rate(&j, (double)r.bytes, seconds);
    }
    cbk_json_real(&j, "ops_per_s", (double)r.ops / seconds);
    cbk_json_real(&j, "rank_seconds_min", r.rank_min_s);
    cbk_json_real(&j, "rank_seconds_max", r.rank_max_s);
    cbk_json_i64(&j, "slowest_rank", r.slowest_rank);
    write_tail(&j, c, p);
}

static int by_value(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

int cbk_report_iterations(struct cbk_ctx *c, const struct cbk_phase *p, struct cbk_iterations *it)
{
    int64_t n = it->count;
    double sum = 0.0;
    for (int64_t i = 0; i < n; i++) {
        it->seconds[i] *= it->scale;
        sum += it->seconds[i];
    }
    /* ranks idle in a point-to-point test count in no statistic */
    double mean = it->active ? sum / (double)n : 0.0;
    double avg = mean, lo = mean, hi = mean;
    int rc = 0, slowest = c->rank;
    if (!it->active)
        memset(it->seconds, 0, (size_t)n * sizeof *it->seconds);
    memcpy(it->scratch, it->seconds, (size_t)n * sizeof *it->seconds);
#ifdef CBK_HAVE_MPI
    if (c->size > 1) {
        double sums[2] = { mean, it->active ? 1.0 : 0.0 }, tot[2] = { 0, 0 };
        double lo_in = it->active ? mean : DBL_MAX;
        rc |= MPI_Reduce(sums, tot, 2, MPI_DOUBLE, MPI_SUM, 0, c->comm);
        rc |= MPI_Reduce(&lo_in, &lo, 1, MPI_DOUBLE, MPI_MIN, 0, c->comm);
        struct { double v; int rank; } in = { mean, c->rank }, out = { 0, 0 };
        rc |= MPI_Reduce(&in, &out, 1, MPI_DOUBLE_INT, MPI_MAXLOC, 0, c->comm);
        hi = out.v;
        slowest = out.rank;
        rc |= MPI_Reduce(it->seconds, it->scratch, (int)n, MPI_DOUBLE, MPI_MAX, 0, c->comm);
        avg = tot[0] / tot[1];
    }
#endif
    if (c->rank != 0 || rc)
        return rc;
    /* over iterations: each iteration's slowest rank, as OSU reports */
    qsort(it->scratch, (size_t)n, sizeof *it->scratch, by_value);
    double median = n % 2 ? it->scratch[n / 2] : 0.5 * (it->scratch[n / 2 - 1] + it->scratch[n / 2]);
    int64_t k = (int64_t)ceil(0.99 * (double)n) - 1; /* nearest rank */
    double p99 = it->scratch[k < 0 ? 0 : k];
    struct cbk_json j;
    write_head(&j, c, p);
    cbk_json_u64(&j, "bytes", p->bytes);
    cbk_json_u64(&j, "ops", (uint64_t)n);
    cbk_json_real(&j, "seconds", avg);
    if (it->bandwidth) {
        write_rate(&j, (double)p->bytes, avg);
        if (it->messages > 0)
            cbk_json_real(&j, "messages_per_s", it->messages / avg);
    } else {
        cbk_json_real(&j, "rate", avg * 1e6);
        cbk_json_text(&j, "rate_unit", "us");
    }
    /* per iteration: iterations per second of the average rank, and each
     * rank's own mean iteration time (IMB's t_min/t_max) */
    cbk_json_real(&j, "ops_per_s", 1.0 / avg);
    cbk_json_real(&j, "rank_seconds_min", lo);
    cbk_json_real(&j, "rank_seconds_max", hi);
    cbk_json_i64(&j, "slowest_rank", slowest);
    cbk_json_real(&j, "t_avg_us", avg * 1e6);
    cbk_json_real(&j, "t_min_us", lo * 1e6);
    cbk_json_real(&j, "t_max_us", hi * 1e6);
    cbk_json_real(&j, "median_us", median * 1e6);
    cbk_json_real(&j, "p99_us", p99 * 1e6);
    cbk_json_real(&j, "iteration_min_us", it->scratch[0] * 1e6);
    if (it->streams > 0) {
        double part = (double)p->bytes / it->streams;
        cbk_json_real(&j, "bandwidth_mib_s", part / avg / 1048576.0);
        cbk_json_real(&j, "bandwidth_mb_s", part / avg / 1e6);
    }
    write_tail(&j, c, p);
    return 0;
}

/* The GPUs this rank may use, as its launcher or clusterbench's per-rank
 * binding (clusterbench.launch.gpubind) left them; unset (every device visible)
 * is written as null. */
#define CBK_DEVICES_LEN 256
static void visible_devices(char *buf)
{
    static const char *const vars[] = {"CUDA_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "ZE_AFFINITY_MASK"};
    buf[0] = '\x01';
    buf[1] = '\0';
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        const char *v = getenv(vars[i]);
        if (v) {
            snprintf(buf, CBK_DEVICES_LEN, "%s", v);
            return;
        }
    }
}

static void write_run_record(struct cbk_ctx *c, const struct cbk_args *a, double seconds)
{
    char host[HOST_NAME_MAX + 1] = "unknown";
    gethostname(host, sizeof host);
    host[HOST_NAME_MAX] = '\0';
    char *hosts = NULL;
    char devices[CBK_DEVICES_LEN];
    char *all_devices = NULL;
    visible_devices(devices);
#ifdef CBK_HAVE_MPI
    if (c->size > 1) {
        if (c->rank == 0) {
            hosts = calloc((size_t)c->size, sizeof host);
            all_devices = calloc((size_t)c->size, sizeof devices);
        }
        MPI_Gather(host, sizeof host, MPI_CHAR, hosts, sizeof host, MPI_CHAR, 0, c->comm);
        MPI_Gather(devices, sizeof devices, MPI_CHAR, all_devices, sizeof devices, MPI_CHAR, 0, c->comm);
    }
#endif
    if (c->rank != 0)
        return;
    struct cbk_json j;
    cbk_record_begin(&j, c->out, c, "run");
    cbk_json_text(&j, "cbk_version", CBK_VERSION);
    /* stored as the step's build: a stored run is judged by its kernels'
     * families (the GPU analysis) where no cbk that knows them is at hand */
    cbk_json_text(&j, "family", c->kernel ? c->kernel->family : NULL);
    if (c->kernel && c->kernel->phase_words)   /* the other kernels' run records stay as they were */
        cbk_write_phase_words(&j, c->kernel);
    cbk_write_args(&j, "parameters", a);
    cbk_json_i64(&j, "ranks", c->size);
    cbk_json_i64(&j, "ranks_per_node", c->node_size);
    cbk_json_i64(&j, "nodes", c->nodes);
    cbk_json_array(&j, "hosts");
    for (int r = 0; r < c->size; r++)
        cbk_json_text(&j, NULL, hosts ? hosts + (size_t)r * sizeof host : host);
    cbk_json_close(&j);
    cbk_json_array(&j, "gpu_devices");
    for (int r = 0; r < c->size; r++) {
        const char *d = all_devices ? all_devices + (size_t)r * sizeof devices : devices;
        if (d[0] == '\x01')
            cbk_json_null(&j, NULL);
        else
            cbk_json_text(&j, NULL, d);
    }
    cbk_json_close(&j);
    cbk_json_u64(&j, "run_id", c->run_id);
    cbk_json_real(&j, "seconds", seconds);
    cbk_json_real(&j, "timer_resolution_s", c->timer_resolution_s);
    cbk_json_text(&j, "compiler", "gcc-compatible " __VERSION__);
    cbk_json_text(&j, "compiler_flags", CBK_COMPILER_FLAGS);
    cbk_json_text(&j, "build_type", CBK_BUILD_TYPE);
    cbk_json_build_features(&j);
#ifdef CBK_HAVE_MPI
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0, major, minor;
    MPI_Get_library_version(lib, &len);
    lib[strcspn(lib, "\n")] = '\0';
    MPI_Get_version(&major, &minor);
    cbk_json_bool(&j, "mpi", true);
    cbk_json_text(&j, "mpi_library", lib);
    cbk_json_real(&j, "mpi_standard", major + minor / 10.0);
#else
    cbk_json_bool(&j, "mpi", false);
    cbk_json_null(&j, "mpi_library");
#endif
    cbk_record_end(&j, c);
    free(hosts);
    free(all_devices);
}

/* Validation, agreed by every rank, then the kernel's repetitions. */
static int validate_and_run(const struct cbk_kernel *k, const struct cbk_args *a, struct cbk_ctx *c)
{
    char why[CBK_MESSAGE_MAX] = "";
    int bad = k->validate ? k->validate(a, c, why, sizeof why) : 0;
    /* A per-rank wrapper that found this rank's input bad (clusterbench.launch.gpubind:
     * no GPU left for it) cannot stop the job alone: a rank that exits before
     * MPI_Init leaves the others waiting. It hands the reason on instead, and
     * it fails here as any validation does, on every rank at once. */
    const char *launch_error = getenv("CBK_LAUNCH_ERROR");
    if (!bad && launch_error && *launch_error) {
        snprintf(why, sizeof why, "%s", launch_error);
        bad = 1;
    }
    /* Validation may depend on the rank's node (its directory, its memory):
     * agree on the outcome, and let the lowest failing rank explain. */
    int first_bad = agree_first_bad(c, bad);
    if (first_bad < c->size) {
        if (c->rank == first_bad)
            cbk_error_record(c, CBK_EXIT_BAD_INPUT, c->rank, why, NULL, 0);
        return CBK_EXIT_BAD_INPUT;
    }
    double t0 = cbk_clock();
    if (k->setup && k->setup(a, c))
        cbk_fail(c, CBK_EXIT_FAILED, "%s: setup failed", k->name);
    int64_t reps = a->common.repetitions;
    int status = CBK_EXIT_OK;
    for (int64_t r = 0; r < reps && status == CBK_EXIT_OK; r++) {
        c->repetition = (int)r;
        repetition_barrier(c);
        c->epoch_s = repetition_origin(c);
        status = k->run(a, c);
    }
    if (k->teardown)
        k->teardown(a, c);
    write_run_record(c, a, cbk_clock() - t0);
    return status;
}

int cbk_run(const struct cbk_kernel *k, const struct cbk_args *a, struct cbk_ctx *c)
{
    c->kernel = k;
    c->args = a;
#ifdef CBK_HAVE_MPI
    /* every rank's host name, for the notes of the driver's waits; every
     * rank waits patiently or none does (a rank without them would block
     * in MPI's barrier while the others pass messages): no memory fails */
    struct patient_peers waits_on = { 0 };
    if (c->size > 1) {
        if (cbk_patient_peers_gather(c->comm, &waits_on))
            cbk_fail(c, CBK_EXIT_FAILED, "out of memory for %d host names", c->size);
        c->waits_on = &waits_on;
    }
#endif
    int status = validate_and_run(k, a, c);
#ifdef CBK_HAVE_MPI
    c->waits_on = NULL;
    free((char *)waits_on.hosts);
#endif
    return status;
}
