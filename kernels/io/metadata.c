/* metadata: file and directory create, stat, read, rename and remove
 * rates, with mdtest's work layouts (the metadata half of IO500, E4's
 * many-file workload). Every rank owns `items` items, spread over a tree
 * of directories (depth, branching) in one shared tree or one tree per
 * rank (unique-dir); with a stride, phase k works on the items of rank
 * (rank + k x stride), so no rank stats, reads or removes what its own
 * client cache just created. Timing as mdtest: a barrier opens each
 * phase, each rank notes its start and its end before the closing
 * barrier; the rate is all items over (latest end - earliest start),
 * which cbk_report() does, with every rank's own rate kept for min/max.
 * Layout, names and the mdtest option mapping: docs/kernels/metadata.md. */
#include "../core/buffer.h"
#include "../core/cbk.h"
#include "../core/cleanup.h"
#include "../core/fileio.h"
#include "../core/params.h"
#include "../core/pattern.h"
#include "../core/timer.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Tree depth is bounded so cleanup (core/cleanup.c, which recurses from a
 * signal handler) reaches every level: private dir, test dir, tree root,
 * `depth` levels, directory items. */
#define MAX_DEPTH 32
#define MAX_TREE_DIRS 10000000ull

enum md_kind { KIND_BOTH, KIND_FILES, KIND_DIRS };
static const char *const kind_names[] = { "both", "files", "dirs", NULL };
enum md_order { ORDER_SEQUENTIAL, ORDER_RANDOM };
static const char *const order_names[] = { "sequential", "random", NULL };

struct metadata_options {
    const char *dir;
    int64_t items, items_per_dir, depth, branching;
    bool unique_dir;
    enum md_kind kind;
    const char *phases;
    uint64_t write_bytes, read_bytes;
    int64_t stride;
    bool leaf_only;
    enum md_order order;
    int64_t seed;
    bool fsync, sync_phase;
    double pre_delay;
};
#define OPT struct metadata_options
static const OPT *opt(const struct cbk_args *a) { return cbk_options(a); }

static const struct cbk_param params[] = {
    { .name = "dir", CBK_AT_PATH(OPT, dir), .default_value = ".",
      .help = "directory to test (mdtest -d); cbk works in a private subdirectory every rank sees, removed at the end" },
    { .name = "items", CBK_AT_INT(OPT, items), .default_value = "1000", .unit = "count", .min = "0", .max = "1000000000",
      .help = "items per rank (mdtest -n), spread evenly over the tree's directories; 0 = items-per-dir x directories" },
    { .name = "items-per-dir", CBK_AT_INT(OPT, items_per_dir), .default_value = "0", .unit = "count", .min = "0", .max = "1000000000",
      .help = "items per directory (mdtest -I); with items as well, items / items-per-dir separate test directories" },
    { .name = "depth", CBK_AT_INT(OPT, depth), .default_value = "0", .unit = "levels", .min = "0", .max = "32",
      .help = "depth of the directory tree below its root (mdtest -z)" },
    { .name = "branching", CBK_AT_INT(OPT, branching), .default_value = "1", .unit = "count", .min = "1", .max = "1000000",
      .help = "subdirectories per tree directory (mdtest -b)" },
    { .name = "unique-dir", CBK_AT_BOOL(OPT, unique_dir), .default_value = "false",
      .help = "one tree per rank instead of one tree all ranks share (mdtest -u)" },
    { .name = "kind", CBK_AT_CHOICE(OPT, kind, kind_names), .default_value = "both",
      .help = "items tested: directories then files (mdtest's default), files only (-F) or directories only (-D)" },
    { .name = "phases", CBK_AT_STRING(OPT, phases), .default_value = "all",
      .help = "timed phases, comma separated: create (-C), stat (-T), read (-E), rename, remove (-r); all = every one, as mdtest "
              "without phase options. A phase needed but not listed (create before stat, remove at the end) runs untimed" },
    { .name = "write-bytes", CBK_AT_SIZE(OPT, write_bytes), .default_value = "0", .unit = "bytes", .max = "1g",
      .help = "bytes written to each file when it is created, in one write (mdtest -w)" },
    { .name = "read-bytes", CBK_AT_SIZE(OPT, read_bytes), .default_value = "0", .unit = "bytes", .max = "1g",
      .help = "bytes read from each file in the read phase, in one read (mdtest -e); 0 = open and close only" },
    { .name = "stride", CBK_AT_INT(OPT, stride), .default_value = "0", .unit = "ranks", .min = "0", .max = "10000000",
      .help = "phase k (create 0, stat and rename 1, read 2, remove 3) works on the items of rank (rank + k x stride); "
              "on several nodes the stride is multiplied by the ranks per node, as mdtest -N does" },
    { .name = "leaf-only", CBK_AT_BOOL(OPT, leaf_only), .default_value = "false",
      .help = "items only in the tree's leaf directories (mdtest -L)" },
    { .name = "order", CBK_AT_CHOICE(OPT, order, order_names), .default_value = "sequential",
      .help = "order of stat and read: item number order, or a random permutation per rank (mdtest -R)" },
    { .name = "seed", CBK_AT_INT(OPT, seed), .default_value = "0", .unit = "count", .min = "0", .max = "2147483647",
      .help = "order=random: seed, plus the rank (mdtest --random-seed); 0 = a new one per run" },
    { .name = "fsync", CBK_AT_BOOL(OPT, fsync), .default_value = "false",
      .help = "fsync each file after its write, inside the create timing (mdtest -y)" },
    { .name = "sync-phase", CBK_AT_BOOL(OPT, sync_phase), .default_value = "false",
      .help = "syncfs() the tested file system at the end of every phase, inside its timing (mdtest -Y)" },
    { .name = "pre-delay", CBK_AT_REAL(OPT, pre_delay), .default_value = "0", .unit = "s", .min = "0", .max = "86400",
      .help = "pause before the directory test and before the file test of every repetition, outside every timing "
              "(mdtest -p)" },
    { 0 },
};

