/* The parts of the mpi kernel (kernels/mpi/mpi*.c), one concern each:
 * mpi_ops.c the operations table and the timed loops, mpi_check.c the check
 * of every collective's result, mpi_placement.c where the ranks run and the
 * library's tuning; mpi.c is the kernel (parameters, plan, sweep, record).
 * Only these files include it. */
#ifndef CBK_MPI_KERNEL_H
#define CBK_MPI_KERNEL_H

#include "../core/cbk.h"
#include "collectives.h"
#include "../core/patient_wait.h"

#define MAX_SIZES 64
#define MAX_TUNING 64

/* The operations and algorithms; their names (the parameters' choices and
 * the records' labels) are written once, in mpi_ops.c, in enum order. */
enum op { OP_PINGPONG, OP_BW, OP_BIBW, OP_ALLREDUCE, OP_REDUCE, OP_ALLTOALL, OP_ALLGATHER, OP_BCAST, OP_BARRIER, OP_NONE };
enum alg { ALG_LIBRARY, ALG_RING, ALG_RECURSIVE_DOUBLING, ALG_RABENSEIFNER, ALG_BINOMIAL, ALG_PAIRWISE, ALGS };
extern const char *const mpi_op_names[];  /* NULL-terminated */
extern const char *const mpi_alg_names[]; /* NULL-terminated */
enum mpi_pairing { MPI_PAIRING_HALF, MPI_PAIRING_NEIGHBOUR, MPI_PAIRING_FIRST };

enum kind { PT2PT, COLLECTIVE, EMPTY };
/* --buffer: where messages live (mpi_buffers.c) */
enum mpi_buffer { MPI_BUFFER_HOST, MPI_BUFFER_DEVICE, MPI_BUFFER_MANAGED };
extern const char *const mpi_buffer_names[];  /* NULL-terminated */
#define ALG(a) (1u << (a))

struct op_info {
    enum kind kind;
    bool reduction;       /* MPI_FLOAT sum: sizes in whole floats */
    bool sized;           /* barrier and none have no message */
    unsigned algorithms;  /* ALG() bits of the algorithms it has */
    const char *cvar, *mca; /* the library's selection variables */
};
/* What the kernel knows of each operation, indexed by enum op. */
extern const struct op_info mpi_ops[];

struct plan {
    enum op op;
    enum alg alg;
    uint64_t size[MAX_SIZES];
    int sizes;
};

struct mpi_state;
typedef int (*coll_fn)(struct mpi_state *s, size_t bytes);

struct mpi_state {
    struct plan plans[CBK_MAX_CHOICE_LIST]; /* one per listed operation, in order */
    int nplans;
    struct plan plan;                       /* the one being measured */
    const struct op_info *info;
    MPI_Comm comm;
    int rank, size;
    int64_t iterations, min_iterations, warmup, window;
    uint64_t volume_bytes;
    bool barrier_sync;
    coll_fn fn;
    char *send, *recv, *ref;  /* message buffers; ref: MPI_Allreduce's result for the check */
    enum mpi_buffer buffer;
    const char *buffer_path;  /* "host", "cuda-aware", "staged" or "managed": what MPI was handed */
    const char *buffer_query; /* how the library's CUDA support was asked */
    bool staged;              /* send/recv are pinned host copies of dev_send/dev_recv */
    void *dev_send, *dev_recv;
    double *t;                /* this rank's duration of each iteration (warm-up ones too) */
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
    /* whom a rank waits on, said past CBK_WAIT_NOTE_S: each size's first
     * barrier is patient (its waits name the peer of their round), the
     * rest is under the stall watch (the timed loops stay as they are) */
    struct patient_peers on;
    struct cbk_stall_watch *watch;
};

struct check {
    const char *result;    /* "passed", "failed", "not applicable" */
    const char *reference; /* what the result was compared with */
    double max_rel_error, tolerance;
    uint64_t wrong;        /* elements or bytes that differ, summed over ranks */
    int64_t first_wrong;   /* index on the rank with the first difference, -1 */
};

/* mpi_ops.c: the function that runs one iteration of op with alg; the
 * timed loop of n iterations (fills s->t). */
coll_fn mpi_choose(enum op op, enum alg alg);
int mpi_run_loop(struct mpi_state *s, size_t bytes, int64_t n);

/* mpi_check.c: runs the operation once on known inputs and compares the
 * result (collectives; "not applicable" otherwise). Collective. */
int mpi_check_size(struct mpi_state *s, size_t bytes, struct check *k);

/* mpi_buffers.c: --buffer's checks (validate), its buffers (setup,
 * teardown) and the staged path's copies inside the timed loops. */
int mpi_buffer_check(enum mpi_buffer b, const struct cbk_choice_list *ops, char *why, size_t len);
int mpi_buffers_alloc(struct mpi_state *s, size_t send_bytes, size_t recv_bytes, char *why, size_t len);
void mpi_buffers_free(struct mpi_state *s);
int mpi_stage_out(struct mpi_state *s, size_t bytes);
int mpi_stage_in(struct mpi_state *s, size_t bytes);

/* mpi_placement.c: pairs and nodes (collective); rank 0's tuning variables. */
void mpi_placement(struct cbk_ctx *c, struct mpi_state *s, enum mpi_pairing pairing);
void mpi_tuning_variables(struct mpi_state *s);

#endif
