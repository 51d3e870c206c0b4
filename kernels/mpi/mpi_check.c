/* mpi's check: before a size is timed, every collective runs once on known
 * inputs and its result is compared with MPI's own or with exact sums. */
#include "mpi_kernel.h"

#include <float.h>
#include <math.h>
#include <string.h>

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
int mpi_check_size(struct mpi_state *s, size_t bytes, struct check *k)
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
