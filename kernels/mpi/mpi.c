/* mpi: point-to-point and collective communication over message sizes (E7).
 * One launch sweeps sizes for one operation; per size it checks the result
 * (collectives), runs warm-up iterations, then times every iteration on
 * every rank and writes one record with IMB's t_min/t_avg/t_max over ranks
 * and the median and p99 over iterations, so OSU-style and IMB-style figures
 * come from one run. Method and formulas: docs/kernels/mpi.md. */
#include "../core/buffer.h"
#include "../core/cbk.h"
#include "../core/params.h"
#include "../core/record.h"
#include "../core/timer.h"
#include "collectives.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern char **environ;

#define MAX_SIZES 64
#define MAX_TUNING 64
#define MAX_SIZE_TEXT "1g"

static const struct cbk_param params[] = {
    { .name = "op", .type = CBK_CHOICE, .default_value = "pingpong",
      .choices = "pingpong,bw,bibw,allreduce,reduce,alltoall,allgather,bcast,barrier,none",
      .help = "operation: pingpong = half round-trip latency; bw/bibw = uni/bidirectional bandwidth with a window of "
              "non-blocking sends; collectives with MPI_FLOAT sums for reductions; none = an empty iteration (the harness's own cost)" },
    { .name = "algorithm", .type = CBK_CHOICE, .default_value = "library",
      .choices = "library,ring,recursive-doubling,rabenseifner,binomial,pairwise",
      .help = "library = the MPI's own (select it with the launcher's CVAR/MCA variables); hand-written over point-to-point: "
              "allreduce ring|recursive-doubling|rabenseifner, allgather ring|recursive-doubling, bcast binomial, alltoall pairwise" },
    { .name = "min-size", .type = CBK_SIZE, .default_value = "1", .unit = "bytes", .max = MAX_SIZE_TEXT,
      .help = "smallest message of the power-of-two sweep (reductions start at 4 B, one float)" },
    { .name = "max-size", .type = CBK_SIZE, .default_value = "4m", .unit = "bytes", .max = MAX_SIZE_TEXT,
      .help = "largest message of the power-of-two sweep" },
    { .name = "sizes", .type = CBK_STRING, .default_value = "powers-of-two",
      .help = "comma-separated increasing message sizes (e.g. 8,1k,32k,1m) instead of the min-size..max-size sweep" },
    { .name = "iterations", .type = CBK_INT, .default_value = "1000", .unit = "count", .min = "1", .max = "1000000",
      .help = "timed iterations per size at small sizes; fewer at large sizes (see volume)" },
    { .name = "min-iterations", .type = CBK_INT, .default_value = "10", .unit = "count", .min = "1", .max = "1000000",
      .help = "timed iterations per size never drop below this" },
    { .name = "volume", .type = CBK_SIZE, .default_value = "256m", .unit = "bytes", .min = "1",
      .help = "iterations per size = volume / bytes per iteration, between min-iterations and iterations" },
    { .name = "warmup", .type = CBK_INT, .default_value = "100", .unit = "count", .min = "0", .max = "1000000",
      .help = "untimed iterations before the timed ones at small sizes, scaled down with iterations" },
    { .name = "window", .type = CBK_INT, .default_value = "64", .unit = "messages", .min = "1", .max = "1024",
      .help = "bw/bibw: non-blocking sends in flight per iteration (OSU's window size)" },
    { .name = "pairing", .type = CBK_CHOICE, .default_value = "half", .choices = "half,neighbour,first",
      .help = "point-to-point pairs: half = rank r with r+n/2 (all pairs at once), neighbour = 2k with 2k+1, "
              "first = ranks 0 and 1 only, the others idle (IMB PingPong)" },
    { .name = "sync", .type = CBK_CHOICE, .default_value = "barrier", .choices = "barrier,none",
      .help = "collectives: barrier = a barrier before each timed call, outside the timing (OSU); none = calls back to back (IMB)" },
    { 0 },
};

enum op { OP_PINGPONG, OP_BW, OP_BIBW, OP_ALLREDUCE, OP_REDUCE, OP_ALLTOALL, OP_ALLGATHER, OP_BCAST, OP_BARRIER, OP_NONE };
enum alg { ALG_LIBRARY, ALG_RING, ALG_RECURSIVE_DOUBLING, ALG_RABENSEIFNER, ALG_BINOMIAL, ALG_PAIRWISE };
enum kind { PT2PT, COLLECTIVE, EMPTY };

static const char *const alg_names[] = { "library", "ring", "recursive-doubling", "rabenseifner", "binomial", "pairwise" };

