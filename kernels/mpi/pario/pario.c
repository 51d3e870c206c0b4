/* pario: parallel file I/O as IOR measures it (E2, E3, E8). Every rank
 * writes block-size x segments bytes in transfers of transfer-size, to its
 * own file (strategy split, IOR -F) or to one shared file (independent,
 * collective or io-master), through one of the back ends in pario_api.h;
 * then reads them back, by default from another rank than the writer (IOR
 * -C) after emptying the page cache. Timing as IOR: after a barrier each
 * rank notes open start, transfer end and close end; the rate is all bytes
 * over (latest close end - earliest open start), which cbk_report() does.
 * Here: parameters, phases and records; where the data lies is
 * pario_layout.c, stonewalling (IOR -D, -O stoneWallingWearOut) is
 * pario_stonewall.c. Method, diagrams and the IOR option mapping:
 * docs/kernels/pario.md. */
#include "../../core/buffer.h"
#include "../../core/cbk.h"
#include "../../core/cleanup.h"
#include "../../core/fileio.h"
#include "../../core/pagecache.h"
#include "../../core/params.h"
#include "../../core/pattern.h"
#include "../../core/record.h"
#include "../../core/timer.h"
#include "pario_api.h"
#include "pario_layout.h"
#include "pario_stonewall.h"

#include <dirent.h>
#include <signal.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* The back ends; adding an API = one file and one line here. */
static const struct pario_api *const apis[] = { &pario_posix, &pario_mpiio, NULL };

/* --api's names, in the order of apis[] */
static const char *const api_names[] = { "posix", "mpiio", NULL };
enum strategy { SPLIT, INDEPENDENT, COLLECTIVE, IO_MASTER };
static const char *const strategy_names[] = { "split", "independent", "collective", "io-master", NULL };
enum pario_layout_kind { PARIO_LAYOUT_CONTIGUOUS, PARIO_LAYOUT_STRIDED };
static const char *const layout_names[] = { "contiguous", "strided", NULL };
enum pario_offsets { PARIO_OFFSETS_SEQUENTIAL, PARIO_OFFSETS_RANDOM };
static const char *const offsets_names[] = { "sequential", "random", NULL };
enum pario_fsync { PARIO_FSYNC_NONE, PARIO_FSYNC_END, PARIO_FSYNC_EACH };
static const char *const fsync_names[] = { "none", "end", "each", NULL };
enum pario_phases { PARIO_PHASES_BOTH, PARIO_PHASES_WRITE_ONLY, PARIO_PHASES_READ_ONLY };
static const char *const phases_names[] = { "both", "write-only", "read-only", NULL };
enum pario_read { PARIO_READ_SHIFTED, PARIO_READ_SAME, PARIO_READ_RANDOM };
static const char *const read_names[] = { "shifted", "same", "random", NULL };

struct pario_options {
    const char *dir;
    int api; /* index into apis[] */
    enum strategy strategy;
    uint64_t block_size;
    uint64_t file_size;
    uint64_t transfer_size;
    int64_t segments;
    enum pario_layout_kind layout;
    int64_t blocks_per_rank;
    enum pario_offsets offsets;
    enum pario_fsync fsync;
    enum pario_phases phases;
    enum pario_read read;
    int64_t seed;           /* read=random (IOR -X) */
    bool multi_file;        /* IOR -m */
    int64_t shift;
    int64_t shift_nodes;
    bool direct;
    enum cbk_cold_method cold;
    bool verify;
    double deadline;        /* stonewalling (IOR -D) */
    bool wear_out;
    const char *hints;      /* MPI-IO hints, "none" = none */
    double delay;
    bool huge_pages;
    bool phase_barriers;    /* IOR -g */
};
#define OPT struct pario_options
static const OPT *opt(const struct cbk_args *a) { return cbk_options(a); }

