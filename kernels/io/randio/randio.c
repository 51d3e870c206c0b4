/* randio: random IOPS at a queue depth with latency percentiles (E5).
 * Each job is a thread with its own file descriptor and queue, all jobs on
 * one shared file (as one database or scratch file is shared in practice).
 * Latency is submission to completion (fio's `lat`), recorded in a
 * fixed-memory log-bucketed histogram (core/histogram.h): nothing is
 * allocated in the timed loop. Completions during the ramp are not counted. */
#include "../../core/affinity.h"
#include "../../core/buffer.h"
#include "../../core/cbk.h"
#include "../../core/cleanup.h"
#include "../../core/fileio.h"
#include "../../core/histogram.h"
#include "../../core/params.h"
#include "../../core/pattern.h"
#include "../../core/threads.h"
#include "../../core/timer.h"
#include "randio_engine.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const struct randio_engine *const engines[] = {
    &randio_engine_io_uring, &randio_engine_libaio, &randio_engine_psync,
};

enum randio_pattern { RANDIO_PATTERN_RANDREAD, RANDIO_PATTERN_RANDWRITE, RANDIO_PATTERN_RANDRW };
static const char *const pattern_names[] = { "randread", "randwrite", "randrw", NULL };
/* --engine: auto, then the engines in the order of engines[] */
enum { ENGINE_AUTO };
static const char *const engine_names[] = { "auto", "io_uring", "libaio", "psync", NULL };

struct randio_options {
    const char *dir;
    uint64_t file_size;
    uint64_t block_size;
    enum randio_pattern pattern;
    int64_t rwmix;
    int64_t iodepth;
    int64_t submit_batch;
    int64_t jobs;
    double runtime;
    double ramp;
    bool direct;
    int engine; /* ENGINE_AUTO, or 1 + an index into engines[] */
    double poll;
    const char *cpus;
    int64_t seed;
};
#define OPT struct randio_options
static const OPT *opt(const struct cbk_args *a) { return cbk_options(a); }

static const struct cbk_param params[] = {
    { .name = "dir", CBK_AT_PATH(OPT, dir), .default_value = ".", .help = "directory to test; cbk works in a private subdirectory it removes" },
    { .name = "file-size", CBK_AT_SIZE(OPT, file_size), .default_value = "1g", .unit = "bytes", .min = "4k", .help = "size of the file the random I/O covers (pre-written, not timed)" },
    { .name = "block-size", CBK_AT_SIZE(OPT, block_size), .default_value = "4k", .unit = "bytes", .min = "512", .max = "64m", .help = "bytes per I/O; offsets are aligned to it" },
    { .name = "pattern", CBK_AT_CHOICE(OPT, pattern, pattern_names), .default_value = "randread", .help = "random reads, random writes, or a mix (see rwmix)" },
    { .name = "rwmix", CBK_AT_INT(OPT, rwmix), .default_value = "70", .unit = "%", .min = "0", .max = "100", .help = "randrw: percentage of reads" },
    { .name = "iodepth", CBK_AT_INT(OPT, iodepth), .default_value = "32", .unit = "I/Os", .min = "1", .max = "65536", .help = "I/Os in flight per job (psync: always 1)" },
    { .name = "submit-batch", CBK_AT_INT(OPT, submit_batch), .default_value = "1", .unit = "I/Os", .min = "1", .max = "65536", .help = "I/Os queued before they are handed to the kernel in one call (at most iodepth); 1 = each at once, as fio's default iodepth_batch_submit" },
    { .name = "jobs", CBK_AT_INT(OPT, jobs), .default_value = "1", .unit = "threads", .min = "1", .max = "1024", .help = "threads, each with its own queue, on one shared file" },
    { .name = "runtime", CBK_AT_REAL(OPT, runtime), .default_value = "30", .unit = "s", .min = "0.1", .max = "86400", .help = "measured time per repetition, after the ramp" },
    { .name = "ramp", CBK_AT_REAL(OPT, ramp), .default_value = "2", .unit = "s", .min = "0", .max = "3600", .help = "time run first and not counted (caches, queues and clocks settle)" },
    { .name = "direct", CBK_AT_BOOL(OPT, direct), .default_value = "true", .help = "O_DIRECT (default); false = buffered, labelled as such" },
    { .name = "engine", CBK_AT_CHOICE(OPT, engine, engine_names), .default_value = "auto", .help = "I/O engine; auto = io_uring when built in, else libaio, else psync" },
    { .name = "poll", CBK_AT_REAL(OPT, poll), .default_value = "50", .unit = "us", .min = "0", .max = "1000000", .help = "io_uring and libaio: how long a job asks for completions without sleeping before it sleeps until one; a job that sleeps for every I/O also measures its CPU's wake-up from idle (tens of us on a VM at QD 1). 0 = sleep at once, as fio. The job's CPU use is recorded (job_cpu_percent)", .before = "0" },
    { .name = "cpus", CBK_AT_STRING(OPT, cpus), .default_value = "any", .keyword = "any", .help = "CPUs the jobs may run on, as taskset and fio's cpus_allowed (\"1\", \"0-3\"); any = where the OS puts them. At QD 1 the CPU that takes the disk's interrupts can be 1.5x faster than another" },
    { .name = "seed", CBK_AT_INT(OPT, seed), .default_value = "0", .min = "0", .help = "random generator seed (0: a random seed, recorded)" },
    { 0 },
};

