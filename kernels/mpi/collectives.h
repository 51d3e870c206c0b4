/* Collective algorithms written over MPI point-to-point, so the mpi kernel
 * can compare them with the library's own MPI_Allreduce, MPI_Bcast, ...
 * (E7: "the library's default ring is slower than recursive doubling").
 * Each is the textbook algorithm (Thakur, Rabenseifner and Gropp, "Optimization
 * of Collective Communication Operations in MPICH", IJHPCA 2005); the step
 * counts are in docs/kernels/mpi.md. All return an MPI error code. */
#ifndef CBK_MPI_COLLECTIVES_H
#define CBK_MPI_COLLECTIVES_H

#include <mpi.h>
#include <stddef.h>

struct cbk_coll {
    MPI_Comm comm;
    int rank, size;
    float *scratch;       /* at least `count` floats for allreduce */
    /* Test hook (CBK_TEST_MPI_BROKEN names an allreduce algorithm): that
     * algorithm leaves out its last reduction step, the classic off-by-one,
     * so tests prove the check against MPI_Allreduce catches a wrong sum. */
    int drop_steps;
};

/* Allreduce, MPI_FLOAT sum; `in` and `out` must not overlap. */
int cbk_allreduce_ring(const float *in, float *out, size_t count, struct cbk_coll *c);
int cbk_allreduce_recursive_doubling(const float *in, float *out, size_t count, struct cbk_coll *c);
int cbk_allreduce_rabenseifner(const float *in, float *out, size_t count, struct cbk_coll *c);

/* Allgather of `bytes` per rank: out holds size * bytes. */
int cbk_allgather_ring(const void *in, void *out, size_t bytes, struct cbk_coll *c);
int cbk_allgather_recursive_doubling(const void *in, void *out, size_t bytes, struct cbk_coll *c);

/* Broadcast from rank 0 along a binomial tree. */
int cbk_bcast_binomial(void *buf, size_t bytes, struct cbk_coll *c);

/* Alltoall of `bytes` per pair: in and out hold size * bytes. */
int cbk_alltoall_pairwise(const void *in, void *out, size_t bytes, struct cbk_coll *c);

static inline int cbk_is_power_of_two(int n) { return n > 0 && (n & (n - 1)) == 0; }

#endif
