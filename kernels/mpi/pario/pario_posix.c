/* pario POSIX back end: open/pwrite/pread/fsync/close, as IOR -a POSIX.
 * A shared file is opened by every rank separately (IOR does the same);
 * creation is rank 0's job, so a write open with O_CREAT is harmless on
 * the other ranks. */
#include "pario_api.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int fail(struct pario_file *f, const char *call)
{
    snprintf(f->err, sizeof f->err, "%s %s: %s", call, f->path, strerror(errno));
    return -1;
}

static int posix_open(struct pario_file *f, const char *path, enum pario_open how, MPI_Comm comm)
{
    (void)comm;
    f->path = path;
    int flags = (how == PARIO_WRITE ? O_WRONLY | O_CREAT : O_RDONLY) | (f->direct ? O_DIRECT : 0);
    f->fd = open(path, flags, 0600);
    if (f->fd < 0 && f->direct && errno == EINVAL) {
        snprintf(f->err, sizeof f->err, "open %s with O_DIRECT: the file system does not support O_DIRECT", path);
        return -1;
    }
    return f->fd < 0 ? fail(f, "open") : 0;
}

static int posix_write_at(struct pario_file *f, uint64_t offset, const void *buf, size_t len, bool collective)
{
    (void)collective;
    const char *p = buf;
    for (size_t done = 0; done < len;) {
        ssize_t n = pwrite(f->fd, p + done, len - done, (off_t)(offset + done));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            if (n == 0)
                errno = EIO;
            return fail(f, "pwrite");
        }
        done += (size_t)n;
    }
    return 0;
}

static int posix_read_at(struct pario_file *f, uint64_t offset, void *buf, size_t len, bool collective)
{
    (void)collective;
    char *p = buf;
    for (size_t done = 0; done < len;) {
        ssize_t n = pread(f->fd, p + done, len - done, (off_t)(offset + done));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            if (n == 0)
                errno = ENODATA; /* the file is shorter than the parameters say */
            return fail(f, "pread");
        }
        done += (size_t)n;
    }
    return 0;
}

static int posix_sync(struct pario_file *f) { return fsync(f->fd) ? fail(f, "fsync") : 0; }

static int posix_close(struct pario_file *f)
{
    int rc = close(f->fd);
    f->fd = -1;
    return rc ? fail(f, "close") : 0;
}

const struct pario_api pario_posix = {
    .name = "posix",
    .collective = false,
    .open = posix_open,
    .write_at = posix_write_at,
    .read_at = posix_read_at,
    .sync = posix_sync,
    .close = posix_close,
};
