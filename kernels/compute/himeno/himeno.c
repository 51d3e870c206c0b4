/* himeno: the Himeno benchmark (RIKEN), a Jacobi sweep of a 19-point
 * Poisson-pressure stencil in single precision, with the coefficients,
 * initial conditions and omega of the reference himenoBMTxpa.c (E9).
 * Serial, OpenMP threads, MPI with a 3-D Cartesian decomposition and halo
 * exchange, or both. Flops: 34 per interior point per iteration.
 * Here: parameters, modes, decomposition, halo exchange and records; the
 * sweep itself is himeno_stencil.c, the shared state himeno.h. */
#include "../../core/affinity.h"
#include "../../core/buffer.h"
#include "../../core/cbk.h"
#include "../../core/timer.h"
#include "himeno.h"

#include <errno.h>
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum himeno_size { HIMENO_SIZE_XS, HIMENO_SIZE_S, HIMENO_SIZE_M, HIMENO_SIZE_L, HIMENO_SIZE_XL };
static const char *const size_names[] = { "XS", "S", "M", "L", "XL", NULL };
enum himeno_mode { HIMENO_MODE_ITERATIONS, HIMENO_MODE_TIME };
static const char *const mode_names[] = { "iterations", "time", NULL };
enum himeno_update { HIMENO_UPDATE_COPY, HIMENO_UPDATE_SWAP };
static const char *const update_names[] = { "copy", "swap", NULL };
enum himeno_gosa_order { HIMENO_GOSA_ORDER_DEFAULT, HIMENO_GOSA_ORDER_REFERENCE };
static const char *const gosa_order_names[] = { "default", "reference", NULL };

struct himeno_options {
    enum himeno_size size;
    const char *grid;
    enum himeno_mode mode;
    int64_t iterations;
    double seconds;
    struct cbk_thread_options threads;
    enum himeno_update update;
    const char *decomposition;
    enum himeno_gosa_order gosa_order;
};
#define OPT struct himeno_options
static const OPT *opt(const struct cbk_args *a) { return cbk_options(a); }

static const struct cbk_param params[] = {
    { .name = "size", CBK_AT_CHOICE(OPT, size, size_names), .default_value = "M",
      .help = "grid as himenoBMTxpa defines it: XS 32x32x64, S 64x64x128, M 128x128x256, L 256x256x512, XL 512x512x1024 points" },
    { .name = "grid", CBK_AT_STRING(OPT, grid), .default_value = "size", .keyword = "size",
      .help = "explicit grid IxJxK in points (each >= 3), boundary included; overrides --size (default: size = use --size)" },
    { .name = "mode", CBK_AT_CHOICE(OPT, mode, mode_names), .default_value = "iterations",
      .help = "iterations = run --iterations sweeps; time = calibrate with 3 sweeps as the reference does (the fastest of such batches over 2 % of --seconds), then run for --seconds" },
    { .name = "iterations", CBK_AT_INT(OPT, iterations), .default_value = "100", .unit = "count", .min = "1", .max = "100000000",
      .help = "sweeps in iterations mode" },
    { .name = "seconds", CBK_AT_REAL(OPT, seconds), .default_value = "60", .unit = "s", .min = "0.001", .max = "86400",
      .help = "target run time in time mode (the reference uses 60)" },
    CBK_THREAD_PARAMS(OPT, threads, "1", "OpenMP threads per rank; 0 = this rank's share of the CPUs it may use"),
    { .name = "update", CBK_AT_CHOICE(OPT, update, update_names), .default_value = "copy",
      .help = "copy = copy the new values back into p after each sweep, as the reference does (same memory traffic); swap = exchange the two arrays instead (less traffic, same GOSA)" },
    { .name = "decomposition", CBK_AT_STRING(OPT, decomposition), .default_value = "auto", .keyword = "auto",
      .help = "MPI process grid PxQxR over the I, J, K axes (product = ranks); auto = MPI_Dims_create" },
    { .name = "gosa-order", CBK_AT_CHOICE(OPT, gosa_order, gosa_order_names), .default_value = "default",
      .help = "reference = one thread, one rank, GOSA summed point by point in the reference's order (bit-comparable GOSA); default = vectorised per-row sums" },
    { 0 },
};

