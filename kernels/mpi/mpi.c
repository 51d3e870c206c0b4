/* mpi: point-to-point and collective communication over message sizes (E7).
 * One launch sweeps sizes for each listed operation in turn (IMB's one run
 * of several benchmarks); per size it checks the result
 * (collectives), runs warm-up iterations, then times every iteration on
 * every rank and writes one record with IMB's t_min/t_avg/t_max over ranks
 * and the median and p99 over iterations, so OSU-style and IMB-style figures
 * come from one run. Method and formulas: docs/kernels/mpi.md. */
#include "mpi_kernel.h"
#include "../core/test_stop.h"

#include "../core/buffer.h"
#include "../core/params.h"
#include "../core/record.h"

#include <stdlib.h>
#include <string.h>
#define MAX_SIZE_TEXT "1g"

static const char *const pairing_names[] = { "half", "neighbour", "first", NULL };
enum mpi_sync { MPI_SYNC_BARRIER, MPI_SYNC_NONE };
static const char *const sync_names[] = { "barrier", "none", NULL };

struct mpi_options {
    struct cbk_choice_list ops;
    enum alg algorithm;
    uint64_t min_size;
    uint64_t max_size;
    const char *sizes;
    int64_t iterations;
    int64_t min_iterations;
    uint64_t volume;
    int64_t warmup;
    int64_t window;
    enum mpi_pairing pairing;
    enum mpi_sync sync;
    enum mpi_buffer buffer;
};
#define OPT struct mpi_options
static const OPT *opt(const struct cbk_args *a) { return cbk_options(a); }

static const struct cbk_param params[] = {
    { .name = "op", CBK_AT_CHOICE_LIST(OPT, ops, mpi_op_names), .default_value = "pingpong",
      .help = "operations, one or a comma-separated list measured one after the other in one launch: pingpong = half round-trip latency; bw/bibw = uni/bidirectional bandwidth with a window of "
              "non-blocking sends; collectives with MPI_FLOAT sums for reductions; none = an empty iteration (the harness's own cost)" },
    { .name = "algorithm", CBK_AT_CHOICE(OPT, algorithm, mpi_alg_names), .default_value = "library",
      .help = "library = the MPI's own (select it with the launcher's CVAR/MCA variables); hand-written over point-to-point: "
              "allreduce ring|recursive-doubling|rabenseifner, allgather ring|recursive-doubling, bcast binomial, alltoall pairwise" },
    { .name = "min-size", CBK_AT_SIZE(OPT, min_size), .default_value = "1", .unit = "bytes", .max = MAX_SIZE_TEXT,
      .help = "smallest message of the power-of-two sweep (reductions start at 4 B, one float)" },
    { .name = "max-size", CBK_AT_SIZE(OPT, max_size), .default_value = "4m", .unit = "bytes", .max = MAX_SIZE_TEXT,
      .help = "largest message of the power-of-two sweep" },
    { .name = "sizes", CBK_AT_STRING(OPT, sizes), .default_value = "powers-of-two", .keyword = "powers-of-two", .unit = "bytes",
      .help = "comma-separated increasing message sizes (e.g. 8,1k,32k,1m) instead of the min-size..max-size sweep" },
    { .name = "iterations", CBK_AT_INT(OPT, iterations), .default_value = "1000", .unit = "count", .min = "1", .max = "1000000",
      .help = "timed iterations per size at small sizes; fewer at large sizes (see volume)" },
    { .name = "min-iterations", CBK_AT_INT(OPT, min_iterations), .default_value = "10", .unit = "count", .min = "1", .max = "1000000",
      .help = "timed iterations per size never drop below this" },
    { .name = "volume", CBK_AT_SIZE(OPT, volume), .default_value = "256m", .unit = "bytes", .min = "1",
      .help = "iterations per size = volume / bytes per iteration, between min-iterations and iterations" },
    { .name = "warmup", CBK_AT_INT(OPT, warmup), .default_value = "100", .unit = "count", .min = "0", .max = "1000000",
      .help = "untimed iterations before the timed ones at small sizes, scaled down with iterations" },
    { .name = "window", CBK_AT_INT(OPT, window), .default_value = "64", .unit = "messages", .min = "1", .max = "1024",
      .help = "bw/bibw: non-blocking sends in flight per iteration (OSU's window size)" },
    { .name = "pairing", CBK_AT_CHOICE(OPT, pairing, pairing_names), .default_value = "half",
      .help = "point-to-point pairs: half = rank r with r+n/2 (all pairs at once), neighbour = 2k with 2k+1, "
              "first = ranks 0 and 1 only, the others idle (IMB PingPong)" },
    { .name = "sync", CBK_AT_CHOICE(OPT, sync, sync_names), .default_value = "barrier",
      .help = "collectives: barrier = a barrier before each timed call, outside the timing (OSU); none = calls back to back (IMB)" },
    { .name = "buffer", CBK_AT_CHOICE(OPT, buffer, mpi_buffer_names), .default_value = "host",
      .help = "where messages live: host; device = GPU memory, handed to a CUDA-aware MPI or staged through pinned host "
              "memory (the record's buffer_path says which); managed = CUDA managed memory. GPU buffers: pingpong, bw, bibw" },
    { 0 },
};