#define LAT_LOWEST_NS 1ull
#define LAT_HIGHEST_NS 100000000000ull /* 100 s */

struct job {
    int index, fd;
    const struct randio_engine *engine;
    struct randio_queue queue;
    struct randio_io *ios;
    struct randio_io **done;
    unsigned char *bufs;
    struct cbk_histogram lat_read, lat_write;
    uint64_t reads, writes, errors;
    /* completions per second after the ramp: reads in [0, seconds), writes
     * in [seconds, 2 x seconds), so a randrw record's series is its own kind's */
    double *per_second;
    int seconds;
    uint64_t rng;
    int first_error;      /* errno of the first failed I/O, 0 if none */
    int init_error;       /* errno from the engine's set-up, 0 if none */
    unsigned batch, queued; /* flush every `batch` submissions; `queued` not yet flushed */
    const cpu_set_t *allowed; /* NULL: the OS places the job */
    int cpu;              /* the CPU the job was on when it ended */
    double cpu_s, cpu_wall_s; /* the job thread's CPU time over its counted time, and that time */
    /* shared, read-only while running */
    const char *path;
    uint64_t blocks, block_bytes;
    int rwmix, read_only, write_only, direct;
    double ramp_s, runtime_s;
};

struct randio {
    char dir[CBK_PATH_MAX];
    char path[CBK_PATH_MAX + 16];
    const struct randio_engine *engine;
    struct job *jobs;
    int njobs;
    struct cbk_threads threads; /* one per job */
    uint64_t seed;
    double *series;       /* the jobs' per_second added up: reads, then writes */
    struct cbk_histogram merged_read, merged_write;
    cpu_set_t allowed;    /* --cpus, shared by every job as fio's cpus_allowed */
    char cpus_seen[1024]; /* the CPU each job ended on */
};

static const struct randio_engine *pick_engine(int choice)
{
    if (choice != ENGINE_AUTO)
        return engines[choice - 1];
    for (size_t i = 0; i < sizeof engines / sizeof *engines; i++)
        if (!engines[i]->unavailable)
            return engines[i];
    return &randio_engine_psync;
}


/* xorshift64* (Vigna): fast, 64-bit state per job, good enough for offsets */
static inline uint64_t next_random(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *s = x;
    return x * 0x2545f4914f6cdd1dull;
}