static const int size_points[][3] = {
    [HIMENO_SIZE_XS] = { 32, 32, 64 },    [HIMENO_SIZE_S] = { 64, 64, 128 },   [HIMENO_SIZE_M] = { 128, 128, 256 },
    [HIMENO_SIZE_L] = { 256, 256, 512 },  [HIMENO_SIZE_XL] = { 512, 512, 1024 },
};

#define FLOPS_PER_POINT 34.0

static int parse_triple(const char *text, int out[3])
{
    char tail;
    return sscanf(text, "%dx%dx%d%c", &out[0], &out[1], &out[2], &tail) == 3 ? 0 : -1;
}

static bool explicit_grid(const struct cbk_args *a) { return opt(a)->grid != NULL; }

static void grid_of(const struct cbk_args *a, int m[3])
{
    const char *g = opt(a)->grid;
    if (explicit_grid(a) && !parse_triple(g, m))
        return;
    memcpy(m, size_points[opt(a)->size], sizeof size_points[0]);
}

/* Process grid: given, or MPI_Dims_create's balanced one. */
static int dims_of(const struct cbk_args *a, const struct cbk_ctx *c, int dims[3], char *why, size_t len)
{
    const char *d = opt(a)->decomposition;
    if (!d) {
        dims[0] = dims[1] = dims[2] = 0;
#ifdef CBK_HAVE_MPI
        if (c->size > 1) {
            MPI_Dims_create(c->size, 3, dims);
            return 0;
        }
#endif
        dims[0] = dims[1] = dims[2] = 1;
        return 0;
    }
    if (parse_triple(d, dims) || dims[0] < 1 || dims[1] < 1 || dims[2] < 1) {
        snprintf(why, len, "--decomposition=%s: expected PxQxR with positive integers, or auto", d);
        return -1;
    }
    if ((long)dims[0] * dims[1] * dims[2] != c->size) {
        snprintf(why, len, "--decomposition=%s has %ld parts but there are %d ranks", d,
                 (long)dims[0] * dims[1] * dims[2], c->size);
        return -1;
    }
    return 0;
}

static int validate(const struct cbk_args *a, struct cbk_ctx *c, char *why, size_t len)
{
    int m[3] = { 0, 0, 0 };
    const char *g = opt(a)->grid;
    if (explicit_grid(a) && (parse_triple(g, m) || m[0] < 3 || m[1] < 3 || m[2] < 3 || m[0] > 65536 || m[1] > 65536 || m[2] > 65536)) {
        snprintf(why, len, "--grid=%s: expected IxJxK points, each between 3 and 65536", g);
        return -1;
    }
    grid_of(a, m);
    if (cbk_thread_check(&opt(a)->threads, c->node_size, why, len))
        return -1;
    int threads = cbk_thread_count(&opt(a)->threads, c->node_size);
    if (opt(a)->gosa_order == HIMENO_GOSA_ORDER_REFERENCE && (threads != 1 || c->size != 1)) {
        snprintf(why, len, "--gosa-order=reference sums in one order: it needs --threads=1 and one rank (have %d threads, %d ranks)",
                 threads, c->size);
        return -1;
    }
    int dims[3];
    if (dims_of(a, c, dims, why, len))
        return -1;
    static const char axis[] = "IJK";
    for (int d = 0; d < 3; d++)
        if (dims[d] > m[d] - 2) {
            snprintf(why, len, "decomposition %dx%dx%d does not divide the grid %dx%dx%d: %d parts along %c but only %d interior points",
                     dims[0], dims[1], dims[2], m[0], m[1], m[2], dims[d], axis[d], m[d] - 2);
            return -1;
        }
    /* a rank's share, times the ranks on this node: p and wrk2 with halos
     * and padding, 12 coefficient fields on the interior in whole tiles */
    double ni = ceil((double)(m[0] - 2) / dims[0]), nj = ceil((double)(m[1] - 2) / dims[1]),
           nk = ceil((double)(m[2] - 2) / dims[2]);
    double bytes = 4.0 * c->node_size *
                   (2.0 * (ni + 2) * (nj + 3) * (nk + 3) + COEF_FIELDS * ni * nj * ceil(nk / COEF_TILE) * COEF_TILE);
    long avail = cbk_mem_available_kib();
    if (avail > 0 && bytes > 0.9 * 1024.0 * (double)avail) {
        snprintf(why, len, "grid %dx%dx%d needs %.1f GiB on this node but only %.1f GiB is available%s",
                 m[0], m[1], m[2], bytes / 1073741824.0, (double)avail / 1048576.0, cbk_mem_available_note());
        return -1;
    }
    return 0;
}