enum phase { CREATE, STAT, READ, RENAME, REMOVE, PHASES };
static const char *const phase_names[] = { "create", "stat", "read", "rename", "remove" };
/* mdtest's shift per phase: stat and rename 1, read 2, remove 3 */
static const int phase_shift[] = { 0, 1, 2, 1, 3 };

struct layout {
    uint64_t tree_dirs;  /* directories in one tree, root included */
    uint64_t first_dir;  /* first directory holding items (leaf-only: the first leaf) */
    uint64_t per_dir;    /* items per holding directory */
    uint64_t per_loop;   /* items per rank in one test directory */
    uint64_t loops;      /* test directories (mdtest's directory loops) */
};

struct metadata {
    struct layout l;
    bool timed[PHASES];
    bool files, dirs, unique;
    int64_t stride;      /* effective, node multiple applied */
    uint64_t branching;
    uint64_t write_bytes, read_bytes;
    unsigned char *write_buf, *read_buf;
    uint64_t *order;     /* order=random: a permutation of [0, per_loop) */
    char dir[CBK_PATH_MAX];
};

static bool is(const char *a, const char *b) { return !strcmp(a, b); }

/* Parses the phase list into `timed`; 0, or a line in `why`. */
static int parse_phases(const char *text, bool timed[PHASES], char *why, size_t len)
{
    memset(timed, 0, PHASES * sizeof *timed);
    if (is(text, "all")) {
        for (int k = 0; k < PHASES; k++)
            timed[k] = true;
        return 0;
    }
    char buf[256];
    if (cbk_check_list("phases", text, sizeof buf, why, len))
        return -1;
    snprintf(buf, sizeof buf, "%s", text);
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        int k = 0;
        while (k < PHASES && !is(phase_names[k], t))
            k++;
        if (k == PHASES) {
            snprintf(why, len, "phases: unknown phase '%s' (create, stat, read, rename, remove or all)", t);
            return -1;
        }
        timed[k] = true;
    }
    for (int k = 0; k < PHASES; k++)
        if (timed[k])
            return 0;
    snprintf(why, len, "phases: no phase given (create, stat, read, rename, remove or all)");
    return -1;
}

static uint64_t power(uint64_t b, int64_t e)
{
    uint64_t p = 1;
    for (int64_t i = 0; i < e && p <= MAX_TREE_DIRS; i++)
        p *= b;
    return p;
}

/* mdtest's arithmetic: -n alone spreads n over the holding directories
 * (rounded down), -I alone fills each, both make n / I test directories. */