static const struct cbk_param params[] = {
    { .name = "dir", CBK_AT_PATH(OPT, dir), .default_value = ".",
      .help = "directory to test (IOR -o's directory); cbk works in a private subdirectory it removes on every rank" },
    { .name = "api", CBK_AT_CHOICE(OPT, api, api_names), .default_value = "posix",
      .help = "I/O interface (IOR -a): posix = open/pwrite/pread/fsync; mpiio = MPI_File_* (ROMIO)" },
    { .name = "strategy", CBK_AT_CHOICE(OPT, strategy, strategy_names), .default_value = "independent",
      .help = "split = one file per rank (IOR -F); independent = one shared file, each rank writes its offsets; "
              "collective = shared file with MPI_File_write_at_all (IOR -c, api mpiio); "
              "io-master = MPI_Gather to rank 0, which writes the shared file alone (reads: rank 0 reads and scatters)" },
    { .name = "block-size", CBK_AT_SIZE(OPT, block_size), .default_value = "1m", .unit = "bytes", .min = "1",
      .help = "bytes per rank per segment (IOR -b)" },
    { .name = "file-size", CBK_AT_SIZE(OPT, file_size), .default_value = "0", .unit = "bytes",
      .help = "instead of block-size: total bytes of the run (E8's 256 MB file), divided evenly among ranks and segments; 0 = use block-size" },
    { .name = "transfer-size", CBK_AT_SIZE(OPT, transfer_size), .default_value = "256k", .unit = "bytes", .min = "0", .max = "2g",
      .help = "bytes per I/O call (IOR -t); 0 = one call per piece (block-size / blocks-per-rank), as E8 wrote its strided blocks" },
    { .name = "segments", CBK_AT_INT(OPT, segments), .default_value = "1", .unit = "count", .min = "1", .max = "100000000",
      .help = "segments (IOR -s): in a shared file, segment i holds every rank's block i" },
    { .name = "layout", CBK_AT_CHOICE(OPT, layout, layout_names), .default_value = "contiguous",
      .help = "shared file: contiguous = each rank's block is one region; strided = cut into blocks-per-rank pieces interleaved with the other ranks' (E8)" },
    { .name = "blocks-per-rank", CBK_AT_INT(OPT, blocks_per_rank), .default_value = "1", .unit = "count", .min = "1", .max = "1000000",
      .help = "strided layout: interleaved pieces per rank per segment (E8: 4, 16, 256)" },
    { .name = "offsets", CBK_AT_CHOICE(OPT, offsets, offsets_names), .default_value = "sequential",
      .help = "order of each rank's transfers: sequential, or a random permutation of the same offsets (IOR -z)" },
    { .name = "fsync", CBK_AT_CHOICE(OPT, fsync, fsync_names), .default_value = "none",
      .help = "none = no fsync (figure: data handed to the file system); end = fsync before close, inside the timing (IOR -e), "
              "reported twice: mode buffered (until the last write returned) and mode fsync; each = fsync after every write (IOR -Y)" },
    { .name = "phases", CBK_AT_CHOICE(OPT, phases, phases_names), .default_value = "both",
      .help = "what is timed and reported: both = write then read; write-only (IOR -w); read-only (IOR -r; the data is still written first, untimed)" },
    { .name = "read", CBK_AT_CHOICE(OPT, read, read_names), .default_value = "shifted",
      .help = "shifted = each rank reads what another rank wrote (IOR -C), so a node never reads its own writes back from its cache; same = its own data; "
              "random = the data of a rank drawn as IOR -Z draws it (C rand() seeded with rank + seed), at least shift-nodes nodes away on several nodes" },
    { .name = "seed", CBK_AT_INT(OPT, seed), .default_value = "0", .unit = "count", .min = "-2147483647", .max = "2147483647",
      .help = "read=random: the seed (IOR -X); a negative seed -s draws anew every repetition with s + repetition" },
    { .name = "multi-file", CBK_AT_BOOL(OPT, multi_file), .default_value = "false",
      .help = "every repetition writes and reads files of its own name (data.<repetition>, IOR -m)" },
    { .name = "shift", CBK_AT_INT(OPT, shift), .default_value = "0", .unit = "ranks", .min = "0", .max = "10000000",
      .help = "read=shifted: rank r reads rank (r+shift) mod ranks' data; 0 = shift-nodes x ranks per node when on several nodes, else 1" },
    { .name = "shift-nodes", CBK_AT_INT(OPT, shift_nodes), .default_value = "1", .unit = "nodes", .min = "1", .max = "1000000",
      .help = "read=shifted with shift=0: read the data of the node this many nodes further on (IOR -Q)" },
    { .name = "direct", CBK_AT_BOOL(OPT, direct), .default_value = "false",
      .help = "api posix: open with O_DIRECT, bypassing the page cache (IOR -B); transfer-size must be a multiple of 4 KiB" },
    { .name = "cold", CBK_AT_CHOICE(OPT, cold, cbk_cold_or_none_names), .default_value = "auto",
      .help = "empty the page cache before reading (as seqio: drop-caches needs root, fadvise forgets the file's pages; auto picks); none = warm" },
    { .name = "verify", CBK_AT_BOOL(OPT, verify), .default_value = "false",
      .help = "check every 4 KiB unit read against what its writer wrote (inside the timed read; IOR -R/-W)" },
    { .name = "deadline", CBK_AT_REAL(OPT, deadline), .default_value = "0", .unit = "s", .min = "0", .max = "86400",
      .help = "stonewalling (IOR -D): a rank stops moving data this long after its first transfer; 0 = move every byte. "
              "Shared collective and io-master runs stop together on rank 0's clock, as IOR" },
    { .name = "wear-out", CBK_AT_BOOL(OPT, wear_out), .default_value = "false",
      .help = "with deadline: after the stonewall every rank goes on to the largest transfer count any rank reached "
              "(IOR -O stoneWallingWearOut=1), so every rank moves the same amount" },
    { .name = "hints", CBK_AT_STRING(OPT, hints), .default_value = "none",
      .help = "api mpiio: MPI-IO hints for MPI_File_open, key=value[,key=value] (IOR --mpiio.hintsFileName), or none; "
              "the hints the library used are recorded either way" },
    { .name = "delay", CBK_AT_REAL(OPT, delay), .default_value = "0", .unit = "s", .min = "0", .max = "86400",
      .help = "pause before every timed write and every read, outside the timing, in every repetition (IOR -d, which "
              "waits before each write and each read)" },
    { .name = "huge-pages", CBK_AT_BOOL(OPT, huge_pages), .default_value = "true",
      .help = "the transfer buffers on transparent huge pages (madvise), so an O_DIRECT transfer pins a few pages, not one per 4 KiB; "
              "false = 4 KiB pages, as IOR. The record says how much the kernel gave (buffer_huge_bytes, the least of any rank)",
      .before = "false" },
    { .name = "phase-barriers", CBK_AT_BOOL(OPT, phase_barriers), .default_value = "false",
      .help = "a barrier after the open and after the last transfer (and fsync), inside the timing (IOR -g): every rank "
              "starts its transfers when the slowest open ends and closes when the slowest transfer ends" },
    { 0 },
};

struct pario {
    const struct pario_api *api;
    enum strategy strategy;
    bool collective;
    struct pario_layout layout;     /* where each rank's transfers go */
    struct pario_deadline deadline; /* stonewalling */
    int src;                /* whose data this rank reads */
    char dir[CBK_PATH_MAX];
    char path[CBK_PATH_MAX + 32];     /* the file this rank writes */
    char src_path[CBK_PATH_MAX + 32]; /* the file this rank reads */
    int *master_src;        /* io-master, rank 0: source rank of each reader */
    struct cbk_pattern pat, src_pat;
    unsigned char *read_buf, *master_buf;
    size_t read_huge_bytes, master_huge_bytes; /* how much of each huge pages back */
    uint64_t *written;      /* transfers each rank wrote this repetition (stonewalling) */
    int repetition;         /* the one the names are for */
    /* Test hook: CBK_TEST_PARIO_SLOW_OPEN_MS=N makes rank 1 take N ms more
     * in every timed open, as a rank whose open waits on a busy metadata
     * server (read at set-up, never in the timed loop) */
    long slow_open_ms;
};

/* Per-rank block from the parameters (file-size wins when set). */
static uint64_t block_of(const struct cbk_args *a, int ranks)
{
    uint64_t file = opt(a)->file_size;
    if (!file)
        return opt(a)->block_size;
    return file / ((uint64_t)ranks * (uint64_t)opt(a)->segments);
}

static int64_t pieces_of(const struct cbk_args *a)
{
    return opt(a)->layout == PARIO_LAYOUT_STRIDED ? opt(a)->blocks_per_rank : 1;
}

static uint64_t transfer_of(const struct cbk_args *a, int ranks)
{
    uint64_t t = opt(a)->transfer_size;
    return t ? t : block_of(a, ranks) / (uint64_t)pieces_of(a);
}

static const char *hints_of(const struct cbk_args *a)
{
    const char *h = opt(a)->hints;
    return !h || !strcmp(h, "none") ? "" : h;
}