static void decompose(struct himeno *h)
{
    for (int d = 0; d < 3; d++) {
        int interior = h->m[d] - 2, base = interior / h->dims[d], rem = interior % h->dims[d];
        int k = h->coords[d];
        h->n[d] = base + (k < rem ? 1 : 0);
        h->off[d] = k * base + (k < rem ? k : rem); /* global index of local index 0 */
    }
    /* odd row and plane lengths, as the reference's MKMAX = kmax+1: with
     * power-of-two lengths the 9 rows the stencil reads map to few cache sets */
    h->sj = (h->n[2] + 2) | 1;
    h->si = (ptrdiff_t)((h->n[1] + 2) | 1) * h->sj;
    h->cells = (size_t)(h->n[0] + 2) * (size_t)h->si;
    h->tiles = (h->n[2] + COEF_TILE - 1) / COEF_TILE;
    h->last_k0 = h->n[2] > COEF_TILE ? h->n[2] - COEF_TILE : 0;
    h->coef_floats = (size_t)h->n[0] * (size_t)h->n[1] * (size_t)h->tiles * COEF_FIELDS * COEF_TILE;
}

/* Initial conditions of himenoBMTxpa: p(i,j,k) = i^2/(mimax-1)^2 along the
 * first axis; a = 1,1,1,1/6; b = 0; c = 1; bnd = 1; wrk1 = 0. wrk2 starts
 * as a copy of p so the two can swap roles (boundaries never change).
 * Written by the threads that will compute on them: first touch places
 * the pages on their NUMA node. */
static void init_arrays(struct himeno *h, bool pressure_only)
{
    const int ni = h->n[0], nj = h->n[1], nk = h->n[2];
    const float denom = (float)((h->m[0] - 1) * (h->m[0] - 1));
#ifdef CBK_HAVE_OPENMP
#pragma omp parallel for collapse(2) schedule(static) num_threads(h->team.threads)
#endif
    for (int i = 0; i <= ni + 1; i++)
        for (int j = 0; j <= nj + 1; j++) {
            int gi = h->off[0] + i;
            float pv = (float)(gi * gi) / denom;
            for (int k = 0; k <= nk + 1; k++) {
                size_t x = (size_t)i * (size_t)h->si + (size_t)j * (size_t)h->sj + (size_t)k;
                h->p[x] = pv;
                h->wrk2[x] = pv;
            }
        }
    if (pressure_only)
        return;
    static const float value[COEF_FIELDS] = {
        [A0] = 1.0f, [A1] = 1.0f, [A2] = 1.0f, [A3] = (float)(1.0 / 6.0), [B0] = 0.0f, [B1] = 0.0f,
        [B2] = 0.0f, [C0] = 1.0f, [C1] = 1.0f, [C2] = 1.0f, [BND] = 1.0f, [WRK1] = 0.0f,
    };
#ifdef CBK_HAVE_OPENMP
#pragma omp parallel for collapse(2) schedule(static) num_threads(h->team.threads)
#endif
    for (int i = 1; i <= ni; i++)
        for (int j = 1; j <= nj; j++) {
            float *row = h->coef + coef_row(h, i, j);
            for (int t = 0; t < h->tiles; t++)
                for (int f = 0; f < COEF_FIELDS; f++)
                    for (int kk = 0; kk < COEF_TILE; kk++) /* past nk (nk < 16): never read, zero */
                        row[((size_t)t * COEF_FIELDS + (size_t)f) * COEF_TILE + (size_t)kk] =
                            tile_k0(h, t) + kk < nk ? value[f] : 0.0f;
        }
}

#ifdef CBK_HAVE_MPI
/* Faces in axis order I, J, K; each later exchange includes the halos the
 * earlier ones filled, so the edge points the diagonal terms read
 * (i+-1, j+-1), (j+-1, k+-1), (i+-1, k+-1) arrive too. */