static const struct op_info {
    const char *name;
    enum kind kind;
    bool reduction;       /* MPI_FLOAT sum: sizes in whole floats */
    bool sized;           /* barrier and none have no message */
    const char *algorithms;
    const char *cvar, *mca; /* the library's selection variables */
} ops[] = {
    [OP_PINGPONG] = { "pingpong", PT2PT, false, true, "library", NULL, NULL },
    [OP_BW] = { "bw", PT2PT, false, true, "library", NULL, NULL },
    [OP_BIBW] = { "bibw", PT2PT, false, true, "library", NULL, NULL },
    [OP_ALLREDUCE] = { "allreduce", COLLECTIVE, true, true, "library,ring,recursive-doubling,rabenseifner",
                       "MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM", "OMPI_MCA_coll_tuned_allreduce_algorithm" },
    [OP_REDUCE] = { "reduce", COLLECTIVE, true, true, "library",
                    "MPIR_CVAR_REDUCE_INTRA_ALGORITHM", "OMPI_MCA_coll_tuned_reduce_algorithm" },
    [OP_ALLTOALL] = { "alltoall", COLLECTIVE, false, true, "library,pairwise",
                      "MPIR_CVAR_ALLTOALL_INTRA_ALGORITHM", "OMPI_MCA_coll_tuned_alltoall_algorithm" },
    [OP_ALLGATHER] = { "allgather", COLLECTIVE, false, true, "library,ring,recursive-doubling",
                       "MPIR_CVAR_ALLGATHER_INTRA_ALGORITHM", "OMPI_MCA_coll_tuned_allgather_algorithm" },
    [OP_BCAST] = { "bcast", COLLECTIVE, false, true, "library,binomial",
                   "MPIR_CVAR_BCAST_INTRA_ALGORITHM", "OMPI_MCA_coll_tuned_bcast_algorithm" },
    [OP_BARRIER] = { "barrier", COLLECTIVE, false, false, "library",
                     "MPIR_CVAR_BARRIER_INTRA_ALGORITHM", "OMPI_MCA_coll_tuned_barrier_algorithm" },
    [OP_NONE] = { "none", EMPTY, false, false, "library", NULL, NULL },
};

struct plan {
    enum op op;
    enum alg alg;
    uint64_t size[MAX_SIZES];
    int sizes;
};

struct mpi_state;
typedef int (*coll_fn)(struct mpi_state *s, size_t bytes);

struct mpi_state {
    struct plan plan;
    const struct op_info *info;
    MPI_Comm comm;
    int rank, size;
    int64_t iterations, min_iterations, warmup, window;
    uint64_t volume_bytes;
    bool barrier_sync;
    coll_fn fn;
    char *send, *recv, *ref;  /* message buffers; ref: MPI_Allreduce's result for the check */
    double *t;                /* this rank's duration of each iteration */
    double *t_max;            /* rank 0: each iteration's maximum over ranks */
    MPI_Request *req;
    struct cbk_coll coll;
    /* point-to-point pairing */
    int partner;
    bool active, initiator;
    int pairs, pairs_same_node;
    int ranks_per_node_min, ranks_per_node_max;
    bool oversubscribed;
    const char *tuning[MAX_TUNING]; /* "NAME=value" from rank 0's environment */
    int tunings;
};

static int find_index(const char *const *names, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(names[i], name))
            return i;
    return -1;
}

static bool listed(const char *list, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = list; p && *p;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        if (len == n && !strncmp(p, name, n))
            return true;
        p = comma ? comma + 1 : NULL;
    }
    return false;
}

/* Sizes from --sizes or the power-of-two sweep. Reductions need whole
 * floats: the sweep drops sizes under 4 B (as OSU does), a listed size that
 * is not a multiple of 4 B is an error. */
static int plan_sizes(const struct cbk_args *a, struct plan *p, char *why, size_t len)
{
    const struct op_info *info = &ops[p->op];
    p->sizes = 0;
    if (!info->sized) {
        p->size[p->sizes++] = 0;
        return 0;
    }
    uint64_t limit;
    cbk_parse_size(MAX_SIZE_TEXT, &limit);
    const char *list = cbk_arg_text(a, "sizes");
    char b1[32], b2[32];
    if (strcmp(list, "powers-of-two")) {
        char buf[1024];
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
                         info->name, cbk_format_size(v, b1, sizeof b1));
                return -1;
            }
            if (p->sizes == MAX_SIZES) {
                snprintf(why, len, "--sizes lists more than %d sizes", MAX_SIZES);
                return -1;
            }
            p->size[p->sizes++] = v;
        }
    } else {
        uint64_t lo = cbk_arg_size(a, "min-size"), hi = cbk_arg_size(a, "max-size");
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
                         info->name, cbk_format_size(lo, b1, sizeof b1));
                return -1;
            }
            p->size[p->sizes++] = v;
        }
    }
    if (!p->sizes) {
        snprintf(why, len, "no message size left to measure (%s needs at least 4 B)", info->name);
        return -1;
    }
    return 0;
}

static int make_plan(const struct cbk_args *a, const struct cbk_ctx *c, struct plan *p, char *why, size_t len)
{
    static const char *const op_names[] = { "pingpong", "bw", "bibw", "allreduce", "reduce",
                                            "alltoall", "allgather", "bcast", "barrier", "none" };
    p->op = (enum op)find_index(op_names, 10, cbk_arg_text(a, "op"));
    p->alg = (enum alg)find_index(alg_names, 6, cbk_arg_text(a, "algorithm"));
    const struct op_info *info = &ops[p->op];
    const char *alg = alg_names[p->alg];
    if (!listed(info->algorithms, alg)) {
        snprintf(why, len, "algorithm %s is not available for %s (available: %s)", alg, info->name, info->algorithms);
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
        const char *pairing = cbk_arg_text(a, "pairing");
        if (c->size < 2) {
            snprintf(why, len, "%s needs at least 2 ranks, got %d (start it with mpiexec -n 2)", info->name, c->size);
            return -1;
        }
        if (strcmp(pairing, "first") && c->size % 2) {
            snprintf(why, len, "%s with --pairing=%s pairs every rank and needs an even number of ranks, got %d "
                     "(or use --pairing=first: ranks 0 and 1 only, as IMB PingPong)", info->name, pairing, c->size);
            return -1;
        }
    }
    if (plan_sizes(a, p, why, len))
        return -1;
    uint64_t largest = p->size[p->sizes - 1];
    if ((p->op == OP_ALLTOALL || p->op == OP_ALLGATHER) && largest * (uint64_t)c->size > 0x7fffffffu) {
        char b[32];
        snprintf(why, len, "%s of %s on %d ranks needs a buffer over 2 GiB (MPI counts are int): use smaller sizes",
                 info->name, cbk_format_size(largest, b, sizeof b), c->size);
        return -1;
    }
    return 0;
}