static int make_layout(const struct cbk_args *a, struct layout *l, char *why, size_t len)
{
    int64_t depth = opt(a)->depth;
    uint64_t b = (uint64_t)opt(a)->branching;
    uint64_t n = (uint64_t)opt(a)->items, per = (uint64_t)opt(a)->items_per_dir;
    uint64_t leaves = power(b, depth);
    l->tree_dirs = b == 1 ? (uint64_t)depth + 1 : (power(b, depth + 1) - 1) / (b - 1);
    if (leaves > MAX_TREE_DIRS || l->tree_dirs > MAX_TREE_DIRS) {
        snprintf(why, len, "a tree of depth %" PRId64 " and branching %" PRIu64 " has more than %llu directories",
                 depth, b, MAX_TREE_DIRS);
        return -1;
    }
    bool leaf_only = opt(a)->leaf_only;
    uint64_t holders = leaf_only ? leaves : l->tree_dirs;
    l->first_dir = leaf_only ? l->tree_dirs - leaves : 0;
    l->loops = 1;
    if (!n && !per) {
        snprintf(why, len, "items=0 and items-per-dir=0: nothing to create (give mdtest -n or -I)");
        return -1;
    }
    if (n && per) {
        if (opt(a)->unique_dir) {
            snprintf(why, len, "give items (-n) or items-per-dir (-I), not both, with unique-dir (-u), as mdtest requires");
            return -1;
        }
        if (n % per) {
            snprintf(why, len, "items %" PRIu64 " is not a multiple of items-per-dir %" PRIu64, n, per);
            return -1;
        }
        l->loops = n / per;
    }
    l->per_dir = per ? per : n / holders;
    if (!l->per_dir) {
        snprintf(why, len, "%" PRIu64 " items per rank over %" PRIu64 " directories is less than one per directory",
                 n, holders);
        return -1;
    }
    if (l->per_dir > UINT64_MAX / holders / l->loops || l->per_dir * holders * l->loops > 1000000000ull) {
        snprintf(why, len, "more than 10^9 items per rank");
        return -1;
    }
    l->per_loop = l->per_dir * holders;
    return 0;
}

static int validate(const struct cbk_args *a, struct cbk_ctx *c, char *why, size_t len)
{
    struct layout l;
    bool timed[PHASES];
    if (make_layout(a, &l, why, len) || parse_phases(opt(a)->phases, timed, why, len))
        return -1;
    uint64_t w = opt(a)->write_bytes, r = opt(a)->read_bytes;
    bool files = opt(a)->kind != KIND_DIRS;
    if (timed[READ] && files && r > w) {
        char rs[32], ws[32];
        snprintf(why, len, "read-bytes %s is more than write-bytes %s: the files hold only what was written (mdtest -e <= -w)",
                 cbk_format_size(r, rs, sizeof rs), cbk_format_size(w, ws, sizeof ws));
        return -1;
    }
    /* every rank's items share one directory (make_dir refuses a target
     * not every rank sees), so all of them count, each file in whole blocks
     * of the file system: 400 files of 100 bytes (40 KB by their bytes)
     * passed on a 1 MiB tmpfs and failed at the 256th file, ENOSPC */
    uint64_t items = l.per_loop * l.loops;
    if (cbk_check_target_files(opt(a)->dir, w, files ? items : 0, c->size, why, len))
        return -1;
    /* inodes at the peak of a repetition: the private directory and its
     * stamp, the test directories, the trees (one per rank with unique-dir)
     * and every rank's items of one kind (the directory test removes its
     * items before the file test makes its own). A file system with too few
     * failed the create phase mid-run, ENOSPC, after the space check passed */
    uint64_t ranks = (uint64_t)c->size, trees = opt(a)->unique_dir ? ranks : 1;
    uint64_t inodes = 2 + l.loops + trees * l.tree_dirs * l.loops + ranks * items;
    return cbk_check_target_inodes(opt(a)->dir, inodes, 1, why, len);
}

static void bcast(struct cbk_ctx *c, void *buf, int bytes)
{
#ifdef CBK_HAVE_MPI
    if (c->size > 1)
        MPI_Bcast(buf, bytes, MPI_BYTE, 0, c->comm);
#else
    (void)c, (void)buf, (void)bytes;
#endif
}

