/* cbk: parse, start MPI when built with it, hand over to cbk_run(). */
#include "core/build_features.h"
#include "core/cbk.h"
#include "core/cleanup.h"
#include "core/finalize.h"
#include "core/mpich_slab.h"
#include "core/orchestrator_watch.h"
#include "core/mpi_build.h"
#include "core/params.h"
#include "core/pattern.h"
#include "core/record.h"
#include "core/seconds_knob.h"
#include "core/start_watch.h"
#include "core/timer.h"
#ifdef CBK_HAVE_GPU
#include "gpu/visible_gpus.h"
#endif

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void mpi_library(char *buf, size_t len)
{
#ifdef CBK_HAVE_MPI
    /* callable before MPI_Init (MPI-3.0 section 8.1.1) */
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int n = 0;
    MPI_Get_library_version(lib, &n);
    lib[strcspn(lib, "\n")] = '\0';
    snprintf(buf, len, "%.*s", (int)(len - 1), lib);
#else
    snprintf(buf, len, "none");
#endif
}

/* Every kernel's parameter table against its options struct, so a wrong
 * binding fails `cbk --describe` (which every test run and the Python side
 * call first), not only the run that uses the kernel. */
static const char *const families[] = {
    CBK_FAMILY_IO, CBK_FAMILY_NETWORK, CBK_FAMILY_MPI, CBK_FAMILY_COMPUTE, CBK_FAMILY_GPU, CBK_FAMILY_DEBUG, NULL,
};

static bool known_family(const char *family)
{
    for (const char *const *f = families; family && *f; f++)
        if (!strcmp(*f, family))
            return true;
    return false;
}

static int check_tables(void)
{
    char bad[256];
    for (const struct cbk_kernel *const *k = cbk_kernels; *k; k++)
        if (!known_family((*k)->family)) {
            fprintf(stderr, "cbk internal error: kernel %s: family %s is not one of CBK_FAMILY_* (core/cbk.h)\n",
                    (*k)->name, (*k)->family ? (*k)->family : "(none)");
            return -1;
        } else if (cbk_check_params((*k)->params, (*k)->options_size, bad, sizeof bad)) {
            fprintf(stderr, "cbk internal error: kernel %s: %s\n", (*k)->name, bad);
            return -1;
        }
    for (const struct cbk_left_out *l = cbk_left_out; l->name; l++)
        if (!known_family(l->family)) {
            fprintf(stderr, "cbk internal error: left-out kernel %s: family %s is not one of CBK_FAMILY_* (core/cbk.h)\n",
                    l->name, l->family ? l->family : "(none)");
            return -1;
        }
    return 0;
}

static int describe(void)
{
    char lib[512];
    mpi_library(lib, sizeof lib);
    struct cbk_json j;
    cbk_record_begin(&j, stdout, NULL, "describe");
    cbk_json_text(&j, "cbk_version", CBK_VERSION);
    cbk_json_text(&j, "compiler", "gcc-compatible " __VERSION__);
    cbk_json_text(&j, "compiler_flags", CBK_COMPILER_FLAGS);
    cbk_json_text(&j, "build_type", CBK_BUILD_TYPE);
    cbk_json_build_features(&j);
#ifdef CBK_HAVE_MPI
    cbk_json_bool(&j, "mpi", true);
    cbk_json_text(&j, "mpi_library", lib);
    cbk_json_text(&j, "mpi_built_with", cbk_mpi_built_with());
    cbk_json_text(&j, "mpi_compiler", cbk_mpi_compiler());
#else
    cbk_json_bool(&j, "mpi", false);
    cbk_json_null(&j, "mpi_library");
    cbk_json_null(&j, "mpi_built_with");
    cbk_json_null(&j, "mpi_compiler");
#endif
    cbk_describe_params(&j, "common_parameters", cbk_common_params);
    cbk_json_array(&j, "kernels");
    for (const struct cbk_kernel *const *k = cbk_kernels; *k; k++) {
        cbk_json_object(&j, NULL);
        cbk_json_text(&j, "name", (*k)->name);
        cbk_json_text(&j, "summary", (*k)->summary);
        cbk_json_bool(&j, "parallel", (*k)->flags & CBK_PARALLEL);
        cbk_json_text(&j, "family", (*k)->family);
        cbk_json_array(&j, "detail_records");
        for (const char *const *r = (*k)->detail_records; r && *r; r++)
            cbk_json_text(&j, NULL, *r);
        cbk_json_close(&j);
        cbk_write_phase_words(&j, *k);
        cbk_describe_params(&j, "parameters", (*k)->params);
        cbk_json_close(&j);
    }
    cbk_json_close(&j);
    cbk_json_object(&j, "left_out");
    for (const struct cbk_left_out *l = cbk_left_out; l->name; l++) {
        cbk_json_object(&j, l->name);
        cbk_json_text(&j, "family", l->family);
        cbk_json_text(&j, "why", l->why);
        cbk_json_close(&j);
    }
    cbk_json_close(&j);
    return cbk_json_end(&j);
}

