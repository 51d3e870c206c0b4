/* gpumem: GPU memory bandwidth, the GPU-side counterpart of `stream`, based
 * on a variant of the STREAM benchmark (John D. McCalpin,
 * https://www.cs.virginia.edu/stream/) as BabelStream (University of
 * Bristol) carries it to GPUs: copy, scale, add and triad on three double
 * arrays in device memory, and BabelStream's dot. Bytes counted as STREAM
 * counts them (copy, scale, dot: 2 arrays; add, triad: 3 arrays per
 * element). Each kernel is timed alone, as BabelStream times it: by the
 * driver's clock from launch to the end of a synchronisation, and by events
 * around the launch; the best pass after the first is the record's time
 * span, as STREAM's "Best Rate". Results are checked as STREAM's
 * checkSTREAMresults checks them (average relative error of each array
 * against the same passes replayed on scalars, limit 1e-13), on the GPU
 * where the arrays live. Modified from STREAM: results labelled as a
 * variant, as STREAM's licence asks. Method: docs/kernels/gpumem.md. */
#include "gpu_runtime.h"

#include "../core/cbk.h"
#include "../core/params.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct gpumem_options {
    uint64_t array_size;
    double memory_fraction;
    int64_t passes;
};
#define OPT struct gpumem_options
static const OPT *opt(const struct cbk_args *a) { return cbk_options(a); }

static const struct cbk_param params[] = {
    { .name = "array-size", CBK_AT_SIZE(OPT, array_size), .default_value = "0", .unit = "bytes",
      .help = "bytes per array (three arrays); 0 = the three together fill --memory-fraction of the GPU's memory" },
    { .name = "memory-fraction", CBK_AT_REAL(OPT, memory_fraction), .default_value = "0.25", .unit = "fraction",
      .min = "0.001", .max = "0.9", .help = "share of the GPU's memory the three arrays fill when --array-size=0" },
    { .name = "passes", CBK_AT_INT(OPT, passes), .default_value = "10", .unit = "count", .min = "2", .max = "100",
      .help = "passes of the five kernels (STREAM's NTIMES); the first is dropped from best and median" },
    { 0 },
};

#define MIN_ELEMENTS 1000u
static const double scalar = 3.0;
enum { COPY, SCALE, ADD, TRIAD, DOT, KERNELS };
static const char *const names[KERNELS] = { "copy", "scale", "add", "triad", "dot" };
static const int arrays_touched[KERNELS] = { 2, 2, 3, 3, 2 };

struct gpumem {
    const struct cbk_gpu_runtime *rt;
    struct cbk_gpu_device_info device;
    size_t n;
    char size_source[160];
    double *a, *b, *c;              /* device */
    double *partial_device, *partial_host;
    cbk_gpu_stream stream;
    cbk_gpu_event before, after;
    double *driver_s, *event_s;     /* [pass][kernel] */
    double *begins;
    double *sorted;
    double last_dot;
};

static int validate(const struct cbk_args *a, struct cbk_ctx *c, char *why, size_t len)
{
    (void)c;
    uint64_t bytes = opt(a)->array_size;
    if (bytes && bytes / sizeof(double) < MIN_ELEMENTS) {
        snprintf(why, len, "--array-size=%llu bytes: an array needs at least %u doubles (%u bytes)",
                 (unsigned long long)bytes, MIN_ELEMENTS, MIN_ELEMENTS * 8u);
        return -1;
    }
    return cbk_gpu_runtime()->probe(why, len) ? -1 : 0;
}

static void must(struct cbk_ctx *c, const char *err, const char *what)
{
    if (err)
        cbk_fail(c, CBK_EXIT_FAILED, "gpumem: %s: %s", what, err);
}

/* Elements per array, from --array-size or the memory fraction; the three
 * arrays and the reductions' partial sums must fit the memory free now. */
