/* manyfiles: many files of one size written with a fixed block size (E4:
 * 50 files x 200 MB with dd bs=32k), timed end to end from the first open
 * to the last close, with per-file times kept for percentiles. Optional
 * read-back in the same cache modes as seqio. */
#include "../core/buffer.h"
#include "../core/cbk.h"
#include "../core/cleanup.h"
#include "../core/fileio.h"
#include "../core/pagecache.h"
#include "../core/pattern.h"
#include "../core/timer.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct manyfiles_options {
    const char *dir;
    int64_t files;
    uint64_t file_bytes, block_bytes;
    enum cbk_write_mode write;
    enum cbk_read_mode read;
    enum cbk_cold_method cold_method;
    bool verify;
};
#define OPT struct manyfiles_options

static const struct cbk_param params[] = {
    { .name = "dir", CBK_AT_PATH(OPT, dir), .default_value = ".", .help = "directory to test; cbk works in a private subdirectory it removes" },
    { .name = "files", CBK_AT_INT(OPT, files), .default_value = "50", .unit = "count", .min = "1", .max = "1000000", .help = "number of files" },
    { .name = "file-size", CBK_AT_SIZE(OPT, file_bytes), .default_value = "32m", .unit = "bytes", .min = "512", .help = "size of each file" },
    { .name = "block-size", CBK_AT_SIZE(OPT, block_bytes), .default_value = "32k", .unit = "bytes", .min = "512", .help = "bytes per write() and read() call (E4: dd bs=32768)" },
    { .name = "write", CBK_AT_CHOICE(OPT, write, cbk_write_mode_names), .default_value = "fsync",
      .help = "fsync = each file fsynced before close; buffered = no sync (one syncfs after the last file is timed separately); direct = O_DIRECT" },
    { .name = "read", CBK_AT_CHOICE(OPT, read, cbk_read_mode_names), .default_value = "none",
      .help = "read the files back: cold (page cache emptied first), warm, direct (O_DIRECT), or none" },
    { .name = "cold-method", CBK_AT_CHOICE(OPT, cold_method, cbk_cold_method_names), .default_value = "auto",
      .help = "how a cold read empties the cache: drop-caches (root), fadvise (any user), auto = fadvise, then drop-caches (root) only if a file stayed cached" },
    { .name = "verify", CBK_AT_BOOL(OPT, verify), .default_value = "false", .help = "check every 4 KiB unit read against what was written" },
    { 0 },
};

struct manyfiles {
    char dir[CBK_PATH_MAX];
    const char *target; /* the --dir given: records name it, so the limit checks find its file system */
    struct cbk_pattern pattern;
    unsigned char *read_buf;
    double *file_s; /* per-file seconds, preallocated: nothing is allocated while timing */
    int64_t files;
};

static void file_path(const struct manyfiles *m, int64_t i, char *out, size_t len)
{
    snprintf(out, len, "%s/f%07lld", m->dir, (long long)i);
}

static int validate(const struct cbk_args *a, struct cbk_ctx *c, char *why, size_t len)
{
    const OPT *o = cbk_options(a);
    uint64_t file = o->file_bytes, files = (uint64_t)o->files;
    bool direct = o->write == CBK_WRITE_DIRECT || o->read == CBK_READ_DIRECT;
    if (cbk_check_block_sizes(file, o->block_bytes, direct, why, len))
        return -1;
    if (o->read == CBK_READ_COLD && cbk_check_cold_method(o->cold_method, "cold-method", why, len))
        return -1;
    if (file > UINT64_MAX / files) {
        snprintf(why, len, "%llu files of %llu bytes overflow a 64-bit size", (unsigned long long)files,
                 (unsigned long long)file);
        return -1;
    }
    /* the files, the private directory and its owner stamp: a file system out
     * of inodes failed the run at the first file past them, after the space
     * check had passed */
    if (cbk_check_target_files(o->dir, file, files, c->node_size, why, len))
        return -1;
    return cbk_check_target_inodes(o->dir, files + 2, c->node_size, why, len);
}

static int setup(const struct cbk_args *a, struct cbk_ctx *c)
{
    struct manyfiles *m = calloc(1, sizeof *m);
    if (!m)
        cbk_fail(c, CBK_EXIT_FAILED, "manyfiles: out of memory");
    c->state = m;
    const OPT *o = cbk_options(a);
    m->files = o->files;
    m->target = o->dir;
    size_t block = o->block_bytes;
    if (cbk_pattern_init(&m->pattern, c->run_id, (uint32_t)c->rank, block) ||
        !(m->read_buf = cbk_buffer_alloc(block)) || !(m->file_s = calloc((size_t)m->files, sizeof(double))))
        cbk_fail(c, CBK_EXIT_BAD_INPUT, "manyfiles: cannot allocate buffers for %zu-byte blocks", block);
    int rc = cbk_private_dir(o->dir, "manyfiles", m->dir, sizeof m->dir);
    if (rc)
        cbk_fail(c, CBK_EXIT_BAD_INPUT, "manyfiles: cannot create a directory in %s: %s", o->dir, strerror(-rc));
    return 0;
}