/* "library,ring": the algorithms an operation has, for messages. */
static const char *algorithm_list(unsigned bits, char *buf, size_t len)
{
    size_t n = 0;
    buf[0] = '\0';
    for (int a = 0; a < ALGS && n < len; a++)
        if (bits & ALG(a))
            n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? "," : "", mpi_alg_names[a]);
    return buf;
}

/* Sizes from --sizes or the power-of-two sweep. Reductions need whole
 * floats: the sweep drops sizes under 4 B (as OSU does), a listed size that
 * is not a multiple of 4 B is an error. */
static int plan_sizes(const struct cbk_args *a, struct plan *p, char *why, size_t len)
{
    const struct op_info *info = &mpi_ops[p->op];
    p->sizes = 0;
    if (!info->sized) {
        p->size[p->sizes++] = 0;
        return 0;
    }
    uint64_t limit;
    cbk_parse_size(MAX_SIZE_TEXT, &limit);
    const char *list = opt(a)->sizes;
    char b1[32], b2[32];
    if (list) {
        char buf[1024];
        if (cbk_check_list("sizes", list, sizeof buf, why, len))
            return -1;
        snprintf(buf, sizeof buf, "%s", list);
        for (char *save, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
            uint64_t v;
            if (cbk_parse_size(tok, &v)) {
                snprintf(why, len, "--sizes: '%s' is not a size (use e.g. 8,1k,32k,1m)", tok);
                return -1;
            }
            if (v > limit) {
                snprintf(why, len, "--sizes: %s is larger than the limit of %s", tok, MAX_SIZE_TEXT);
                return -1;
            }
            if (p->sizes && v <= p->size[p->sizes - 1]) {
                snprintf(why, len, "--sizes must increase: %s follows %s",
                         cbk_format_size(v, b1, sizeof b1), cbk_format_size(p->size[p->sizes - 1], b2, sizeof b2));
                return -1;
            }
            if (info->reduction && (v == 0 || v % sizeof(float))) {
                snprintf(why, len, "%s sums MPI_FLOAT (4 bytes): size %s is not a whole number of floats",
                         mpi_op_names[p->op], cbk_format_size(v, b1, sizeof b1));
                return -1;
            }
            if (p->sizes == MAX_SIZES) {
                snprintf(why, len, "--sizes lists more than %d sizes", MAX_SIZES);
                return -1;
            }
            p->size[p->sizes++] = v;
        }
    } else {
        uint64_t lo = opt(a)->min_size, hi = opt(a)->max_size;
        if (lo > hi) {
            snprintf(why, len, "--min-size=%s is larger than --max-size=%s", cbk_format_size(lo, b1, sizeof b1),
                     cbk_format_size(hi, b2, sizeof b2));
            return -1;
        }
        for (uint64_t v = lo; v <= hi && p->sizes < MAX_SIZES; v = v ? 2 * v : 1) {
            if (info->reduction && v < sizeof(float))
                continue;
            if (info->reduction && v % sizeof(float)) {
                snprintf(why, len, "%s sums MPI_FLOAT (4 bytes): --min-size=%s gives sizes that are not whole floats",
                         mpi_op_names[p->op], cbk_format_size(lo, b1, sizeof b1));
                return -1;
            }
            p->size[p->sizes++] = v;
        }
    }
    if (!p->sizes) {
        snprintf(why, len, "no message size left to measure (%s needs at least 4 B)", mpi_op_names[p->op]);
        return -1;
    }
    return 0;
}