static int validate(const struct cbk_args *a, struct cbk_ctx *c, char *why, size_t len)
{
    uint64_t file = opt(a)->file_size, block = opt(a)->block_size;
    char f[32], b[32];
    if (block > file) {
        snprintf(why, len, "file size %s is smaller than block size %s", cbk_format_size(file, f, sizeof f),
                 cbk_format_size(block, b, sizeof b));
        return -1;
    }
    /* a file that is not whole blocks would be laid out and covered only up to
     * its last whole block, while the record states the size asked for */
    if (cbk_check_block_sizes(file, block, opt(a)->direct, why, len))
        return -1;
    int cpus[CBK_MAX_CPUS];
    const char *list = opt(a)->cpus;
    if (list && cbk_parse_cpu_list(list, cpus, CBK_MAX_CPUS) < 0) {
        snprintf(why, len, "--cpus=%s is not a list of CPUs this process may use (e.g. 1, 0-3 or 0,2; see taskset -p $$)",
                 list);
        return -1;
    }
    const struct randio_engine *e = pick_engine(opt(a)->engine);
    if (e->unavailable) {
        snprintf(why, len, "%s", e->unavailable);
        return -1;
    }
    if (e->max_depth && (uint64_t)opt(a)->iodepth > e->max_depth) {
        snprintf(why, len, "--iodepth=%lld: %s queues at most %u I/Os per job (use more --jobs, or --engine=libaio)",
                 (long long)opt(a)->iodepth, e->name, e->max_depth);
        return -1;
    }
    /* setup gives each job a buffer per queued I/O, after the file is laid
     * out: found too large there, the layout was wasted and the run failed */
    uint64_t depth = e->queues ? (uint64_t)opt(a)->iodepth : 1, jobs = (uint64_t)opt(a)->jobs;
    char what[128], depth_text[40] = "";
    if (e->queues)
        snprintf(depth_text, sizeof depth_text, " x --iodepth=%" PRIu64, depth);
    snprintf(what, sizeof what, "--jobs=%" PRIu64 "%s x --block-size=%s", jobs, depth_text,
             cbk_format_size(block, b, sizeof b));
    if (cbk_check_memory(what, jobs * depth * block, c->node_size, why, len))
        return -1;
    return cbk_check_target_dir(opt(a)->dir, file, c->node_size, why, len);
}

/* Pre-writes the file with incompressible data, in the largest block that
 * divides it up to 1 MiB; with O_DIRECT when the run is direct (measured on
 * a virtio disk: a file laid out through the page cache took random O_DIRECT
 * writes about 20 % slower, for fio as for cbk, so the layout is part of the
 * method and bench/randio_vs_fio prepares fio's file the same way). */
static void prepare_file(struct cbk_ctx *c, struct randio *r, uint64_t file, uint64_t block, bool direct)
{
    uint64_t chunk = block;
    while (chunk * 2 <= (1u << 20) && file % (chunk * 2) == 0)
        chunk *= 2;
    struct cbk_pattern pat;
    if (cbk_pattern_init(&pat, c->run_id, 0, chunk))
        cbk_fail(c, CBK_EXIT_FAILED, "randio: out of memory for a %llu-byte buffer", (unsigned long long)chunk);
    int fd = open(r->path, O_WRONLY | O_CREAT | O_TRUNC | (direct ? O_DIRECT : 0), 0600);
    if (fd < 0 && direct && errno == EINVAL)
        fd = open(r->path, O_WRONLY | O_CREAT | O_TRUNC, 0600); /* reported when the run opens it */
    int rc = fd < 0 ? -errno : cbk_write_blocks(fd, &pat, file / chunk * chunk, 0);
    if (!rc && fsync(fd))
        rc = -errno;
    /* Evict the file from the page cache: cached pages would make every
     * O_DIRECT I/O flush and invalidate its range (a cost fio's O_DIRECT-laid
     * file does not have), and buffered reads would start warm. */
    if (!rc)
        rc = -posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    if (fd >= 0)
        close(fd);
    cbk_pattern_free(&pat);
    if (rc)
        cbk_fail(c, cbk_io_status(-rc), "randio: preparing %s: %s", r->path, strerror(-rc));
}

