/* seqio: how fast is this disk really (E1)? Writes one file in blocks,
 * then reads it back, each phase in a stated cache mode. Timing includes
 * open and close, as IOR's does: write = open..last write (buffered) or
 * open..fsync+close (fsync) or open..close with O_DIRECT (direct). */
#include "../core/buffer.h"
#include "../core/cbk.h"
#include "../core/cleanup.h"
#include "../core/fileio.h"
#include "../core/pagecache.h"
#include "../core/pattern.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct seqio_options {
    const char *dir;
    uint64_t file_bytes, block_bytes;
    enum cbk_write_mode write;
    enum cbk_read_mode read;
    enum cbk_cold_method cold_method;
    bool verify;
    bool huge_pages;
};
#define OPT struct seqio_options

static const struct cbk_param params[] = {
    { .name = "dir", CBK_AT_PATH(OPT, dir), .default_value = ".", .help = "directory to test; cbk works in a private subdirectory it removes" },
    { .name = "file-size", CBK_AT_SIZE(OPT, file_bytes), .default_value = "1g", .unit = "bytes", .min = "4k", .help = "size of the file written and read" },
    { .name = "block-size", CBK_AT_SIZE(OPT, block_bytes), .default_value = "1m", .unit = "bytes", .min = "512", .help = "bytes per write() and read() call" },
    { .name = "write", CBK_AT_CHOICE(OPT, write, cbk_write_mode_names), .default_value = "fsync",
      .help = "write mode: fsync = until fsync+close return (durable); buffered = until the last write returns, the sync after it timed separately; direct = O_DIRECT" },
    { .name = "read", CBK_AT_CHOICE(OPT, read, cbk_read_mode_names), .default_value = "cold",
      .help = "read mode: cold = page cache emptied first (and checked); warm = right after writing; direct = O_DIRECT; none = no read" },
    { .name = "cold-method", CBK_AT_CHOICE(OPT, cold_method, cbk_cold_method_names), .default_value = "auto",
      .help = "how a cold read empties the cache: drop-caches (root), fadvise (any user), auto = fadvise, then drop-caches (root) only if the file stayed cached" },
    { .name = "verify", CBK_AT_BOOL(OPT, verify), .default_value = "false", .help = "check every 4 KiB unit read against what was written (inside the timed read)" },
    { .name = "huge-pages", CBK_AT_BOOL(OPT, huge_pages), .default_value = "true",
      .help = "the write and read buffers on transparent huge pages (madvise), so an O_DIRECT transfer pins a few pages, not one per 4 KiB; false = 4 KiB pages, as fio and dd. The record says how much the kernel gave (buffer_huge_bytes)",
      .before = "false" },
    { 0 },
};

struct seqio {
    char dir[CBK_PATH_MAX];
    char path[CBK_PATH_MAX + 16];
    struct cbk_pattern pattern;
    unsigned char *read_buf;
    size_t read_huge_bytes;
};

static int validate(const struct cbk_args *a, struct cbk_ctx *c, char *why, size_t len)
{
    const OPT *o = cbk_options(a);
    bool direct = o->write == CBK_WRITE_DIRECT || o->read == CBK_READ_DIRECT;
    if (cbk_check_block_sizes(o->file_bytes, o->block_bytes, direct, why, len))
        return -1;
    if (o->read == CBK_READ_COLD && cbk_check_cold_method(o->cold_method, "cold-method", why, len))
        return -1;
    return cbk_check_target_dir(o->dir, o->file_bytes, c->node_size, why, len);
}

static int setup(const struct cbk_args *a, struct cbk_ctx *c)
{
    struct seqio *s = calloc(1, sizeof *s);
    if (!s)
        cbk_fail(c, CBK_EXIT_FAILED, "seqio: out of memory");
    c->state = s;
    const OPT *o = cbk_options(a);
    size_t block = o->block_bytes;
    bool huge = o->huge_pages;
    if (cbk_pattern_init_pages(&s->pattern, c->run_id, (uint32_t)c->rank, block, huge) ||
        !(s->read_buf = cbk_buffer_alloc_pages(block, huge, &s->read_huge_bytes)))
        cbk_fail(c, CBK_EXIT_BAD_INPUT, "seqio: cannot allocate two buffers of %zu bytes", block);
    int rc = cbk_private_dir(o->dir, "seqio", s->dir, sizeof s->dir);
    if (rc)
        cbk_fail(c, CBK_EXIT_BAD_INPUT, "seqio: cannot create a directory in %s: %s", o->dir, strerror(-rc));
    snprintf(s->path, sizeof s->path, "%s/data", s->dir);
    return 0;
}

