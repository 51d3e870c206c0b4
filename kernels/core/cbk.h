/* The kernel interface: every kernel is one `const struct cbk_kernel` in one
 * file, listed once in registry.c. The core (option parsing, the repetition
 * loop, rank reduction, JSON output, cleanup) never names a kernel. */
#ifndef CBK_H
#define CBK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef CBK_HAVE_MPI
#include <mpi.h>
#endif

#define CBK_VERSION "0.1.0"
/* Set by CMake so every record names its build. */
#ifndef CBK_COMPILER_FLAGS
#define CBK_COMPILER_FLAGS "unknown"
#endif
#ifndef CBK_BUILD_TYPE
#define CBK_BUILD_TYPE "unknown"
#endif
/* Bumped whenever a record's fields change meaning; Python checks it. */
#define CBK_SCHEMA 1
#define CBK_MAX_PARAMS 48
#define CBK_MAX_FIELDS 48
#define CBK_MAX_WARNINGS 4
#define CBK_MAX_QUALIFIERS 4

/* Room for a message that names two paths of PATH_MAX (4096 bytes) and says
 * what is wrong with them: a 1 KiB buffer cut a long --dir's reason off. */
#define CBK_MESSAGE_MAX 10240

/* Exit statuses, shared with the Python side. */
enum { CBK_EXIT_OK = 0, CBK_EXIT_FAILED = 1, CBK_EXIT_BAD_INPUT = 2 };

enum cbk_param_type {
    CBK_SIZE,    /* bytes, binary suffixes k/m/g/t: uint64_t */
    CBK_INT,     /* signed integer: int64_t */
    CBK_REAL,    /* floating point: double */
    CBK_CHOICE,  /* one of `choices`: its index, into an enum (or int) field */
    CBK_BOOL,    /* --name, --name=true|false: bool */
    CBK_STRING,  /* const char * */
    CBK_PATH,    /* a directory or file the kernel works in: const char * */
    CBK_CHOICE_LIST, /* "a,b": distinct `choices` in the order given, all
                      * measured in one launch: struct cbk_choice_list */
};

#define CBK_MAX_CHOICE_LIST 16

/* The value of a CBK_CHOICE_LIST parameter: indexes into its choices. */
struct cbk_choice_list {
    int count;
    int index[CBK_MAX_CHOICE_LIST];
};

/* One parameter, bound as fio binds its options: the parsed value is
 * stored at `offset` in the kernel's options struct (see CBK_AT_*), so a
 * kernel reads typed fields and never looks a parameter up by name. */
struct cbk_param {
    const char *name;
    enum cbk_param_type type;
    const char *default_value; /* parsed like user input; NULL: required */
    const char *unit;          /* printed by --describe, e.g. "bytes", "s" */
    const char *const *choices;/* CBK_CHOICE(_LIST) only: names, NULL-terminated, in enum order */
    const char *min, *max;     /* inclusive bounds as text; NULL: none */
    const char *help;
    size_t offset;             /* of the value in the options struct */
    /* CBK_STRING: the word that means "not given, cbk decides" ("auto",
     * "any"); it binds NULL, so kernels test the pointer, not the word */
    const char *keyword;
    /* What the parameter says beyond its value (docs/design.md, "Roles"):
     * NULL = part of what is measured; CBK_ROLE_WHERE = where it ran (a
     * peer's address or port), ignored when measurements are matched.
     * CBK_PATH parameters are "where" without saying so. */
    const char *role;
    /* The value a run made before this parameter existed ran as, when its
     * default changes what is measured (randio's poll: such runs slept);
     * NULL: its default. Stored runs whose record lacks the parameter are
     * matched with this value, not today's default (docs/design.md). */
    const char *before;
};
#define CBK_ROLE_WHERE "where"

/* Bindings: type and offset of a parameter in options struct T. The field's
 * C type is checked at compile time, so a renamed or mistyped field fails
 * the build: _Generic has no match, or the choice field is not int-sized. */