static int validate(const struct cbk_args *a, struct cbk_ctx *c, char *why, size_t len)
{
    struct plan p;
    return make_plan(a, c, &p, why, len);
}

/* ---- the operations: one call (or one round trip, one window) each ---- */

static int count_of(size_t bytes) { return (int)(bytes / sizeof(float)); }

static int lib_allreduce(struct mpi_state *s, size_t b)
{
    return MPI_Allreduce(s->send, s->recv, count_of(b), MPI_FLOAT, MPI_SUM, s->comm);
}
static int lib_reduce(struct mpi_state *s, size_t b)
{
    return MPI_Reduce(s->send, s->recv, count_of(b), MPI_FLOAT, MPI_SUM, 0, s->comm);
}
static int lib_alltoall(struct mpi_state *s, size_t b)
{
    return MPI_Alltoall(s->send, (int)b, MPI_BYTE, s->recv, (int)b, MPI_BYTE, s->comm);
}
static int lib_allgather(struct mpi_state *s, size_t b)
{
    return MPI_Allgather(s->send, (int)b, MPI_BYTE, s->recv, (int)b, MPI_BYTE, s->comm);
}
static int lib_bcast(struct mpi_state *s, size_t b) { return MPI_Bcast(s->send, (int)b, MPI_BYTE, 0, s->comm); }
static int lib_barrier(struct mpi_state *s, size_t b)
{
    (void)b;
    return MPI_Barrier(s->comm);
}
static int ring_allreduce(struct mpi_state *s, size_t b)
{
    return cbk_allreduce_ring((const float *)s->send, (float *)s->recv, b / sizeof(float), &s->coll);
}
static int rd_allreduce(struct mpi_state *s, size_t b)
{
    return cbk_allreduce_recursive_doubling((const float *)s->send, (float *)s->recv, b / sizeof(float), &s->coll);
}
static int rabenseifner_allreduce(struct mpi_state *s, size_t b)
{
    return cbk_allreduce_rabenseifner((const float *)s->send, (float *)s->recv, b / sizeof(float), &s->coll);
}
static int ring_allgather(struct mpi_state *s, size_t b) { return cbk_allgather_ring(s->send, s->recv, b, &s->coll); }
static int rd_allgather(struct mpi_state *s, size_t b)
{
    return cbk_allgather_recursive_doubling(s->send, s->recv, b, &s->coll);
}
static int binomial_bcast(struct mpi_state *s, size_t b) { return cbk_bcast_binomial(s->send, b, &s->coll); }
static int pairwise_alltoall(struct mpi_state *s, size_t b) { return cbk_alltoall_pairwise(s->send, s->recv, b, &s->coll); }
static int nothing(struct mpi_state *s, size_t b)
{
    (void)s;
    (void)b;
    return MPI_SUCCESS;
}

static coll_fn choose(enum op op, enum alg alg)
{
    switch (op) {
    case OP_ALLREDUCE:
        return alg == ALG_RING ? ring_allreduce
             : alg == ALG_RECURSIVE_DOUBLING ? rd_allreduce
             : alg == ALG_RABENSEIFNER ? rabenseifner_allreduce : lib_allreduce;
    case OP_REDUCE: return lib_reduce;
    case OP_ALLTOALL: return alg == ALG_PAIRWISE ? pairwise_alltoall : lib_alltoall;
    case OP_ALLGATHER: return alg == ALG_RING ? ring_allgather : alg == ALG_RECURSIVE_DOUBLING ? rd_allgather : lib_allgather;
    case OP_BCAST: return alg == ALG_BINOMIAL ? binomial_bcast : lib_bcast;
    case OP_BARRIER: return lib_barrier;
    default: return nothing;
    }
}

/* Timed loops. No allocation, output or data-dependent branch inside; one
 * clock read per iteration (two with a barrier between iterations). MPI
 * errors are fatal by default; return codes are OR-ed and checked after. */
static int coll_loop(struct mpi_state *s, size_t bytes, int64_t n)
{
    int rc = MPI_SUCCESS;
    coll_fn fn = s->fn;
    if (s->barrier_sync) {
        for (int64_t i = 0; i < n; i++) {
            rc |= MPI_Barrier(s->comm);
            double t0 = cbk_clock();
            rc |= fn(s, bytes);
            s->t[i] = cbk_clock() - t0;
        }
    } else {
        double prev = cbk_clock();
        for (int64_t i = 0; i < n; i++) {
            rc |= fn(s, bytes);
            double now = cbk_clock();
            s->t[i] = now - prev;
            prev = now;
        }
    }
    return rc;
}

/* One iteration = one round trip; both partners time from the end of one
 * round trip to the end of the next. */