/* Checks that need no other rank; the same on every rank but the target. */
static int check_local(const struct cbk_args *a, struct cbk_ctx *c, char *why, size_t len)
{
    enum strategy strategy = opt(a)->strategy;
    const struct pario_api *api = apis[opt(a)->api];
    uint64_t file = opt(a)->file_size, transfer = transfer_of(a, c->size);
    int64_t segments = opt(a)->segments, pieces = pieces_of(a);
    char b[32], t[32], f[32];
    if (opt(a)->phases != PARIO_PHASES_WRITE_ONLY && cbk_check_cold_method(opt(a)->cold, "cold", why, len))
        return -1;
    if (strategy == COLLECTIVE && !api->collective) {
        snprintf(why, len, "strategy collective needs api mpiio: %s has no collective I/O", api->name);
        return -1;
    }
    if (opt(a)->direct && api != &pario_posix) {
        snprintf(why, len, "direct=true needs api posix (MPI-IO's direct I/O is a file-system hint, not offered here)");
        return -1;
    }
    if (opt(a)->direct && transfer % CBK_ALIGN_BYTES) {
        snprintf(why, len, "direct=true: transfer size %s is not a multiple of 4 KiB, as O_DIRECT requires",
                 cbk_format_size(transfer, t, sizeof t));
        return -1;
    }
    const char *hints = hints_of(a);
    if (*hints && apis[opt(a)->api] != &pario_mpiio) {
        snprintf(why, len, "hints need api mpiio (they are MPI-IO hints)");
        return -1;
    }
    if (strlen(hints) >= 2000) {
        snprintf(why, len, "hints: more than 2000 characters");
        return -1;
    }
    for (const char *h = hints; *h;) {
        size_t n = strcspn(h, ",");
        const char *eq = memchr(h, '=', n);
        if (!eq || eq == h) {
            snprintf(why, len, "hints: '%.*s' is not key=value", (int)n, h);
            return -1;
        }
        h += n + (h[n] == ',');
    }
    if (opt(a)->wear_out && opt(a)->deadline <= 0) {
        snprintf(why, len, "wear-out=true is only sensible with a stonewalling deadline (IOR -D)");
        return -1;
    }
    if (opt(a)->layout != PARIO_LAYOUT_STRIDED && opt(a)->blocks_per_rank != 1) {
        snprintf(why, len, "blocks-per-rank=%" PRId64 " needs layout=strided", opt(a)->blocks_per_rank);
        return -1;
    }
    if (file && file % ((uint64_t)c->size * (uint64_t)segments)) {
        snprintf(why, len, "file size %s does not divide evenly among %d ranks x %" PRId64 " segments",
                 cbk_format_size(file, f, sizeof f), c->size, segments);
        return -1;
    }
    uint64_t block = block_of(a, c->size);
    cbk_format_size(block, b, sizeof b);
    /* wrapped, the product passed the space check as a few bytes */
    if (block > UINT64_MAX / (uint64_t)segments) {
        snprintf(why, len, "block size %s x %" PRId64 " segments is more than 16 EiB per rank", b, segments);
        return -1;
    }
    if (!transfer || transfer > ((uint64_t)1 << 31)) {
        snprintf(why, len, "transfer-size=0 makes one call per piece, here %s: not between 1 byte and 2 GiB",
                 cbk_format_size(transfer, t, sizeof t));
        return -1;
    }
    cbk_format_size(transfer, t, sizeof t);
    if (strategy == IO_MASTER && transfer > (uint64_t)INT_MAX) {
        snprintf(why, len, "strategy io-master: transfer size %s exceeds what one MPI_Gather moves (2 GiB - 1)", t);
        return -1;
    }
    if (block < transfer || block % transfer) {
        snprintf(why, len, "block size %s (per rank) is not a multiple of transfer size %s", b, t);
        return -1;
    }
    if (block % (uint64_t)pieces || (block / (uint64_t)pieces) % transfer) {
        snprintf(why, len, "strided layout: block size %s cut into %" PRId64 " blocks per rank does not give "
                 "pieces that are whole multiples of transfer size %s", b, pieces, t);
        return -1;
    }
    /* With a deadline the data is what the time allows, not block x segments:
     * IOR's stonewalled lines ask for more than any disk holds (io500's
     * ior-easy: 9.5 TiB per rank, stopped after 300 s) and were refused here.
     * A disk that fills first ends the run as a failed measurement, as IOR's. */
    uint64_t rank_bytes = opt(a)->deadline > 0 ? 0 : block * (uint64_t)segments;
    return cbk_check_target_dir(opt(a)->dir, rank_bytes, strategy == SPLIT ? c->node_size : c->size, why, len);
}

/* A shared file needs a directory every rank sees: rank 0 creates a probe
 * file, the others look for it. Returns the lowest rank that does not see
 * it, or c->size when all do; -1 when rank 0 could not create it. */
static int probe_shared(const char *dir, struct cbk_ctx *c, char *why, size_t len)
{
    char path[CBK_PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/.cbk-pario-probe-%016" PRIx64, dir, c->run_id);
    int made = 0;
    if (c->rank == 0) {
        int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
        if (fd < 0)
            snprintf(why, len, "cannot create a probe file in %s: %s", dir, strerror(errno));
        else
            made = 1, close(fd);
    }
    MPI_Bcast(&made, 1, MPI_INT, 0, c->comm);
    if (!made)
        return -1;
    struct stat st;
    int mine = c->rank == 0 || !stat(path, &st) ? c->size : c->rank, first;
    MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, c->comm);
    if (c->rank == 0)
        unlink(path);
    return first;
}

static int validate(const struct cbk_args *a, struct cbk_ctx *c, char *why, size_t len)
{
    int bad = check_local(a, c, why, len) ? 1 : 0;
    /* Every rank takes part in the probe below or none does. */
    if (cbk_all_max_int(c, bad) || c->size == 1)
        return bad ? -1 : 0;
    const char *dir = opt(a)->dir;
    int first = probe_shared(dir, c, why, len);
    if (first < 0)
        return c->rank == 0 ? -1 : 0;
    if (first < c->size && opt(a)->strategy != SPLIT) {
        /* the same line on every rank, so rank 0 is the one that prints it */
        snprintf(why, len, "target %s is not shared: rank %d does not see a file rank 0 created there, and strategy %s "
                 "needs one file all ranks open (use strategy=split for node-local storage)",
                 dir, first, strategy_names[opt(a)->strategy]);
        return -1;
    }
    if (first < c->size && opt(a)->read != PARIO_READ_SAME && opt(a)->phases != PARIO_PHASES_WRITE_ONLY) {
        snprintf(why, len, "target %s is not shared: rank %d does not see a file rank 0 created there, so a rank "
                 "cannot read another rank's file (use read=same for node-local storage)", dir, first);
        return -1;
    }
    return 0;
}

