/* stream: memory bandwidth, based on a variant of the STREAM benchmark
 * (John D. McCalpin, https://www.cs.virginia.edu/stream/). Copy, scale,
 * add and triad over OpenMP threads on three double arrays; bytes counted
 * as STREAM counts them (copy, scale: 2 arrays; add, triad: 3 arrays per
 * element); results checked as STREAM's checkSTREAMresults does. Modified
 * from STREAM: results labelled as a variant, as STREAM's licence asks. */
#include "../core/affinity.h"
#include "../core/buffer.h"
#include "../core/cbk.h"
#include "../core/params.h"
#include "../core/timer.h"

#include <dirent.h>
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef CBK_HAVE_OPENMP
#include <omp.h>
#endif

struct stream_options {
    uint64_t array_size;
    int64_t passes;
    struct cbk_thread_options threads;
};
#define OPT struct stream_options
static const OPT *opt(const struct cbk_args *a) { return cbk_options(a); }

static const struct cbk_param params[] = {
    { .name = "array-size", CBK_AT_SIZE(OPT, array_size), .default_value = "0", .unit = "bytes",
      .help = "bytes per array (three arrays); 0 = at least 4x the sum of last-level caches (STREAM's rule), capped to fit memory" },
    { .name = "passes", CBK_AT_INT(OPT, passes), .default_value = "10", .unit = "count", .min = "2", .max = "100000",
      .help = "passes of the four kernels (STREAM's NTIMES); the first is dropped from best and median" },
    CBK_THREAD_PARAMS(OPT, threads, "0", "OpenMP threads; 0 = every CPU this process may use"),
    { 0 },
};

#define MIN_ELEMENTS 1000u
static const double scalar = 3.0;
enum { COPY, SCALE, ADD, TRIAD, KERNELS };
static const char *const names[KERNELS] = { "copy", "scale", "add", "triad" };
static const int arrays_touched[KERNELS] = { 2, 2, 3, 3 };

struct stream {
    size_t n;            /* elements per array */
    double *a, *b, *c;
    double *times;       /* [pass][kernel] */
    double *begins;
    double *sorted;      /* scratch for the median */
    char size_source[160];
    char cache_warning[256]; /* empty unless the arrays fit in the last-level caches */
    struct cbk_thread_team team;
};

/* Sum of the highest-level caches, each counted once (by its
 * shared_cpu_list), from sysfs. 0 when sysfs has no cache entries. */
static uint64_t last_level_cache_bytes(int *level_out)
{
    char lists[256][128];
    int seen = 0, top = 0;
    uint64_t sum = 0;
    for (int pass = 0; pass < 2; pass++)
        for (int cpu = 0; cpu < CBK_MAX_CPUS; cpu++)
            for (int idx = 0; idx < 16; idx++) {
                char path[160], text[128];
                snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/cache/index%d/level", cpu, idx);
                FILE *f = fopen(path, "r");
                if (!f)
                    break;
                int level = 0;
                if (fscanf(f, "%d", &level) != 1)
                    level = 0;
                fclose(f);
                if (pass == 0) {
                    if (level > top)
                        top = level;
                    continue;
                }
                if (level != top)
                    continue;
                snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/cache/index%d/shared_cpu_list", cpu, idx);
                if (!(f = fopen(path, "r")))
                    continue;
                if (!fgets(text, sizeof text, f))
                    text[0] = '\0';
                fclose(f);
                bool dup = false;
                for (int s = 0; s < seen; s++)
                    dup = dup || !strcmp(lists[s], text);
                if (dup || seen >= 256)
                    continue;
                snprintf(lists[seen++], sizeof lists[0], "%s", text);
                snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/cache/index%d/size", cpu, idx);
                if (!(f = fopen(path, "r")))
                    continue;
                unsigned long kib = 0;
                char unit = 'K';
                if (fscanf(f, "%lu%c", &kib, &unit) >= 1)
                    sum += (uint64_t)kib * (unit == 'M' ? 1048576u : unit == 'G' ? 1073741824u : 1024u);
                fclose(f);
            }
    *level_out = top;
    return sum;
}