static int setup(const struct cbk_args *a, struct cbk_ctx *c)
{
    struct randio *r = calloc(1, sizeof *r);
    if (!r)
        cbk_fail(c, CBK_EXIT_FAILED, "randio: out of memory");
    c->state = r;
    r->engine = pick_engine(opt(a)->engine);
    r->njobs = (int)opt(a)->jobs;
    r->seed = (uint64_t)opt(a)->seed;
    if (!r->seed)
        r->seed = cbk_random_u64() | 1;
    uint64_t file = opt(a)->file_size, block = opt(a)->block_size;
    unsigned depth = r->engine->queues ? (unsigned)opt(a)->iodepth : 1;
    int seconds = (int)ceil(opt(a)->runtime) + 1;
    int rc = cbk_private_dir(opt(a)->dir, "randio", r->dir, sizeof r->dir);
    if (rc)
        cbk_fail(c, CBK_EXIT_BAD_INPUT, "randio: cannot create a directory in %s: %s", opt(a)->dir,
                 strerror(-rc));
    snprintf(r->path, sizeof r->path, "%s/data", r->dir);
    prepare_file(c, r, file, block, opt(a)->direct);
    bool pinned = opt(a)->cpus != NULL; /* NULL: --cpus=any, where the OS puts them */
    if (pinned) {
        int cpus[CBK_MAX_CPUS], n = cbk_parse_cpu_list(opt(a)->cpus, cpus, CBK_MAX_CPUS);
        CPU_ZERO(&r->allowed);
        for (int i = 0; i < n; i++)
            CPU_SET(cpus[i], &r->allowed);
    }

    r->jobs = calloc((size_t)r->njobs, sizeof *r->jobs);
    r->series = calloc(2 * (size_t)seconds, sizeof(double));
    struct cbk_pattern pat;
    if (!r->jobs || !r->series || cbk_pattern_init(&pat, c->run_id, 0, block) ||
        cbk_histogram_init(&r->merged_read, LAT_LOWEST_NS, LAT_HIGHEST_NS) ||
        cbk_histogram_init(&r->merged_write, LAT_LOWEST_NS, LAT_HIGHEST_NS))
        cbk_fail(c, CBK_EXIT_FAILED, "randio: out of memory");
    for (int i = 0; i < r->njobs; i++) {
        struct job *j = &r->jobs[i];
        j->index = i;
        j->allowed = pinned ? &r->allowed : NULL;
        j->engine = r->engine;
        j->path = r->path;
        j->blocks = file / block;
        j->block_bytes = block;
        j->rwmix = opt(a)->pattern == RANDIO_PATTERN_RANDRW ? (int)opt(a)->rwmix
                   : opt(a)->pattern == RANDIO_PATTERN_RANDREAD ? 100 : 0;
        j->direct = opt(a)->direct;
        j->ramp_s = opt(a)->ramp;
        j->runtime_s = opt(a)->runtime;
        j->seconds = seconds;
        j->queue.depth = depth;
        j->batch = (unsigned)opt(a)->submit_batch < depth ? (unsigned)opt(a)->submit_batch : depth;
        j->queue.block_bytes = block;
        j->queue.poll_s = r->engine->polls ? opt(a)->poll * 1e-6 : 0;
        j->ios = calloc(depth, sizeof *j->ios);
        j->done = calloc(depth, sizeof *j->done);
        j->bufs = cbk_buffer_alloc((size_t)block * depth);
        j->per_second = calloc(2 * (size_t)seconds, sizeof(double));
        if (!j->ios || !j->done || !j->bufs || !j->per_second ||
            cbk_histogram_init(&j->lat_read, LAT_LOWEST_NS, LAT_HIGHEST_NS) ||
            cbk_histogram_init(&j->lat_write, LAT_LOWEST_NS, LAT_HIGHEST_NS))
            cbk_fail(c, CBK_EXIT_FAILED, "randio: out of memory for job %d (%u x %llu bytes)", i, depth,
                     (unsigned long long)block);
        for (unsigned q = 0; q < depth; q++) {
            j->ios[q].buf = j->bufs + (size_t)q * block;
            cbk_pattern_fill(&pat, j->ios[q].buf, (uint64_t)q * block); /* writes carry incompressible data */
        }
    }
    cbk_pattern_free(&pat);
    return 0;
}

static void aim(struct job *j, struct randio_io *io)
{
    io->offset = next_random(&j->rng) % j->blocks * j->block_bytes;
    io->is_read = j->rwmix == 100 || (j->rwmix > 0 && (int)(next_random(&j->rng) % 100) < j->rwmix);
}

/* Queues one I/O and hands the queue to the kernel every `batch` I/Os, except
 * when `then_reap`: the reap that follows at once hands it over in the same
 * system call (at QD 1: one call per I/O, not two). Returns 0 when the I/O is
 * in flight or queued for reap(), else -errno; a failed hand-over is
 * recorded as the job's error. */