static int make_plan(const struct cbk_args *a, const struct cbk_ctx *c, enum op op, struct plan *p, char *why,
                     size_t len)
{
    p->op = op;
    p->alg = opt(a)->algorithm;
    const struct op_info *info = &mpi_ops[p->op];
    const char *alg = mpi_alg_names[p->alg];
    if (!(info->algorithms & ALG(p->alg))) {
        char list[128];
        snprintf(why, len, "algorithm %s is not available for %s (available: %s)", alg, mpi_op_names[p->op],
                 algorithm_list(info->algorithms, list, sizeof list));
        return -1;
    }
    /* `cbk --check` validates as one process before the launch, when the
     * rank count is not known yet: rank-count rules wait for the real run. */
    int running = 0;
    MPI_Initialized(&running);
    if (running && (p->alg == ALG_RECURSIVE_DOUBLING || p->alg == ALG_RABENSEIFNER) && !cbk_is_power_of_two(c->size)) {
        snprintf(why, len, "algorithm %s needs a power-of-two number of ranks, got %d (ring and library work on any count)",
                 alg, c->size);
        return -1;
    }
    if (running && info->kind == PT2PT) {
        enum mpi_pairing pairing = opt(a)->pairing;
        if (c->size < 2) {
            snprintf(why, len, "%s needs at least 2 ranks, got %d (start it with mpiexec -n 2)", mpi_op_names[p->op], c->size);
            return -1;
        }
        if (pairing != MPI_PAIRING_FIRST && c->size % 2) {
            snprintf(why, len, "%s with --pairing=%s pairs every rank and needs an even number of ranks, got %d "
                     "(or use --pairing=first: ranks 0 and 1 only, as IMB PingPong)", mpi_op_names[p->op], pairing_names[pairing], c->size);
            return -1;
        }
    }
    if (plan_sizes(a, p, why, len))
        return -1;
    uint64_t largest = p->size[p->sizes - 1];
    if ((p->op == OP_ALLTOALL || p->op == OP_ALLGATHER) && largest * (uint64_t)c->size > 0x7fffffffu) {
        char b[32];
        snprintf(why, len, "%s of %s on %d ranks needs a buffer over 2 GiB (MPI counts are int): use smaller sizes",
                 mpi_op_names[p->op], cbk_format_size(largest, b, sizeof b), c->size);
        return -1;
    }
    return 0;
}

/* What each rank allocates for the listed operations (setup): message
 * buffers for the largest need over them (alltoall and allgather receive
 * from every rank), a reduction's result-check buffers, the iteration
 * times and the requests of a window. */
struct rank_bytes {
    size_t send, recv, reduction; /* reduction: 0 without one; ref holds 2x, scratch 1x */
    uint64_t largest;             /* the largest message */
    uint64_t arrays;              /* iteration times and requests */
};

static struct rank_bytes rank_bytes(const struct cbk_args *a, const struct plan *plans, int n, int ranks)
{
    struct rank_bytes b = { .send = 1, .recv = 1 };
    for (int i = 0; i < n; i++) {
        const struct plan *p = &plans[i];
        size_t top = (size_t)p->size[p->sizes - 1], per_rank = top ? top : 1;
        size_t send = per_rank * (p->op == OP_ALLTOALL ? (size_t)ranks : 1);
        size_t recv = per_rank * (p->op == OP_ALLTOALL || p->op == OP_ALLGATHER ? (size_t)ranks : 1);
        b.send = send > b.send ? send : b.send;
        b.recv = recv > b.recv ? recv : b.recv;
        b.largest = top > b.largest ? top : b.largest;
        if (mpi_ops[p->op].reduction && per_rank > b.reduction)
            b.reduction = per_rank;
    }
    int64_t its = opt(a)->iterations, warm = opt(a)->warmup;
    b.arrays = (uint64_t)((warm > its ? warm : its) + its) * sizeof(double) +
               2 * (uint64_t)opt(a)->window * sizeof(MPI_Request);
    return b;
}

/* The host buffers of every rank on this node, against its memory: setup
 * touches them as it makes them, so 128 ranks of 2 GiB messages met the OOM
 * killer instead of a refusal. GPU buffers (--buffer=device, managed) are
 * the device's memory, not counted here. */