/* IOR -Z: rankOffset = rand() % N after srand(rank + seed), drawn again
 * while it is less than (shift-nodes, at most nodes - 1) x ranks per node.
 * The C library's rand() is IOR's, so the same seed picks the same ranks. */
static int random_source(const struct cbk_args *a, const struct cbk_ctx *c, int reader)
{
    int64_t seed = opt(a)->seed;
    unsigned iseed = seed < 0 ? (unsigned)(-seed + c->repetition) : (unsigned)seed;
    int64_t nodeoffset = opt(a)->shift_nodes;
    if (nodeoffset > c->nodes - 1)
        nodeoffset = c->nodes - 1;
    srand((unsigned)reader + iseed);
    int offset = rand() % c->size;
    while (offset < nodeoffset * c->node_size)
        offset = rand() % c->size;
    return (reader + offset) % c->size;
}

static int source_rank(const struct cbk_args *a, const struct cbk_ctx *c, int reader)
{
    if (opt(a)->read == PARIO_READ_SAME || c->size == 1)
        return reader;
    if (opt(a)->read == PARIO_READ_RANDOM)
        return random_source(a, c, reader);
    int64_t shift = opt(a)->shift;
    if (!shift)
        shift = c->nodes > 1 ? opt(a)->shift_nodes * c->node_size : 1;
    return (int)((reader + shift) % c->size);
}

/* Rank 0 makes the private directory and tells the others its name; a rank
 * that does not see it (node-local storage, split only) makes its own of
 * the same name. Every rank registers it, so it goes on exit and on
 * signals wherever the job is stopped. */
static void make_dir(const struct cbk_args *a, struct cbk_ctx *c, struct pario *s)
{
    const char *parent = opt(a)->dir;
    int rc = 0;
    /* rank 0's place of the parent: a rank that sees the same one shares
     * rank 0's directory and never makes it */
    struct cbk_dir_place place0, mine;
    if (c->rank == 0) {
        rc = cbk_private_dir(parent, "pario", s->dir, sizeof s->dir);
        if (!rc)
            rc = cbk_dir_place(parent, &place0);
    }
    MPI_Bcast(&rc, 1, MPI_INT, 0, c->comm);
    if (rc)
        cbk_fail(c, CBK_EXIT_BAD_INPUT, "pario: cannot create a directory in %s: %s", parent, strerror(-rc));
    char base[64];
    if (c->rank == 0)
        snprintf(base, sizeof base, "%s", strrchr(s->dir, '/') + 1);
    MPI_Bcast(base, sizeof base, MPI_CHAR, 0, c->comm);
    MPI_Bcast(&place0, sizeof place0, MPI_BYTE, 0, c->comm);
    /* test hook: the order a loaded machine gave a Ctrl-C that reached rank 0
     * alone: rank 0 removed its directory before another rank looked for it,
     * and the launcher ended that rank only after it had looked */
    bool interrupt_hook = getenv("CBK_TEST_INTERRUPT_AFTER_DIR") != NULL;
    if (interrupt_hook && c->rank == 0) {
        cbk_cleanup_run();
        usleep(1000 * 1000);
        raise(SIGINT);
    }
    if (c->rank != 0) {
        if (interrupt_hook)
            usleep(300 * 1000);
        snprintf(s->dir, sizeof s->dir, "%s/%s", parent, base);
        bool shared = cbk_dir_place(parent, &mine) == 0 && !memcmp(&mine, &place0, sizeof mine);
        struct stat st;
        bool here = stat(s->dir, &st) == 0, made = !shared && !here;
        /* Shared and gone: rank 0 removed it, interrupted (a Ctrl-C that
         * reached rank 0 alone). Made again here, it outlived the run: the
         * launcher killed this rank at the barrier below before it could
         * remove it (a fresh-clone CI run). Nothing to make or remove then. */
        if (shared && !here) {
            MPI_Barrier(c->comm);
            return;
        }
        if (made && mkdir(s->dir, 0700) && errno != EEXIST)
            cbk_fail(c, CBK_EXIT_FAILED, "pario: mkdir %s: %s", s->dir, strerror(errno));
        if ((rc = cbk_cleanup_register(s->dir)))
            cbk_fail(c, CBK_EXIT_FAILED, "pario: cannot register %s for cleanup: %s", s->dir, strerror(-rc));
        /* node-local storage: this rank's own copy carries its own stamp */
        if (made && (rc = cbk_write_owner_stamp(s->dir)) && rc != -EEXIST)
            cbk_fail(c, CBK_EXIT_FAILED, "pario: cannot stamp %s: %s", s->dir, strerror(-rc));
    }
    MPI_Barrier(c->comm);
}

static void *alloc_or_fail(struct cbk_ctx *c, size_t bytes)
{
    void *p = malloc(bytes ? bytes : 1);
    if (!p)
        cbk_fail(c, CBK_EXIT_FAILED, "pario: out of memory (%zu bytes)", bytes);
    return p;
}

static int setup(const struct cbk_args *a, struct cbk_ctx *c)
{
    struct pario *s = calloc(1, sizeof *s);
    if (!s)
        cbk_fail(c, CBK_EXIT_FAILED, "pario: out of memory");
    c->state = s;
    const char *slow_open = getenv("CBK_TEST_PARIO_SLOW_OPEN_MS");
    s->slow_open_ms = slow_open ? atol(slow_open) : 0;
    s->api = apis[opt(a)->api];
    s->strategy = opt(a)->strategy;
    s->collective = s->strategy == COLLECTIVE;
    pario_layout_init(&s->layout, s->strategy != SPLIT, c->size, block_of(a, c->size), transfer_of(a, c->size),
                      opt(a)->segments, pieces_of(a), opt(a)->offsets == PARIO_OFFSETS_RANDOM, c->run_id,
                      opt(a)->multi_file);
    s->deadline = (struct pario_deadline){ .seconds = opt(a)->deadline, .wear_out = opt(a)->wear_out,
                                           .lockstep = s->collective || s->strategy == IO_MASTER };
    const struct pario_layout *l = &s->layout;
    s->written = alloc_or_fail(c, (size_t)c->size * sizeof *s->written);
    if (s->strategy == IO_MASTER && c->rank == 0) {
        s->master_src = alloc_or_fail(c, (size_t)c->size * sizeof *s->master_src);
        size_t bytes = (size_t)c->size * l->transfer;
        if (!(s->master_buf = cbk_buffer_alloc_pages(bytes, opt(a)->huge_pages, &s->master_huge_bytes)))
            cbk_fail(c, CBK_EXIT_BAD_INPUT, "pario: io-master: cannot allocate %d x %" PRIu64 " bytes on rank 0",
                     c->size, l->transfer);
    }
    bool huge = opt(a)->huge_pages;
    if (cbk_pattern_init_pages(&s->pat, c->run_id, (uint32_t)c->rank, l->transfer, huge) ||
        !(s->read_buf = cbk_buffer_alloc_pages(l->transfer, huge, &s->read_huge_bytes)))
        cbk_fail(c, CBK_EXIT_BAD_INPUT, "pario: cannot allocate three buffers of %" PRIu64 " bytes", l->transfer);
    s->src = -1;
    make_dir(a, c, s);
    return 0;
}

