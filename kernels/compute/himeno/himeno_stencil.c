/* himeno's stencil: the Jacobi sweep of the 19-point Poisson-pressure
 * operator over this rank's interior, vectorised along k on the tiled
 * coefficients (himeno.h), and the reference's point-by-point variant. The
 * kernel (himeno.c) calls one of them per iteration between halo
 * exchanges. */
#include "himeno.h"

#include <string.h>
#ifdef CBK_HAVE_OPENMP
#include <omp.h>
#endif

static const float omega = 0.8f; /* the reference's `static float omega=0.8` */

/* Software prefetch of the coefficient stream: 16 tiles (12 KiB) ahead,
 * into L2 (prefetcht1), not L1. 4 tiles into L1 left M at 0.78 of the
 * reference, and 8 or 16 tiles into L1 were slower still; 16 tiles into L2
 * runs S 1.33x, M 1.63x, L 1.78x faster than 4 into L1 (measured variants:
 * docs/kernels/himeno.md). */
#define COEF_PREFETCH_TILES 16
#define COEF_PREFETCH_LOCALITY 2 /* __builtin_prefetch: 2 = L2 and outward (prefetcht1) */

/* Field f at interior point (i, j, k), k from 1. */
static inline float coef_at(const struct himeno *h, int f, int i, int j, int k)
{
    int t = (k - 1) / COEF_TILE;
    int kk = t == h->tiles - 1 ? k - 1 - h->last_k0 : (k - 1) % COEF_TILE;
    return h->coef[coef_row(h, i, j) + ((size_t)t * COEF_FIELDS + (size_t)f) * COEF_TILE + (size_t)kk];
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
double himeno_sweep(struct himeno *h)
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
double himeno_sweep_reference(struct himeno *h)
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