static double all_min(struct cbk_ctx *c, double v)
{
#ifdef CBK_HAVE_MPI
    if (c->size > 1)
        MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_DOUBLE, MPI_MIN, c->comm);
#else
    (void)c;
#endif
    return v;
}

static double all_max(struct cbk_ctx *c, double v) { return -all_min(c, -v); }


/* Rank 0 makes the private directory; every rank must see it (the shared
 * tree and the stride need one name space), and registers it for cleanup. */
static void make_dir(const struct cbk_args *a, struct cbk_ctx *c, struct metadata *m)
{
    const char *parent = opt(a)->dir;
    int rc = 0;
    if (c->rank == 0)
        rc = cbk_private_dir(parent, "metadata", m->dir, sizeof m->dir);
    bcast(c, &rc, sizeof rc);
    if (rc)
        cbk_fail(c, CBK_EXIT_BAD_INPUT, "metadata: cannot create a directory in %s: %s", parent, strerror(-rc));
    bcast(c, m->dir, sizeof m->dir);
    struct stat st;
    int missing = c->rank != 0 && stat(m->dir, &st) ? c->rank : 0;
    int first = cbk_all_max_int(c, missing);
    if (first)
        cbk_fail(c, CBK_EXIT_BAD_INPUT, "metadata: target %s is not shared: rank %d does not see the directory rank 0 "
                 "created there; every rank must see one name space (as mdtest requires)", parent, first);
    if (c->rank != 0 && (rc = cbk_cleanup_register(m->dir)))
        cbk_fail(c, CBK_EXIT_FAILED, "metadata: cannot register %s for cleanup: %s", m->dir, strerror(-rc));
    cbk_barrier(c);
}