static int pingpong_loop(struct mpi_state *s, size_t bytes, int64_t n)
{
    int rc = MPI_SUCCESS, tag = 1;
    double prev = cbk_clock();
    if (s->initiator) {
        for (int64_t i = 0; i < n; i++) {
            rc |= MPI_Send(s->send, (int)bytes, MPI_BYTE, s->partner, tag, s->comm);
            rc |= MPI_Recv(s->recv, (int)bytes, MPI_BYTE, s->partner, tag, s->comm, MPI_STATUS_IGNORE);
            double now = cbk_clock();
            s->t[i] = now - prev;
            prev = now;
        }
    } else {
        for (int64_t i = 0; i < n; i++) {
            rc |= MPI_Recv(s->recv, (int)bytes, MPI_BYTE, s->partner, tag, s->comm, MPI_STATUS_IGNORE);
            rc |= MPI_Send(s->send, (int)bytes, MPI_BYTE, s->partner, tag, s->comm);
            double now = cbk_clock();
            s->t[i] = now - prev;
            prev = now;
        }
    }
    return rc;
}

/* osu_bw's method: the sender posts `window` MPI_Isend of one buffer and
 * waits; the receiver posts `window` MPI_Irecv into one buffer, waits, and
 * answers with a 4-byte acknowledgement that closes the iteration. */
static int bw_loop(struct mpi_state *s, size_t bytes, int64_t n)
{
    int rc = MPI_SUCCESS, tag = 2, w = (int)s->window;
    char ack[4] = { 0 };
    double prev = cbk_clock();
    for (int64_t i = 0; i < n; i++) {
        if (s->initiator) {
            for (int j = 0; j < w; j++)
                rc |= MPI_Isend(s->send, (int)bytes, MPI_BYTE, s->partner, tag, s->comm, &s->req[j]);
            rc |= MPI_Waitall(w, s->req, MPI_STATUSES_IGNORE);
            rc |= MPI_Recv(ack, 4, MPI_BYTE, s->partner, tag + 1, s->comm, MPI_STATUS_IGNORE);
        } else {
            for (int j = 0; j < w; j++)
                rc |= MPI_Irecv(s->recv, (int)bytes, MPI_BYTE, s->partner, tag, s->comm, &s->req[j]);
            rc |= MPI_Waitall(w, s->req, MPI_STATUSES_IGNORE);
            rc |= MPI_Send(ack, 4, MPI_BYTE, s->partner, tag + 1, s->comm);
        }
        double now = cbk_clock();
        s->t[i] = now - prev;
        prev = now;
    }
    return rc;
}

/* osu_bibw's method: both partners post `window` receives and `window`
 * sends, then wait for all of them. */
static int bibw_loop(struct mpi_state *s, size_t bytes, int64_t n)
{
    int rc = MPI_SUCCESS, tag = 3, w = (int)s->window;
    double prev = cbk_clock();
    for (int64_t i = 0; i < n; i++) {
        for (int j = 0; j < w; j++)
            rc |= MPI_Irecv(s->recv, (int)bytes, MPI_BYTE, s->partner, tag, s->comm, &s->req[j]);
        for (int j = 0; j < w; j++)
            rc |= MPI_Isend(s->send, (int)bytes, MPI_BYTE, s->partner, tag, s->comm, &s->req[w + j]);
        rc |= MPI_Waitall(2 * w, s->req, MPI_STATUSES_IGNORE);
        double now = cbk_clock();
        s->t[i] = now - prev;
        prev = now;
    }
    return rc;
}

static int run_loop(struct mpi_state *s, size_t bytes, int64_t n)
{
    switch (s->plan.op) {
    case OP_PINGPONG: return s->active ? pingpong_loop(s, bytes, n) : MPI_SUCCESS;
    case OP_BW: return s->active ? bw_loop(s, bytes, n) : MPI_SUCCESS;
    case OP_BIBW: return s->active ? bibw_loop(s, bytes, n) : MPI_SUCCESS;
    default: return coll_loop(s, bytes, n);
    }
}

/* ---- the check: every collective's result, before it is timed ---- */

/* Exactly representable floats in [1, 2): any summation order of p of them
 * differs from the exact sum by at most about p * FLT_EPSILON relative. */
static float value_of(int rank, size_t i)
{
    return 1.0f + (float)(((uint64_t)rank * 7919u + (uint64_t)i * 104729u) % 1021u) / 1024.0f;
}

static unsigned char byte_of(int from, int to, size_t i)
{
    return (unsigned char)(from * 131 + to * 37 + (int)(i % 251) + 1);
}

struct check {
    const char *result;    /* "passed", "failed", "not applicable" */
    const char *reference; /* what the result was compared with */
    double max_rel_error, tolerance;
    uint64_t wrong;        /* elements or bytes that differ, summed over ranks */
    int64_t first_wrong;   /* index on the rank with the first difference, -1 */
};

static void fill_inputs(struct mpi_state *s, size_t bytes)
{
    int r = s->rank, p = s->size;
    switch (s->plan.op) {
    case OP_ALLREDUCE:
    case OP_REDUCE:
        for (size_t i = 0; i < bytes / sizeof(float); i++)
            ((float *)s->send)[i] = value_of(r, i);
        break;
    case OP_BCAST:
        for (size_t i = 0; i < bytes; i++)
            s->send[i] = r == 0 ? (char)byte_of(0, 0, i) : 0;
        break;
    case OP_ALLGATHER:
        for (size_t i = 0; i < bytes; i++)
            s->send[i] = (char)byte_of(r, 0, i);
        memset(s->recv, 0, bytes * (size_t)p);
        break;
    case OP_ALLTOALL:
        for (int to = 0; to < p; to++)
            for (size_t i = 0; i < bytes; i++)
                s->send[(size_t)to * bytes + i] = (char)byte_of(r, to, i);
        memset(s->recv, 0, bytes * (size_t)p);
        break;
    default:
        break;
    }
}