static void usage(FILE *f)
{
    fprintf(f, "usage: cbk --describe | --version | --gpus | [--check] KERNEL [--name=value ...] | KERNEL --help\n"
               "Runs one measurement kernel and prints JSON records, one per line.\n"
               "--check only parses and validates the parameters (exit 0 or 2), creating nothing.\n"
               "--gpus prints how many GPUs this process sees (0 without GPU kernels).\nkernels:\n");
    for (const struct cbk_kernel *const *k = cbk_kernels; *k; k++)
        fprintf(f, "  %-12s %s\n", (*k)->name, (*k)->summary);
    /* a kernel this build left out is listed too, with why: --help was silent about it */
    for (const struct cbk_left_out *l = cbk_left_out; l->name; l++)
        fprintf(f, "  %-12s (not in this cbk: %s)\n", l->name, l->why);
}

static void kernel_help(const struct cbk_kernel *k)
{
    printf("cbk %s: %s\nparameters:\n", k->name, k->summary);
    const struct cbk_param *tables[] = { k->params, cbk_common_params };
    char names[256];
    for (int t = 0; t < 2; t++)
        for (const struct cbk_param *p = tables[t]; p && p->name; p++)
            printf("  --%-16s %s (default %s%s%s%s%s)\n", p->name, p->help,
                   p->default_value ? p->default_value : "required",
                   p->unit ? ", " : "", p->unit ? p->unit : "",
                   p->choices ? (p->type == CBK_CHOICE_LIST ? ", any of " : ", one of ") : "", p->choices ? cbk_format_choices(p, names, sizeof names) : "");
}

/* What --describe, --version and --help print is all they do: a write of
 * it that failed (a full disk under `cbk --describe > cbk.json`) is exit 1
 * with the reason, as a run's records are (cbk_record_end), never exit 0. */
static int stdout_status(int failed_errno)
{
    if (fflush(stdout) != 0 && !failed_errno)
        failed_errno = errno;
    if (ferror(stdout) && !failed_errno)
        failed_errno = errno ? errno : EIO; /* an earlier flush failed; stdio keeps no errno */
    if (!failed_errno)
        return 0;
    char msg[256];
    snprintf(msg, sizeof msg, "cannot write to standard output: %s", strerror(failed_errno));
    cbk_error_record(NULL, CBK_EXIT_FAILED, 0, msg, NULL, 0);
    return CBK_EXIT_FAILED;
}

static void bad_input(const char *msg)
{
    cbk_error_record(NULL, CBK_EXIT_BAD_INPUT, 0, msg, NULL, 0);
}

/* A bad input as the lowest rank that found it says it: a rank other than
 * 0 names itself and its host, since rank 0 read the same arguments well
 * (another node's cbk, of another version). */
static void bad_input_of_rank(const struct cbk_ctx *c, const char *msg)
{
    if (c->rank == 0) {
        bad_input(msg);
        return;
    }
    char host[256] = "";
    if (gethostname(host, sizeof host - 1) != 0)
        snprintf(host, sizeof host, "%s", "unknown host");
    char said[CBK_MESSAGE_MAX + 300];
    snprintf(said, sizeof said, "rank %d (%s): %s", c->rank, host, msg);
    cbk_error_record(NULL, CBK_EXIT_BAD_INPUT, c->rank, said, NULL, 0);
}