static int check_memory(const struct cbk_args *a, const struct cbk_ctx *c, const struct plan *plans, int n,
                        char *why, size_t len)
{
    struct rank_bytes b = rank_bytes(a, plans, n, c->size);
    bool host = opt(a)->buffer == MPI_BUFFER_HOST;
    uint64_t per_rank = (host ? (uint64_t)b.send + b.recv : 0) + 3 * (uint64_t)b.reduction + b.arrays;
    char ops[256] = "", largest[32], what[512];
    for (int i = 0, used = 0; i < n && used < (int)sizeof ops; i++)
        used += snprintf(ops + used, sizeof ops - (size_t)used, "%s%s", i ? "," : "", mpi_op_names[plans[i].op]);
    snprintf(what, sizeof what, "%d rank%s x --op=%s at messages up to %s (%s%s buffers, %.1f GiB a rank)",
             c->node_size, c->node_size == 1 ? "" : "s", ops, cbk_format_size(b.largest, largest, sizeof largest),
             host ? "send, receive" : "host", b.reduction ? " and result-check" : "", (double)per_rank / 1073741824.0);
    return cbk_check_memory(what, per_rank, c->node_size, why, len);
}

static int validate(const struct cbk_args *a, struct cbk_ctx *c, char *why, size_t len)
{
    /* schedule() clamps to [min-iterations, iterations], the maximum
     * winning: a minimum given above it would be broken in silence (the
     * default minimum yields to a smaller --iterations, as it always did) */
    if (opt(a)->min_iterations > opt(a)->iterations && cbk_param_given(a, "min-iterations")) {
        snprintf(why, len, "--min-iterations=%lld is larger than --iterations=%lld",
                 (long long)opt(a)->min_iterations, (long long)opt(a)->iterations);
        return -1;
    }
    struct plan plans[CBK_MAX_CHOICE_LIST];
    int n = opt(a)->ops.count;
    for (int i = 0; i < n; i++)
        if (make_plan(a, c, (enum op)opt(a)->ops.index[i], &plans[i], why, len))
            return -1;
    if (mpi_buffer_check(opt(a)->buffer, &opt(a)->ops, why, len))
        return -1;
    return check_memory(a, c, plans, n, why, len);
}

/* Makes op i of the list the current one: its plan, table entry and loop. */
static void select_op(struct mpi_state *s, int i)
{
    s->plan = s->plans[i];
    s->info = &mpi_ops[s->plan.op];
    s->fn = mpi_choose(s->plan.op, s->plan.alg);
    const char *broken = getenv("CBK_TEST_MPI_BROKEN");
    s->coll.drop_steps = broken && s->plan.op == OP_ALLREDUCE && !strcmp(broken, mpi_alg_names[s->plan.alg]);
}

static int setup(const struct cbk_args *a, struct cbk_ctx *c)
{
    struct mpi_state *s = calloc(1, sizeof *s);
    if (!s)
        cbk_fail(c, CBK_EXIT_FAILED, "mpi: out of memory");
    c->state = s;
    char why[512];
    s->nplans = opt(a)->ops.count;
    for (int i = 0; i < s->nplans; i++)
        if (make_plan(a, c, (enum op)opt(a)->ops.index[i], &s->plans[i], why, sizeof why))
            cbk_fail(c, CBK_EXIT_BAD_INPUT, "mpi: %s", why);
    /* buffers for the largest need over the listed operations (checked against memory in validate) */
    struct rank_bytes b = rank_bytes(a, s->plans, s->nplans, c->size);
    size_t reduction_bytes = b.reduction;
    s->comm = c->comm;
    s->rank = c->rank;
    s->size = c->size;
    s->iterations = opt(a)->iterations;
    s->min_iterations = opt(a)->min_iterations;
    s->warmup = opt(a)->warmup;
    s->window = opt(a)->window;
    s->volume_bytes = opt(a)->volume;
    s->barrier_sync = opt(a)->sync == MPI_SYNC_BARRIER;
    s->coll = (struct cbk_coll){ .comm = c->comm, .rank = c->rank, .size = c->size };
    s->buffer = opt(a)->buffer;
    if (mpi_buffers_alloc(s, b.send, b.recv, why, sizeof why))
        cbk_fail(c, CBK_EXIT_FAILED, "mpi: %s", why);
    /* the warm-up loops time their iterations too: room for the longer of the two */
    s->t = calloc((size_t)(s->warmup > s->iterations ? s->warmup : s->iterations), sizeof *s->t);
    s->t_max = calloc((size_t)s->iterations, sizeof *s->t_max);
    s->req = calloc(2 * (size_t)s->window, sizeof *s->req);
    if (reduction_bytes) {
        /* ref: MPI_Allreduce's result, or the exact sums in double */
        s->ref = cbk_buffer_alloc(2 * reduction_bytes);
        s->coll.scratch = cbk_buffer_alloc(reduction_bytes);
    }
    if (!s->t || !s->t_max || !s->req || (reduction_bytes && (!s->ref || !s->coll.scratch)))
        cbk_fail(c, CBK_EXIT_FAILED, "mpi: cannot allocate buffers for %llu-byte messages on %d ranks",
                 (unsigned long long)b.largest, c->size);

    /* the host names first, so that the placement's collectives are watched: a rank stopped there
     * holds the others, who say so */
    if (cbk_patient_peers_gather(s->comm, &s->on))
        cbk_fail(c, CBK_EXIT_FAILED, "mpi: out of memory for %d host names", c->size);
    s->watch = cbk_stall_watch_start(&s->on);
    cbk_stall_watch_enter(s->watch, NULL, 0,
                          "the set-up's exchange of placement, a collective of %s: a rank that does not say so "
                          "holds it", s->on.every_rank);
    cbk_test_stop_at(c->rank, "placement");
    mpi_placement(c, s, opt(a)->pairing);
    cbk_stall_watch_leave(s->watch);
    if (c->rank == 0)
        mpi_tuning_variables(s);
    return 0;
}