static int start_io(struct job *j, struct randio_io *io, bool then_reap)
{
    aim(j, io);
    io->submitted_s = cbk_clock();
    int rc = j->engine->submit(&j->queue, io);
    if (rc || !j->engine->flush || ++j->queued < j->batch || then_reap)
        return rc;
    j->queued = 0;
    int flushed = j->engine->flush(&j->queue);
    if (flushed && !j->first_error)
        j->first_error = -flushed;
    return 0;
}

static void *job_main(void *arg)
{
    struct job *j = arg;
    if (j->allowed && cbk_pin_self_to_set(j->allowed)) {
        j->init_error = EINVAL;
        return NULL;
    }
    /* the thread that submits sets the queue up (io_uring: single issuer) */
    int rc = j->engine->init(&j->queue);
    if (rc) {
        j->init_error = -rc;
        return NULL;
    }
    unsigned depth = j->queue.depth, inflight = 0;
    double start = cbk_clock(), counted_from = start + j->ramp_s, stop = counted_from + j->runtime_s;
    j->queued = 0;
    for (unsigned q = 0; q < depth && !j->first_error; q++) {
        int rc = start_io(j, &j->ios[q], q + 1 == depth);
        if (rc == 0)
            inflight++;
        else
            j->first_error = -rc;
    }
    bool stopping = j->first_error != 0;
    double cpu_from = -1, wall_from = 0;
    j->cpu_s = j->cpu_wall_s = 0;
    while (inflight > 0) {
        int n = j->engine->reap(&j->queue, j->done, depth);
        if (n < 0) {
            j->first_error = -n;
            break;
        }
        j->queued = 0; /* reap() handed over whatever was queued */
        double now = cbk_clock();
        inflight -= (unsigned)n;
        if (cpu_from < 0 && now >= counted_from) {
            cpu_from = cbk_thread_cpu();
            wall_from = now;
        }
        if (now >= stop && !stopping && cpu_from >= 0) {
            j->cpu_s = cbk_thread_cpu() - cpu_from;
            j->cpu_wall_s = now - wall_from;
        }
        if (now >= stop)
            stopping = true;
        for (int k = 0; k < n; k++) {
            struct randio_io *io = j->done[k];
            if (io->result != (int)j->block_bytes) {
                j->errors++;
                if (!j->first_error)
                    j->first_error = io->result < 0 ? -io->result : EIO;
                stopping = true;
            } else if (now >= counted_from && now < stop) {
                uint64_t ns = (uint64_t)((now - io->submitted_s) * 1e9);
                cbk_histogram_record(io->is_read ? &j->lat_read : &j->lat_write, ns);
                if (io->is_read)
                    j->reads++;
                else
                    j->writes++;
                j->per_second[(int)(now - counted_from) + (io->is_read ? 0 : j->seconds)] += 1;
            }
            if (!stopping) {
                int rc = start_io(j, io, k + 1 == n);
                if (rc == 0)
                    inflight++;
                else if (!j->first_error)
                    j->first_error = -rc;
                if (j->first_error)
                    stopping = true;
            }
        }
    }
    j->engine->exit(&j->queue);
    j->cpu = sched_getcpu();
    return NULL;
}