static void start_parallel(struct cbk_ctx *c, int *argc, char ***argv)
{
    c->rank = c->node_rank = 0;
    c->size = c->node_size = c->nodes = 1;
#ifdef CBK_HAVE_MPI
    /* FUNNELED: OpenMP kernels (himeno) call MPI only outside parallel regions */
    int provided;
    struct cbk_stall_watch *start_watch = cbk_start_watch_begin();
    MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided);
    cbk_start_watch_end(start_watch);
    cbk_mpich_note_slabs();
    c->comm = MPI_COMM_WORLD;
    MPI_Comm_rank(c->comm, &c->rank);
    MPI_Comm_size(c->comm, &c->size);
    /* kept: the driver takes each repetition's time origin over it (core/driver.c) */
    MPI_Comm_split_type(c->comm, MPI_COMM_TYPE_SHARED, c->rank, MPI_INFO_NULL, &c->node_comm);
    MPI_Comm_rank(c->node_comm, &c->node_rank);
    MPI_Comm_size(c->node_comm, &c->node_size);
    int leader = c->node_rank == 0;
    MPI_Allreduce(&leader, &c->nodes, 1, MPI_INT, MPI_SUM, c->comm);
    /* one run id for all ranks: data written by one rank is checked by another */
    c->run_id = cbk_random_u64();
    MPI_Bcast(&c->run_id, 1, MPI_UINT64_T, 0, c->comm);
#else
    (void)argc;
    (void)argv;
    c->run_id = cbk_random_u64();
#endif
}

static void stop_parallel(int status)
{
    cbk_finalize(status);
}

/* Whether a process manager started this cbk as one rank of a job (Hydra
 * and Slurm's PMI, PMIx, Open MPI's launcher), so that other ranks wait on
 * it in MPI_Init: a rank that refuses its kernel alone, before MPI_Init,
 * holds them there for ever. */
