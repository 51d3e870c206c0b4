/* himeno: the Himeno benchmark (RIKEN), a Jacobi sweep of a 19-point
 * Poisson-pressure stencil in single precision, with the coefficients,
 * initial conditions and omega of the reference himenoBMTxpa.c (E9).
 * Serial, OpenMP threads, MPI with a 3-D Cartesian decomposition and halo
 * exchange, or both. Flops: 34 per interior point per iteration. */
#include "../../core/affinity.h"
#include "../../core/buffer.h"
#include "../../core/cbk.h"
#include "../../core/timer.h"

#include <errno.h>
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef CBK_HAVE_OPENMP
#include <omp.h>
#endif

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
static const float omega = 0.8f; /* the reference's `static float omega=0.8` */

/* Layout. The 12 read-only fields (a0-a3, b0-b2, c0-c2, bnd, wrk1) are
 * interleaved in tiles of COEF_TILE points along k: a tile is a0[16],
 * a1[16], ..., wrk1[16], 12 consecutive cache lines, so the sweep reads
 * them as one sequential stream from one pointer at compile-time offsets.
 * The reference's 14 separate arrays are 23 streams with the 9 rows of p
 * the stencil reads: they do not fit x86-64's 16 registers (each vector
 * iteration reloaded ~20 pointers from the stack), and separate arrays of
 * equal power-of-two size sat on the same cache sets (cbk ran at a third
 * of the reference). A row's last tile is shifted back to end at the
 * row's last point, so every tile is a full vector loop; its first lanes
 * repeat points already done and are left out of GOSA. Coefficients exist
 * for interior points only; p and wrk2 keep halos for the stencil and MPI. */
#define COEF_TILE 16          /* floats: one cache line per field */
/* Software prefetch of the coefficient stream: 16 tiles (12 KiB) ahead,
 * into L2 (prefetcht1), not L1. 4 tiles into L1 left M at 0.78 of the
 * reference, and 8 or 16 tiles into L1 were slower still; 16 tiles into L2
 * runs S 1.33x, M 1.63x, L 1.78x faster than 4 into L1 (measured variants:
 * docs/kernels/himeno.md). */
#define COEF_PREFETCH_TILES 16
#define COEF_PREFETCH_LOCALITY 2 /* __builtin_prefetch: 2 = L2 and outward (prefetcht1) */
enum { A0, A1, A2, A3, B0, B1, B2, C0, C1, C2, BND, WRK1, COEF_FIELDS };
#define MAX_THREADS 1024

struct himeno {
    int m[3];            /* global points per axis, boundary included */
    int dims[3], coords[3];
    int n[3], off[3];    /* this rank's interior points per axis; global index of local 0 */
    ptrdiff_t si, sj;    /* strides of p and wrk2 (halo of one point, padded) */
    size_t cells;        /* elements of p, and of wrk2 */
    int tiles;           /* coefficient tiles per (i, j) row */
    int last_k0;         /* first point (from 0) of a row's last tile */
    size_t coef_floats;  /* elements of coef */
    bool copy;           /* --update=copy: the reference's copy-back loop */
    float *coef;         /* COEF_FIELDS x COEF_TILE floats per tile, see COEF_TILE */
    float *pw;           /* one allocation for p and wrk2 */
    float *p, *wrk2;
    float gosa_of_thread[MAX_THREADS];
    struct cbk_thread_team team;
#ifdef CBK_HAVE_MPI
    MPI_Comm cart;
    MPI_Datatype face[3];
    int lo[3], hi[3];
#endif
};

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
        snprintf(why, len, "grid %dx%dx%d needs %.1f GiB on this node but only %.1f GiB is available",
                 m[0], m[1], m[2], bytes / 1073741824.0, (double)avail / 1048576.0);
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

/* First coefficient of interior row (i, j), i and j from 1. */
static inline size_t coef_row(const struct himeno *h, int i, int j)
{
    return ((size_t)(i - 1) * (size_t)h->n[1] + (size_t)(j - 1)) * (size_t)h->tiles * COEF_FIELDS * COEF_TILE;
}

/* First point (from 0) of tile t of a row. */
static inline int tile_k0(const struct himeno *h, int t) { return t == h->tiles - 1 ? h->last_k0 : t * COEF_TILE; }