/* Before every repetition: the names (multi-file) and whose data each rank
 * reads (read=random with a negative seed draws anew each repetition). */
static void choose_files(const struct cbk_args *a, struct cbk_ctx *c, struct pario *s)
{
    const struct pario_layout *l = &s->layout;
    int src = source_rank(a, c, c->rank);
    s->repetition = c->repetition;
    if (src != s->src) {
        if (s->src >= 0)
            cbk_pattern_free(&s->src_pat);
        s->src = src;
        if (cbk_pattern_init(&s->src_pat, c->run_id, (uint32_t)s->src, l->transfer))
            cbk_fail(c, CBK_EXIT_BAD_INPUT, "pario: cannot allocate three buffers of %" PRIu64 " bytes", l->transfer);
    }
    if (s->master_src)
        for (int w = 0; w < c->size; w++)
            s->master_src[w] = source_rank(a, c, w);
    pario_layout_file_name(l, s->dir, c->rank, s->repetition, s->path, sizeof s->path);
    pario_layout_file_name(l, s->dir, s->src, s->repetition, s->src_path, sizeof s->src_path);
}

static _Noreturn void io_fail(struct cbk_ctx *c, const struct pario_file *f)
{
    cbk_fail(c, cbk_io_status(errno), "pario: rank %d: %s", c->rank, f->err);
}

/* One rank's view of a phase: open start, open end, transfer start (= open
 * end without phase-barriers), transfer end, end of the fsync (-e; =
 * transfer end without), close start (= fsync end without phase-barriers),
 * close end. */
struct times { double open_begin, open_end, xfer_begin, xfer_end, sync_end, close_begin, close_end; };

/* IOR's -g (intraTestBarriers): a barrier between open and transfer and
 * one between transfer and close, each outside the step it follows and
 * the one it precedes, inside the phase's time, as IOR's TestIoSys. */
static double after_open(const struct cbk_args *a, struct cbk_ctx *c, const struct pario *s, struct times *t)
{
    if (s->slow_open_ms > 0 && c->rank == 1)
        usleep((useconds_t)(s->slow_open_ms * 1000));
    t->open_end = cbk_now(c);
    if (opt(a)->phase_barriers)
        cbk_barrier(c);
    return t->xfer_begin = opt(a)->phase_barriers ? cbk_now(c) : t->open_end;
}

static void before_close(const struct cbk_args *a, struct cbk_ctx *c, struct times *t)
{
    if (opt(a)->phase_barriers)
        cbk_barrier(c);
    t->close_begin = opt(a)->phase_barriers ? cbk_now(c) : t->sync_end;
}

/* Adds the common fields and the open/transfer/close spread over ranks
 * (every rank calls it: it reduces). */
static void add_fields(const struct cbk_args *a, struct cbk_ctx *c, const struct pario *s, struct cbk_phase *p,
                       const struct times *t)
{
    const struct pario_layout *l = &s->layout;
    double mine[3] = { t->open_end - t->open_begin, t->xfer_end - t->xfer_begin,
                       (t->sync_end - t->xfer_end) + (t->close_end - t->close_begin) };
    double lo[3], hi[3];
    MPI_Reduce(mine, lo, 3, MPI_DOUBLE, MPI_MIN, 0, c->comm);
    MPI_Reduce(mine, hi, 3, MPI_DOUBLE, MPI_MAX, 0, c->comm);
    cbk_phase_field(p, CBK_TEXT("dir", opt(a)->dir)); /* the --dir given: the limit checks find its file system */
    cbk_phase_field(p, CBK_TEXT("api", s->api->name));
    cbk_phase_field(p, CBK_TEXT("strategy", strategy_names[s->strategy]));
    cbk_phase_field(p, CBK_TEXT("layout", layout_names[opt(a)->layout]));
    cbk_phase_field(p, CBK_I64("blocks_per_rank", l->pieces));
    cbk_phase_field(p, CBK_U64("block_bytes", l->block));
    cbk_phase_field(p, CBK_U64("transfer_bytes", l->transfer));
    cbk_phase_field(p, CBK_I64("segments", l->segments));
    cbk_phase_field(p, CBK_TEXT("offsets", offsets_names[opt(a)->offsets]));
    cbk_phase_field(p, CBK_I64("files", l->shared ? 1 : c->size));
    cbk_phase_field(p, CBK_U64("file_bytes", pario_layout_file_bytes(l)));
    cbk_phase_field(p, CBK_REAL("open_s_min", lo[0]));
    cbk_phase_field(p, CBK_REAL("open_s_max", hi[0]));
    cbk_phase_field(p, CBK_REAL("transfer_s_min", lo[1]));
    cbk_phase_field(p, CBK_REAL("transfer_s_max", hi[1]));
    cbk_phase_field(p, CBK_REAL("close_s_min", lo[2]));
    cbk_phase_field(p, CBK_REAL("close_s_max", hi[2]));
    /* IOR's Results columns: each step from the earliest start to the latest
     * end over ranks (fsync, -e, counts in wr/rd as in IOR), and its latency
     * column, rank 0's transfer time per transfer of one block */
    double starts[3] = { t->open_begin, t->xfer_begin, t->close_begin }, ends[3] = { t->open_end, t->sync_end, t->close_end };
    double first[3], last[3];
    MPI_Reduce(starts, first, 3, MPI_DOUBLE, MPI_MIN, 0, c->comm);
    MPI_Reduce(ends, last, 3, MPI_DOUBLE, MPI_MAX, 0, c->comm);
    cbk_phase_field(p, CBK_REAL("open_span_s", last[0] - first[0]));
    cbk_phase_field(p, CBK_REAL("transfer_span_s", last[1] - first[1]));
    cbk_phase_field(p, CBK_REAL("close_span_s", last[2] - first[2]));
    cbk_phase_field(p, CBK_REAL("rank0_transfer_s", t->sync_end - t->xfer_begin));
}

