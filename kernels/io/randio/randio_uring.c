/* io_uring through liburing: submissions batched per reap, completions
 * peeked in batches after waiting for the first. The ring is set up by the
 * job thread that uses it, so it can be single-issuer with deferred task
 * work (as fio 3.33 sets it up): completions are then run when the thread
 * waits, not by interrupting it, which on a small VM was worth several
 * percent of IOPS at depth 32. */
#include "randio_engine.h"
#include "../../core/timer.h"

#ifdef CBK_HAVE_LIBURING
#include <errno.h>
#include <liburing.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

/* the kernel refuses a larger ring with EINVAL (its IORING_MAX_ENTRIES) */
#define URING_MAX_ENTRIES 32768u

#ifndef IORING_SETUP_DEFER_TASKRUN /* kernel headers older than 6.1 */
#define IORING_SETUP_COOP_TASKRUN (1U << 8)
#define IORING_SETUP_SINGLE_ISSUER (1U << 12)
#define IORING_SETUP_DEFER_TASKRUN (1U << 13)
#endif

struct uring {
    struct io_uring ring;
};

static int init(struct randio_queue *q)
{
    struct uring *u = calloc(1, sizeof *u);
    if (!u)
        return -ENOMEM;
    /* newest flags first; older kernels reject them with EINVAL */
    static const unsigned flag_sets[] = {
        IORING_SETUP_COOP_TASKRUN | IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN,
        IORING_SETUP_COOP_TASKRUN,
        0,
    };
    int rc = -EINVAL;
    for (size_t i = 0; i < sizeof flag_sets / sizeof *flag_sets && rc == -EINVAL; i++)
        rc = io_uring_queue_init(q->depth, &u->ring, flag_sets[i]);
    if (rc < 0) {
        free(u);
        return rc;
    }
    q->priv = u;
    return 0;
}

static int submit(struct randio_queue *q, struct randio_io *io)
{
    struct uring *u = q->priv;
    struct io_uring_sqe *sqe = io_uring_get_sqe(&u->ring);
    if (!sqe)
        return -EBUSY;
    if (io->is_read)
        io_uring_prep_read(sqe, q->fd, io->buf, (unsigned)q->block_bytes, io->offset);
    else
        io_uring_prep_write(sqe, q->fd, io->buf, (unsigned)q->block_bytes, io->offset);
    io_uring_sqe_set_data(sqe, io);
    return 0;
}

static int flush(struct randio_queue *q)
{
    struct uring *u = q->priv;
    int rc;
    do {
        rc = io_uring_submit(&u->ring);
    } while (rc == -EINTR);
    /* EAGAIN/EBUSY: the kernel is short of resources; what was not taken stays queued for reap() */
    return rc < 0 && rc != -EAGAIN && rc != -EBUSY ? rc : 0;
}

/* Submits what was queued and asks for completions without sleeping until
 * one is there or poll_s has passed. Deferred task work (the completions)
 * runs only inside io_uring_enter with GETEVENTS, so the poll is that call
 * with nothing to wait for, not a look at the ring. */
static int poll_completions(struct randio_queue *q, struct uring *u)
{
    int rc = io_uring_submit(&u->ring);
    if (rc < 0 && rc != -EINTR && rc != -EAGAIN && rc != -EBUSY)
        return rc;
    double deadline = cbk_clock() + q->poll_s;
    /* the system call itself, not io_uring_get_events(): liburing before 2.3 lacks it */
    while (!io_uring_cq_ready(&u->ring) && cbk_clock() < deadline)
        if (syscall(__NR_io_uring_enter, u->ring.ring_fd, 0, 0, IORING_ENTER_GETEVENTS, NULL, 0) < 0 &&
            errno != EINTR && errno != EAGAIN && errno != EBUSY)
            return -errno;
    return 0;
}

static int reap(struct randio_queue *q, struct randio_io **done, unsigned max)
{
    struct uring *u = q->priv;
    struct io_uring_cqe *cqe;
    int rc;
    if (q->poll_s) {
        if ((rc = poll_completions(q, u)) < 0)
            return rc;
        if (!io_uring_cq_ready(&u->ring))
            rc = io_uring_submit_and_wait(&u->ring, 1);
    } else {
        /* one system call submits what was queued and sleeps until a completion */
        rc = io_uring_submit_and_wait(&u->ring, 1);
    }
    if (rc < 0 && rc != -EINTR)
        return rc;
    unsigned n = 0, head;
    io_uring_for_each_cqe(&u->ring, head, cqe) {
        if (n == max)
            break;
        struct randio_io *io = io_uring_cqe_get_data(cqe);
        io->result = cqe->res;
        done[n++] = io;
    }
    io_uring_cq_advance(&u->ring, n);
    return (int)n;
}

static void finish(struct randio_queue *q)
{
    struct uring *u = q->priv;
    if (u) {
        io_uring_queue_exit(&u->ring);
        free(u);
    }
    q->priv = NULL;
}

const struct randio_engine randio_engine_io_uring = {
    .name = "io_uring", .queues = true, .polls = true, .max_depth = URING_MAX_ENTRIES, .init = init, .submit = submit, .flush = flush, .reap = reap, .exit = finish,
};
#else
const struct randio_engine randio_engine_io_uring = {
    .name = "io_uring",
#ifdef CBK_LIBURING_OFF
    .unavailable = "engine io_uring not available: cbk was built with CBK_WITH_LIBURING=OFF (Spack: ~liburing); "
                   "rebuild with it ON (Spack: +liburing)",
#else
    .unavailable = "engine io_uring not available: cbk was built without liburing "
                   "(apt-get install liburing-dev, then reinstall clusterbench)",
#endif
};
#endif