/* A small generator for the random order, seeded per rank. */
static uint64_t next_random(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static int setup(const struct cbk_args *a, struct cbk_ctx *c)
{
    struct metadata *m = calloc(1, sizeof *m);
    char why[256];
    if (!m)
        cbk_fail(c, CBK_EXIT_FAILED, "metadata: out of memory");
    c->state = m;
    make_layout(a, &m->l, why, sizeof why);
    parse_phases(opt(a)->phases, m->timed, why, sizeof why);
    enum md_kind kind = opt(a)->kind;
    m->files = kind != KIND_DIRS;
    m->dirs = kind != KIND_FILES;
    m->unique = opt(a)->unique_dir;
    m->branching = (uint64_t)opt(a)->branching;
    m->stride = opt(a)->stride;
    if (c->nodes > 1)
        m->stride *= c->node_size;
    m->write_bytes = opt(a)->write_bytes;
    m->read_bytes = opt(a)->read_bytes;
    if ((m->write_bytes && !(m->write_buf = cbk_buffer_alloc(m->write_bytes))) ||
        (m->read_bytes && !(m->read_buf = cbk_buffer_alloc(m->read_bytes))))
        cbk_fail(c, CBK_EXIT_BAD_INPUT, "metadata: cannot allocate buffers of %" PRIu64 " bytes",
                 m->write_bytes > m->read_bytes ? m->write_bytes : m->read_bytes);
    if (m->write_bytes) {
        /* incompressible bytes, as every I/O kernel writes */
        struct cbk_pattern p;
        if (cbk_pattern_init(&p, c->run_id, (uint32_t)c->rank, CBK_PATTERN_UNIT))
            cbk_fail(c, CBK_EXIT_FAILED, "metadata: out of memory");
        for (uint64_t off = 0; off < m->write_bytes; off += CBK_PATTERN_UNIT) {
            uint64_t n = m->write_bytes - off < CBK_PATTERN_UNIT ? m->write_bytes - off : CBK_PATTERN_UNIT;
            memcpy(m->write_buf + off, p.pool, n);
        }
        cbk_pattern_free(&p);
        if (m->write_bytes >= sizeof(int32_t)) {
            int32_t rank = c->rank;
            memcpy(m->write_buf, &rank, sizeof rank);
        }
    }
    if (opt(a)->order == ORDER_RANDOM) {
        if (!(m->order = malloc(m->l.per_loop * sizeof *m->order)))
            cbk_fail(c, CBK_EXIT_BAD_INPUT, "metadata: cannot allocate the random order of %" PRIu64 " items",
                     m->l.per_loop);
        int64_t seed = opt(a)->seed;
        uint64_t s = (seed ? (uint64_t)seed : c->run_id) + (uint64_t)c->rank;
        for (uint64_t i = 0; i < m->l.per_loop; i++)
            m->order[i] = i;
        for (uint64_t i = m->l.per_loop - 1; i > 0; i--) {
            uint64_t k = next_random(&s) % (i + 1), t = m->order[i];
            m->order[i] = m->order[k];
            m->order[k] = t;
        }
    }
    make_dir(a, c, m);
    return 0;
}

/* Names follow mdtest so a listing of a run looks like mdtest's:
 * <private>/#test-dir.<rep>-<loop>/<base>.0/<base>.<d>/.../{file,dir}.mdtest.<owner>.<n>
 * with base "mdtest_tree" (shared tree) or "mdtest_tree.<tree rank>". */
static void test_dir(const struct metadata *m, const struct cbk_ctx *c, uint64_t loop, char *out, size_t len)
{
    snprintf(out, len, "%s/#test-dir.%d-%" PRIu64, m->dir, c->repetition, loop);
}

static void tree_base(const struct metadata *m, int tree, char *out, size_t len)
{
    if (m->unique)
        snprintf(out, len, "mdtest_tree.%d", tree);
    else
        snprintf(out, len, "mdtest_tree");
}

/* Path of tree directory d (0 = root): parents of d are (d - 1) / b. */
static void dir_path(const struct metadata *m, const char *root, const char *base, uint64_t d, char *out, size_t len)
{
    uint64_t chain[MAX_DEPTH + 1];
    int n = 0;
    for (uint64_t p = d; p > 0; p = (p - 1) / m->branching)
        chain[n++] = p;
    int pos = snprintf(out, len, "%s/%s.0", root, base);
    while (n-- > 0 && pos > 0 && (size_t)pos < len)
        pos += snprintf(out + pos, len - (size_t)pos, "/%s.%" PRIu64, base, chain[n]);
}

/* Who owns the items rank `rank` works on in phase k, and whose tree holds
 * them: mdtest puts rank w's items in tree (w + stride) under -u. */
static int owner_of(const struct metadata *m, const struct cbk_ctx *c, enum phase k)
{
    return (int)(((int64_t)c->rank + phase_shift[k] * m->stride) % c->size);
}

static int tree_of(const struct metadata *m, const struct cbk_ctx *c, int owner)
{
    return m->unique ? (int)((owner + m->stride) % c->size) : 0;
}

struct item_ctx {
    char root[CBK_PATH_MAX + 64];  /* the test directory */
    char base[64];
    int owner;
};

/* Full path of item i (0 <= i < per_loop) of one owner. */
static void item_path(const struct metadata *m, const struct item_ctx *x, bool dirs, uint64_t i, char *out, size_t len)
{
    uint64_t g = i + m->l.first_dir * m->l.per_dir;
    char parent[CBK_PATH_MAX + 64 * (MAX_DEPTH + 2)];
    dir_path(m, x->root, x->base, g / m->l.per_dir, parent, sizeof parent);
    snprintf(out, len, "%s/%s.mdtest.%d.%" PRIu64, parent, dirs ? "dir" : "file", x->owner, g);
}

#define ITEM_PATH_MAX (CBK_PATH_MAX + 64 * (MAX_DEPTH + 4))

static _Noreturn void op_fail(struct cbk_ctx *c, const char *op, const char *path, int err)
{
    /* ENOSPC and EDQUOT too: a file system that fills mid-run is a failed measurement, as in every
     * kernel (what was measured is kept); exit 2 told the runner nothing was made */
    cbk_fail(c, CBK_EXIT_FAILED, "metadata: rank %d: %s %s: %s", c->rank, op, path, strerror(err));
}

static void create_file(struct cbk_ctx *c, const struct metadata *m, const char *path)
{
    int fd = open(path, O_CREAT | O_RDWR, 0664);
    if (fd < 0)
        op_fail(c, "create", path, errno);
    if (m->write_bytes) {
        ssize_t n = write(fd, m->write_buf, m->write_bytes);
        if (n < 0 || (uint64_t)n != m->write_bytes)
            op_fail(c, "write", path, n < 0 ? errno : EIO);
    }
    if (m->write_bytes && opt(c->args)->fsync && fsync(fd))
        op_fail(c, "fsync", path, errno);
    if (close(fd))
        op_fail(c, "close", path, errno);
}

/* Each file starts with its writer's rank (when write-bytes >= 4), so a
 * read proves whose item it opened: the stride is checked, not assumed. */
static void read_file(struct cbk_ctx *c, const struct metadata *m, const char *path, int owner, int32_t *writer)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        op_fail(c, "open", path, errno);
    if (m->read_bytes) {
        ssize_t n = read(fd, m->read_buf, m->read_bytes);
        if (n < 0 || (uint64_t)n != m->read_bytes)
            cbk_fail(c, CBK_EXIT_FAILED, "metadata: rank %d: read %s: %s", c->rank, path,
                     n < 0 ? strerror(errno) : "the file is shorter than read-bytes");
        if (m->read_bytes >= sizeof *writer) {
            memcpy(writer, m->read_buf, sizeof *writer);
            if (*writer != owner)
                cbk_fail(c, CBK_EXIT_FAILED, "metadata: rank %d: %s holds data written by rank %d, not rank %d",
                         c->rank, path, (int)*writer, owner);
        }
    }
    close(fd);
}