/* The transfer buffer's pages on a phase's record (every rank calls it):
 * the least any rank's buffer had on huge pages; under io-master rank 0's
 * gathering buffer, the one its file calls use. */
static void add_buffer_pages(const struct cbk_args *a, struct cbk_ctx *c, const struct pario *s, struct cbk_phase *p,
                             bool write)
{
    uint64_t least = s->master_huge_bytes; /* io-master: rank 0's, the one that reports */
    if (s->strategy != IO_MASTER) {
        uint64_t mine = write ? s->pat.pool_huge_bytes : s->read_huge_bytes;
        MPI_Reduce(&mine, &least, 1, MPI_UINT64_T, MPI_MIN, 0, c->comm);
    }
    cbk_phase_buffer_pages(p, opt(a)->huge_pages, (size_t)least);
}

/* IOR's -d (interTestDelay): TestIoSys calls DelaySecs before each write
 * and each read of every repetition, outside the timing, so the file system
 * settles between the write and the read; not only between repetitions. */
static void delay_phase(const struct cbk_args *a) { cbk_sleep_s(opt(a)->delay); }

/* Who opens: every rank, except under io-master where rank 0 alone does.
 * With which communicator: all ranks for a shared file opened by all. */
static bool opens(const struct pario *s, const struct cbk_ctx *c) { return s->strategy != IO_MASTER || c->rank == 0; }
static MPI_Comm open_comm(const struct pario *s, const struct cbk_ctx *c)
{
    return s->strategy == INDEPENDENT || s->strategy == COLLECTIVE ? c->comm : MPI_COMM_SELF;
}

static void write_one(struct cbk_ctx *c, struct pario *s, struct pario_file *f, uint64_t i, bool each)
{
    const struct pario_layout *l = &s->layout;
    const struct pario_api *api = s->api;
    unsigned char *buf = s->pat.pool;
    uint64_t offset = pario_layout_offset(l, c->rank, i);
    cbk_pattern_fill(&s->pat, buf, offset);
    if (s->strategy == IO_MASTER) {
        MPI_Gather(buf, (int)l->transfer, MPI_BYTE, s->master_buf, (int)l->transfer, MPI_BYTE, 0, c->comm);
        if (c->rank != 0)
            return;
        for (int w = 0; w < c->size; w++)
            if (api->write_at(f, pario_layout_offset(l, w, i), s->master_buf + (size_t)w * l->transfer,
                              l->transfer, false) || (each && api->sync(f)))
                io_fail(c, f);
    } else if (api->write_at(f, offset, buf, l->transfer, s->collective) || (each && api->sync(f))) {
        io_fail(c, f);
    }
}

static void write_phase(const struct cbk_args *a, struct cbk_ctx *c, struct pario *s, bool report)
{
    const struct pario_layout *l = &s->layout;
    bool each = opt(a)->fsync == PARIO_FSYNC_EACH, end = opt(a)->fsync == PARIO_FSYNC_END;
    const struct pario_api *api = s->api;
    struct pario_file f = { .fd = -1, .direct = opt(a)->direct, .hints = hints_of(a) };
    struct times t;

    if (report)   /* IOR -r alone writes nothing, so waits before nothing but the read */
        delay_phase(a);
    cbk_barrier(c);
    t.open_begin = cbk_now(c);
    if (opens(s, c) && api->open(&f, s->path, PARIO_WRITE, open_comm(s, c)))
        io_fail(c, &f);
    double xfer_begin = after_open(a, c, s, &t);   /* the stonewall clock starts here, as IOR's */
    uint64_t done = 0, target;
    struct pario_stonewall sw;
    while (done < l->ops) {
        write_one(c, s, &f, done++, each);
        if (pario_stonewall_hit(c, &s->deadline, xfer_begin))
            break;
    }
    target = pario_stonewall_target(c, &s->deadline, done, xfer_begin, &sw);
    while (done < target)
        write_one(c, s, &f, done++, each);
    t.xfer_end = cbk_now(c);
    if (opens(s, c) && end && api->sync(&f))
        io_fail(c, &f);
    t.sync_end = cbk_now(c);
    before_close(a, c, &t);
    if (opens(s, c) && api->close(&f))
        io_fail(c, &f);
    t.close_end = cbk_now(c);
    /* The read phase needs every writer's count, but not inside the timing:
     * between the writes and the fsync it was a barrier IOR does not have
     * (each IOR rank fsyncs and closes as soon as its own writes end), so a
     * rank that finished first spun in MPI instead of starting its fsync. */
    MPI_Allgather(&done, 1, MPI_UINT64_T, s->written, 1, MPI_UINT64_T, c->comm);
    if (!report)
        return;

    /* The write modes' names are seqio's (fileio.c): one state, one name, so
     * pario's write into the page cache compares with seqio's and IOR's. */
    struct cbk_phase p = { .phase = "write",
                           .mode = each       ? "fsync-each"
                                   : f.direct ? cbk_write_mode_names[CBK_WRITE_DIRECT]
                                              : cbk_write_mode_names[CBK_WRITE_BUFFERED],
                           .bytes = done * l->transfer, .ops = done, .begin_s = t.open_begin, .end_s = t.close_end };
    add_fields(a, c, s, &p, &t);
    add_buffer_pages(a, c, s, &p, true);
    pario_stonewall_fields(c, &s->deadline, &p, done, &sw, l->transfer, l->ops);
    if (s->api == &pario_mpiio) {
        cbk_phase_field(&p, CBK_TEXT("mpi_hints_passed", f.hints));
        cbk_phase_field(&p, CBK_TEXT("mpi_hints_in_effect", f.hints_in_effect));
    }
    cbk_phase_field(&p, CBK_TEXT("fsync", fsync_names[opt(a)->fsync]));
    if (end) {
        /* E8's pair: until the file system had the data, then until it
         * was on the device (fsync) and closed. */
        struct cbk_phase synced = p;
        synced.mode = "fsync";
        p.end_s = t.xfer_end;
        cbk_phase_warn(&p, "buffered: timed until the last write returned (data handed to the file system), before fsync and close");
        cbk_report(c, &p);
        cbk_report(c, &synced);
    } else {
        if (!each)
            cbk_phase_warn(&p, "no fsync: the data may still be in a cache when the timing ends");
        cbk_report(c, &p);
    }
}