static void teardown(const struct cbk_args *a, struct cbk_ctx *c)
{
    (void)a;
    struct mpi_state *s = c->state;
    if (!s)
        return;
    cbk_stall_watch_stop(s->watch);
    free((char *)s->on.hosts);
    mpi_buffers_free(s);
    cbk_buffer_free(s->ref);
    cbk_buffer_free(s->coll.scratch);
    free(s->t);
    free(s->t_max);
    free(s->req);
    free(s);
    c->state = NULL;
}

/* ---- the record of one size ---- */

/* Reports one size through the driver's per-iteration entry: it reduces
 * the iteration times over ranks and iterations (IMB's t_min/t_avg/t_max,
 * OSU's median and p99); the fields here say what was measured and where. */
static int report_size(struct cbk_ctx *c, struct mpi_state *s, uint64_t size, int64_t n, int64_t warm,
                       const struct check *k)
{
    const struct op_info *info = s->info;
    enum op op = s->plan.op;
    bool bw = op == OP_BW || op == OP_BIBW;
    /* bytes one iteration moves, so that rate = bytes / seconds for bandwidths */
    uint64_t per_pair = bw ? size * (uint64_t)s->window * (op == OP_BIBW ? 2u : 1u) : size;
    struct cbk_phase p = { .phase = mpi_op_names[op], .sweep_key = "size_bytes",
                           .bytes = bw ? per_pair * (uint64_t)s->pairs : size };
    struct cbk_iterations it = { .seconds = s->t, .scratch = s->t_max, .count = n,
                                 .scale = op == OP_PINGPONG ? 0.5 : 1.0, .active = s->active, .bandwidth = bw };
    if (info->kind == PT2PT) {
        /* per pair: IMB PingPong's and osu_bw's figure; rate sums the pairs */
        it.streams = bw ? s->pairs : 1;
        if (bw)
            it.messages = (double)s->window * s->pairs * (op == OP_BIBW ? 2 : 1);
    }
    cbk_phase_qualifier(&p, "algorithm", mpi_alg_names[s->plan.alg]);
    if (s->buffer != MPI_BUFFER_HOST) { /* host records keep their shape (and their comparisons) */
        cbk_phase_qualifier(&p, "buffer", mpi_buffer_names[s->buffer]);
        cbk_phase_field(&p, CBK_TEXT("buffer_path", s->buffer_path));
        cbk_phase_field(&p, CBK_TEXT("buffer_query", s->buffer_query));
        if (s->staged)
            cbk_phase_warn(&p, "staged: the MPI library is not CUDA-aware, so every message is copied between the GPU "
                               "and pinned host memory inside the timing; this is not the network's device-to-device rate");
    }
    cbk_phase_field(&p, CBK_I64("nodes", c->nodes));
    cbk_phase_field(&p, CBK_I64("ranks_per_node", s->ranks_per_node_max));
    cbk_phase_field(&p, CBK_I64("ranks_per_node_min", s->ranks_per_node_min));
    cbk_phase_field(&p, CBK_U64("size_bytes", size));
    cbk_phase_field(&p, CBK_TEXT("element_type", !info->sized ? NULL : info->reduction ? "MPI_FLOAT" : "MPI_BYTE"));
    cbk_phase_field(&p, CBK_U64("count", !info->sized ? 0 : info->reduction ? size / sizeof(float) : size));
    cbk_phase_field(&p, CBK_I64("iterations", n));
    cbk_phase_field(&p, CBK_I64("warmup_iterations", warm));
    if (info->kind == PT2PT) {
        cbk_phase_field(&p, CBK_TEXT("pairing", pairing_names[opt(c->args)->pairing]));
        cbk_phase_field(&p, CBK_I64("pairs", s->pairs));
        cbk_phase_field(&p, CBK_I64("pairs_same_node", s->pairs_same_node));
        bool uniform = s->pairs_same_node == s->pairs || s->pairs_same_node == 0;
        /* null when mixed */
        cbk_phase_field(&p, uniform ? CBK_BOOL("same_node", s->pairs_same_node == s->pairs) : CBK_TEXT("same_node", NULL));
        if (bw)
            cbk_phase_field(&p, CBK_I64("window", s->window));
    } else {
        cbk_phase_field(&p, CBK_TEXT("sync", s->barrier_sync ? "barrier" : "none"));
    }
    cbk_phase_field(&p, CBK_TEXT("check", k->result));
    cbk_phase_field(&p, CBK_TEXT("check_reference", k->reference));
    if (k->reference) {
        cbk_phase_field(&p, CBK_REAL("check_max_rel_error", k->max_rel_error));
        cbk_phase_field(&p, CBK_REAL("check_tolerance", k->tolerance));
    }
    cbk_phase_field(&p, CBK_PAIRS("library_tuning", s->tuning, s->tunings));
    /* the variable that selects this operation's library algorithm, if set */
    const char *sel = NULL;
    for (int i = 0; i < s->tunings && s->plan.alg == ALG_LIBRARY; i++)
        for (int v = 0; v < 2; v++) {
            const char *name = v ? info->mca : info->cvar;
            size_t len = name ? strlen(name) : 0;
            if (name && !strncmp(s->tuning[i], name, len) && s->tuning[i][len] == '=')
                sel = s->tuning[i];
        }
    cbk_phase_field(&p, CBK_TEXT("library_selection", sel ? sel : s->plan.alg == ALG_LIBRARY ? "default" : NULL));
    if (s->oversubscribed)
        cbk_phase_warn(&p, "oversubscribed: a node runs more ranks than it has online CPUs, so timings include time-slicing");
    if (info->kind == PT2PT && s->pairs_same_node && s->pairs_same_node < s->pairs)
        cbk_phase_warn(&p, "pairs are mixed: some share a node (shared memory), some do not (network)");
    return cbk_report_iterations(c, &p, &it);
}