#define CBK_OFFSET_TYPED(T, f, ctype) (offsetof(T, f) + 0 * sizeof(_Generic(((T *)0)->f, ctype: 1)))
#define CBK_AT_SIZE(T, f)   .type = CBK_SIZE, .offset = CBK_OFFSET_TYPED(T, f, uint64_t)
#define CBK_AT_INT(T, f)    .type = CBK_INT, .offset = CBK_OFFSET_TYPED(T, f, int64_t)
#define CBK_AT_REAL(T, f)   .type = CBK_REAL, .offset = CBK_OFFSET_TYPED(T, f, double)
#define CBK_AT_BOOL(T, f)   .type = CBK_BOOL, .offset = CBK_OFFSET_TYPED(T, f, bool)
#define CBK_AT_STRING(T, f) .type = CBK_STRING, .offset = CBK_OFFSET_TYPED(T, f, const char *)
#define CBK_AT_PATH(T, f)   .type = CBK_PATH, .offset = CBK_OFFSET_TYPED(T, f, const char *)
#define CBK_AT_CHOICE(T, f, names) .type = CBK_CHOICE, .choices = (names), \
    .offset = offsetof(T, f) + 0 * sizeof(char[sizeof(((T *)0)->f) == sizeof(int) ? 1 : -1])
#define CBK_AT_CHOICE_LIST(T, f, names) .type = CBK_CHOICE_LIST, .choices = (names), \
    .offset = CBK_OFFSET_TYPED(T, f, struct cbk_choice_list)

union cbk_value {
    uint64_t size;
    int64_t integer;
    double real;
    int choice;       /* index into cbk_param.choices */
    struct cbk_choice_list list;
    const char *text; /* CBK_STRING, CBK_PATH */
    bool flag;
};

struct cbk_kernel;

/* The parameters every kernel takes (cbk_common_params binds into it). */
struct cbk_common_options {
    int64_t repetitions;
};

#define CBK_MAX_OPTION_BYTES 1024

/* Parsed parameters: slot i belongs to kernel->params[i]; the common
 * parameters (cbk_common_params) follow after the kernel's own. */
struct cbk_args {
    const struct cbk_kernel *kernel;
    int count;
    const struct cbk_param *param[CBK_MAX_PARAMS];
    union cbk_value value[CBK_MAX_PARAMS];
    const char *text[CBK_MAX_PARAMS]; /* as given, for the run record */
    struct cbk_common_options common;
    /* the kernel's options struct (kernel->options_size bytes): cbk_options() */
    _Alignas(max_align_t) unsigned char option_bytes[CBK_MAX_OPTION_BYTES];
};

/* The kernel's own options struct, filled by the parser:
 *   const struct seqio_options *o = cbk_options(a); */
static inline const void *cbk_options(const struct cbk_args *a) { return a->option_bytes; }

/* Everything a kernel may touch besides its parameters. */
struct cbk_ctx {
    int rank, size;          /* 0 and 1 without MPI */
    int node_rank, node_size;/* rank within its node, ranks on its node */
    int nodes;               /* distinct hosts */
#ifdef CBK_HAVE_MPI
    MPI_Comm comm;
    MPI_Comm node_comm;      /* the ranks on this rank's node (MPI_COMM_TYPE_SHARED) */
    /* whom the driver's own waits are on (core/patient_wait.h), from its
     * start to its end; NULL with one rank or no memory: MPI's plain calls */
    const struct patient_peers *waits_on;
#endif
    FILE *out;               /* measurement records (rank 0 writes) */
    const struct cbk_kernel *kernel;
    const struct cbk_args *args;
    int repetition;          /* set by the driver before each run() */
    double epoch_s;          /* cbk_clock() as the repetition's barrier released this node's ranks */
    uint64_t run_id;         /* random per invocation; stamps data blocks */
    double timer_resolution_s;
    void *state;             /* owned by the kernel: setup() to teardown() */
};