/* Before a read: the corruption test hook, then the page cache emptied on
 * every node (split: each rank its source file; shared: one rank per
 * node). Returns the largest resident fraction any rank saw after. */
static double prepare_read(const struct cbk_args *a, struct cbk_ctx *c, struct pario *s, const char **method)
{
    enum cbk_cold_method cold = opt(a)->cold;
    uint64_t file_bytes = pario_layout_file_bytes(&s->layout);
    cbk_barrier(c);
    if (c->rank == 0) {
        int rc = cbk_test_corrupt(s->path, file_bytes);
        if (rc)
            cbk_fail(c, CBK_EXIT_FAILED, "pario: test hook could not corrupt %s: %s", s->path, strerror(-rc));
    }
    cbk_barrier(c);
    *method = "none";
    if (cold != CBK_COLD_NONE && (!s->layout.shared || c->node_rank == 0)) {
        int fd = open(s->src_path, O_RDONLY), rc = 0;
        if (fd < 0 || (rc = cbk_make_cold(fd, cold, method)))
            cbk_fail(c, CBK_EXIT_FAILED, "pario: emptying the page cache for %s (%s): %s", s->src_path, *method,
                     strerror(fd < 0 ? errno : -rc));
        close(fd);
    }
    cbk_barrier(c);
    int fd = open(s->src_path, O_RDONLY);
    double resident = fd >= 0 ? cbk_resident_fraction(fd, file_bytes) : -1.0, worst;
    if (fd >= 0)
        close(fd);
    MPI_Allreduce(&resident, &worst, 1, MPI_DOUBLE, MPI_MAX, c->comm);
    /* a rank that could not tell makes the whole figure unknown (cbk_resident_worst) */
    double unknown = resident < 0 ? 1.0 : 0.0, any;
    MPI_Allreduce(&unknown, &any, 1, MPI_DOUBLE, MPI_MAX, c->comm);
    /* the method used is the one of the rank that emptied; rank 0 always does */
    return cbk_resident_worst(worst, any > 0 ? -1.0 : 0.0);
}

static void read_one(struct cbk_ctx *c, struct pario *s, struct pario_file *f, uint64_t i, unsigned char *buf,
                     bool verify, bool *bad, uint64_t *bad_offset)
{
    const struct pario_layout *l = &s->layout;
    const struct pario_api *api = s->api;
    uint64_t offset = pario_layout_offset(l, s->src, i);
    if (s->strategy == IO_MASTER) {
        if (c->rank == 0)
            for (int r = 0; r < c->size; r++)
                if (api->read_at(f, pario_layout_offset(l, s->master_src[r], i),
                                 s->master_buf + (size_t)r * l->transfer, l->transfer, false))
                    io_fail(c, f);
        MPI_Scatter(s->master_buf, (int)l->transfer, MPI_BYTE, buf, (int)l->transfer, MPI_BYTE, 0, c->comm);
    } else if (api->read_at(f, offset, buf, l->transfer, s->collective)) {
        io_fail(c, f);
    }
    /* a collective read must go on to the end on every rank: only the
     * first bad byte is kept */
    if (verify && !*bad && !cbk_pattern_check(&s->src_pat, buf, l->transfer, offset, bad_offset))
        *bad = true;
}

/* Collective. Rank 0 prints a "pario_reads" record: for every rank, the
 * host it read on and the rank and host whose data it read, so a shifted
 * read across nodes is proven by the record, not inferred from placement. */
static void write_read_sources(struct cbk_ctx *c, const struct pario *s)
{
    char host[HOST_NAME_MAX + 1] = "unknown";
    gethostname(host, sizeof host);
    host[HOST_NAME_MAX] = '\0';
    char *hosts = NULL;
    int *writers = NULL;
    int writer = s->src;
    if (c->rank == 0) {
        hosts = calloc((size_t)c->size, sizeof host);
        writers = calloc((size_t)c->size, sizeof *writers);
        if (!hosts || !writers)
            cbk_fail(c, CBK_EXIT_FAILED, "pario: out of memory for the read sources");
    }
    MPI_Gather(host, (int)sizeof host, MPI_CHAR, hosts, (int)sizeof host, MPI_CHAR, 0, c->comm);
    MPI_Gather(&writer, 1, MPI_INT, writers, 1, MPI_INT, 0, c->comm);
    if (c->rank != 0)
        return;
    int other_host = 0;
    struct cbk_json j;
    cbk_record_begin(&j, c->out, c, "pario_reads");
    cbk_json_i64(&j, "repetition", c->repetition);
    cbk_json_array(&j, "ranks");
    for (int r = 0; r < c->size; r++) {
        const char *reader_host = hosts + (size_t)r * sizeof host;
        const char *writer_host = hosts + (size_t)writers[r] * sizeof host;
        other_host += strcmp(reader_host, writer_host) != 0;
        cbk_json_object(&j, NULL);
        cbk_json_i64(&j, "rank", r);
        cbk_json_text(&j, "reader_host", reader_host);
        cbk_json_i64(&j, "writer_rank", writers[r]);
        cbk_json_text(&j, "writer_host", writer_host);
        cbk_json_close(&j);
    }
    cbk_json_close(&j);
    cbk_json_i64(&j, "ranks_reading_another_host", other_host);
    cbk_record_end(&j, c);
    free(hosts);
    free(writers);
}