/* Relative error of `got` against `want`, element by element. */
static void compare_floats(const float *got, const double *want_d, const float *want_f, size_t n, struct check *k)
{
    for (size_t i = 0; i < n; i++) {
        double want = want_d ? want_d[i] : (double)want_f[i];
        double err = fabs((double)got[i] - want) / fabs(want);
        if (err > k->max_rel_error)
            k->max_rel_error = err;
        if (!(err <= k->tolerance)) {
            if (k->first_wrong < 0)
                k->first_wrong = (int64_t)i;
            k->wrong++;
        }
    }
}

/* What rank `s->rank` must hold at byte i of a result of `blocks` blocks
 * of `bytes`: block b came from rank b (allgather, alltoall) or rank 0. */
static void compare_bytes(const struct mpi_state *s, const char *got, int blocks, size_t bytes, struct check *k)
{
    enum op op = s->plan.op;
    for (int b = 0; b < blocks; b++)
        for (size_t i = 0; i < bytes; i++) {
            unsigned char want = op == OP_ALLTOALL ? byte_of(b, s->rank, i) : byte_of(b, 0, i);
            if ((unsigned char)got[(size_t)b * bytes + i] != want) {
                if (k->first_wrong < 0)
                    k->first_wrong = (int64_t)((size_t)b * bytes + i);
                k->wrong++;
            }
        }
}

/* Runs the operation once on known data and compares. Hand-written
 * allreduce algorithms are compared element by element with MPI_Allreduce
 * on the same data; the library's own reductions with the exact sum
 * (computed here in double from every rank's known data); data movement
 * byte by byte with what each rank must hold. */
static int check_size(struct mpi_state *s, size_t bytes, struct check *k)
{
    *k = (struct check){ "not applicable", NULL, 0.0, 0.0, 0, -1 };
    enum op op = s->plan.op;
    if (op != OP_ALLREDUCE && op != OP_REDUCE && op != OP_BCAST && op != OP_ALLGATHER && op != OP_ALLTOALL)
        return 0;
    fill_inputs(s, bytes);
    size_t n = bytes / sizeof(float);
    k->tolerance = 2.0 * s->size * FLT_EPSILON;
    int rc = MPI_SUCCESS;
    if (op == OP_ALLREDUCE && s->plan.alg != ALG_LIBRARY) {
        k->reference = "MPI_Allreduce";
        rc |= MPI_Allreduce(s->send, s->ref, (int)n, MPI_FLOAT, MPI_SUM, s->comm);
        rc |= s->fn(s, bytes);
        compare_floats((const float *)s->recv, NULL, (const float *)s->ref, n, k);
    } else if (op == OP_ALLREDUCE || op == OP_REDUCE) {
        k->reference = "exact sum";
        rc |= s->fn(s, bytes);
        if (op == OP_ALLREDUCE || s->rank == 0) {
            double *exact = (double *)s->ref; /* ref holds max-size * 2 bytes: n doubles fit */
            for (size_t i = 0; i < n; i++) {
                exact[i] = 0.0;
                for (int q = 0; q < s->size; q++)
                    exact[i] += (double)value_of(q, i);
            }
            compare_floats((const float *)s->recv, exact, NULL, n, k);
        }
    } else {
        k->reference = "expected bytes";
        k->tolerance = 0.0;
        rc |= s->fn(s, bytes);
        if (op == OP_BCAST)
            compare_bytes(s, s->send, 1, bytes, k);
        else
            compare_bytes(s, s->recv, s->size, bytes, k);
    }
    /* every rank learns the outcome, so all stop together */
    struct { double err; int rank; } in = { k->max_rel_error, s->rank }, worst;
    uint64_t wrong = k->wrong, wrong_all;
    rc |= MPI_Allreduce(&in, &worst, 1, MPI_DOUBLE_INT, MPI_MAXLOC, s->comm);
    rc |= MPI_Allreduce(&wrong, &wrong_all, 1, MPI_UINT64_T, MPI_SUM, s->comm);
    int64_t first = k->first_wrong < 0 ? INT64_MAX : k->first_wrong, first_all;
    rc |= MPI_Allreduce(&first, &first_all, 1, MPI_INT64_T, MPI_MIN, s->comm);
    k->max_rel_error = worst.err;
    k->wrong = wrong_all;
    k->first_wrong = first_all == INT64_MAX ? -1 : first_all;
    k->result = wrong_all ? "failed" : "passed";
    return rc;
}

/* ---- setup ---- */

/* The MPI library's run-time settings (collective algorithms, transports):
 * the prefixes of clusterbench.environment.software.MPI_ENV_PREFIXES, less
 * the per-job internals Open MPI's launcher sets (LAUNCHER_INTERNAL_PREFIXES). */
static bool is_tuning_variable(const char *entry)
{
    static const char *const prefixes[] = { "MPIR_CVAR_", "OMPI_MCA_", "I_MPI_", "UCX_", "FI_", "MV2_", "PSM2_", "HCOLL_" };
    static const char *const internal[] = { "OMPI_MCA_orte_", "OMPI_MCA_ess_", "OMPI_MCA_pmix", "OMPI_MCA_prte_",
                                            "OMPI_MCA_initial_wdir", "OMPI_MCA_ras_" };
    for (size_t i = 0; i < sizeof internal / sizeof *internal; i++)
        if (!strncmp(entry, internal[i], strlen(internal[i])))
            return false;
    for (size_t i = 0; i < sizeof prefixes / sizeof *prefixes; i++)
        if (!strncmp(entry, prefixes[i], strlen(prefixes[i])))
            return true;
    return false;
}