static void exchange(struct himeno *h)
{
    if (h->cart == MPI_COMM_NULL)
        return;
    const ptrdiff_t s[3] = { h->si, h->sj, 1 };
    for (int d = 0; d < 3; d++) {
        /* the face's first element: index 1 along d, and 1 along the axes
         * after d (0 along the axes before d, whose halos it carries) */
        ptrdiff_t base = 0;
        for (int e = d + 1; e < 3; e++)
            base += s[e];
        ptrdiff_t lo_in = base + s[d], hi_in = base + h->n[d] * s[d];
        ptrdiff_t lo_halo = base, hi_halo = base + (h->n[d] + 1) * s[d];
        MPI_Sendrecv(h->p + hi_in, 1, h->face[d], h->hi[d], d, h->p + lo_halo, 1, h->face[d], h->lo[d], d,
                     h->cart, MPI_STATUS_IGNORE);
        MPI_Sendrecv(h->p + lo_in, 1, h->face[d], h->lo[d], 3 + d, h->p + hi_halo, 1, h->face[d], h->hi[d], 3 + d,
                     h->cart, MPI_STATUS_IGNORE);
    }
}
#endif

static double iterate(struct himeno *h, struct cbk_ctx *c, bool reference, long iterations)
{
    double gosa = 0.0;
    (void)c;
    for (long n = 0; n < iterations; n++) {
#ifdef CBK_HAVE_MPI
        exchange(h);
#endif
        double own = reference ? himeno_sweep_reference(h) : himeno_sweep(h);
#ifdef CBK_HAVE_MPI
        /* the reference MPI version reduces GOSA every sweep, too */
        if (c->size > 1)
            MPI_Allreduce(&own, &gosa, 1, MPI_DOUBLE, MPI_SUM, c->comm);
        else
            gosa = own;
#else
        gosa = own;
#endif
    }
    return gosa;
}

static double max_over_ranks(struct cbk_ctx *c, double v)
{
#ifdef CBK_HAVE_MPI
    double out = v;
    if (c->size > 1)
        MPI_Allreduce(&v, &out, 1, MPI_DOUBLE, MPI_MAX, c->comm);
    return out;
#else
    (void)c;
    return v;
#endif
}

static float *alloc_floats(struct cbk_ctx *c, size_t n)
{
    void *p = NULL;
    int rc = posix_memalign(&p, 64, n * sizeof(float));
    if (rc)
        cbk_fail(c, CBK_EXIT_FAILED, "himeno: cannot allocate %zu bytes: %s", n * sizeof(float), strerror(rc));
    return p; /* not touched here: the computing threads touch it first */
}

static void release_arrays(struct himeno *h)
{
    free(h->coef);
    free(h->pw);
    h->coef = h->pw = h->p = h->wrk2 = NULL;
}

/* wrk2 starts 17 cache lines past a 64-float multiple after p: two arrays
 * of equal power-of-two size would otherwise share cache sets point by point. */
static size_t wrk2_offset(const struct himeno *h) { return (h->cells + 15) / 16 * 16 + 17 * 16; }

/* Threads placed first, then the arrays allocated and first-touched by
 * them, so each thread's rows live on its own NUMA node. */
static void prepare(const struct cbk_args *a, struct cbk_ctx *c, struct himeno *h, int threads)
{
    release_arrays(h);
    cbk_thread_team_place(&h->team, &opt(a)->threads, threads, c, "himeno");
    h->coef = alloc_floats(c, h->coef_floats);
    h->pw = alloc_floats(c, wrk2_offset(h) + h->cells);
    h->p = h->pw;
    h->wrk2 = h->pw + wrk2_offset(h);
    init_arrays(h, false);
}