/* A kernel-specific value attached to a record. */
enum cbk_field_type { CBK_F_U64, CBK_F_I64, CBK_F_REAL, CBK_F_TEXT, CBK_F_BOOL, CBK_F_PAIRS };
struct cbk_field {
    const char *key;
    enum cbk_field_type type;
    union {
        uint64_t u64; int64_t i64; double real; const char *text; bool flag;
        struct { const char *const *item; int count; } pairs; /* "NAME=value" each: a JSON object */
    } v;
};
#define CBK_U64(k, x)  ((struct cbk_field){ .key = (k), .type = CBK_F_U64, .v.u64 = (x) })
#define CBK_I64(k, x)  ((struct cbk_field){ .key = (k), .type = CBK_F_I64, .v.i64 = (x) })
#define CBK_REAL(k, x) ((struct cbk_field){ .key = (k), .type = CBK_F_REAL, .v.real = (x) })
#define CBK_TEXT(k, x) ((struct cbk_field){ .key = (k), .type = CBK_F_TEXT, .v.text = (x) })
#define CBK_BOOL(k, x) ((struct cbk_field){ .key = (k), .type = CBK_F_BOOL, .v.flag = (x) })
#define CBK_PAIRS(k, items, n) ((struct cbk_field){ .key = (k), .type = CBK_F_PAIRS, .v.pairs = { (items), (n) } })

/* One timed phase as seen by one rank. Times are seconds since the
 * driver's barrier that opened this repetition (its release on the rank's
 * node: one origin for a node's ranks), so ranks on different nodes are comparable (IOR's method: rate = all bytes over latest end
 * minus earliest begin). */
struct cbk_phase {
    const char *phase;       /* "write", "read", ... */
    /* The record contract (docs/records.md): `mode` is the cache/durability
     * state only ("fsync", "cold", ...; NULL = "n/a"); the field that varies
     * within one launch is named by sweep_key; other fields that tell
     * measurements of one phase apart are named by cbk_phase_qualifier(). */
    const char *mode;
    const char *sweep_key;
    const char *qualifier[CBK_MAX_QUALIFIERS];
    int qualifiers;
    uint64_t bytes, ops;     /* this rank's */
    double begin_s, end_s;
    /* Kernels whose figure is not bytes/second set these (e.g. MFLOPS);
     * `value` is this rank's share and is summed over ranks. */
    const char *value_unit;
    double value;
    struct cbk_field field[CBK_MAX_FIELDS];
    int fields;
    /* An optional series printed as a JSON array under series_key (e.g.
     * IOPS per second, so a stall shows); rank 0's, not reduced. */
    const char *series_key;
    const double *series;
    int series_len;
    const char *warning[CBK_MAX_WARNINGS];
    int warnings;
};

/* A kernel's family (docs/design.md, "Families"): what reports group its
 * figures by. One of these, checked by cbk --describe. */
#define CBK_FAMILY_IO "io"           /* files and storage */
#define CBK_FAMILY_NETWORK "network" /* sockets between hosts */
#define CBK_FAMILY_MPI "mpi"         /* MPI messages: latency, or bandwidth when the unit is a rate */
#define CBK_FAMILY_COMPUTE "compute" /* processors and memory */
#define CBK_FAMILY_GPU "gpu"         /* accelerators and their links */
#define CBK_FAMILY_DEBUG "debug"     /* the harness itself */

/* One phase a kernel writes and its words for a reader (cbk --describe). */
struct cbk_phase_words {
    const char *phase, *words;
};

struct cbk_kernel {
    const char *name;
    const char *summary;       /* one line */
    const char *family;        /* CBK_FAMILY_* */
    /* Record types (besides measurements) that break a measurement down,
     * per pair or per rank: kept with the step's build. NULL-terminated;
     * NULL: none. */
    const char *const *detail_records;
    unsigned flags;            /* CBK_PARALLEL: meaningful on many ranks */
    /* Its phases in words, as reports print them ("h2d" reads "host to
     * device"); the records keep the phase as written. Ends with a NULL
     * phase; NULL: every phase is printed as it is named. */
    const struct cbk_phase_words *phase_words;
    const struct cbk_param *params; /* ends with an entry whose name is NULL */
    size_t options_size;       /* sizeof the struct `params` bind into */
    /* Checks input before anything is created. Returns 0, or fills `why`
     * with one line a person can act on. All hooks below are optional. */
    int (*validate)(const struct cbk_args *a, struct cbk_ctx *c, char *why, size_t why_len);
    int (*setup)(const struct cbk_args *a, struct cbk_ctx *c);
    /* One repetition: runs its timed phases and reports them. */
    int (*run)(const struct cbk_args *a, struct cbk_ctx *c);
    void (*teardown)(const struct cbk_args *a, struct cbk_ctx *c);
};
#define CBK_PARALLEL 1u