static int by_value(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

/* Nearest-rank percentile of sorted values. */
static double percentile(const double *sorted, int64_t n, double q)
{
    int64_t i = (int64_t)(q / 100.0 * (double)n + 0.999999) - 1;
    if (i < 0)
        i = 0;
    if (i >= n)
        i = n - 1;
    return sorted[i];
}

static void add_file_times(struct cbk_phase *p, struct manyfiles *m, uint64_t file_bytes)
{
    qsort(m->file_s, (size_t)m->files, sizeof(double), by_value);
    cbk_phase_field(p, CBK_TEXT("dir", m->target));
    cbk_phase_field(p, CBK_I64("files", m->files));
    cbk_phase_field(p, CBK_U64("file_bytes", file_bytes));
    cbk_phase_field(p, CBK_U64("block_bytes", m->pattern.block_bytes));
    cbk_phase_field(p, CBK_REAL("files_per_s", (double)m->files / (p->end_s - p->begin_s)));
    cbk_phase_field(p, CBK_REAL("file_seconds_p50", percentile(m->file_s, m->files, 50)));
    cbk_phase_field(p, CBK_REAL("file_seconds_p90", percentile(m->file_s, m->files, 90)));
    cbk_phase_field(p, CBK_REAL("file_seconds_p99", percentile(m->file_s, m->files, 99)));
    cbk_phase_field(p, CBK_REAL("file_seconds_max", m->file_s[m->files - 1]));
}

static void write_phase(const struct cbk_args *a, struct cbk_ctx *c, struct manyfiles *m)
{
    const OPT *o = cbk_options(a);
    enum cbk_write_mode mode = o->write;
    uint64_t file = o->file_bytes;
    int flags = O_WRONLY | O_CREAT | O_TRUNC | (mode == CBK_WRITE_DIRECT ? O_DIRECT : 0);
    bool each_fsync = mode == CBK_WRITE_FSYNC;
    char path[CBK_PATH_MAX + 32];
    struct cbk_phase p = { .phase = "write", .mode = cbk_write_mode_names[mode], .bytes = file * (uint64_t)m->files,
                           .ops = file / m->pattern.block_bytes * (uint64_t)m->files };

    cbk_barrier(c);
    p.begin_s = cbk_now(c);
    for (int64_t i = 0; i < m->files; i++) {
        file_path(m, i, path, sizeof path);
        double t0 = cbk_clock();
        int fd = open(path, flags, 0600);
        if (fd < 0)
            cbk_fail(c, errno == EINVAL ? CBK_EXIT_BAD_INPUT : cbk_io_status(errno), "manyfiles: open %s: %s", path,
                     errno == EINVAL ? "the file system does not support O_DIRECT" : strerror(errno));
        int rc = cbk_write_blocks(fd, &m->pattern, file, (uint64_t)i * file);
        if (rc)
            cbk_fail(c, cbk_io_status(-rc), "manyfiles: write %s: %s", path, strerror(-rc));
        if (each_fsync && fsync(fd))
            cbk_fail(c, cbk_io_status(errno), "manyfiles: fsync %s: %s", path, strerror(errno));
        if (close(fd))
            cbk_fail(c, cbk_io_status(errno), "manyfiles: close %s: %s", path, strerror(errno));
        m->file_s[i] = cbk_clock() - t0;
    }
    p.end_s = cbk_now(c);
    double sync_s = 0;
    if (mode == CBK_WRITE_BUFFERED) {
        int dfd = open(m->dir, O_RDONLY | O_DIRECTORY);
        double t0 = cbk_now(c);
        if (dfd < 0 || syncfs(dfd))
            cbk_fail(c, CBK_EXIT_FAILED, "manyfiles: syncfs %s: %s", m->dir, strerror(errno));
        sync_s = cbk_now(c) - t0;
        close(dfd);
    }
    add_file_times(&p, m, file);
    if (mode == CBK_WRITE_BUFFERED)
        cbk_report_buffered_write(c, &p, p.end_s, p.end_s + sync_s, sync_s);
    else
        cbk_report(c, &p);
}

static void read_phase(const struct cbk_args *a, struct cbk_ctx *c, struct manyfiles *m)
{
    const OPT *o = cbk_options(a);
    enum cbk_read_mode mode = o->read;
    uint64_t file = o->file_bytes;
    bool verify = o->verify;
    char path[CBK_PATH_MAX + 32];
    struct cbk_phase p = { .phase = "read", .mode = cbk_read_mode_names[mode], .bytes = file * (uint64_t)m->files,
                           .ops = file / m->pattern.block_bytes * (uint64_t)m->files };
    const char *method = "none";
    double resident_max = 0;
    for (int64_t i = 0; i < m->files; i++) {
        file_path(m, i, path, sizeof path);
        int rc = i == 0 ? cbk_test_corrupt(path, file) : 0;
        int fd = open(path, O_RDONLY);
        if (fd < 0 || rc)
            cbk_fail(c, CBK_EXIT_FAILED, "manyfiles: preparing %s for reading: %s", path, strerror(fd < 0 ? errno : -rc));
        /* one global drop is enough; fadvise is per file */
        if (mode == CBK_READ_COLD && (i == 0 || strcmp(method, "drop-caches")) &&
            (rc = cbk_make_cold(fd, o->cold_method, &method)))
            cbk_fail(c, CBK_EXIT_FAILED, "manyfiles: emptying the page cache (%s): %s", method, strerror(-rc));
        close(fd);
    }
    for (int64_t i = 0; i < m->files; i++) {
        file_path(m, i, path, sizeof path);
        int fd = open(path, O_RDONLY);
        resident_max = cbk_resident_worst(resident_max, fd >= 0 ? cbk_resident_fraction(fd, file) : -1.0);
        if (fd >= 0)
            close(fd);
    }

    int rc = 0;
    uint64_t bad = 0;
    int64_t bad_file = -1;
    cbk_barrier(c);
    p.begin_s = cbk_now(c);
    for (int64_t i = 0; i < m->files && !rc; i++) {
        file_path(m, i, path, sizeof path);
        double t0 = cbk_clock();
        int fd = open(path, O_RDONLY | (mode == CBK_READ_DIRECT ? O_DIRECT : 0));
        if (fd < 0)
            cbk_fail(c, CBK_EXIT_FAILED, "manyfiles: open %s: %s", path, strerror(errno));
        rc = cbk_read_blocks(fd, m->read_buf, m->pattern.block_bytes, file, verify ? &m->pattern : NULL,
                             (uint64_t)i * file, &bad);
        if (rc < 0)
            cbk_fail(c, CBK_EXIT_FAILED, "manyfiles: read %s: %s", path, strerror(-rc));
        if (rc)
            bad_file = i;
        close(fd);
        m->file_s[i] = cbk_clock() - t0;
    }
    p.end_s = cbk_now(c);
    add_file_times(&p, m, file);
    cbk_label_read(&p, mode == CBK_READ_COLD, mode == CBK_READ_WARM, resident_max, method);
    cbk_phase_field(&p, CBK_BOOL("verify", verify));
    if (verify) {
        cbk_phase_field(&p, CBK_BOOL("verify_ok", rc == 0));
        if (rc) {
            cbk_phase_field(&p, CBK_I64("verify_bad_file", bad_file));
            cbk_phase_field(&p, CBK_U64("verify_first_bad_offset", bad));
        }
    }
    cbk_report(c, &p);
    if (rc)
        cbk_fail(c, CBK_EXIT_FAILED, "manyfiles: verify failed: file %lld, byte at offset %llu differs from what was written",
                 (long long)bad_file, (unsigned long long)bad);
}

static int run(const struct cbk_args *a, struct cbk_ctx *c)
{
    struct manyfiles *m = c->state;
    write_phase(a, c, m);
    const OPT *o = cbk_options(a);
    if (o->read != CBK_READ_NONE)
        read_phase(a, c, m);
    char path[CBK_PATH_MAX + 32];
    for (int64_t i = 0; i < m->files; i++) {
        file_path(m, i, path, sizeof path);
        unlink(path);
    }
    return 0;
}

static void teardown(const struct cbk_args *a, struct cbk_ctx *c)
{
    (void)a;
    struct manyfiles *m = c->state;
    cbk_pattern_free(&m->pattern);
    cbk_buffer_free(m->read_buf);
    free(m->file_s);
    free(m);
    c->state = NULL;
}

const struct cbk_kernel cbk_kernel_manyfiles = {
    .name = "manyfiles",
    .summary = "many files of one size written end to end with a fixed block size (E4)",
    .family = CBK_FAMILY_IO,
    .params = params,
    .options_size = sizeof(OPT),
    .validate = validate,
    .setup = setup,
    .run = run,
    .teardown = teardown,
};