/* Elements per array; fills `why` when the request cannot fit. */
static int elements_of(const struct cbk_args *a, size_t *n, char *source, size_t source_len, char *why, size_t len)
{
    uint64_t bytes = opt(a)->array_size;
    long avail = cbk_mem_available_kib();
    double cap = avail > 0 ? 0.5 * 1024.0 * (double)avail / 3.0 : 1e18; /* three arrays in half of free memory */
    if (bytes) {
        if ((double)bytes > cap) {
            char given[32]; /* as a size, not a byte count: "--array-size=100g" was echoed as 107374182400 */
            snprintf(why, len, "--array-size=%s: three arrays need %.2f GiB, more than half of the %.2f GiB "
                     "available%s", cbk_format_size(bytes, given, sizeof given), 3.0 * (double)bytes / 1073741824.0,
                     (double)avail / 1048576.0, cbk_mem_available_note());
            return -1;
        }
        if (bytes / sizeof(double) < MIN_ELEMENTS) {
            snprintf(why, len, "--array-size=%llu bytes: an array needs at least %u doubles (%u bytes)", (unsigned long long)bytes, MIN_ELEMENTS, MIN_ELEMENTS * 8u);
            return -1;
        }
        snprintf(source, source_len, "given");
    } else {
        int level = 0;
        uint64_t llc = last_level_cache_bytes(&level);
        /* without cache figures: STREAM's own default of 10M elements */
        bytes = llc ? 4 * llc : 10000000u * sizeof(double);
        if (bytes < 10000000u * sizeof(double) && !llc)
            bytes = 10000000u * sizeof(double);
        if (llc)
            snprintf(source, source_len, "4 x %llu bytes of L%d caches (sysfs)", (unsigned long long)llc, level);
        else
            snprintf(source, source_len, "no cache sizes in sysfs: STREAM's default 10M elements");
        if ((double)bytes > cap) {
            bytes = (uint64_t)cap;
            snprintf(source + strlen(source), source_len - strlen(source), ", capped to fit memory");
        }
    }
    *n = (size_t)(bytes / sizeof(double));
    return 0;
}

static int validate(const struct cbk_args *a, struct cbk_ctx *c, char *why, size_t len)
{
    (void)c;
    if (cbk_thread_check(&opt(a)->threads, 1, why, len))
        return -1;
    size_t n;
    char source[160];
    return elements_of(a, &n, source, sizeof source, why, len);
}

/* STREAM's initial values, written by the threads that will use each
 * part of the arrays (first touch), then a = 2a as STREAM does. */
static void init_arrays(struct stream *s)
{
    double *restrict a = s->a, *restrict b = s->b, *restrict c = s->c;
    const size_t n = s->n;
#ifdef CBK_HAVE_OPENMP
#pragma omp parallel for schedule(static) num_threads(s->team.threads)
#endif
    for (size_t j = 0; j < n; j++) {
        a[j] = 1.0;
        b[j] = 2.0;
        c[j] = 0.0;
    }
#ifdef CBK_HAVE_OPENMP
#pragma omp parallel for schedule(static) num_threads(s->team.threads)
#endif
    for (size_t j = 0; j < n; j++)
        a[j] = 2.0E0 * a[j];
}

static void release_arrays(struct stream *s)
{
    free(s->a);
    free(s->b);
    free(s->c);
    s->a = s->b = s->c = NULL;
}

/* Threads placed, then arrays allocated; the first touch is init_arrays(),
 * done by the same threads with the same static schedule as the kernels. */
static void prepare(const struct cbk_args *a, struct cbk_ctx *c, struct stream *s, int threads)
{
    release_arrays(s);
    cbk_thread_team_place(&s->team, &opt(a)->threads, threads, c, "stream");
    double **arrays[] = { &s->a, &s->b, &s->c };
    for (int i = 0; i < 3; i++) {
        void *p = NULL;
        int rc = posix_memalign(&p, 4096, s->n * sizeof(double));
        if (rc)
            cbk_fail(c, CBK_EXIT_FAILED, "stream: cannot allocate %zu bytes: %s", s->n * sizeof(double), strerror(rc));
        *arrays[i] = p;
    }
}