static bool rank_of_a_job(void)
{
    const char *managed[] = { "PMI_RANK", "PMI_FD", "PMIX_RANK", "OMPI_COMM_WORLD_RANK" };
    for (size_t i = 0; i < sizeof managed / sizeof *managed; i++)
        if (getenv(managed[i]))
            return true;
    return false;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return CBK_EXIT_BAD_INPUT;
    }
    /* the queries take no argument: `cbk --gpus 2` printed the count and
     * exit 0, as if 2 had been taken */
    const char *queries[] = { "--describe", "--help", "-h", "--version", "--gpus" };
    for (size_t i = 0; i < sizeof queries / sizeof *queries; i++)
        if (!strcmp(argv[1], queries[i]) && argc > 2) {
            char why[CBK_MESSAGE_MAX];
            snprintf(why, sizeof why, "cbk %s takes no argument (given: '%.200s')", argv[1], argv[2]);
            bad_input(why);
            return CBK_EXIT_BAD_INPUT;
        }
    if (!strcmp(argv[1], "--describe")) {
        if (check_tables())
            return CBK_EXIT_FAILED;
        return stdout_status(describe());
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        usage(stdout);
        return stdout_status(0);
    }
    if (!strcmp(argv[1], "--version")) {
        char lib[512];
        mpi_library(lib, sizeof lib);
        printf("cbk %s (MPI: %s; built with %s)\n", CBK_VERSION, lib, cbk_mpi_built_with());
        return stdout_status(0);
    }
    if (!strcmp(argv[1], "--gpus")) {
#ifdef CBK_HAVE_GPU
        return cbk_print_visible_gpus();
#else
        fprintf(stderr, "this cbk has no GPU kernels\n");
        printf("0\n");
        return stdout_status(0);
#endif
    }
    /* --check: parse and validate only, on this host, as one process */
    bool check_only = !strcmp(argv[1], "--check");
    if (check_only) {
        argv++;
        argc--;
        if (argc < 2) {
            usage(stderr);
            return CBK_EXIT_BAD_INPUT;
        }
    }
    const struct cbk_kernel *k = cbk_find_kernel(argv[1]);
    const char *left_out = k ? NULL : cbk_left_out_why(argv[1]);
    char why[CBK_MESSAGE_MAX];
    if (left_out) {
        snprintf(why, sizeof why, "%s is not in this cbk: %s", argv[1], left_out);
    } else if (!k) {
        int n = snprintf(why, sizeof why, "no such kernel: '%s' (kernels:", argv[1]);
        for (const struct cbk_kernel *const *q = cbk_kernels; *q && n < (int)sizeof why; q++)
            n += snprintf(why + n, sizeof why - (size_t)n, " %s", (*q)->name);
        if (n < (int)sizeof why)
            snprintf(why + n, sizeof why - (size_t)n, ")");
    }
    /* a rank of a job refuses its kernel with the others, as a parameter
     * (below): a node's older cbk without the link matrix's kernel left
     * alone, and Hydra kept the other ranks in MPI_Init for ever */
    if (!k && (check_only || !rank_of_a_job())) {
        bad_input(why);
        return CBK_EXIT_BAD_INPUT;
    }
    if (k && argc > 2 && (!strcmp(argv[2], "--help") || !strcmp(argv[2], "-h"))) {
        kernel_help(k);
        return stdout_status(0);
    }
    struct cbk_args args;
    memset(&args, 0, sizeof args);
    int parse_failed = k ? cbk_parse_args(k, argc - 2, argv + 2, &args, why, sizeof why) : 1;
    /* refused as a parameter is, with the other ranks and by --check: a bad
     * value fell back to its default unsaid */
    if (!parse_failed && cbk_seconds_knobs_refusal(why, sizeof why))
        parse_failed = 1;
    if (parse_failed && check_only) {
        bad_input(why);
        return CBK_EXIT_BAD_INPUT;
    }
    struct cbk_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    ctx.out = stdout;
    if (check_only) {
        ctx.size = ctx.node_size = ctx.nodes = 1;
        ctx.kernel = k;
        ctx.args = &args;
        if (k->validate && k->validate(&args, &ctx, why, sizeof why)) {
            bad_input(why);
            return CBK_EXIT_BAD_INPUT;
        }
        return 0;
    }
    /* before MPI_Init, whose first open() would take a closed descriptor 1
     * and be handed the records; refused once the ranks are known */
    char out_why[256];
    bool out_bad = cbk_check_records_out(ctx.out, out_why, sizeof out_why) != 0;
    cbk_mpich_fresh_singleton_pid();
    cbk_cleanup_install();
    cbk_watch_orchestrator();
    start_parallel(&ctx, &argc, &argv);
    /* MPICH's MPI_Init makes stdout unbuffered (setbuf(stdout, NULL)), and
     * the JSON writer goes character by character: one write(2) per byte,
     * about 1,500 per pario record, each woken through mpiexec's proxy
     * while the next phase starts. Records end with fflush
     * (cbk_json_end), so each still leaves whole, as one write. The buffer
     * is given: after setbuf(NULL) glibc keeps its 1-byte buffer when
     * setvbuf gets none. It lives until exit, as stdout does. */
    size_t out_buf_bytes = (size_t)1 << 16;
    char *out_buf = malloc(out_buf_bytes);
    if (out_buf)
        setvbuf(stdout, out_buf, _IOFBF, out_buf_bytes);
    cbk_cleanup_set_run_id(ctx.run_id);
    /* Every rank parsed the same arguments, but not always with the same
     * cbk: a node with an older one failed alone, waited in MPI_Finalize,
     * and the others waited in the kernel for its rank, for ever. The ranks
     * agree, and the lowest failing one explains, naming its host. */
    int first_failed = -cbk_all_max_int(&ctx, -(parse_failed ? ctx.rank : ctx.size));
    if (first_failed < ctx.size) {
        if (ctx.rank == first_failed)
            bad_input_of_rank(&ctx, why);
        stop_parallel(CBK_EXIT_BAD_INPUT);
        return CBK_EXIT_BAD_INPUT;
    }
    /* rank 0 writes the records, so its stdout decides, for every rank at
     * once: a rank that left alone kept the others waiting in MPI_Init */
    if (cbk_all_max_int(&ctx, ctx.rank == 0 && out_bad)) {
        if (ctx.rank == 0)
            bad_input(out_why);
        stop_parallel(CBK_EXIT_BAD_INPUT);
        return CBK_EXIT_BAD_INPUT;
    }
    /* every rank is past MPI_Init (the agreements above were collectives of them all) */
    ctx.kernel = k;
    cbk_started_record(&ctx);
    ctx.timer_resolution_s = cbk_timer_resolution();
    int status = cbk_run(k, &args, &ctx);
    cbk_cleanup_run();
    stop_parallel(status);
    return status;
}