static void size_arrays(const struct cbk_args *a, struct cbk_ctx *c, struct gpumem *g)
{
    const OPT *o = opt(a);
    uint64_t bytes = o->array_size;
    char b1[32], b2[32];
    if (bytes) {
        snprintf(g->size_source, sizeof g->size_source, "given");
    } else {
        bytes = (uint64_t)(o->memory_fraction * (double)g->device.memory_bytes / 3.0);
        snprintf(g->size_source, sizeof g->size_source, "%.3g of %s of device memory, in three arrays",
                 o->memory_fraction, cbk_format_size(g->device.memory_bytes, b1, sizeof b1));
    }
    if (3 * bytes + g->rt->reduce_partials() * sizeof(double) > g->device.free_bytes)
        cbk_fail(c, CBK_EXIT_BAD_INPUT, "gpumem: three arrays of %s do not fit the %s free on %s: lower --array-size or --memory-fraction",
                 cbk_format_size(bytes, b1, sizeof b1), cbk_format_size(g->device.free_bytes, b2, sizeof b2), g->device.name);
    g->n = (size_t)(bytes / sizeof(double));
    if (g->n < MIN_ELEMENTS)
        cbk_fail(c, CBK_EXIT_BAD_INPUT, "gpumem: arrays of %zu doubles are under the %u needed: raise --memory-fraction",
                 g->n, MIN_ELEMENTS);
}

static int setup(const struct cbk_args *a, struct cbk_ctx *c)
{
    struct gpumem *g = calloc(1, sizeof *g);
    if (!g)
        cbk_fail(c, CBK_EXIT_FAILED, "gpumem: out of memory");
    c->state = g;
    g->rt = cbk_gpu_runtime();
    must(c, g->rt->device_info(&g->device), "reading the device's properties");
    size_arrays(a, c, g);
    double **arrays[] = { &g->a, &g->b, &g->c };
    for (int i = 0; i < 3; i++)
        must(c, g->rt->alloc_device((void **)arrays[i], g->n * sizeof(double)), "allocating device memory");
    size_t partials = g->rt->reduce_partials();
    must(c, g->rt->alloc_device((void **)&g->partial_device, partials * sizeof(double)), "allocating device memory");
    must(c, g->rt->alloc_pinned((void **)&g->partial_host, partials * sizeof(double)), "allocating pinned memory");
    must(c, g->rt->stream_create(&g->stream), "creating a stream");
    must(c, g->rt->event_create(&g->before), "creating an event");
    must(c, g->rt->event_create(&g->after), "creating an event");
    size_t cells = (size_t)opt(a)->passes * KERNELS;
    g->driver_s = calloc(cells, sizeof(double));
    g->event_s = calloc(cells, sizeof(double));
    g->begins = calloc(cells, sizeof(double));
    g->sorted = calloc((size_t)opt(a)->passes, sizeof(double));
    if (!g->driver_s || !g->event_s || !g->begins || !g->sorted)
        cbk_fail(c, CBK_EXIT_FAILED, "gpumem: out of memory");
    return 0;
}

static const char *launch(struct gpumem *g, int kernel)
{
    const struct cbk_gpu_runtime *rt = g->rt;
    if (kernel == DOT)
        return rt->dot(g->a, g->b, g->n, g->partial_device, g->partial_host, &g->last_dot, g->stream);
    static const enum cbk_gpu_stream_op ops[] = { CBK_GPU_COPY, CBK_GPU_SCALE, CBK_GPU_ADD, CBK_GPU_TRIAD };
    return rt->stream_op(ops[kernel], g->a, g->b, g->c, scalar, g->n, g->stream);
}

/* One kernel alone: events around the launch, the driver's clock from
 * launch to the end of the synchronisation (BabelStream's timing). */
static const char *time_kernel(struct gpumem *g, struct cbk_ctx *c, int kernel, double *begin_s, double *driver_s,
                               double *event_s)
{
    const struct cbk_gpu_runtime *rt = g->rt;
    const char *err;
    *begin_s = cbk_now(c);
    if ((err = rt->event_record(g->before, g->stream)) || (err = launch(g, kernel)) ||
        (err = rt->event_record(g->after, g->stream)) || (err = rt->sync(g->stream)))
        return err;
    *driver_s = cbk_now(c) - *begin_s;
    return rt->event_elapsed_s(g->before, g->after, event_s);
}