/* One pass of phase k over every item of one owner in one test directory. */
static void items_pass(struct cbk_ctx *c, const struct metadata *m, enum phase k, bool dirs, const struct item_ctx *x,
                       int32_t *writer)
{
    char path[ITEM_PATH_MAX + 4], prev[ITEM_PATH_MAX + 4], first[ITEM_PATH_MAX + 4];
    struct stat st;
    uint64_t n = m->l.per_loop;
    if (k == RENAME) {
        /* mdtest's rotation: item 0 -> "0-XX", item i -> item i-1, and
         * "0-XX" -> item n-2: the same names exist before and after */
        if (n < 2)
            return;
        for (uint64_t i = 0; i < n; i++) {
            item_path(m, x, dirs, i, path, ITEM_PATH_MAX);  /* room for "-XX" */
            if (i == 0) {
                memcpy(first, path, strlen(path)), strcpy(first + strlen(path), "-XX");
                snprintf(prev, sizeof prev, "%s", first);
            } else if (i == n - 1) {
                snprintf(path, sizeof path, "%s", first);
            }
            if (rename(path, prev))
                op_fail(c, "rename", path, errno);
            snprintf(prev, sizeof prev, "%s", path);
        }
        return;
    }
    for (uint64_t j = 0; j < n; j++) {
        uint64_t i = m->order && (k == STAT || k == READ) ? m->order[j] : j;
        item_path(m, x, dirs, i, path, sizeof path);
        switch (k) {
        case CREATE:
            if (dirs ? mkdir(path, 0775) : 0)
                op_fail(c, "mkdir", path, errno);
            if (!dirs)
                create_file(c, m, path);
            break;
        case STAT:
            if (stat(path, &st))
                op_fail(c, "stat", path, errno);
            break;
        case READ:
            read_file(c, m, path, x->owner, writer);
            break;
        case REMOVE:
            if (dirs ? rmdir(path) : unlink(path))
                op_fail(c, dirs ? "rmdir" : "unlink", path, errno);
            break;
        default:
            break;
        }
    }
}

static const char *phase_label(enum phase k, bool dirs)
{
    static const char *const dir_labels[] = { "dir-create", "dir-stat", "dir-read", "dir-rename", "dir-remove" };
    static const char *const file_labels[] = { "file-create", "file-stat", "file-read", "file-rename", "file-remove" };
    return dirs ? dir_labels[k] : file_labels[k];
}

