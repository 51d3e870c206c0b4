/* The state himeno's kernel (himeno.c: parameters, modes, decomposition,
 * records) and its stencil (himeno_stencil.c: the Jacobi sweep) share: the
 * grid this rank holds and the tiled layout of the coefficients. */
#ifndef HIMENO_H
#define HIMENO_H

#include "../../core/affinity.h"
#include "../../core/cbk.h"

#include <stdbool.h>
#include <stddef.h>

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

/* First coefficient of interior row (i, j), i and j from 1. */
static inline size_t coef_row(const struct himeno *h, int i, int j)
{
    return ((size_t)(i - 1) * (size_t)h->n[1] + (size_t)(j - 1)) * (size_t)h->tiles * COEF_FIELDS * COEF_TILE;
}

/* First point (from 0) of tile t of a row. */
static inline int tile_k0(const struct himeno *h, int t) { return t == h->tiles - 1 ? h->last_k0 : t * COEF_TILE; }

/* One Jacobi sweep over this rank's interior: the new values end in p
 * (--update: copied back or swapped). Returns this rank's GOSA, the sum
 * of squared residuals. */
double himeno_sweep(struct himeno *h);

/* The same sweep summing GOSA as the reference does (--gosa-order=reference:
 * one thread, one rank). */
double himeno_sweep_reference(struct himeno *h);

#endif