/* Field f at interior point (i, j, k), k from 1. */
static inline float coef_at(const struct himeno *h, int f, int i, int j, int k)
{
    int t = (k - 1) / COEF_TILE;
    int kk = t == h->tiles - 1 ? k - 1 - h->last_k0 : (k - 1) % COEF_TILE;
    return h->coef[coef_row(h, i, j) + ((size_t)t * COEF_FIELDS + (size_t)f) * COEF_TILE + (size_t)kk];
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

/* After a sweep: p takes the new values. The reference copies wrk2's
 * interior back into p (a second pass over two arrays); swapping the
 * pointers gives the same numbers with less memory traffic, valid
 * because both arrays hold the same fixed boundary. */
static void swap_p_wrk2(struct himeno *h)
{
    float *t = h->p;
    h->p = h->wrk2;
    h->wrk2 = t;
}

/* --update=copy, called by every thread of the sweep's parallel region
 * (after the sweep's implicit barrier): one fork and join per sweep. */
static void copy_back(struct himeno *h)
{
    const int ni = h->n[0], nj = h->n[1], nk = h->n[2];
    const ptrdiff_t si = h->si, sj = h->sj;
#ifdef CBK_HAVE_OPENMP
#pragma omp for collapse(2) schedule(static)
#endif
    for (int i = 1; i <= ni; i++)
        for (int j = 1; j <= nj; j++) {
            float *restrict dst = h->p + i * si + j * sj;
            const float *restrict src = h->wrk2 + i * si + j * sj;
            for (int k = 1; k <= nk; k++)
                dst[k] = src[k];
        }
}

/* Plane i of wrk2 into p: the copy-back of one plane. */
static void copy_plane(struct himeno *h, int i)
{
    const int nj = h->n[1], nk = h->n[2];
    const ptrdiff_t si = h->si, sj = h->sj;
    for (int j = 1; j <= nj; j++) {
        float *restrict dst = h->p + i * si + j * sj;
        const float *restrict src = h->wrk2 + i * si + j * sj;
        for (int k = 1; k <= nk; k++)
            dst[k] = src[k];
    }
}

/* Vectors of the widest width the build targets (SSE2 by default; AVX or
 * AVX-512 with CBK_NATIVE=ON); a tile is COEF_TILE / VLEN of them. */
#if defined(__AVX512F__)
#define VLEN 16
#elif defined(__AVX__)
#define VLEN 8
#else
#define VLEN 4
#endif
typedef float vfloat __attribute__((vector_size(VLEN * sizeof(float))));
static inline vfloat vload(const float *x)
{
    vfloat v;
    memcpy(&v, x, sizeof v); /* unaligned load */
    return v;
}
static inline void vstore(float *x, vfloat v) { memcpy(x, &v, sizeof v); }

/* One tile of 16 points of row r (an index of p) with coefficients cf.
 * The expression is the reference's, term by term in its order, each lane
 * a point, so every new value is the reference's to the bit. GOSA is summed
 * in the reference's order too: one float, point after point; lanes below
 * `repeat` were done by the previous tile and are not added again. */
static inline __attribute__((always_inline)) float sweep_tile(const struct himeno *h, ptrdiff_t r,
                                                              const float *restrict cf, int repeat, float g)
{
    const ptrdiff_t si = h->si, sj = h->sj;
    const float *pc = h->p + r, *pip = pc + si, *pim = pc - si, *pjp = pc + sj, *pjm = pc - sj;
    const float *pipjp = pip + sj, *pipjm = pip - sj, *pimjp = pim + sj, *pimjm = pim - sj;
    float *w2 = h->wrk2 + r;
    const vfloat om = (vfloat){ 0 } + omega;
    /* the hardware prefetcher keeps one distance in flight per stream:
     * the reference's 12 thin streams get 12, this dense one 1, too little
     * for memory latency; ask for the tile COEF_PREFETCH_TILES ahead */
    for (int l = 0; l < COEF_FIELDS; l++)
        __builtin_prefetch(cf + COEF_PREFETCH_TILES * COEF_FIELDS * COEF_TILE + l * COEF_TILE, 0,
                           COEF_PREFETCH_LOCALITY);
    for (int v = 0; v < COEF_TILE; v += VLEN) {
        const float *c = cf + v;
#define F(f) vload(c + (f) * COEF_TILE)
#define P(row, dk) vload((row) + v + (dk))
        vfloat s0 = F(A0) * P(pip, 0) + F(A1) * P(pjp, 0) + F(A2) * P(pc, 1)
                  + F(B0) * (P(pipjp, 0) - P(pipjm, 0) - P(pimjp, 0) + P(pimjm, 0))
                  + F(B1) * (P(pjp, 1) - P(pjm, 1) - P(pjp, -1) + P(pjm, -1))
                  + F(B2) * (P(pip, 1) - P(pim, 1) - P(pip, -1) + P(pim, -1))
                  + F(C0) * P(pim, 0) + F(C1) * P(pjm, 0) + F(C2) * P(pc, -1) + F(WRK1);
        vfloat ss = (s0 * F(A3) - P(pc, 0)) * F(BND);
        vstore(w2 + v, P(pc, 0) + om * ss);
#undef F
#undef P
        vfloat sq = ss * ss;
        for (int l = repeat > v ? repeat - v : 0; l < VLEN; l++)
            g += sq[l];
    }
    return g;
}

/* A row of fewer than 16 points (tiny grids): the same sum, point by point. */
static float sweep_short_row(const struct himeno *h, ptrdiff_t r, const float *cf, float g)
{
    const ptrdiff_t si = h->si, sj = h->sj;
    const float *P = h->p + r;
    for (int k = 0; k < h->n[2]; k++) {
        const float *c = cf + k;
        float s0 = c[A0 * COEF_TILE] * P[k + si] + c[A1 * COEF_TILE] * P[k + sj] + c[A2 * COEF_TILE] * P[k + 1]
                 + c[B0 * COEF_TILE] * (P[k + si + sj] - P[k + si - sj] - P[k - si + sj] + P[k - si - sj])
                 + c[B1 * COEF_TILE] * (P[k + sj + 1] - P[k - sj + 1] - P[k + sj - 1] + P[k - sj - 1])
                 + c[B2 * COEF_TILE] * (P[k + si + 1] - P[k - si + 1] - P[k + si - 1] + P[k - si - 1])
                 + c[C0 * COEF_TILE] * P[k - si] + c[C1 * COEF_TILE] * P[k - sj] + c[C2 * COEF_TILE] * P[k - 1]
                 + c[WRK1 * COEF_TILE];
        float ss = (s0 * c[A3 * COEF_TILE] - P[k]) * c[BND * COEF_TILE];
        g += ss * ss;
        h->wrk2[r + k] = P[k] + omega * ss;
    }
    return g;
}

/* Row (i, j), its GOSA terms added to g in order. Not inlined: in the
 * OpenMP outlined loop the compiler spilled the vector registers. */
static __attribute__((noinline)) float sweep_row(const struct himeno *h, int i, int j, float g)
{
    const float *cf = h->coef + coef_row(h, i, j);
    const ptrdiff_t r = i * h->si + j * h->sj + 1;
    if (h->n[2] < COEF_TILE)
        return sweep_short_row(h, r, cf, g);
    for (int t = 0; t < h->tiles - 1; t++, cf += COEF_FIELDS * COEF_TILE)
        g = sweep_tile(h, r + t * COEF_TILE, cf, 0, g);
    return sweep_tile(h, r + h->last_k0, cf, (h->tiles - 1) * COEF_TILE - h->last_k0, g);
}

/* One Jacobi sweep over this rank's interior, new values into wrk2; then
 * copy_back() or swap_p_wrk2() moves them into p. Returns this rank's sum of squared residuals:
 * each thread sums its rows (a contiguous block in i, j order) in one
 * float, in the reference's order; the threads' sums are added in thread
 * order. One thread: the reference's GOSA, bit for bit. */
static double sweep(struct himeno *h)
{
    const int ni = h->n[0], nj = h->n[1];
    if (h->copy && h->team.threads == 1) {
        /* one thread: copy plane i-1 back as soon as plane i is swept (the
         * last reader of p's plane i-1), while both planes are still in
         * cache; the same copies as the reference's separate loop */
        float g = 0.0f;
        for (int i = 1; i <= ni; i++) {
            for (int j = 1; j <= nj; j++)
                g = sweep_row(h, i, j, g);
            if (i > 1)
                copy_plane(h, i - 1);
        }
        copy_plane(h, ni);
        return g;
    }
#ifdef CBK_HAVE_OPENMP
#pragma omp parallel num_threads(h->team.threads)
#endif
    {
        float g = 0.0f;
#ifdef CBK_HAVE_OPENMP
#pragma omp for collapse(2) schedule(static)
#endif
        for (int i = 1; i <= ni; i++)
            for (int j = 1; j <= nj; j++)
                g = sweep_row(h, i, j, g);
#ifdef CBK_HAVE_OPENMP
        h->gosa_of_thread[omp_get_thread_num()] = g;
#else
        h->gosa_of_thread[0] = g;
#endif
        if (h->copy)
            copy_back(h);
    }
    if (!h->copy)
        swap_p_wrk2(h);
    float gosa = 0.0f;
    for (int t = 0; t < h->team.threads; t++)
        gosa += h->gosa_of_thread[t];
    return gosa;
}

/* The reference's summation: one float accumulator, point by point in
 * i, j, k order, so GOSA matches himenoBMTxpa's digits. */
static double sweep_reference(struct himeno *h)
{
    const int ni = h->n[0], nj = h->n[1], nk = h->n[2];
    const ptrdiff_t si = h->si, sj = h->sj;
    float gosa = 0.0f;
    for (int i = 1; i <= ni; i++)
        for (int j = 1; j <= nj; j++)
            for (int k = 1; k <= nk; k++) {
                const ptrdiff_t x = i * si + j * sj + k;
                const float *P = h->p;
#define C(f) coef_at(h, f, i, j, k)
                float s0 = C(A0) * P[x + si] + C(A1) * P[x + sj] + C(A2) * P[x + 1]
                         + C(B0) * (P[x + si + sj] - P[x + si - sj] - P[x - si + sj] + P[x - si - sj])
                         + C(B1) * (P[x + sj + 1] - P[x - sj + 1] - P[x + sj - 1] + P[x - sj - 1])
                         + C(B2) * (P[x + si + 1] - P[x - si + 1] - P[x + si - 1] + P[x - si - 1])
                         + C(C0) * P[x - si] + C(C1) * P[x - sj] + C(C2) * P[x - 1] + C(WRK1);
                float ss = (s0 * C(A3) - P[x]) * C(BND);
#undef C
                gosa += ss * ss;
                h->wrk2[x] = P[x] + omega * ss;
            }
    if (h->copy)
        copy_back(h);
    else
        swap_p_wrk2(h);
    return gosa;
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
        double own = reference ? sweep_reference(h) : sweep(h);
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