static void check_failed(struct cbk_ctx *c, const struct mpi_state *s, uint64_t size, const struct check *k)
{
    if (c->rank != 0)
        return;
    char msg[512], b[32];
    snprintf(msg, sizeof msg, "mpi: %s %s at %s gives a wrong result: %llu %s (over all ranks) differ from %s (first at index %lld; "
             "largest relative error %.3g, tolerance %.3g)",
             mpi_op_names[s->plan.op], mpi_alg_names[s->plan.alg], cbk_format_size(size, b, sizeof b), (unsigned long long)k->wrong,
             s->info->reduction ? "elements" : "bytes", k->reference, (long long)k->first_wrong, k->max_rel_error,
             k->tolerance);
    cbk_error_record(c, CBK_EXIT_FAILED, c->rank, msg, NULL, 0);
}

/* Iterations shrink with size as IMB's do (a fixed volume per size), and
 * warm-up iterations shrink in the same proportion. */
static void schedule(const struct mpi_state *s, uint64_t size, int64_t *n, int64_t *warm)
{
    uint64_t per_iteration = size * (s->plan.op == OP_BW || s->plan.op == OP_BIBW ? (uint64_t)s->window : 1u);
    int64_t k = per_iteration ? (int64_t)(s->volume_bytes / per_iteration) : s->iterations;
    if (k < s->min_iterations)
        k = s->min_iterations;
    if (k > s->iterations)
        k = s->iterations;
    *n = k;
    *warm = (s->warmup * k + s->iterations - 1) / s->iterations;
}