static void write_phase(const struct cbk_args *a, struct cbk_ctx *c, struct seqio *s)
{
    const OPT *o = cbk_options(a);
    enum cbk_write_mode mode = o->write;
    uint64_t file = o->file_bytes;
    int flags = O_WRONLY | O_CREAT | O_TRUNC | (mode == CBK_WRITE_DIRECT ? O_DIRECT : 0);
    struct cbk_phase p = { .phase = "write", .mode = cbk_write_mode_names[mode], .bytes = file,
                           .ops = file / s->pattern.block_bytes };

    cbk_barrier(c);
    p.begin_s = cbk_now(c);
    int fd = open(s->path, flags, 0600);
    if (fd < 0)
        cbk_fail(c, errno == EINVAL ? CBK_EXIT_BAD_INPUT : CBK_EXIT_FAILED,
                 "seqio: open %s%s: %s", s->path, mode == CBK_WRITE_DIRECT ? " with O_DIRECT" : "",
                 errno == EINVAL ? "the file system does not support O_DIRECT" : strerror(errno));
    int rc = cbk_write_blocks(fd, &s->pattern, file, 0);
    if (rc)
        cbk_fail(c, cbk_io_status(-rc), "seqio: write %s: %s", s->path, strerror(-rc));
    double written_s = cbk_now(c);
    if (mode == CBK_WRITE_FSYNC && fsync(fd))
        cbk_fail(c, cbk_io_status(errno), "seqio: fsync %s: %s", s->path, strerror(errno));
    double sync_begin_s = cbk_now(c);
    if (mode == CBK_WRITE_BUFFERED && fsync(fd))
        cbk_fail(c, cbk_io_status(errno), "seqio: fsync %s: %s", s->path, strerror(errno));
    double sync_s = cbk_now(c) - sync_begin_s;
    if (close(fd))
        cbk_fail(c, cbk_io_status(errno), "seqio: close %s: %s", s->path, strerror(errno));
    p.end_s = cbk_now(c);

    cbk_phase_field(&p, CBK_U64("file_bytes", file));
    cbk_phase_field(&p, CBK_U64("block_bytes", s->pattern.block_bytes));
    cbk_phase_field(&p, CBK_TEXT("dir", o->dir));
    cbk_phase_buffer_pages(&p, o->huge_pages, s->pattern.pool_huge_bytes);
    if (mode == CBK_WRITE_BUFFERED)
        cbk_report_buffered_write(c, &p, written_s, p.end_s, sync_s);
    else
        cbk_report(c, &p);
}

static void read_phase(const struct cbk_args *a, struct cbk_ctx *c, struct seqio *s)
{
    const OPT *o = cbk_options(a);
    enum cbk_read_mode mode = o->read;
    uint64_t file = o->file_bytes;
    bool verify = o->verify;
    struct cbk_phase p = { .phase = "read", .mode = cbk_read_mode_names[mode], .bytes = file,
                           .ops = file / s->pattern.block_bytes };

    int rc = cbk_test_corrupt(s->path, file);
    if (rc)
        cbk_fail(c, CBK_EXIT_FAILED, "seqio: test hook could not corrupt %s: %s", s->path, strerror(-rc));
    const char *method = "none";
    if (mode == CBK_READ_COLD) {
        int fd = open(s->path, O_RDONLY);
        if (fd < 0 || (rc = cbk_make_cold(fd, o->cold_method, &method)))
            cbk_fail(c, CBK_EXIT_FAILED, "seqio: emptying the page cache for %s (%s): %s", s->path,
                     method, strerror(fd < 0 ? errno : -rc));
        close(fd);
    }
    int probe = open(s->path, O_RDONLY);
    double resident = probe >= 0 ? cbk_resident_fraction(probe, file) : -1.0;
    if (probe >= 0)
        close(probe);

    uint64_t bad = 0;
    cbk_barrier(c);
    p.begin_s = cbk_now(c);
    int fd = open(s->path, O_RDONLY | (mode == CBK_READ_DIRECT ? O_DIRECT : 0));
    if (fd < 0)
        cbk_fail(c, CBK_EXIT_FAILED, "seqio: open %s: %s", s->path, strerror(errno));
    rc = cbk_read_blocks(fd, s->read_buf, s->pattern.block_bytes, file, verify ? &s->pattern : NULL, 0, &bad);
    if (rc < 0)
        cbk_fail(c, CBK_EXIT_FAILED, "seqio: read %s: %s", s->path, strerror(-rc));
    close(fd);
    p.end_s = cbk_now(c);

    cbk_phase_field(&p, CBK_U64("file_bytes", file));
    cbk_phase_field(&p, CBK_U64("block_bytes", s->pattern.block_bytes));
    cbk_phase_field(&p, CBK_TEXT("dir", o->dir));
    cbk_label_read(&p, mode == CBK_READ_COLD, mode == CBK_READ_WARM, resident, method);
    cbk_phase_buffer_pages(&p, o->huge_pages, s->read_huge_bytes);
    cbk_phase_field(&p, CBK_BOOL("verify", verify));
    if (verify) {
        cbk_phase_field(&p, CBK_BOOL("verify_ok", rc == 0));
        if (rc)
            cbk_phase_field(&p, CBK_U64("verify_first_bad_offset", bad));
    }
    cbk_report(c, &p);
    if (rc)
        cbk_fail(c, CBK_EXIT_FAILED, "seqio: verify failed: byte at offset %llu of %s differs from what was written",
                 (unsigned long long)bad, s->path);
}

static int run(const struct cbk_args *a, struct cbk_ctx *c)
{
    struct seqio *s = c->state;
    write_phase(a, c, s);
    const OPT *o = cbk_options(a);
    if (o->read != CBK_READ_NONE)
        read_phase(a, c, s);
    unlink(s->path);
    return 0;
}

static void teardown(const struct cbk_args *a, struct cbk_ctx *c)
{
    (void)a;
    struct seqio *s = c->state;
    cbk_pattern_free(&s->pattern);
    cbk_buffer_free(s->read_buf);
    free(s);
    c->state = NULL;
}

const struct cbk_kernel cbk_kernel_seqio = {
    .name = "seqio",
    .summary = "sequential write then read of one file, with stated cache modes (E1)",
    .family = CBK_FAMILY_IO,
    .params = params,
    .options_size = sizeof(OPT),
    .validate = validate,
    .setup = setup,
    .run = run,
    .teardown = teardown,
};