static int setup(const struct cbk_args *a, struct cbk_ctx *c)
{
    struct himeno *h = calloc(1, sizeof *h);
    if (!h)
        cbk_fail(c, CBK_EXIT_FAILED, "himeno: out of memory");
    c->state = h;
    grid_of(a, h->m);
    cbk_thread_team_init(&h->team, &opt(a)->threads, c->node_size, c, "himeno");
    char why[256];
    if (dims_of(a, c, h->dims, why, sizeof why))
        cbk_fail(c, CBK_EXIT_BAD_INPUT, "himeno: %s", why);
#ifdef CBK_HAVE_MPI
    h->cart = MPI_COMM_NULL;
    if (c->size > 1) {
        int periods[3] = { 0, 0, 0 };
        MPI_Cart_create(c->comm, 3, h->dims, periods, 0, &h->cart);
        MPI_Cart_coords(h->cart, c->rank, 3, h->coords);
        for (int d = 0; d < 3; d++)
            MPI_Cart_shift(h->cart, d, 1, &h->lo[d], &h->hi[d]);
    }
#endif
    decompose(h);
#ifdef CBK_HAVE_MPI
    if (h->cart != MPI_COMM_NULL) {
        int full[3] = { h->n[0] + 2, (int)(h->si / h->sj), (int)h->sj };
        int sub[3][3] = { { 1, h->n[1], h->n[2] }, { h->n[0] + 2, 1, h->n[2] }, { h->n[0] + 2, h->n[1] + 2, 1 } };
        int start[3] = { 0, 0, 0 };
        for (int d = 0; d < 3; d++) {
            MPI_Type_create_subarray(3, full, sub[d], start, MPI_ORDER_C, MPI_FLOAT, &h->face[d]);
            MPI_Type_commit(&h->face[d]);
        }
    }
#endif
    h->copy = opt(a)->update == HIMENO_UPDATE_COPY;
    if (opt(a)->threads.sweep != CBK_SWEEP_THREADS)
        prepare(a, c, h, h->team.threads_max);
    return 0;
}

static void measure(const struct cbk_args *a, struct cbk_ctx *c, struct himeno *h, bool fresh)
{
    bool reference = opt(a)->gosa_order == HIMENO_GOSA_ORDER_REFERENCE;
    bool timed = opt(a)->mode == HIMENO_MODE_TIME;
    long iterations = (long)opt(a)->iterations;
    double calib_s = 0.0;
    if (!fresh)
        init_arrays(h, true);
    if (timed) {
        /* the reference: 3 sweeps, then as many as fit the target time. A
         * preempted 3-sweep batch would cut the run short, so batches repeat
         * over 2 % of the target and the fastest one counts; each batch's time
         * is the same on every rank, so every rank leaves the loop together. */
        double spent = 0.0;
        calib_s = 0.0;
        for (int batch = 0; batch < 1000 && (batch == 0 || spent < 0.02 * opt(a)->seconds); batch++) {
            cbk_barrier(c);
            double t0 = cbk_clock();
            iterate(h, c, reference, 3);
            double batch_s = max_over_ranks(c, cbk_clock() - t0);
            spent += batch_s;
            if (batch == 0 || batch_s < calib_s)
                calib_s = batch_s;
        }
        double n = opt(a)->seconds / (calib_s / 3.0);
        iterations = n < 1.0 ? 1 : n > 1e9 ? 1000000000L : (long)n;
        init_arrays(h, true);
    }

    /* a thread sweep's records differ in `threads`: the sweep key */
    struct cbk_phase p = { .phase = "jacobi", .ops = (uint64_t)iterations,
                           .sweep_key = opt(a)->threads.sweep == CBK_SWEEP_THREADS ? "threads" : NULL };
    cbk_phase_qualifier(&p, "run_length", mode_names[opt(a)->mode]);
    cbk_barrier(c);
    double t0 = cbk_clock();
    p.begin_s = cbk_now(c);
    double gosa = iterate(h, c, reference, iterations);
    if (timed) {
        /* a calibration slowed by other work overestimates a sweep: the run
         * then ends far short of the target, so the sweeps that fit the rest
         * run too, inside the timing (one correction, the same on every rank) */
        double so_far = max_over_ranks(c, cbk_clock() - t0);
        if (so_far > 0.0 && so_far < 0.5 * opt(a)->seconds) {
            double more = (opt(a)->seconds - so_far) / (so_far / (double)iterations);
            long extra = more > 1e9 ? 1000000000L : (long)more;
            if (extra > 0) {
                gosa = iterate(h, c, reference, extra);
                iterations += extra;
                p.ops = (uint64_t)iterations;
            }
        }
    }
    p.end_s = cbk_now(c);
    double own_s = cbk_clock() - t0;
    double wall_s = max_over_ranks(c, own_s);

    double own_points = (double)h->n[0] * h->n[1] * h->n[2];
    double points = (double)(h->m[0] - 2) * (h->m[1] - 2) * (h->m[2] - 2);
    double ref_points = (double)(h->m[0] - 3) * (h->m[1] - 3) * (h->m[2] - 3);
    p.value = FLOPS_PER_POINT * own_points * (double)iterations / 1e6;
    p.value_unit = "MFLOPS";

    char grid[64], dec[64], bind[96];
    snprintf(grid, sizeof grid, "%dx%dx%d", h->m[0], h->m[1], h->m[2]);
    snprintf(dec, sizeof dec, "%dx%dx%d", h->dims[0], h->dims[1], h->dims[2]);
    const char *env_bind = getenv("OMP_PROC_BIND"), *env_places = getenv("OMP_PLACES");
    snprintf(bind, sizeof bind, "%s; OMP_PROC_BIND=%s; OMP_PLACES=%s", cbk_bind_names[opt(a)->threads.bind],
             env_bind ? env_bind : "unset", env_places ? env_places : "unset");
    cbk_phase_field(&p, CBK_REAL("gosa", gosa));
    cbk_phase_field(&p, CBK_TEXT("gosa_order", reference ? "reference" : "default"));
    cbk_phase_field(&p, CBK_TEXT("update", h->copy ? "copy" : "swap"));
    cbk_phase_field(&p, CBK_I64("iterations", iterations));
    cbk_phase_field(&p, CBK_TEXT("grid", grid));
    cbk_phase_field(&p, CBK_TEXT("size", explicit_grid(a) ? "custom" : size_names[opt(a)->size]));
    cbk_phase_field(&p, CBK_TEXT("decomposition", dec));
    cbk_phase_field(&p, CBK_I64("threads", h->team.threads));
    cbk_phase_field(&p, CBK_TEXT("binding", bind));
    cbk_phase_field(&p, CBK_TEXT("cpus_rank0", h->team.cpus));
    cbk_phase_field(&p, CBK_TEXT("flop_count", "34 per interior point per sweep, interior = (I-2)(J-2)(K-2) points"));
    cbk_phase_field(&p, CBK_REAL("points", points));
    cbk_phase_field(&p, CBK_REAL("reference_points", ref_points));
    cbk_phase_field(&p, CBK_REAL("mflops_reference_count", FLOPS_PER_POINT * ref_points * (double)iterations / 1e6 / wall_s));
    if (timed) {
        cbk_phase_field(&p, CBK_REAL("calibration_seconds", calib_s));
        cbk_phase_field(&p, CBK_REAL("target_seconds", opt(a)->seconds));
    }
#ifdef CBK_HAVE_OPENMP
    cbk_phase_field(&p, CBK_BOOL("openmp", true));
#else
    cbk_phase_field(&p, CBK_BOOL("openmp", false));
#endif
    if (opt(a)->threads.sweep == CBK_SWEEP_THREADS)
        cbk_phase_field(&p, CBK_TEXT("sweep", "threads"));
    cbk_report(c, &p);
}