static void report(struct cbk_ctx *c, const struct cbk_args *a, struct randio *r, bool reads, double begin_s,
                   double end_s)
{
    struct cbk_histogram *h = reads ? &r->merged_read : &r->merged_write;
    uint64_t ops = 0, errors = 0;
    double cpu_s = 0, cpu_wall_s = 0;
    for (int i = 0; i < r->njobs; i++) {
        ops += reads ? r->jobs[i].reads : r->jobs[i].writes;
        errors += r->jobs[i].errors;
        cpu_s += r->jobs[i].cpu_s;
        cpu_wall_s += r->jobs[i].cpu_wall_s;
    }
    uint64_t block = opt(a)->block_size;
    bool direct = opt(a)->direct;
    struct cbk_phase p = { .phase = reads ? "randread" : "randwrite", .mode = direct ? "direct" : "buffered",
                           .bytes = ops * block, .ops = ops, .begin_s = begin_s, .end_s = end_s,
                           .value_unit = "IOPS", .value = (double)ops };
    cbk_phase_field(&p, CBK_REAL("mib_per_s", (double)(ops * block) / (end_s - begin_s) / 1048576.0));
    cbk_phase_field(&p, CBK_TEXT("engine", r->engine->name));
    cbk_phase_field(&p, CBK_I64("iodepth", (int64_t)r->jobs[0].queue.depth));
    cbk_phase_field(&p, CBK_I64("submit_batch", (int64_t)r->jobs[0].batch));
    cbk_phase_field(&p, CBK_I64("jobs", r->njobs));
    cbk_phase_field(&p, CBK_REAL("poll_us", r->engine->polls ? opt(a)->poll : 0));
    if (cpu_wall_s > 0) /* 100 = each job kept one CPU busy; polling at QD 1 does */
        cbk_phase_field(&p, CBK_REAL("job_cpu_percent", 100.0 * cpu_s / cpu_wall_s));
    cbk_phase_field(&p, CBK_TEXT("cpus_allowed", opt(a)->cpus ? opt(a)->cpus : "any"));
    cbk_phase_field(&p, CBK_TEXT("cpus", r->cpus_seen)); /* where each job ended: placement moves figures */
    cbk_phase_field(&p, CBK_U64("block_bytes", block));
    cbk_phase_field(&p, CBK_U64("file_bytes", opt(a)->file_size));
    cbk_phase_field(&p, CBK_TEXT("dir", opt(a)->dir));
    cbk_phase_field(&p, CBK_U64("histogram_count", cbk_histogram_count(h)));
    static const struct { const char *key; double q; } pct[] = {
        { "lat_us_p50", 50 }, { "lat_us_p90", 90 }, { "lat_us_p99", 99 }, { "lat_us_p99_9", 99.9 },
        { "lat_us_p99_99", 99.99 },
    };
    /* An empty histogram's percentiles are 0, a latency no I/O takes: with nothing
     * completed (randrw at --rwmix=0 or 100, a device that stalled for the whole
     * runtime) there is no latency to state, so the fields are null (NaN). */
    bool measured = cbk_histogram_count(h) > 0;
    double none = NAN;
    for (size_t i = 0; i < sizeof pct / sizeof *pct; i++)
        cbk_phase_field(&p, CBK_REAL(pct[i].key,
                                     measured ? (double)cbk_histogram_percentile(h, pct[i].q) / 1000.0 : none));
    cbk_phase_field(&p, CBK_REAL("lat_us_min", measured ? (double)cbk_histogram_min(h) / 1000.0 : none));
    cbk_phase_field(&p, CBK_REAL("lat_us_max", measured ? (double)cbk_histogram_max(h) / 1000.0 : none));
    cbk_phase_field(&p, CBK_REAL("lat_us_mean", measured ? cbk_histogram_mean(h) / 1000.0 : none));
    if (!measured)
        cbk_phase_warn(&p, "no I/O of this kind completed in the measured time: no latency to report");
    cbk_phase_field(&p, CBK_U64("errors", errors));
    cbk_phase_field(&p, CBK_U64("seed", r->seed));
    cbk_phase_field(&p, CBK_TEXT("generator", "xorshift64* per job, seeded seed + job index"));
    if (opt(a)->pattern == RANDIO_PATTERN_RANDRW)
        cbk_phase_field(&p, CBK_I64("rwmix_read_percent", opt(a)->rwmix));
    if (!direct)
        cbk_phase_warn(&p, "buffered I/O: the page cache may serve reads and absorb writes");
    if (!r->engine->queues && opt(a)->iodepth > 1)
        cbk_phase_warn(&p, "psync does one I/O at a time: the queue depth per job is 1");
    p.series_key = "iops_per_s";
    p.series = r->series + (reads ? 0 : r->jobs[0].seconds);
    p.series_len = (int)floor(opt(a)->runtime);
    cbk_report(c, &p);
}