static int read_phase(const struct cbk_args *a, struct cbk_ctx *c, struct pario *s)
{
    const struct pario_layout *l = &s->layout;
    bool verify = opt(a)->verify;
    const struct pario_api *api = s->api;
    const char *method;
    delay_phase(a);   /* before emptying the cache: what the wait let the file system do is done */
    double resident = prepare_read(a, c, s, &method);
    struct pario_file f = { .fd = -1, .direct = opt(a)->direct, .hints = hints_of(a) };
    struct times t;
    bool bad = false;
    uint64_t bad_offset = 0;
    unsigned char *buf = s->read_buf;

    cbk_barrier(c);
    t.open_begin = cbk_now(c);
    const char *path = s->strategy == IO_MASTER ? s->path : s->src_path;
    if (opens(s, c) && api->open(&f, path, PARIO_READ, open_comm(s, c)))
        io_fail(c, &f);
    double xfer_begin = after_open(a, c, s, &t);
    /* a stonewalled write left fewer transfers: read what the writer wrote */
    uint64_t limit = s->written[s->strategy == IO_MASTER ? 0 : s->src], done = 0, target;
    struct pario_stonewall sw;
    while (done < limit) {
        read_one(c, s, &f, done, buf, verify, &bad, &bad_offset);
        done++;
        if (pario_stonewall_hit(c, &s->deadline, xfer_begin))
            break;
    }
    target = pario_stonewall_target(c, &s->deadline, done, xfer_begin, &sw);
    for (; done < target && done < limit; done++)
        read_one(c, s, &f, done, buf, verify, &bad, &bad_offset);
    t.xfer_end = t.sync_end = cbk_now(c);
    before_close(a, c, &t);
    if (opens(s, c) && api->close(&f))
        io_fail(c, &f);
    t.close_end = cbk_now(c);

    /* The lowest rank that found a bad byte tells everyone where. */
    struct { int rank; int writer; uint64_t offset; } first = { c->size, 0, 0 };
    int mine = bad ? c->rank : c->size;
    MPI_Allreduce(&mine, &first.rank, 1, MPI_INT, MPI_MIN, c->comm);
    if (first.rank < c->size) {
        uint64_t info[2] = { (uint64_t)s->src, bad_offset };
        MPI_Bcast(info, 2, MPI_UINT64_T, first.rank, c->comm);
        first.writer = (int)info[0];
        first.offset = info[1];
    }

    bool cold = opt(a)->cold != CBK_COLD_NONE;
    struct cbk_phase p = { .phase = "read", .mode = f.direct ? "direct" : cold ? "cold" : "warm",
                           .bytes = done * l->transfer, .ops = done, .begin_s = t.open_begin, .end_s = t.close_end };
    add_fields(a, c, s, &p, &t);
    add_buffer_pages(a, c, s, &p, false);
    pario_stonewall_fields(c, &s->deadline, &p, done, &sw, l->transfer, l->ops);
    if (s->api == &pario_mpiio) {
        cbk_phase_field(&p, CBK_TEXT("mpi_hints_passed", f.hints));
        cbk_phase_field(&p, CBK_TEXT("mpi_hints_in_effect", f.hints_in_effect));
    }
    cbk_phase_field(&p, CBK_TEXT("read_from", c->size > 1 && s->src != c->rank ? "shifted" : "same"));
    cbk_phase_field(&p, CBK_I64("rank0_read_data_of_rank", s->src));
    cbk_phase_field(&p, CBK_I64("read_shift", ((s->src - c->rank) % c->size + c->size) % c->size));
    cbk_label_read(&p, cold, !cold, resident, method);
    if (c->size == 1 || s->src == c->rank)
        cbk_phase_warn(&p, "each rank read its own data back (read=same or one rank)");
    cbk_phase_field(&p, CBK_BOOL("verify", verify));
    if (verify)
        cbk_phase_field(&p, CBK_BOOL("verify_ok", first.rank == c->size));
    cbk_report(c, &p);
    write_read_sources(c, s);
    if (first.rank == c->size)
        return CBK_EXIT_OK;
    if (c->rank == 0) {
        char msg[CBK_PATH_MAX + 256];
        char file[CBK_PATH_MAX + 32];
        pario_layout_file_name(l, s->dir, first.writer, s->repetition, file, sizeof file);
        snprintf(msg, sizeof msg, "pario: verify failed: rank %d read a wrong byte at offset %" PRIu64
                 " of %s (data written by rank %d)", first.rank, first.offset, file, first.writer);
        struct cbk_field facts[] = { CBK_I64("writer_rank", first.writer), CBK_U64("offset", first.offset) };
        cbk_error_record(c, CBK_EXIT_FAILED, first.rank, msg, facts, 2);
    }
    return CBK_EXIT_FAILED;
}

/* Test hook: CBK_TEST_LISTING=<file> makes rank 0 append "name size" of
 * every file in the private directory, before they are removed, so tests
 * check the bytes on disk against the parameters. */
static void test_listing(const struct pario *s, const struct cbk_ctx *c)
{
    const char *out = getenv("CBK_TEST_LISTING");
    if (!out || c->rank != 0)
        return;
    FILE *f = fopen(out, "a");
    DIR *d = opendir(s->dir);
    struct dirent *e;
    while (f && d && (e = readdir(d))) {
        char path[CBK_PATH_MAX + 300];
        struct stat st;
        snprintf(path, sizeof path, "%s/%s", s->dir, e->d_name);
        if (e->d_name[0] != '.' && !stat(path, &st))
            fprintf(f, "%d %s %lld\n", c->repetition, e->d_name, (long long)st.st_size);
    }
    if (d)
        closedir(d);
    if (f)
        fclose(f);
}

static int run(const struct cbk_args *a, struct cbk_ctx *c)
{
    struct pario *s = c->state;
    enum pario_phases phases = opt(a)->phases;
    choose_files(a, c, s);
    write_phase(a, c, s, phases != PARIO_PHASES_READ_ONLY);
    int status = CBK_EXIT_OK;
    if (phases != PARIO_PHASES_WRITE_ONLY)
        status = read_phase(a, c, s);
    cbk_barrier(c);
    test_listing(s, c);
    cbk_barrier(c);
    /* IOR removes its files after each repetition (unless -k) */
    if ((!s->layout.shared || c->rank == 0) && unlink(s->path) && errno != ENOENT)
        cbk_fail(c, CBK_EXIT_FAILED, "pario: unlink %s: %s", s->path, strerror(errno));
    cbk_barrier(c);
    return status;
}

static void teardown(const struct cbk_args *a, struct cbk_ctx *c)
{
    (void)a;
    struct pario *s = c->state;
    cbk_pattern_free(&s->pat);
    if (s->src >= 0)
        cbk_pattern_free(&s->src_pat);
    cbk_buffer_free(s->read_buf);
    cbk_buffer_free(s->master_buf);
    free(s->master_src);
    free(s->written);
    free(s);
    c->state = NULL;
}

static const char *const detail_records[] = { "pario_reads", NULL };

const struct cbk_kernel cbk_kernel_pario = {
    .name = "pario",
    .summary = "parallel file I/O as IOR: file per process or one shared file, POSIX or MPI-IO, E8's strategies (E2, E3, E8)",
    .family = CBK_FAMILY_IO,
    .detail_records = detail_records,
    .flags = CBK_PARALLEL,
    .params = params,
    .options_size = sizeof(OPT),
    .validate = validate,
    .setup = setup,
    .run = run,
    .teardown = teardown,
};
