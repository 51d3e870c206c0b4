/* The driver owns everything around a kernel's timed work: validation on
 * every rank, setup, the repetition loop with its barrier and time origin,
 * reduction over ranks, the records, and the final run description. */
#include "cbk.h"

#include "cleanup.h"
#include "params.h"
#include "record.h"
#include "timer.h"

#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>


const struct cbk_param cbk_common_params[] = {
    { .name = "repetitions", .type = CBK_INT, .default_value = "1", .unit = "count", .min = "1",
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

static int all_min_int(struct cbk_ctx *c, int v)
{
    return -cbk_all_max_int(c, -v);
}

static void write_error(const struct cbk_ctx *c, int status, const char *msg)
{
    struct cbk_json j;
    cbk_record_begin(&j, stderr, c, "error");
    cbk_json_i64(&j, "status", status);
    cbk_json_i64(&j, "rank", c ? c->rank : 0);
    cbk_json_text(&j, "message", msg);
    cbk_json_end(&j);
}

_Noreturn void cbk_fail(struct cbk_ctx *c, int status, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    write_error(c, status, msg);
    cbk_cleanup_run();
#ifdef CBK_HAVE_MPI
    /* One rank failing alone must not leave the others waiting in a
     * collective: abort the job. */
    if (c && c->size > 1)
        MPI_Abort(c->comm, status);
    int up = 0;
    MPI_Initialized(&up);
    if (up)
        MPI_Finalize();
#endif
    exit(status);
}

void cbk_phase_field(struct cbk_phase *p, struct cbk_field f)
{
    if (p->fields < CBK_MAX_FIELDS)
        p->field[p->fields++] = f;
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

void cbk_report(struct cbk_ctx *c, const struct cbk_phase *p)
{
    struct reduced r = reduce_phase(c, p);
    if (c->rank != 0)
        return;
    double seconds = r.end_s - r.begin_s;
    struct cbk_json j;
    cbk_record_begin(&j, c->out, c, "measurement");
    cbk_json_text(&j, "phase", p->phase);
    cbk_json_text(&j, "mode", p->mode);
    cbk_json_i64(&j, "ranks", c->size);
    cbk_json_u64(&j, "bytes", r.bytes);
    cbk_json_u64(&j, "ops", r.ops);
    cbk_json_real(&j, "seconds", seconds);
    if (p->value_unit) {
        cbk_json_real(&j, "rate", r.value / seconds);
        cbk_json_text(&j, "rate_unit", p->value_unit);
    } else {
        cbk_json_real(&j, "rate", (double)r.bytes / seconds / 1048576.0);
        cbk_json_text(&j, "rate_unit", "MiB/s");
        cbk_json_real(&j, "rate_decimal", (double)r.bytes / seconds / 1e6);
        cbk_json_text(&j, "rate_decimal_unit", "MB/s");
    }
    cbk_json_real(&j, "ops_per_s", (double)r.ops / seconds);
    cbk_json_real(&j, "rank_seconds_min", r.rank_min_s);
    cbk_json_real(&j, "rank_seconds_max", r.rank_max_s);
    cbk_json_i64(&j, "slowest_rank", r.slowest_rank);
    for (int i = 0; i < p->fields; i++)
        cbk_write_field(&j, &p->field[i]);
    if (p->series_key) {
        cbk_json_array(&j, p->series_key);
        for (int i = 0; i < p->series_len; i++)
            cbk_json_real(&j, NULL, p->series[i]);
        cbk_json_close(&j);
    }
    cbk_json_array(&j, "warnings");
    for (int i = 0; i < p->warnings; i++)
        cbk_json_text(&j, NULL, p->warning[i]);
    cbk_json_close(&j);
    cbk_json_end(&j);
}

/* The GPUs this rank may use, as its launcher or clusterbench's per-rank
 * binding (clusterbench.gpubind) left them; unset (every device visible)
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
    cbk_json_end(&j);
    free(hosts);
    free(all_devices);
}

int cbk_run(const struct cbk_kernel *k, const struct cbk_args *a, struct cbk_ctx *c)
{
    c->kernel = k;
    c->args = a;
    char why[1024] = "";
    int bad = k->validate ? k->validate(a, c, why, sizeof why) : 0;
    /* A per-rank wrapper that found this rank's input bad (clusterbench.gpubind:
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
    int first_bad = all_min_int(c, bad ? c->rank : c->size);
    if (first_bad < c->size) {
        if (c->rank == first_bad)
            write_error(c, CBK_EXIT_BAD_INPUT, why);
        return CBK_EXIT_BAD_INPUT;
    }
    double t0 = cbk_clock();
    if (k->setup && k->setup(a, c))
        cbk_fail(c, CBK_EXIT_FAILED, "%s: setup failed", k->name);
    int64_t reps = cbk_arg_int(a, "repetitions");
    int status = CBK_EXIT_OK;
    for (int64_t r = 0; r < reps && status == CBK_EXIT_OK; r++) {
        c->repetition = (int)r;
        cbk_barrier(c);
        c->epoch_s = cbk_clock();
        status = k->run(a, c);
    }
    if (k->teardown)
        k->teardown(a, c);
    write_run_record(c, a, cbk_clock() - t0);
    return status;
}
