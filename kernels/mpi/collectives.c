#include "collectives.h"

#include <stdint.h>
#include <string.h>

/* Block b of p over n elements starts at floor(b * n / p): blocks differ by
 * at most one element and may be empty when n < p, so every algorithm
 * works for any count (MPICH's uses the same split). */
static size_t block_start(size_t n, int p, int b) { return (size_t)((uint64_t)n * (uint64_t)b / (uint64_t)p); }
static int block_len(size_t n, int p, int b) { return (int)(block_start(n, p, b + 1) - block_start(n, p, b)); }
static int mod(int a, int p) { return ((a % p) + p) % p; }

static void add(float *restrict acc, const float *restrict x, int n)
{
    for (int i = 0; i < n; i++)
        acc[i] += x[i];
}

enum { TAG = 7301 };

/* Ring: reduce-scatter in p-1 steps (each rank adds the block its left
 * neighbour sends), then allgather in p-1 steps; every step moves n/p
 * elements, so 2(p-1) steps and 2(p-1)/p * n elements sent per rank. */
int cbk_allreduce_ring(const float *in, float *out, size_t count, struct cbk_coll *c)
{
    int p = c->size, r = c->rank, right = mod(r + 1, p), left = mod(r - 1, p), rc;
    memcpy(out, in, count * sizeof *out);
    for (int s = 0; s < p - 1 - c->drop_steps; s++) {
        int send_b = mod(r - s, p), recv_b = mod(r - s - 1, p);
        rc = MPI_Sendrecv(out + block_start(count, p, send_b), block_len(count, p, send_b), MPI_FLOAT, right, TAG,
                          c->scratch, block_len(count, p, recv_b), MPI_FLOAT, left, TAG, c->comm, MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS)
            return rc;
        add(out + block_start(count, p, recv_b), c->scratch, block_len(count, p, recv_b));
    }
    /* rank r now holds the full sum of block r+1 */
    for (int s = 0; s < p - 1; s++) {
        int send_b = mod(r - s + 1, p), recv_b = mod(r - s, p);
        rc = MPI_Sendrecv(out + block_start(count, p, send_b), block_len(count, p, send_b), MPI_FLOAT, right, TAG,
                          out + block_start(count, p, recv_b), block_len(count, p, recv_b), MPI_FLOAT, left, TAG,
                          c->comm, MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    return MPI_SUCCESS;
}

/* Recursive doubling: log2(p) steps, each exchanging the whole vector with
 * the partner rank ^ 2^k and adding it. Float addition is commutative, so
 * both partners hold bit-identical sums after every step. */
int cbk_allreduce_recursive_doubling(const float *in, float *out, size_t count, struct cbk_coll *c)
{
    memcpy(out, in, count * sizeof *out);
    int last = c->size >> c->drop_steps;
    for (int mask = 1; mask < last; mask <<= 1) {
        int rc = MPI_Sendrecv(out, (int)count, MPI_FLOAT, c->rank ^ mask, TAG, c->scratch, (int)count, MPI_FLOAT,
                              c->rank ^ mask, TAG, c->comm, MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS)
            return rc;
        add(out, c->scratch, (int)count);
    }
    return MPI_SUCCESS;
}

/* Range of blocks [lo, lo + width) that rank r holds before the allgather
 * step with partner distance `mask`. */
static int rd_lo(int r, int mask) { return r / mask * mask; }

static int allgather_blocks_rd(float *out, size_t count, struct cbk_coll *c)
{
    int p = c->size, r = c->rank;
    for (int mask = 1; mask < p; mask <<= 1) {
        int partner = r ^ mask, mine = rd_lo(r, mask), theirs = rd_lo(partner, mask);
        size_t my_off = block_start(count, p, mine), their_off = block_start(count, p, theirs);
        int my_n = (int)(block_start(count, p, mine + mask) - my_off);
        int their_n = (int)(block_start(count, p, theirs + mask) - their_off);
        int rc = MPI_Sendrecv(out + my_off, my_n, MPI_FLOAT, partner, TAG, out + their_off, their_n, MPI_FLOAT,
                              partner, TAG, c->comm, MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    return MPI_SUCCESS;
}

/* Rabenseifner: reduce-scatter by recursive halving (log2 p steps sending
 * n/2, n/4, ... elements; afterwards rank r holds the sum of block r), then
 * allgather by recursive doubling (log2 p steps sending n/p, 2n/p, ...).
 * 2 log2(p) steps, 2(p-1)/p * n elements sent per rank: the ring's volume
 * with the latency of recursive doubling. */
int cbk_allreduce_rabenseifner(const float *in, float *out, size_t count, struct cbk_coll *c)
{
    int p = c->size, r = c->rank, lo = 0, hi = p;
    memcpy(out, in, count * sizeof *out);
    for (int mask = p >> 1; mask >= (1 << c->drop_steps); mask >>= 1) {
        int mid = lo + (hi - lo) / 2, keep_lo, keep_hi, give_lo, give_hi;
        if (r & mask) {
            keep_lo = mid; keep_hi = hi; give_lo = lo; give_hi = mid;
        } else {
            keep_lo = lo; keep_hi = mid; give_lo = mid; give_hi = hi;
        }
        size_t keep_off = block_start(count, p, keep_lo), give_off = block_start(count, p, give_lo);
        int keep_n = (int)(block_start(count, p, keep_hi) - keep_off);
        int give_n = (int)(block_start(count, p, give_hi) - give_off);
        int rc = MPI_Sendrecv(out + give_off, give_n, MPI_FLOAT, r ^ mask, TAG, c->scratch, keep_n, MPI_FLOAT,
                              r ^ mask, TAG, c->comm, MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS)
            return rc;
        add(out + keep_off, c->scratch, keep_n);
        lo = keep_lo;
        hi = keep_hi;
    }
    return allgather_blocks_rd(out, count, c);
}

int cbk_allgather_ring(const void *in, void *out, size_t bytes, struct cbk_coll *c)
{
    int p = c->size, r = c->rank, right = mod(r + 1, p), left = mod(r - 1, p);
    char *o = out;
    memcpy(o + (size_t)r * bytes, in, bytes);
    for (int s = 0; s < p - 1; s++) {
        int send_b = mod(r - s, p), recv_b = mod(r - s - 1, p);
        int rc = MPI_Sendrecv(o + (size_t)send_b * bytes, (int)bytes, MPI_BYTE, right, TAG,
                              o + (size_t)recv_b * bytes, (int)bytes, MPI_BYTE, left, TAG, c->comm, MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    return MPI_SUCCESS;
}

int cbk_allgather_recursive_doubling(const void *in, void *out, size_t bytes, struct cbk_coll *c)
{
    int p = c->size, r = c->rank;
    char *o = out;
    memcpy(o + (size_t)r * bytes, in, bytes);
    for (int mask = 1; mask < p; mask <<= 1) {
        int partner = r ^ mask;
        int rc = MPI_Sendrecv(o + (size_t)rd_lo(r, mask) * bytes, (int)(bytes * (size_t)mask), MPI_BYTE, partner, TAG,
                              o + (size_t)rd_lo(partner, mask) * bytes, (int)(bytes * (size_t)mask), MPI_BYTE, partner,
                              TAG, c->comm, MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    return MPI_SUCCESS;
}

/* Binomial tree from rank 0: a rank receives once from the rank that
 * differs in its lowest set bit, then forwards to r + 2^k for each smaller
 * k; ceil(log2 p) rounds, every message the full buffer. */
int cbk_bcast_binomial(void *buf, size_t bytes, struct cbk_coll *c)
{
    int p = c->size, r = c->rank, mask = 1, rc;
    while (mask < p) {
        if (r & mask) {
            rc = MPI_Recv(buf, (int)bytes, MPI_BYTE, r - mask, TAG, c->comm, MPI_STATUS_IGNORE);
            if (rc != MPI_SUCCESS)
                return rc;
            break;
        }
        mask <<= 1;
    }
    for (mask >>= 1; mask > 0; mask >>= 1)
        if (r + mask < p && (rc = MPI_Send(buf, (int)bytes, MPI_BYTE, r + mask, TAG, c->comm)) != MPI_SUCCESS)
            return rc;
    return MPI_SUCCESS;
}

/* Pairwise exchange: in step i rank r sends to r+i and receives from r-i,
 * p-1 steps of one block each; any p. */
int cbk_alltoall_pairwise(const void *in, void *out, size_t bytes, struct cbk_coll *c)
{
    int p = c->size, r = c->rank;
    const char *src = in;
    char *dst = out;
    memcpy(dst + (size_t)r * bytes, src + (size_t)r * bytes, bytes);
    for (int i = 1; i < p; i++) {
        int to = mod(r + i, p), from = mod(r - i, p);
        int rc = MPI_Sendrecv(src + (size_t)to * bytes, (int)bytes, MPI_BYTE, to, TAG,
                              dst + (size_t)from * bytes, (int)bytes, MPI_BYTE, from, TAG, c->comm, MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    return MPI_SUCCESS;
}
