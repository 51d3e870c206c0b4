/* mpi's operations table: the names of the operations and algorithms, what
 * each operation is, the function that runs one iteration, and the timed
 * loops. One call (or one round trip, one window) per iteration. */
#include "mpi_kernel.h"

#include "../core/timer.h"

const char *const mpi_op_names[] = {
    [OP_PINGPONG] = "pingpong", [OP_BW] = "bw", [OP_BIBW] = "bibw", [OP_ALLREDUCE] = "allreduce",
    [OP_REDUCE] = "reduce", [OP_ALLTOALL] = "alltoall", [OP_ALLGATHER] = "allgather", [OP_BCAST] = "bcast",
    [OP_BARRIER] = "barrier", [OP_NONE] = "none", NULL,
};
const char *const mpi_alg_names[] = {
    [ALG_LIBRARY] = "library", [ALG_RING] = "ring", [ALG_RECURSIVE_DOUBLING] = "recursive-doubling",
    [ALG_RABENSEIFNER] = "rabenseifner", [ALG_BINOMIAL] = "binomial", [ALG_PAIRWISE] = "pairwise", NULL,
};

const struct op_info mpi_ops[] = {
    [OP_PINGPONG] = { PT2PT, false, true, ALG(ALG_LIBRARY), NULL, NULL },
    [OP_BW] = { PT2PT, false, true, ALG(ALG_LIBRARY), NULL, NULL },
    [OP_BIBW] = { PT2PT, false, true, ALG(ALG_LIBRARY), NULL, NULL },
    [OP_ALLREDUCE] = { COLLECTIVE, true, true, ALG(ALG_LIBRARY) | ALG(ALG_RING) | ALG(ALG_RECURSIVE_DOUBLING) | ALG(ALG_RABENSEIFNER),
                       "MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM", "OMPI_MCA_coll_tuned_allreduce_algorithm" },
    [OP_REDUCE] = { COLLECTIVE, true, true, ALG(ALG_LIBRARY),
                    "MPIR_CVAR_REDUCE_INTRA_ALGORITHM", "OMPI_MCA_coll_tuned_reduce_algorithm" },
    [OP_ALLTOALL] = { COLLECTIVE, false, true, ALG(ALG_LIBRARY) | ALG(ALG_PAIRWISE),
                      "MPIR_CVAR_ALLTOALL_INTRA_ALGORITHM", "OMPI_MCA_coll_tuned_alltoall_algorithm" },
    [OP_ALLGATHER] = { COLLECTIVE, false, true, ALG(ALG_LIBRARY) | ALG(ALG_RING) | ALG(ALG_RECURSIVE_DOUBLING),
                       "MPIR_CVAR_ALLGATHER_INTRA_ALGORITHM", "OMPI_MCA_coll_tuned_allgather_algorithm" },
    [OP_BCAST] = { COLLECTIVE, false, true, ALG(ALG_LIBRARY) | ALG(ALG_BINOMIAL),
                   "MPIR_CVAR_BCAST_INTRA_ALGORITHM", "OMPI_MCA_coll_tuned_bcast_algorithm" },
    [OP_BARRIER] = { COLLECTIVE, false, false, ALG(ALG_LIBRARY),
                     "MPIR_CVAR_BARRIER_INTRA_ALGORITHM", "OMPI_MCA_coll_tuned_barrier_algorithm" },
    [OP_NONE] = { EMPTY, false, false, ALG(ALG_LIBRARY), NULL, NULL },
};


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

coll_fn mpi_choose(enum op op, enum alg alg)
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
            if (s->staged)
                rc |= mpi_stage_out(s, bytes);
            rc |= MPI_Send(s->send, (int)bytes, MPI_BYTE, s->partner, tag, s->comm);
            rc |= MPI_Recv(s->recv, (int)bytes, MPI_BYTE, s->partner, tag, s->comm, MPI_STATUS_IGNORE);
            if (s->staged)
                rc |= mpi_stage_in(s, bytes);
            double now = cbk_clock();
            s->t[i] = now - prev;
            prev = now;
        }
    } else {
        for (int64_t i = 0; i < n; i++) {
            rc |= MPI_Recv(s->recv, (int)bytes, MPI_BYTE, s->partner, tag, s->comm, MPI_STATUS_IGNORE);
            if (s->staged) {
                rc |= mpi_stage_in(s, bytes);
                rc |= mpi_stage_out(s, bytes);
            }
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
            for (int j = 0; s->staged && j < w; j++) /* each message staged, before any send reads the buffer */
                rc |= mpi_stage_out(s, bytes);
            for (int j = 0; j < w; j++)
                rc |= MPI_Isend(s->send, (int)bytes, MPI_BYTE, s->partner, tag, s->comm, &s->req[j]);
            rc |= MPI_Waitall(w, s->req, MPI_STATUSES_IGNORE);
            rc |= MPI_Recv(ack, 4, MPI_BYTE, s->partner, tag + 1, s->comm, MPI_STATUS_IGNORE);
        } else {
            for (int j = 0; j < w; j++)
                rc |= MPI_Irecv(s->recv, (int)bytes, MPI_BYTE, s->partner, tag, s->comm, &s->req[j]);
            rc |= MPI_Waitall(w, s->req, MPI_STATUSES_IGNORE);
            for (int j = 0; s->staged && j < w; j++)
                rc |= mpi_stage_in(s, bytes);
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
        for (int j = 0; s->staged && j < w; j++)
            rc |= mpi_stage_out(s, bytes);
        for (int j = 0; j < w; j++)
            rc |= MPI_Isend(s->send, (int)bytes, MPI_BYTE, s->partner, tag, s->comm, &s->req[w + j]);
        rc |= MPI_Waitall(2 * w, s->req, MPI_STATUSES_IGNORE);
        for (int j = 0; s->staged && j < w; j++)
            rc |= mpi_stage_in(s, bytes);
        double now = cbk_clock();
        s->t[i] = now - prev;
        prev = now;
    }
    return rc;
}

int mpi_run_loop(struct mpi_state *s, size_t bytes, int64_t n)
{
    switch (s->plan.op) {
    case OP_PINGPONG: return s->active ? pingpong_loop(s, bytes, n) : MPI_SUCCESS;
    case OP_BW: return s->active ? bw_loop(s, bytes, n) : MPI_SUCCESS;
    case OP_BIBW: return s->active ? bibw_loop(s, bytes, n) : MPI_SUCCESS;
    default: return coll_loop(s, bytes, n);
    }
}