/* Reports one timed span; every rank calls it (it reduces). */
static void report(struct cbk_ctx *c, const struct metadata *m, const char *label, uint64_t items, uint64_t bytes,
                   double begin_s, double end_s, int owner, int32_t writer)
{
    double own = end_s - begin_s, rate = own > 0 ? (double)items / own : 0;
    double rate_min = all_min(c, rate), rate_max = all_max(c, rate);
    /* mode is the cache/durability state only (docs/records.md) */
    bool synced = !strcmp(label, "file-create") && m->write_bytes && opt(c->args)->fsync;
    struct cbk_phase p = { .phase = label, .mode = synced ? "fsync" : "n/a", .bytes = bytes,
                           .ops = items, .value = (double)items, .value_unit = "items/s",
                           .begin_s = begin_s, .end_s = end_s };
    cbk_phase_field(&p, CBK_U64("items_per_rank", items));
    cbk_phase_field(&p, CBK_TEXT("tree", m->unique ? "unique" : "shared"));
    cbk_phase_field(&p, CBK_REAL("rank_items_per_s_min", rate_min));
    cbk_phase_field(&p, CBK_REAL("rank_items_per_s_max", rate_max));
    cbk_phase_field(&p, CBK_U64("tree_dirs", m->l.tree_dirs));
    cbk_phase_field(&p, CBK_U64("items_per_dir", m->l.per_dir));
    cbk_phase_field(&p, CBK_U64("test_dirs", m->l.loops));
    cbk_phase_field(&p, CBK_I64("stride", m->stride));
    cbk_phase_field(&p, CBK_U64("write_bytes", m->write_bytes));
    cbk_phase_field(&p, CBK_U64("read_bytes", m->read_bytes));
    /* rank 0's view: whose items it worked on, and the writer its reads found */
    cbk_phase_field(&p, CBK_I64("rank0_items_of_rank", owner));
    if (writer >= 0)
        cbk_phase_field(&p, CBK_I64("rank0_read_data_of_rank", writer));
    cbk_report(c, &p);
}

/* mdtest -Y calls sync(); syncfs() of the tested file system alone keeps
 * other file systems' dirty data out of the figure. */
static void sync_dir(struct cbk_ctx *c, const struct metadata *m)
{
    int fd = open(m->dir, O_RDONLY | O_DIRECTORY);
    if (fd < 0 || syncfs(fd))
        op_fail(c, "syncfs", m->dir, errno);
    close(fd);
}

/* Phase k over all test directories; timed and reported when asked for. */
static void run_phase(struct cbk_ctx *c, const struct metadata *m, enum phase k, bool dirs)
{
    bool timed = m->timed[k];
    if (k == RENAME && (!timed || !dirs))
        return;  /* mdtest renames directories only, and only when asked */
    if (k == READ && (!timed || dirs))
        return;  /* mdtest's directory read does nothing */
    struct item_ctx x;
    int32_t writer = -1;
    x.owner = owner_of(m, c, k);
    tree_base(m, tree_of(m, c, x.owner), x.base, sizeof x.base);
    cbk_barrier(c);
    double begin = cbk_now(c);
    for (uint64_t loop = 0; loop < m->l.loops; loop++) {
        test_dir(m, c, loop, x.root, sizeof x.root);
        items_pass(c, m, k, dirs, &x, &writer);
    }
    if (m->timed[k] && opt(c->args)->sync_phase)
        sync_dir(c, m);
    double end = cbk_now(c);
    cbk_barrier(c);
    if (!timed)
        return;
    uint64_t items = m->l.per_loop * m->l.loops;
    uint64_t bytes = dirs ? 0 : k == CREATE ? items * m->write_bytes : k == READ ? items * m->read_bytes : 0;
    report(c, m, phase_label(k, dirs), items, bytes, begin, end, x.owner, writer);
}

/* The trees: rank 0 makes the test directories; then each tree is made by
 * its rank (unique-dir) or by rank 0 (shared), parents before children. */