/* Opens the stall watch's stretch `part` of one size (patient_wait.h):
 * a stopped node's ranks say nothing, every other rank says where it
 * waits, with whom where that is one rank. */
static void watch(struct mpi_state *s, const char *part, uint64_t size, int64_t iterations)
{
    char bytes[32] = "", with[sizeof s->on.every_rank + 160] = "";
    if (s->info->sized)
        snprintf(bytes, sizeof bytes, " of %s", cbk_format_size(size, (char[32]){ 0 }, 32));
    if (s->info->kind == PT2PT && s->active)
        snprintf(with, sizeof with, " with rank %d (%s)", s->partner,
                 s->on.hosts + (size_t)s->partner * s->on.host_chars);
    else if (s->info->kind == PT2PT)
        snprintf(with, sizeof with, " (this rank is not paired: it waits in the barriers)");
    else if (s->info->kind == COLLECTIVE)
        snprintf(with, sizeof with, ", a collective of %s: a rank that does not say so holds it", s->on.every_rank);
    cbk_stall_watch_enter(s->watch, iterations ? s->t : NULL, (size_t)iterations, "%s %s%s (%s)%s", part,
                          mpi_op_names[s->plan.op], bytes, mpi_alg_names[s->plan.alg], with);
}

/* One operation's sweep over its sizes. Each size starts with a patient
 * barrier, its first wait: a rank that never arrives there is named by
 * rank 0. The rest cannot be patient without changing what is measured
 * (the library's own barrier starts each loop in step; a patient wait in
 * a timed loop would time its polls and sleeps): the stall watch names
 * the part instead, opened before the barrier that starts each loop, so
 * its thread's wake-up is over before the loop's clock starts. */
static int run_op(struct cbk_ctx *c, struct mpi_state *s)
{
    for (int i = 0; i < s->plan.sizes; i++) {
        uint64_t size = s->plan.size[i];
        int64_t n, warm;
        schedule(s, size, &n, &warm);
        struct check k;
        int rc = cbk_patient_barrier(s->comm, &s->on);
        watch(s, "the check of", size, 0);
        rc |= mpi_check_size(s, size, &k);
        if (rc == MPI_SUCCESS && k.wrong) {
            cbk_stall_watch_leave(s->watch);
            check_failed(c, s, size, &k);
            return CBK_EXIT_FAILED;
        }
        watch(s, "the warm-up of", size, warm);
        rc |= MPI_Barrier(s->comm);
        rc |= mpi_run_loop(s, size, warm);
        watch(s, "the timed", size, n);
        rc |= MPI_Barrier(s->comm);
        rc |= mpi_run_loop(s, size, n);
        watch(s, "the record of", size, 0);
        rc |= report_size(c, s, size, n, warm, &k);
        cbk_stall_watch_leave(s->watch);
        if (rc != MPI_SUCCESS)
            cbk_fail(c, CBK_EXIT_FAILED, "mpi: %s failed at %llu bytes (MPI error %d)", mpi_op_names[s->plan.op],
                     (unsigned long long)size, rc);
    }
    return CBK_EXIT_OK;
}

static int run(const struct cbk_args *a, struct cbk_ctx *c)
{
    (void)a;
    struct mpi_state *s = c->state;
    for (int i = 0; i < s->nplans; i++) {
        select_op(s, i);
        int rc = run_op(c, s);
        if (rc != CBK_EXIT_OK)
            return rc;
    }
    return CBK_EXIT_OK;
}

/* the abbreviated operations as a report prints them (the records keep the name):
 * "bw 1 MiB" in a customer's table was OSU's shorthand, unexplained */
static const struct cbk_phase_words phase_words[] = {
    { "bw", "bandwidth" }, { "bibw", "bidirectional bandwidth" }, { "bcast", "broadcast" }, { NULL, NULL },
};

const struct cbk_kernel cbk_kernel_mpi = {
    .name = "mpi",
    .summary = "MPI point-to-point and collectives over message sizes, with algorithm variants (E7)",
    .family = CBK_FAMILY_MPI,
    .flags = CBK_PARALLEL,
    .phase_words = phase_words,
    .params = params,
    .options_size = sizeof(OPT),
    .validate = validate,
    .setup = setup,
    .run = run,
    .teardown = teardown,
};