static int setup(const struct cbk_args *a, struct cbk_ctx *c)
{
    struct stream *s = calloc(1, sizeof *s);
    if (!s)
        cbk_fail(c, CBK_EXIT_FAILED, "stream: out of memory");
    c->state = s;
    char why[256];
    if (elements_of(a, &s->n, s->size_source, sizeof s->size_source, why, sizeof why))
        cbk_fail(c, CBK_EXIT_BAD_INPUT, "stream: %s", why);
    /* Three arrays that fit in the last-level caches are read from cache:
     * the figures are cache bandwidth, several times memory's, and nothing
     * else in the record says so (STREAM's rule, 4x, is what --array-size=0 follows). */
    int level = 0;
    uint64_t llc = last_level_cache_bytes(&level), arrays = 3 * (uint64_t)s->n * sizeof(double);
    if (llc && arrays <= llc) {
        char arrays_text[32], llc_text[32];
        snprintf(s->cache_warning, sizeof s->cache_warning,
                 "the three arrays (%s) fit in the L%d caches (%s): cache bandwidth, not memory; "
                 "STREAM's rule is each array at least 4x the caches (--array-size=0)",
                 cbk_format_size(arrays, arrays_text, sizeof arrays_text), level,
                 cbk_format_size(llc, llc_text, sizeof llc_text));
    }
    cbk_thread_team_init(&s->team, &opt(a)->threads, 1, c, "stream");
    int passes = (int)opt(a)->passes;
    s->times = calloc((size_t)passes * KERNELS, sizeof(double));
    s->begins = calloc((size_t)passes * KERNELS, sizeof(double));
    s->sorted = calloc((size_t)passes, sizeof(double));
    if (!s->times || !s->begins || !s->sorted)
        cbk_fail(c, CBK_EXIT_FAILED, "stream: out of memory");
    if (opt(a)->threads.sweep != CBK_SWEEP_THREADS)
        prepare(a, c, s, s->team.threads_max);
    return 0;
}

/* checkSTREAMresults: replay the passes on scalars, compare the average
 * absolute error of each array with epsilon (1e-13 for doubles). */
static int check_results(const struct stream *s, int passes, double err[3])
{
    double aj = 1.0, bj = 2.0, cj = 0.0;
    aj = 2.0E0 * aj;
    for (int k = 0; k < passes; k++) {
        cj = aj;
        bj = scalar * cj;
        cj = aj + bj;
        aj = bj + scalar * cj;
    }
    double sum[3] = { 0, 0, 0 };
    for (size_t j = 0; j < s->n; j++) {
        sum[0] += fabs(s->a[j] - aj);
        sum[1] += fabs(s->b[j] - bj);
        sum[2] += fabs(s->c[j] - cj);
    }
    const double expect[3] = { aj, bj, cj }, epsilon = 1.e-13;
    int bad = 0;
    for (int i = 0; i < 3; i++) {
        err[i] = sum[i] / (double)s->n / fabs(expect[i]);
        bad += err[i] > epsilon;
    }
    return bad;
}

