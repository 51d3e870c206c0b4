/* Linux native AIO through libaio (meaningful with O_DIRECT only: buffered
 * AIO completes synchronously inside io_submit). */
#include "randio_engine.h"
#include "../../core/timer.h"

#ifdef CBK_HAVE_LIBAIO
#include <errno.h>
#include <libaio.h>
#include <stdlib.h>

struct aio {
    io_context_t ctx;
    struct iocb *iocbs;     /* one per queue slot */
    struct iocb **free_cbs; /* slots not in flight: completions return them (any order) */
    struct iocb **batch;
    struct io_event *events;
    unsigned nfree, queued;
};

static int init(struct randio_queue *q)
{
    struct aio *a = calloc(1, sizeof *a);
    if (!a)
        return -ENOMEM;
    a->iocbs = calloc(q->depth, sizeof *a->iocbs);
    a->batch = calloc(q->depth, sizeof *a->batch);
    a->free_cbs = calloc(q->depth, sizeof *a->free_cbs);
    a->events = calloc(q->depth, sizeof *a->events);
    int rc = a->iocbs && a->batch && a->events && a->free_cbs ? io_setup((int)q->depth, &a->ctx) : -ENOMEM;
    if (rc < 0) {
        free(a->free_cbs);
        free(a->iocbs);
        free(a->batch);
        free(a->events);
        free(a);
        return rc;
    }
    for (unsigned i = 0; i < q->depth; i++)
        a->free_cbs[i] = &a->iocbs[i];
    a->nfree = q->depth;
    q->priv = a;
    return 0;
}

static int submit(struct randio_queue *q, struct randio_io *io)
{
    struct aio *a = q->priv;
    if (a->nfree == 0)
        return -EBUSY;
    struct iocb *cb = a->free_cbs[--a->nfree];
    if (io->is_read)
        io_prep_pread(cb, q->fd, io->buf, q->block_bytes, (long long)io->offset);
    else
        io_prep_pwrite(cb, q->fd, io->buf, q->block_bytes, (long long)io->offset);
    cb->data = io;
    a->batch[a->queued++] = cb;
    return 0;
}

static int flush(struct randio_queue *q)
{
    struct aio *a = q->priv;
    for (unsigned off = 0; off < a->queued;) {
        int rc = io_submit(a->ctx, (long)(a->queued - off), a->batch + off);
        if (rc < 0 && rc != -EAGAIN && rc != -EINTR)
            return rc;
        off += rc > 0 ? (unsigned)rc : 0;
    }
    a->queued = 0;
    return 0;
}

static int reap(struct randio_queue *q, struct randio_io **done, unsigned max)
{
    struct aio *a = q->priv;
    int rc = flush(q);
    if (rc)
        return rc;
    if (max > q->depth)
        max = q->depth;
    int n = 0;
    if (q->poll_s) { /* completions asked for without sleeping, up to poll_s */
        struct timespec none = { 0, 0 };
        double deadline = cbk_clock() + q->poll_s;
        do {
            n = io_getevents(a->ctx, 0, (long)max, a->events, &none);
        } while ((n == 0 || n == -EINTR) && cbk_clock() < deadline);
    }
    while (n == 0 || n == -EINTR)
        n = io_getevents(a->ctx, 1, (long)max, a->events, NULL);
    if (n < 0)
        return n;
    for (int i = 0; i < n; i++) {
        struct randio_io *io = a->events[i].data;
        io->result = (int)(long)a->events[i].res;
        a->free_cbs[a->nfree++] = a->events[i].obj;
        done[i] = io;
    }
    return n;
}

static void finish(struct randio_queue *q)
{
    struct aio *a = q->priv;
    if (a) {
        io_destroy(a->ctx);
        free(a->free_cbs);
        free(a->iocbs);
        free(a->batch);
        free(a->events);
        free(a);
    }
    q->priv = NULL;
}

const struct randio_engine randio_engine_libaio = {
    .name = "libaio", .queues = true, .polls = true, .init = init, .submit = submit, .flush = flush, .reap = reap, .exit = finish,
};
#else
const struct randio_engine randio_engine_libaio = {
    .name = "libaio",
#ifdef CBK_LIBAIO_OFF
    .unavailable = "engine libaio not available: cbk was built with CBK_WITH_LIBAIO=OFF (Spack: ~libaio); "
                   "rebuild with it ON (Spack: +libaio)",
#else
    .unavailable = "engine libaio not available: cbk was built without libaio "
                   "(apt-get install libaio-dev, then reinstall clusterbench)",
#endif
};
#endif