/* registry.c */
extern const struct cbk_kernel *const cbk_kernels[];
/* Kernels this build left out, their family and why (a library absent at
 * build time): asked for, they are named with the reason, not as unknown;
 * described with their family, so what Python derives from a family (the
 * GPU steps, the GPU analysis) holds on a build without them. Ends with a
 * NULL name. */
struct cbk_left_out { const char *name, *family, *why; };
extern const struct cbk_left_out cbk_left_out[];
const char *cbk_left_out_why(const char *name);
const struct cbk_kernel *cbk_find_kernel(const char *name);
extern const struct cbk_param cbk_common_params[];

/* Reports one phase: reduces over ranks, rank 0 prints the record. Every
 * rank must call it. */
void cbk_report(struct cbk_ctx *c, const struct cbk_phase *p);
void cbk_phase_field(struct cbk_phase *p, struct cbk_field f);
/* A text field that tells measurements of one phase apart (an algorithm,
 * a statistic), listed in the record's `qualifiers`. */
void cbk_phase_qualifier(struct cbk_phase *p, const char *key, const char *value);

/* Per-iteration timing, as OSU and IMB report it: every rank timed each of
 * `count` iterations. cbk_report_iterations() reduces over ranks (IMB's
 * t_min/t_avg/t_max of each rank's mean) and over iterations (median, p99
 * and fastest of each iteration's slowest rank) and writes the record:
 * `seconds` = t_avg, `bytes` = bytes per iteration (the phase's `bytes`,
 * not summed), `ops` = count, `ops_per_s` = 1 / t_avg (iterations per
 * second), `rank_seconds_min/max` = t_min/t_max and `slowest_rank` its rank,
 * and `rate` the latency t_avg in us, or with `bandwidth` bytes / t_avg in
 * MiB/s. Every rank must call it. */
struct cbk_iterations {
    double *seconds;   /* this rank's time of each iteration; scaled in place */
    double *scratch;   /* count doubles: each iteration's slowest rank (rank 0) */
    int64_t count;
    double scale;      /* applied to every time first (pingpong: 0.5, half a round trip) */
    bool active;       /* false: this rank idled (point-to-point bystanders) and is not counted */
    bool bandwidth;
    int streams;       /* > 0: also bandwidth_mib_s/_mb_s of one of this many equal parts (a pair) */
    double messages;   /* > 0: messages per iteration, for messages_per_s */
};
/* Returns 0 or the first MPI error code. */
int cbk_report_iterations(struct cbk_ctx *c, const struct cbk_phase *p, struct cbk_iterations *it);
void cbk_phase_warn(struct cbk_phase *p, const char *warning);

/* Seconds since the current repetition's barrier: the time base of
 * cbk_phase.begin_s/end_s, comparable across nodes. */
double cbk_now(const struct cbk_ctx *c);

/* Collective helpers; plain values without MPI. */
void cbk_barrier(struct cbk_ctx *c);
int cbk_all_max_int(struct cbk_ctx *c, int v);
/* Adds every rank's histogram (core/histogram.h, all made with one range)
 * into `sum` on rank 0: buckets, counts and sums add, extremes take the
 * extremes. Every rank calls it; `sum` is initialised by rank 0. */
struct cbk_histogram;
void cbk_reduce_histogram(struct cbk_ctx *c, const struct cbk_histogram *h, struct cbk_histogram *sum);

/* Fatal errors: one JSON record on stderr, cleanup, exit. Input errors
 * exit 2, failed measurements 1. */
_Noreturn void cbk_fail(struct cbk_ctx *c, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Runs one kernel with parsed arguments; the library entry main() calls. */
int cbk_run(const struct cbk_kernel *k, const struct cbk_args *a, struct cbk_ctx *c);

#endif
