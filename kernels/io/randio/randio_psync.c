/* psync: pread/pwrite, one I/O at a time per job (queue depth 1). */
#include "randio_engine.h"

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

struct psync {
    struct randio_io *pending;
};

static int init(struct randio_queue *q)
{
    q->priv = calloc(1, sizeof(struct psync));
    return q->priv ? 0 : -ENOMEM;
}

static int submit(struct randio_queue *q, struct randio_io *io)
{
    struct psync *s = q->priv;
    if (s->pending)
        return -EBUSY;
    s->pending = io;
    return 0;
}

/* The I/O happens here, so its time from submission covers the system call. */
static int reap(struct randio_queue *q, struct randio_io **done, unsigned max)
{
    struct psync *s = q->priv;
    if (!s->pending || max == 0)
        return 0;
    struct randio_io *io = s->pending;
    ssize_t n;
    do {
        n = io->is_read ? pread(q->fd, io->buf, q->block_bytes, (off_t)io->offset)
                        : pwrite(q->fd, io->buf, q->block_bytes, (off_t)io->offset);
    } while (n < 0 && errno == EINTR);
    io->result = n < 0 ? -errno : (int)n;
    s->pending = NULL;
    done[0] = io;
    return 1;
}

static void finish(struct randio_queue *q)
{
    free(q->priv);
    q->priv = NULL;
}

const struct randio_engine randio_engine_psync = {
    .name = "psync", .queues = false, .init = init, .submit = submit, .reap = reap, .exit = finish,
};