static void placement(struct cbk_ctx *c, struct mpi_state *s)
{
    int p = s->size, r = s->rank, *node_of = calloc((size_t)p, sizeof *node_of);
    if (!node_of)
        cbk_fail(c, CBK_EXIT_FAILED, "mpi: out of memory");
    /* node id = lowest world rank sharing memory with this one */
    MPI_Comm node;
    int leader;
    MPI_Comm_split_type(s->comm, MPI_COMM_TYPE_SHARED, r, MPI_INFO_NULL, &node);
    MPI_Allreduce(&r, &leader, 1, MPI_INT, MPI_MIN, node);
    MPI_Comm_free(&node);
    MPI_Allgather(&leader, 1, MPI_INT, node_of, 1, MPI_INT, s->comm);
    MPI_Allreduce(&c->node_size, &s->ranks_per_node_min, 1, MPI_INT, MPI_MIN, s->comm);
    MPI_Allreduce(&c->node_size, &s->ranks_per_node_max, 1, MPI_INT, MPI_MAX, s->comm);
    int over = c->node_size > sysconf(_SC_NPROCESSORS_ONLN), any_over;
    MPI_Allreduce(&over, &any_over, 1, MPI_INT, MPI_MAX, s->comm);
    s->oversubscribed = any_over;

    const char *pairing = cbk_arg_text(c->args, "pairing");
    s->active = true;
    if (!strcmp(pairing, "half")) {
        s->initiator = r < p / 2;
        s->partner = s->initiator ? r + p / 2 : r - p / 2;
        s->pairs = p / 2;
    } else if (!strcmp(pairing, "neighbour")) {
        s->initiator = r % 2 == 0;
        s->partner = r ^ 1;
        s->pairs = p / 2;
    } else {
        s->active = r < 2;
        s->initiator = r == 0;
        s->partner = r == 0 ? 1 : 0;
        s->pairs = 1;
    }
    s->pairs_same_node = 0;
    for (int a = 0; a < p && p >= 2; a++) {
        int b = !strcmp(pairing, "half") ? a + p / 2 : !strcmp(pairing, "neighbour") ? a + 1 : 1;
        bool first_of_pair = !strcmp(pairing, "half") ? a < p / 2 : !strcmp(pairing, "neighbour") ? a % 2 == 0 : a == 0;
        if (first_of_pair && b < p && node_of[a] == node_of[b])
            s->pairs_same_node++;
    }
    free(node_of);
}

static int setup(const struct cbk_args *a, struct cbk_ctx *c)
{
    struct mpi_state *s = calloc(1, sizeof *s);
    if (!s)
        cbk_fail(c, CBK_EXIT_FAILED, "mpi: out of memory");
    c->state = s;
    char why[512];
    if (make_plan(a, c, &s->plan, why, sizeof why))
        cbk_fail(c, CBK_EXIT_BAD_INPUT, "mpi: %s", why);
    s->info = &ops[s->plan.op];
    s->comm = c->comm;
    s->rank = c->rank;
    s->size = c->size;
    s->iterations = cbk_arg_int(a, "iterations");
    s->min_iterations = cbk_arg_int(a, "min-iterations");
    s->warmup = cbk_arg_int(a, "warmup");
    s->window = cbk_arg_int(a, "window");
    s->volume_bytes = cbk_arg_size(a, "volume");
    s->barrier_sync = !strcmp(cbk_arg_text(a, "sync"), "barrier");
    s->fn = choose(s->plan.op, s->plan.alg);
    s->coll = (struct cbk_coll){ .comm = c->comm, .rank = c->rank, .size = c->size };
    const char *broken = getenv("CBK_TEST_MPI_BROKEN");
    if (broken && s->plan.op == OP_ALLREDUCE && !strcmp(broken, alg_names[s->plan.alg]))
        s->coll.drop_steps = 1;

    size_t largest = (size_t)s->plan.size[s->plan.sizes - 1];
    size_t per_rank = largest ? largest : 1;
    size_t send_bytes = per_rank, recv_bytes = per_rank;
    if (s->plan.op == OP_ALLTOALL)
        send_bytes = recv_bytes = per_rank * (size_t)c->size;
    if (s->plan.op == OP_ALLGATHER)
        recv_bytes = per_rank * (size_t)c->size;
    s->send = cbk_buffer_alloc(send_bytes);
    s->recv = cbk_buffer_alloc(recv_bytes);
    /* the warm-up loop times its iterations too, and may run more of them
     * than the timed loop (--warmup=100 --iterations=10) */
    size_t timed_slots = (size_t)(s->warmup > s->iterations ? s->warmup : s->iterations);
    s->t = calloc(timed_slots, sizeof *s->t);
    s->t_max = calloc(timed_slots, sizeof *s->t_max);
    s->req = calloc(2 * (size_t)s->window, sizeof *s->req);
    if (s->info->reduction) {
        /* ref: MPI_Allreduce's result, or the exact sums in double */
        s->ref = cbk_buffer_alloc(2 * per_rank);
        s->coll.scratch = cbk_buffer_alloc(per_rank);
    }
    if (!s->send || !s->recv || !s->t || !s->t_max || !s->req || (s->info->reduction && (!s->ref || !s->coll.scratch)))
        cbk_fail(c, CBK_EXIT_FAILED, "mpi: cannot allocate buffers for %zu-byte messages on %d ranks", largest, c->size);

    placement(c, s);
    if (c->rank == 0)
        for (char **e = environ; *e && s->tunings < MAX_TUNING; e++)
            if (is_tuning_variable(*e))
                s->tuning[s->tunings++] = *e;
    return 0;
}