static void tree_pass(struct cbk_ctx *c, const struct metadata *m, bool create)
{
    bool mine = m->unique || c->rank == 0;
    char root[CBK_PATH_MAX + 64], base[64], path[ITEM_PATH_MAX];
    tree_base(m, c->rank, base, sizeof base);
    if (create && c->rank == 0)
        for (uint64_t loop = 0; loop < m->l.loops; loop++) {
            test_dir(m, c, loop, root, sizeof root);
            if (mkdir(root, 0775))
                op_fail(c, "mkdir", root, errno);
        }
    cbk_barrier(c);
    double begin = cbk_now(c);
    for (uint64_t loop = 0; mine && loop < m->l.loops; loop++) {
        test_dir(m, c, loop, root, sizeof root);
        for (uint64_t i = 0; i < m->l.tree_dirs; i++) {
            uint64_t d = create ? i : m->l.tree_dirs - 1 - i;
            dir_path(m, root, base, d, path, sizeof path);
            if (create ? mkdir(path, 0775) : rmdir(path))
                op_fail(c, create ? "mkdir" : "rmdir", path, errno);
        }
    }
    double end = cbk_now(c);
    cbk_barrier(c);
    if (!m->unique) {
        /* a shared tree is rank 0's work alone: the other ranks report its interval, so
         * the phase spans the tree's making (as mdtest times it on rank 0), not also the
         * skew between the ranks' clocks and barrier exits (ms on a busy machine) */
        double span_s[2] = { begin, end };
        bcast(c, span_s, (int)sizeof span_s);
        begin = span_s[0], end = span_s[1];
    }
    if (!create && c->rank == 0)
        for (uint64_t loop = 0; loop < m->l.loops; loop++) {
            test_dir(m, c, loop, root, sizeof root);
            if (rmdir(root))
                op_fail(c, "rmdir", root, errno);
        }
    if (m->timed[create ? CREATE : REMOVE]) {
        uint64_t dirs = mine ? m->l.tree_dirs * m->l.loops : 0;
        report(c, m, create ? "tree-create" : "tree-remove", dirs, 0, begin, end, c->rank, -1);
    }
}

/* Test hook: CBK_TEST_LISTING=<file> makes rank 0 append
 * "<repetition> dirs|files <files> <directories>" found under the private
 * directory after each create phase, so tests check items on disk against
 * the layout. */
static int files_seen, dirs_seen;
static int count_entry(const char *path, const struct stat *st, int type, struct FTW *f)
{
    (void)st;
    if (f->level == 0)
        return 0;
    if (f->level == 1 && strcmp(path + f->base, CBK_OWNER_STAMP) == 0)
        return 0;   /* the private directory's owner stamp: not an item of the layout */
    files_seen += type == FTW_F;
    dirs_seen += type == FTW_D || type == FTW_DP;
    return 0;
}

static void test_listing(const struct metadata *m, struct cbk_ctx *c, bool dirs)
{
    cbk_barrier(c);
    const char *out = getenv("CBK_TEST_LISTING");
    if (!out || c->rank != 0)
        return;
    files_seen = dirs_seen = 0;
    nftw(m->dir, count_entry, 16, FTW_PHYS);
    FILE *f = fopen(out, "a");
    if (f) {
        fprintf(f, "%d %s %d %d\n", c->repetition, dirs ? "dirs" : "files", files_seen, dirs_seen);
        fclose(f);
    }
}

/* mdtest's -p: before its directory test and before its file test, in every
 * iteration, mdtest pauses (DelaySecs) so the file system settles; the
 * phases' barriers follow, so the pause is outside every timing. Every rank
 * sleeps here rather than spinning in the barrier. */
static void pre_delay(const struct cbk_args *a) { cbk_sleep_s(opt(a)->pre_delay); }

static int run(const struct cbk_args *a, struct cbk_ctx *c)
{
    struct metadata *m = c->state;
    tree_pass(c, m, true);
    /* mdtest's order: the whole directory test, then the whole file test */
    for (int kind = 0; kind < 2; kind++) {
        bool dirs = kind == 0;
        if (!(dirs ? m->dirs : m->files))
            continue;
        pre_delay(a);
        run_phase(c, m, CREATE, dirs);
        test_listing(m, c, dirs);
        for (enum phase k = STAT; k <= REMOVE; k++)
            run_phase(c, m, k, dirs);
    }
    tree_pass(c, m, false);
    return CBK_EXIT_OK;
}

static void teardown(const struct cbk_args *a, struct cbk_ctx *c)
{
    (void)a;
    struct metadata *m = c->state;
    cbk_buffer_free(m->write_buf);
    cbk_buffer_free(m->read_buf);
    free(m->order);
    free(m);
    c->state = NULL;
}

const struct cbk_kernel cbk_kernel_metadata = {
    .name = "metadata",
    .summary = "file and directory create/stat/read/rename/remove rates with mdtest's layouts (E4, IO500's mdtest)",
    .family = CBK_FAMILY_IO,
    .flags = CBK_PARALLEL,
    .params = params,
    .options_size = sizeof(OPT),
    .validate = validate,
    .setup = setup,
    .run = run,
    .teardown = teardown,
};
