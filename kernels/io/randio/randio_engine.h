/* randio's I/O engines, one file each, behind one small interface (as
 * fio's ioengine_ops): a job queues I/Os with submit(), hands the queued
 * ones to the kernel with flush() (every `submit-batch` I/Os), and collects
 * completions with reap(), which also hands over any still queued. An engine whose library was absent at build time
 * still registers, with `unavailable` saying how to get it.
 *
 * An engine that `polls` asks the kernel for completions without sleeping
 * for up to `poll_s` before it sleeps in reap(): a thread that sleeps for
 * each I/O pays its CPU's wake-up from idle on every completion (#39). */
#ifndef RANDIO_ENGINE_H
#define RANDIO_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct randio_io {
    unsigned char *buf;
    uint64_t offset;
    bool is_read;
    double submitted_s;  /* cbk_clock() at submission: latency is submission to completion */
    int result;          /* bytes moved, or -errno, set at completion */
};

struct randio_engine;

/* One job's engine state; engines keep their own data behind `priv`. */
struct randio_queue {
    const struct randio_engine *engine;
    int fd;
    unsigned depth;
    size_t block_bytes;
    double poll_s;       /* engines that poll: seconds reap() polls before it sleeps; 0 = sleep at once */
    void *priv;
};

struct randio_engine {
    const char *name;
    const char *unavailable;  /* NULL when built in, else why not and how to get it */
    bool queues;              /* false: one I/O at a time whatever the depth (psync) */
    bool polls;               /* reap() honours poll_s */
    unsigned max_depth;       /* the most I/Os one queue can hold; 0 = as many as --iodepth allows */
    int (*init)(struct randio_queue *q);                    /* 0 or -errno */
    int (*submit)(struct randio_queue *q, struct randio_io *io);     /* queues; 0 or -errno */
    int (*flush)(struct randio_queue *q);    /* NULL when submit() already did the I/O; 0 or -errno */
    /* Waits for at least one completion; fills done[] (at most max) and returns how many, or -errno. */
    int (*reap)(struct randio_queue *q, struct randio_io **done, unsigned max);
    void (*exit)(struct randio_queue *q);
};

extern const struct randio_engine randio_engine_psync;
extern const struct randio_engine randio_engine_io_uring;
extern const struct randio_engine randio_engine_libaio;

#endif