static void teardown(const struct cbk_args *a, struct cbk_ctx *c)
{
    (void)a;
    struct mpi_state *s = c->state;
    if (!s)
        return;
    cbk_buffer_free(s->send);
    cbk_buffer_free(s->recv);
    cbk_buffer_free(s->ref);
    cbk_buffer_free(s->coll.scratch);
    free(s->t);
    free(s->t_max);
    free(s->req);
    free(s);
    c->state = NULL;
}

/* ---- per-size statistics and the record ---- */

struct stats {
    double avg, min, max;     /* over ranks of each rank's mean iteration time (IMB t_avg/t_min/t_max) */
    double median, p99, best; /* over iterations of the slowest rank's time */
};

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

static int reduce_stats(struct mpi_state *s, int64_t n, double scale, struct stats *st)
{
    double sum = 0.0;
    for (int64_t i = 0; i < n; i++) {
        s->t[i] *= scale;
        sum += s->t[i];
    }
    /* ranks idle in a point-to-point test do not count */
    double mean = s->active ? sum / (double)n : 0.0, lo_in = s->active ? mean : DBL_MAX;
    double sums[2] = { mean, s->active ? 1.0 : 0.0 }, tot[2] = { 0, 0 };
    int rc = MPI_Reduce(sums, tot, 2, MPI_DOUBLE, MPI_SUM, 0, s->comm);
    rc |= MPI_Reduce(&lo_in, &st->min, 1, MPI_DOUBLE, MPI_MIN, 0, s->comm);
    rc |= MPI_Reduce(&mean, &st->max, 1, MPI_DOUBLE, MPI_MAX, 0, s->comm);
    if (!s->active)
        memset(s->t, 0, (size_t)n * sizeof *s->t);
    rc |= MPI_Reduce(s->t, s->t_max, (int)n, MPI_DOUBLE, MPI_MAX, 0, s->comm);
    if (s->rank == 0) {
        st->avg = tot[0] / tot[1];
        qsort(s->t_max, (size_t)n, sizeof *s->t_max, cmp_double);
        st->median = n % 2 ? s->t_max[n / 2] : 0.5 * (s->t_max[n / 2 - 1] + s->t_max[n / 2]);
        int64_t k = (int64_t)ceil(0.99 * (double)n) - 1; /* nearest rank */
        st->p99 = s->t_max[k < 0 ? 0 : k];
        st->best = s->t_max[0];
    }
    return rc;
}

static void write_tuning(struct cbk_json *j, const struct mpi_state *s)
{
    cbk_json_object(j, "library_tuning");
    for (int i = 0; i < s->tunings; i++) {
        const char *eq = strchr(s->tuning[i], '=');
        char name[256];
        snprintf(name, sizeof name, "%.*s", (int)(eq - s->tuning[i]), s->tuning[i]);
        cbk_json_text(j, name, eq + 1);
    }
    cbk_json_close(j);
    /* the variable that selects this operation's library algorithm, if set */
    const char *sel = NULL;
    for (int i = 0; i < s->tunings && s->plan.alg == ALG_LIBRARY; i++)
        for (int v = 0; v < 2; v++) {
            const char *name = v ? s->info->mca : s->info->cvar;
            size_t len = name ? strlen(name) : 0;
            if (name && !strncmp(s->tuning[i], name, len) && s->tuning[i][len] == '=')
                sel = s->tuning[i];
        }
    cbk_json_text(j, "library_selection", sel ? sel : s->plan.alg == ALG_LIBRARY ? "default" : NULL);
}