static int run(const struct cbk_args *a, struct cbk_ctx *c)
{
    struct himeno *h = c->state;
    if (opt(a)->threads.sweep != CBK_SWEEP_THREADS) {
        measure(a, c, h, c->repetition == 0);
        return 0;
    }
    for (int t = 1; t <= h->team.threads_max; t++) {
        prepare(a, c, h, t);
        measure(a, c, h, true);
    }
    release_arrays(h);
    return 0;
}

static void teardown(const struct cbk_args *a, struct cbk_ctx *c)
{
    (void)a;
    struct himeno *h = c->state;
    if (!h)
        return;
    release_arrays(h);
#ifdef CBK_HAVE_MPI
    if (h->cart != MPI_COMM_NULL) {
        for (int d = 0; d < 3; d++)
            MPI_Type_free(&h->face[d]);
        MPI_Comm_free(&h->cart);
    }
#endif
    free(h);
    c->state = NULL;
}

const struct cbk_kernel cbk_kernel_himeno = {
    .name = "himeno",
    .summary = "Himeno Poisson-pressure Jacobi sweep, single precision, serial/OpenMP/MPI (E9)",
    .family = CBK_FAMILY_COMPUTE,
    .flags = CBK_PARALLEL,
    .params = params,
    .options_size = sizeof(OPT),
    .validate = validate,
    .setup = setup,
    .run = run,
    .teardown = teardown,
};