static int run(const struct cbk_args *a, struct cbk_ctx *c)
{
    struct randio *r = c->state;
    /* read-only when only reading, as fio opens it */
    int flags = (opt(a)->pattern == RANDIO_PATTERN_RANDREAD ? O_RDONLY : O_RDWR) |
                (opt(a)->direct ? O_DIRECT : 0);
    for (int i = 0; i < r->njobs; i++) {
        struct job *j = &r->jobs[i];
        j->reads = j->writes = j->errors = 0;
        j->first_error = j->init_error = 0;
        j->rng = r->seed + (uint64_t)i * 0x9e3779b97f4a7c15ull + (uint64_t)c->repetition;
        if (!j->rng)
            j->rng = 1;
        memset(j->per_second, 0, 2 * (size_t)j->seconds * sizeof(double));
        cbk_histogram_reset(&j->lat_read);
        cbk_histogram_reset(&j->lat_write);
        j->fd = open(r->path, flags);
        if (j->fd < 0)
            cbk_fail(c, errno == EINVAL ? CBK_EXIT_BAD_INPUT : CBK_EXIT_FAILED, "randio: open %s: %s", r->path,
                     errno == EINVAL ? "the file system does not support O_DIRECT" : strerror(errno));
        j->queue.engine = j->engine;
        j->queue.fd = j->fd;
    }
    double begin = cbk_now(c) + opt(a)->ramp;
    if (cbk_threads_start(&r->threads, r->njobs, job_main, r->jobs, sizeof *r->jobs))
        cbk_fail(c, CBK_EXIT_FAILED, "randio: cannot start job thread %d", r->threads.started);
    cbk_threads_join(&r->threads);
    double end = begin + opt(a)->runtime;
    cbk_histogram_reset(&r->merged_read);
    cbk_histogram_reset(&r->merged_write);
    memset(r->series, 0, 2 * (size_t)r->jobs[0].seconds * sizeof(double));
    int error = 0, seen[CBK_MAX_CPUS];
    for (int i = 0; i < r->njobs; i++) {
        struct job *j = &r->jobs[i];
        close(j->fd);
        if (j->init_error)
            cbk_fail(c, CBK_EXIT_FAILED, "randio: setting up job %d (engine %s, cpus %s): %s", i, j->engine->name,
                     opt(a)->cpus ? opt(a)->cpus : "any", strerror(j->init_error));
        if (i < CBK_MAX_CPUS)
            seen[i] = j->cpu;
        cbk_histogram_merge(&r->merged_read, &j->lat_read);
        cbk_histogram_merge(&r->merged_write, &j->lat_write);
        for (int s = 0; s < 2 * j->seconds; s++)
            r->series[s] += j->per_second[s];
        if (!error)
            error = j->first_error;
    }
    cbk_format_cpus(seen, r->njobs < CBK_MAX_CPUS ? r->njobs : CBK_MAX_CPUS, r->cpus_seen, sizeof r->cpus_seen);
    if (error)
        cbk_fail(c, CBK_EXIT_FAILED, "randio: I/O on %s failed: %s", r->path, strerror(error));
    enum randio_pattern pattern = opt(a)->pattern;
    if (pattern != RANDIO_PATTERN_RANDWRITE)
        report(c, a, r, true, begin, end);
    if (pattern != RANDIO_PATTERN_RANDREAD)
        report(c, a, r, false, begin, end);
    return 0;
}

static void teardown(const struct cbk_args *a, struct cbk_ctx *c)
{
    (void)a;
    struct randio *r = c->state;
    for (int i = 0; r->jobs && i < r->njobs; i++) {
        struct job *j = &r->jobs[i];
        free(j->ios);
        free(j->done);
        cbk_buffer_free(j->bufs);
        free(j->per_second);
        cbk_histogram_free(&j->lat_read);
        cbk_histogram_free(&j->lat_write);
    }
    cbk_histogram_free(&r->merged_read);
    cbk_histogram_free(&r->merged_write);
    free(r->jobs);
    free(r->series);
    unlink(r->path);
    free(r);
    c->state = NULL;
}

const struct cbk_kernel cbk_kernel_randio = {
    .name = "randio",
    .summary = "random IOPS at a queue depth with latency percentiles (E5)",
    .family = CBK_FAMILY_IO,
    .params = params,
    .options_size = sizeof(OPT),
    .validate = validate,
    .setup = setup,
    .run = run,
    .teardown = teardown,
};