static void write_record(struct cbk_ctx *c, const struct mpi_state *s, uint64_t size, int64_t n, int64_t warm,
                         const struct stats *st, const struct check *k)
{
    const struct op_info *info = s->info;
    enum op op = s->plan.op;
    bool bw = op == OP_BW || op == OP_BIBW;
    /* bytes one iteration moves, so that rate = bytes / seconds for bandwidths */
    uint64_t per_pair = bw ? size * (uint64_t)s->window * (op == OP_BIBW ? 2u : 1u) : size;
    uint64_t bytes = bw ? per_pair * (uint64_t)s->pairs : size;
    struct cbk_json j;
    cbk_record_begin(&j, c->out, c, "measurement");
    cbk_json_text(&j, "phase", info->name);
    cbk_json_text(&j, "mode", alg_names[s->plan.alg]);
    cbk_json_i64(&j, "ranks", s->size);
    cbk_json_i64(&j, "nodes", c->nodes);
    cbk_json_i64(&j, "ranks_per_node", s->ranks_per_node_max);
    cbk_json_i64(&j, "ranks_per_node_min", s->ranks_per_node_min);
    cbk_json_u64(&j, "size_bytes", size);
    cbk_json_text(&j, "element_type", !info->sized ? NULL : info->reduction ? "MPI_FLOAT" : "MPI_BYTE");
    cbk_json_u64(&j, "count", !info->sized ? 0 : info->reduction ? size / sizeof(float) : size);
    cbk_json_i64(&j, "iterations", n);
    cbk_json_i64(&j, "warmup_iterations", warm);
    cbk_json_u64(&j, "bytes", bytes);
    cbk_json_u64(&j, "ops", (uint64_t)n);
    cbk_json_real(&j, "seconds", st->avg);
    if (bw) {
        cbk_json_real(&j, "rate", (double)bytes / st->avg / 1048576.0);
        cbk_json_text(&j, "rate_unit", "MiB/s");
        cbk_json_real(&j, "rate_decimal", (double)bytes / st->avg / 1e6);
        cbk_json_text(&j, "rate_decimal_unit", "MB/s");
        cbk_json_real(&j, "messages_per_s", (double)s->window * s->pairs * (op == OP_BIBW ? 2 : 1) / st->avg);
    } else {
        cbk_json_real(&j, "rate", st->avg * 1e6);
        cbk_json_text(&j, "rate_unit", "us");
    }
    cbk_json_real(&j, "t_avg_us", st->avg * 1e6);
    cbk_json_real(&j, "t_min_us", st->min * 1e6);
    cbk_json_real(&j, "t_max_us", st->max * 1e6);
    cbk_json_real(&j, "median_us", st->median * 1e6);
    cbk_json_real(&j, "p99_us", st->p99 * 1e6);
    cbk_json_real(&j, "iteration_min_us", st->best * 1e6);
    if (info->kind == PT2PT) {
        /* per pair: IMB PingPong's and osu_bw's figure; rate above sums the pairs */
        cbk_json_real(&j, "bandwidth_mib_s", (double)per_pair / st->avg / 1048576.0);
        cbk_json_real(&j, "bandwidth_mb_s", (double)per_pair / st->avg / 1e6);
        cbk_json_text(&j, "pairing", cbk_arg_text(c->args, "pairing"));
        cbk_json_i64(&j, "pairs", s->pairs);
        cbk_json_i64(&j, "pairs_same_node", s->pairs_same_node);
        if (s->pairs_same_node == s->pairs || s->pairs_same_node == 0)
            cbk_json_bool(&j, "same_node", s->pairs_same_node == s->pairs);
        else
            cbk_json_null(&j, "same_node");
        if (bw)
            cbk_json_i64(&j, "window", s->window);
    } else {
        cbk_json_text(&j, "sync", s->barrier_sync ? "barrier" : "none");
    }
    cbk_json_text(&j, "check", k->result);
    cbk_json_text(&j, "check_reference", k->reference);
    if (k->reference) {
        cbk_json_real(&j, "check_max_rel_error", k->max_rel_error);
        cbk_json_real(&j, "check_tolerance", k->tolerance);
    }
    write_tuning(&j, s);
    cbk_json_array(&j, "warnings");
    if (s->oversubscribed)
        cbk_json_text(&j, NULL, "oversubscribed: a node runs more ranks than it has online CPUs, so timings include time-slicing");
    if (info->kind == PT2PT && s->pairs_same_node && s->pairs_same_node < s->pairs)
        cbk_json_text(&j, NULL, "pairs are mixed: some share a node (shared memory), some do not (network)");
    cbk_json_close(&j);
    cbk_json_end(&j);
}

static void check_failed(struct cbk_ctx *c, const struct mpi_state *s, uint64_t size, const struct check *k)
{
    if (c->rank != 0)
        return;
    char msg[512], b[32];
    snprintf(msg, sizeof msg, "mpi: %s %s at %s gives a wrong result: %llu %s (over all ranks) differ from %s (first at index %lld; "
             "largest relative error %.3g, tolerance %.3g)",
             s->info->name, alg_names[s->plan.alg], cbk_format_size(size, b, sizeof b), (unsigned long long)k->wrong,
             s->info->reduction ? "elements" : "bytes", k->reference, (long long)k->first_wrong, k->max_rel_error,
             k->tolerance);
    struct cbk_json j;
    cbk_record_begin(&j, stderr, c, "error");
    cbk_json_i64(&j, "status", CBK_EXIT_FAILED);
    cbk_json_i64(&j, "rank", c->rank);
    cbk_json_text(&j, "message", msg);
    cbk_json_end(&j);
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

static int run(const struct cbk_args *a, struct cbk_ctx *c)
{
    (void)a;
    struct mpi_state *s = c->state;
    for (int i = 0; i < s->plan.sizes; i++) {
        uint64_t size = s->plan.size[i];
        int64_t n, warm;
        schedule(s, size, &n, &warm);
        struct check k;
        int rc = check_size(s, size, &k);
        if (rc == MPI_SUCCESS && k.wrong) {
            check_failed(c, s, size, &k);
            return CBK_EXIT_FAILED;
        }
        rc |= MPI_Barrier(s->comm);
        rc |= run_loop(s, size, warm);
        rc |= MPI_Barrier(s->comm);
        rc |= run_loop(s, size, n);
        struct stats st;
        rc |= reduce_stats(s, n, s->plan.op == OP_PINGPONG ? 0.5 : 1.0, &st);
        if (rc != MPI_SUCCESS)
            cbk_fail(c, CBK_EXIT_FAILED, "mpi: %s failed at %llu bytes (MPI error %d)", s->info->name,
                     (unsigned long long)size, rc);
        if (c->rank == 0)
            write_record(c, s, size, n, warm, &st, &k);
    }
    return CBK_EXIT_OK;
}

const struct cbk_kernel cbk_kernel_mpi = {
    .name = "mpi",
    .summary = "MPI point-to-point and collectives over message sizes, with algorithm variants (E7)",
    .flags = CBK_PARALLEL,
    .params = params,
    .validate = validate,
    .setup = setup,
    .run = run,
    .teardown = teardown,
};