/* checkSTREAMresults: replay the passes on scalars and compare each array's
 * average absolute error, relative to its expected value, with 1e-13; the
 * dot (BabelStream's check) against n a b within 1e-8. */
static int check_results(struct gpumem *g, struct cbk_ctx *c, int passes, double err[4])
{
    double aj = 2.0, bj = 2.0, cj = 0.0;
    for (int k = 0; k < passes; k++) {
        cj = aj;
        bj = scalar * cj;
        cj = aj + bj;
        aj = bj + scalar * cj;
    }
    const double expect[3] = { aj, bj, cj };
    double *arrays[3] = { g->a, g->b, g->c };
    int bad = 0;
    for (int i = 0; i < 3; i++) {
        double sum = 0;
        must(c, g->rt->abs_error_sum(arrays[i], expect[i], g->n, g->partial_device, g->partial_host, &sum, g->stream),
             "checking the arrays");
        err[i] = sum / (double)g->n / fabs(expect[i]);
        bad += !(err[i] <= 1e-13);
    }
    double dot_expect = aj * bj * (double)g->n;
    err[3] = fabs(g->last_dot - dot_expect) / fabs(dot_expect);
    bad += !(err[3] <= 1e-8);
    return bad;
}

static int compare_doubles(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

static double median_of(double *v, int m)
{
    qsort(v, (size_t)m, sizeof v[0], compare_doubles);
    return m % 2 ? v[m / 2] : 0.5 * (v[m / 2 - 1] + v[m / 2]);
}

static void report(const struct cbk_args *a, struct cbk_ctx *c, struct gpumem *g, int q, int bad, const double err[4])
{
    const int passes = (int)opt(a)->passes;
    int m = 0, best_k = 1;
    double best_event = INFINITY;
    for (int k = 1; k < passes; k++) { /* first pass dropped, as STREAM does */
        double t = g->driver_s[(size_t)k * KERNELS + q];
        g->sorted[m++] = t;
        if (t < g->driver_s[(size_t)best_k * KERNELS + q])
            best_k = k;
        if (g->event_s[(size_t)k * KERNELS + q] < best_event)
            best_event = g->event_s[(size_t)k * KERNELS + q];
    }
    double median = median_of(g->sorted, m);
    double best = g->sorted[0], worst = g->sorted[m - 1];
    uint64_t bytes = (uint64_t)arrays_touched[q] * sizeof(double) * g->n;
    struct cbk_phase p = { .phase = names[q], .bytes = bytes, .ops = g->n };
    cbk_phase_qualifier(&p, "statistic", "best");
    p.begin_s = g->begins[(size_t)best_k * KERNELS + q];
    p.end_s = p.begin_s + best;
    cbk_phase_field(&p, CBK_TEXT("method", "based on a variant of the STREAM benchmark, on GPU memory as BabelStream runs it"));
    cbk_phase_field(&p, CBK_REAL("best_mb_per_s", (double)bytes / best / 1e6));
    cbk_phase_field(&p, CBK_REAL("median_mb_per_s", (double)bytes / median / 1e6));
    cbk_phase_field(&p, CBK_REAL("event_best_mb_per_s", (double)bytes / best_event / 1e6));
    cbk_phase_field(&p, CBK_REAL("min_time_s", best));
    cbk_phase_field(&p, CBK_REAL("max_time_s", worst));
    cbk_phase_field(&p, CBK_REAL("event_min_time_s", best_event));
    if (g->device.memory_peak_gb_per_s > 0) {
        cbk_phase_field(&p, CBK_REAL("memory_peak_gb_per_s", g->device.memory_peak_gb_per_s));
        cbk_phase_field(&p, CBK_REAL("fraction_of_peak", (double)bytes / best / 1e9 / g->device.memory_peak_gb_per_s));
    }
    cbk_phase_field(&p, CBK_I64("passes", passes));
    cbk_phase_field(&p, CBK_I64("passes_counted", m));
    cbk_phase_field(&p, CBK_U64("array_elements", g->n));
    cbk_phase_field(&p, CBK_U64("array_bytes", g->n * sizeof(double)));
    cbk_phase_field(&p, CBK_TEXT("array_size_source", g->size_source));
    cbk_phase_field(&p, CBK_TEXT("gpu_name", g->device.name));
    cbk_phase_field(&p, CBK_TEXT("gpu_bus_id", g->device.bus_id));
    cbk_phase_field(&p, CBK_TEXT("gpu_runtime", g->rt->name));
    cbk_phase_field(&p, CBK_TEXT("gpu_driver_version", g->device.driver_version));
    cbk_phase_field(&p, CBK_TEXT("gpu_runtime_version", g->device.runtime_version));
    cbk_phase_field(&p, CBK_U64("gpu_memory_bytes", g->device.memory_bytes));
    cbk_phase_field(&p, CBK_BOOL("validated", bad == 0));
    cbk_phase_field(&p, CBK_REAL("avg_rel_error_a", err[0]));
    cbk_phase_field(&p, CBK_REAL("avg_rel_error_b", err[1]));
    cbk_phase_field(&p, CBK_REAL("avg_rel_error_c", err[2]));
    cbk_phase_field(&p, CBK_REAL("rel_error_dot", err[3]));
    if (best < 20.0 * c->timer_resolution_s)
        cbk_phase_warn(&p, "best time is under 20 clock ticks: use a larger --array-size");
    cbk_report(c, &p);
}

static int run(const struct cbk_args *a, struct cbk_ctx *c)
{
    struct gpumem *g = c->state;
    const int passes = (int)opt(a)->passes;
    /* STREAM's start: a = 1, b = 2, c = 0, then a = 2a */
    must(c, g->rt->fill(g->a, 2.0, g->n, g->stream), "filling the arrays");
    must(c, g->rt->fill(g->b, 2.0, g->n, g->stream), "filling the arrays");
    must(c, g->rt->fill(g->c, 0.0, g->n, g->stream), "filling the arrays");
    must(c, g->rt->sync(g->stream), "filling the arrays");
    cbk_barrier(c);
    for (int k = 0; k < passes; k++)
        for (int q = 0; q < KERNELS; q++) {
            size_t cell = (size_t)k * KERNELS + q;
            const char *err = time_kernel(g, c, q, &g->begins[cell], &g->driver_s[cell], &g->event_s[cell]);
            if (err)
                cbk_fail(c, CBK_EXIT_FAILED, "gpumem: %s on %s: %s", names[q], g->device.name, err);
        }
    double err[4];
    int bad = check_results(g, c, passes, err);
    for (int q = 0; q < KERNELS; q++)
        report(a, c, g, q, bad, err);
    if (bad)
        cbk_fail(c, CBK_EXIT_FAILED, "gpumem: validation failed: average relative errors a %.3e, b %.3e, c %.3e (limit 1e-13), dot %.3e (limit 1e-8)",
                 err[0], err[1], err[2], err[3]);
    return 0;
}

static void teardown(const struct cbk_args *a, struct cbk_ctx *c)
{
    (void)a;
    struct gpumem *g = c->state;
    if (!g)
        return;
    const struct cbk_gpu_runtime *rt = g->rt;
    void *device[] = { g->a, g->b, g->c, g->partial_device };
    for (int i = 0; i < 4; i++)
        if (device[i])
            rt->free_device(device[i]);
    if (g->partial_host)
        rt->free_pinned(g->partial_host);
    if (g->stream)
        rt->stream_destroy(g->stream);
    if (g->before)
        rt->event_destroy(g->before);
    if (g->after)
        rt->event_destroy(g->after);
    free(g->driver_s);
    free(g->event_s);
    free(g->begins);
    free(g->sorted);
    free(g);
    c->state = NULL;
}

const struct cbk_kernel cbk_kernel_gpumem = {
    .name = "gpumem",
    .summary = "GPU memory bandwidth: copy, scale, add, triad and dot on device arrays; based on a variant of the STREAM benchmark",
    .family = CBK_FAMILY_GPU,
    .flags = CBK_PARALLEL,
    .params = params,
    .options_size = sizeof(OPT),
    .validate = validate,
    .setup = setup,
    .run = run,
    .teardown = teardown,
};