static int compare_doubles(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

static void measure(const struct cbk_args *a, struct cbk_ctx *c, struct stream *s)
{
    const int passes = (int)opt(a)->passes;
    const size_t n = s->n;
    double *restrict A = s->a, *restrict B = s->b, *restrict C = s->c;
    init_arrays(s);
    cbk_barrier(c);
    for (int k = 0; k < passes; k++) {
        double *t = s->times + (size_t)k * KERNELS, *b0 = s->begins + (size_t)k * KERNELS;
        b0[COPY] = cbk_now(c);
#ifdef CBK_HAVE_OPENMP
#pragma omp parallel for schedule(static) num_threads(s->team.threads)
#endif
        for (size_t j = 0; j < n; j++)
            C[j] = A[j];
        b0[SCALE] = cbk_now(c);
#ifdef CBK_HAVE_OPENMP
#pragma omp parallel for schedule(static) num_threads(s->team.threads)
#endif
        for (size_t j = 0; j < n; j++)
            B[j] = scalar * C[j];
        b0[ADD] = cbk_now(c);
#ifdef CBK_HAVE_OPENMP
#pragma omp parallel for schedule(static) num_threads(s->team.threads)
#endif
        for (size_t j = 0; j < n; j++)
            C[j] = A[j] + B[j];
        b0[TRIAD] = cbk_now(c);
#ifdef CBK_HAVE_OPENMP
#pragma omp parallel for schedule(static) num_threads(s->team.threads)
#endif
        for (size_t j = 0; j < n; j++)
            A[j] = B[j] + scalar * C[j];
        double end = cbk_now(c);
        for (int q = 0; q < KERNELS; q++)
            t[q] = (q + 1 < KERNELS ? b0[q + 1] : end) - b0[q];
    }

    const char *hook = getenv("CBK_TEST_CORRUPT_STREAM");
    bool corrupted = hook && !strcmp(hook, "1");
    if (corrupted)
        A[n / 2] = 2.0 * A[n / 2] + 1.0; /* test hook: an error of about 1/n, which validation must catch */
    double err[3];
    int bad = check_results(s, passes, err);

    for (int q = 0; q < KERNELS; q++) {
        double *sorted = s->sorted;
        int m = 0, best_k = 1;
        for (int k = 1; k < passes; k++) { /* first pass dropped, as STREAM does */
            double t = s->times[(size_t)k * KERNELS + q];
            sorted[m++] = t;
            if (t < s->times[(size_t)best_k * KERNELS + q])
                best_k = k;
        }
        qsort(sorted, (size_t)m, sizeof sorted[0], compare_doubles);
        double median = m % 2 ? sorted[m / 2] : 0.5 * (sorted[m / 2 - 1] + sorted[m / 2]);
        double sum = 0;
        for (int i = 0; i < m; i++)
            sum += sorted[i];
        uint64_t bytes = (uint64_t)arrays_touched[q] * sizeof(double) * n;
        /* the record's time span is the best pass, so its rate is STREAM's
         * "Best Rate" (in MiB/s; decimal MB/s beside it, as STREAM prints) */
        /* a thread sweep's records differ in `threads`: the sweep key */
        struct cbk_phase p = { .phase = names[q], .bytes = bytes, .ops = n,
                               .sweep_key = opt(a)->threads.sweep == CBK_SWEEP_THREADS ? "threads" : NULL };
        cbk_phase_qualifier(&p, "statistic", "best");
        p.begin_s = s->begins[(size_t)best_k * KERNELS + q];
        p.end_s = p.begin_s + sorted[0];
        cbk_phase_field(&p, CBK_TEXT("method", "based on a variant of the STREAM benchmark"));
        cbk_phase_field(&p, CBK_REAL("best_mb_per_s", (double)bytes / sorted[0] / 1e6));
        cbk_phase_field(&p, CBK_REAL("median_mb_per_s", (double)bytes / median / 1e6));
        cbk_phase_field(&p, CBK_REAL("median_mib_per_s", (double)bytes / median / 1048576.0));
        cbk_phase_field(&p, CBK_REAL("avg_time_s", sum / m));
        cbk_phase_field(&p, CBK_REAL("min_time_s", sorted[0]));
        cbk_phase_field(&p, CBK_REAL("max_time_s", sorted[m - 1]));
        cbk_phase_field(&p, CBK_I64("passes", passes));
        cbk_phase_field(&p, CBK_I64("passes_counted", m));
        cbk_phase_field(&p, CBK_U64("array_elements", n));
        cbk_phase_field(&p, CBK_U64("array_bytes", n * sizeof(double)));
        cbk_phase_field(&p, CBK_TEXT("array_size_source", s->size_source));
        cbk_phase_field(&p, CBK_I64("threads", s->team.threads));
        cbk_phase_field(&p, CBK_TEXT("bind", cbk_bind_names[opt(a)->threads.bind]));
        cbk_phase_field(&p, CBK_TEXT("cpus", s->team.cpus));
        cbk_phase_field(&p, CBK_BOOL("validated", bad == 0));
        cbk_phase_field(&p, CBK_REAL("avg_rel_error_a", err[0]));
        cbk_phase_field(&p, CBK_REAL("avg_rel_error_b", err[1]));
        cbk_phase_field(&p, CBK_REAL("avg_rel_error_c", err[2]));
        if (s->cache_warning[0])
            cbk_phase_warn(&p, s->cache_warning);
        if (sorted[0] < 20.0 * c->timer_resolution_s)
            cbk_phase_warn(&p, "best time is under 20 clock ticks: use a larger --array-size");
        if (corrupted)
            cbk_phase_warn(&p, "test hook CBK_TEST_CORRUPT_STREAM corrupted one element before validation");
        cbk_report(c, &p);
    }
    if (bad)
        cbk_fail(c, CBK_EXIT_FAILED, "stream: validation failed: average relative errors a %.3e, b %.3e, c %.3e (limit 1e-13)",
                 err[0], err[1], err[2]);
}

static int run(const struct cbk_args *a, struct cbk_ctx *c)
{
    struct stream *s = c->state;
    if (opt(a)->threads.sweep != CBK_SWEEP_THREADS) {
        measure(a, c, s);
        return 0;
    }
    for (int t = 1; t <= s->team.threads_max; t++) {
        prepare(a, c, s, t);
        measure(a, c, s);
    }
    release_arrays(s);
    return 0;
}

static void teardown(const struct cbk_args *a, struct cbk_ctx *c)
{
    (void)a;
    struct stream *s = c->state;
    if (!s)
        return;
    release_arrays(s);
    free(s->times);
    free(s->begins);
    free(s->sorted);
    free(s);
    c->state = NULL;
}

const struct cbk_kernel cbk_kernel_stream = {
    .name = "stream",
    .summary = "memory bandwidth: copy, scale, add, triad over threads; based on a variant of the STREAM benchmark",
    .family = CBK_FAMILY_COMPUTE,
    .params = params,
    .options_size = sizeof(OPT),
    .validate = validate,
    .setup = setup,
    .run = run,
    .teardown = teardown,
};
