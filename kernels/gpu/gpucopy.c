/* gpucopy: copies between host and GPU memory over the node's link, as
 * nvbandwidth and CUDA's bandwidthTest measure them: host-to-device,
 * device-to-host and both at once (two streams, nvbandwidth's
 * bidirectional cases), and device-to-device within the GPU (bytes counted
 * once, as nvbandwidth and bandwidthTest count them; twice that crosses the
 * GPU's memory), from pinned or pageable host memory, by the copy
 * engine (cudaMemcpyAsync) or by a kernel on the GPU's cores reading or
 * writing mapped host memory (nvbandwidth's _sm cases), over a sweep of
 * sizes. Each size is `count` copies back to back on one stream, timed by
 * the driver's clock (cbk_now() around issue and synchronisation: what a
 * program waiting for its copies sees) and by events recorded on the
 * stream (the GPU's own time, without launch latency, as nvbandwidth
 * reports); the record carries both. Every destination is compared with
 * its source after the timed copies. Method: docs/kernels/gpucopy.md. */
#include "gpu_runtime.h"

#include "../core/cbk.h"
#include "../core/params.h"
#include "../core/pattern.h"

#include <stdlib.h>
#include <string.h>

#define MAX_SIZES 64
#define MAX_SIZE_TEXT "16g"

enum direction { H2D, D2H, BIDIR, D2D, DIRECTIONS };
static const char *const direction_names[] = { "h2d", "d2h", "bidir", "d2d", NULL };
/* each direction's phase as a report prints it (the record keeps the name) */
static const struct cbk_phase_words phase_words[] = {
    { "h2d", "host to device" }, { "d2h", "device to host" }, { "bidir", "both directions" },
    { "d2d", "device to device" }, { NULL, NULL },
};
enum host_memory { PINNED, PAGEABLE, HOST_MEMORIES };
static const char *const host_memory_names[] = { "pinned", "pageable", NULL };
enum engine { ENGINE_COPY, ENGINE_KERNEL };
static const char *const engine_names[] = { "copy", "kernel", NULL };

struct gpucopy_options {
    struct cbk_choice_list directions;
    struct cbk_choice_list host_memory;
    struct cbk_choice_list engines;
    uint64_t min_size, max_size;
    const char *sizes;
    int64_t iterations, min_iterations, warmup;
    uint64_t volume;
};
#define OPT struct gpucopy_options
static const OPT *opt(const struct cbk_args *a) { return cbk_options(a); }

static const struct cbk_param params[] = {
    { .name = "direction", CBK_AT_CHOICE_LIST(OPT, directions, direction_names), .default_value = "h2d,d2h,bidir,d2d",
      .help = "h2d = host to device, d2h = device to host, bidir = both at once on two streams (bytes of both counted), "
              "d2d = device to device within the GPU (host memory does not apply: measured once)" },
    { .name = "host-memory", CBK_AT_CHOICE_LIST(OPT, host_memory, host_memory_names), .default_value = "pinned,pageable",
      .help = "pinned = page-locked (cudaHostAlloc): the link's rate; pageable = malloc: the driver stages it, as most programs copy" },
    { .name = "engine", CBK_AT_CHOICE_LIST(OPT, engines, engine_names), .default_value = "copy",
      .help = "copy = the GPU's copy engine (cudaMemcpyAsync); kernel = a copy kernel on the GPU's cores over mapped pinned memory" },
    { .name = "min-size", CBK_AT_SIZE(OPT, min_size), .default_value = "8", .unit = "bytes", .min = "1", .max = MAX_SIZE_TEXT,
      .help = "smallest copy of the power-of-two sweep" },
    { .name = "max-size", CBK_AT_SIZE(OPT, max_size), .default_value = "256m", .unit = "bytes", .min = "1", .max = MAX_SIZE_TEXT,
      .help = "largest copy of the power-of-two sweep" },
    { .name = "sizes", CBK_AT_STRING(OPT, sizes), .default_value = "powers-of-two", .keyword = "powers-of-two", .unit = "bytes",
      .help = "comma-separated increasing copy sizes (e.g. 8,64k,1m,256m) instead of the min-size..max-size sweep" },
    { .name = "iterations", CBK_AT_INT(OPT, iterations), .default_value = "1000", .unit = "count", .min = "1", .max = "1000000",
      .help = "timed copies per size at small sizes; fewer at large sizes (see volume)" },
    { .name = "min-iterations", CBK_AT_INT(OPT, min_iterations), .default_value = "10", .unit = "count", .min = "1", .max = "1000000",
      .help = "timed copies per size never drop below this" },
    { .name = "volume", CBK_AT_SIZE(OPT, volume), .default_value = "2g", .unit = "bytes", .min = "1",
      .help = "timed copies per size = volume / size, between min-iterations and iterations" },
    { .name = "warmup", CBK_AT_INT(OPT, warmup), .default_value = "5", .unit = "count", .min = "0", .max = "1000000",
      .help = "untimed copies before each size's timed ones" },
    { 0 },
};

struct plan {
    int sizes;
    uint64_t size[MAX_SIZES];
};

struct gpucopy {
    const struct cbk_gpu_runtime *rt;
    struct cbk_gpu_device_info device;
    struct plan plan;
    size_t buffer_bytes;               /* the largest size, rounded up to whole pattern units */
    unsigned char *host_src[HOST_MEMORIES], *host_dst[HOST_MEMORIES];
    unsigned char *check;              /* pageable: a device buffer read back for comparison */
    void *dev_src, *dev_dst;
    cbk_gpu_stream stream[2];
    cbk_gpu_event start, leg_done, stop;
};

static int plan_sizes(const struct cbk_args *a, struct plan *p, char *why, size_t len)
{
    uint64_t limit;
    cbk_parse_size(MAX_SIZE_TEXT, &limit);
    char b1[32], b2[32];
    p->sizes = 0;
    const char *list = opt(a)->sizes;
    if (list) {
        char buf[1024];
        if (cbk_check_list("sizes", list, sizeof buf, why, len))
            return -1;
        snprintf(buf, sizeof buf, "%s", list);
        for (char *save, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
            uint64_t v;
            if (cbk_parse_size(tok, &v) || v == 0) {
                snprintf(why, len, "--sizes: '%s' is not a size of at least 1 byte (use e.g. 8,64k,1m,256m)", tok);
                return -1;
            }
            if (v > limit) {
                snprintf(why, len, "--sizes: %s is larger than the limit of %s", tok, MAX_SIZE_TEXT);
                return -1;
            }
            if (p->sizes && v <= p->size[p->sizes - 1]) {
                snprintf(why, len, "--sizes must increase: %s follows %s", cbk_format_size(v, b1, sizeof b1),
                         cbk_format_size(p->size[p->sizes - 1], b2, sizeof b2));
                return -1;
            }
            if (p->sizes == MAX_SIZES) {
                snprintf(why, len, "--sizes lists more than %d sizes", MAX_SIZES);
                return -1;
            }
            p->size[p->sizes++] = v;
        }
        if (!p->sizes) {
            snprintf(why, len, "--sizes lists no size (use e.g. 8,64k,1m,256m)");
            return -1;
        }
        return 0;
    }
    uint64_t lo = opt(a)->min_size, hi = opt(a)->max_size;
    if (lo > hi) {
        snprintf(why, len, "--min-size=%s is larger than --max-size=%s", cbk_format_size(lo, b1, sizeof b1),
                 cbk_format_size(hi, b2, sizeof b2));
        return -1;
    }
    for (uint64_t v = lo; v <= hi && p->sizes < MAX_SIZES; v *= 2)
        p->size[p->sizes++] = v;
    return 0;
}

static bool listed(const struct cbk_choice_list *l, int choice)
{
    for (int i = 0; i < l->count; i++)
        if (l->index[i] == choice)
            return true;
    return false;
}

/* Parameters first, so `cbk --check` names a bad one on any host; then the
 * device, so a host without a GPU refuses before anything is stored. */
static int validate(const struct cbk_args *a, struct cbk_ctx *c, char *why, size_t len)
{
    (void)c;
    const OPT *o = opt(a);
    struct plan p;
    if (plan_sizes(a, &p, why, len))
        return -1;
    if (o->min_iterations > o->iterations) {
        snprintf(why, len, "--min-iterations=%lld is more than --iterations=%lld", (long long)o->min_iterations,
                 (long long)o->iterations);
        return -1;
    }
    if (listed(&o->engines, ENGINE_KERNEL) && listed(&o->host_memory, PAGEABLE)) {
        snprintf(why, len, "--engine=kernel reads host memory mapped into the GPU, which must be pinned: "
                 "use --host-memory=pinned with it (or measure pageable copies with --engine=copy alone)");
        return -1;
    }
    return cbk_gpu_runtime()->probe(why, len) ? -1 : 0;
}

static void *host_alloc(struct gpucopy *g, struct cbk_ctx *c, enum host_memory m)
{
    void *p = NULL;
    const char *err = NULL;
    if (m == PINNED)
        err = g->rt->alloc_pinned(&p, g->buffer_bytes);
    else if (posix_memalign(&p, CBK_PATTERN_UNIT, g->buffer_bytes))
        err = "out of memory";
    if (err) {
        char b[32];
        cbk_fail(c, CBK_EXIT_FAILED, "gpucopy: cannot allocate %s of %s host memory: %s",
                 cbk_format_size(g->buffer_bytes, b, sizeof b), host_memory_names[m], err);
    }
    return p;
}

static void must(struct cbk_ctx *c, const char *err, const char *what)
{
    if (err)
        cbk_fail(c, CBK_EXIT_FAILED, "gpucopy: %s: %s", what, err);
}

static int setup(const struct cbk_args *a, struct cbk_ctx *c)
{
    struct gpucopy *g = calloc(1, sizeof *g);
    if (!g)
        cbk_fail(c, CBK_EXIT_FAILED, "gpucopy: out of memory");
    c->state = g;
    g->rt = cbk_gpu_runtime();
    char why[256];
    if (plan_sizes(a, &g->plan, why, sizeof why))
        cbk_fail(c, CBK_EXIT_BAD_INPUT, "gpucopy: %s", why);
    must(c, g->rt->device_info(&g->device), "reading the device's properties");
    uint64_t largest = g->plan.size[g->plan.sizes - 1];
    g->buffer_bytes = (size_t)((largest + CBK_PATTERN_UNIT - 1) / CBK_PATTERN_UNIT * CBK_PATTERN_UNIT);
    char b1[32], b2[32];
    if (2 * (uint64_t)g->buffer_bytes > g->device.free_bytes)
        cbk_fail(c, CBK_EXIT_BAD_INPUT, "gpucopy: two device buffers of %s do not fit the %s free on %s: lower --max-size",
                 cbk_format_size(g->buffer_bytes, b1, sizeof b1), cbk_format_size(g->device.free_bytes, b2, sizeof b2),
                 g->device.name);

    struct cbk_pattern pattern;
    if (cbk_pattern_init(&pattern, c->run_id, (uint32_t)c->rank, g->buffer_bytes))
        cbk_fail(c, CBK_EXIT_FAILED, "gpucopy: out of memory for the data pattern");
    const OPT *o = opt(a);
    for (int m = 0; m < HOST_MEMORIES; m++) {
        if (!listed(&o->host_memory, m))
            continue;
        g->host_src[m] = host_alloc(g, c, (enum host_memory)m);
        g->host_dst[m] = host_alloc(g, c, (enum host_memory)m);
        cbk_pattern_fill(&pattern, g->host_src[m], 0);
    }
    cbk_pattern_free(&pattern);
    g->check = host_alloc(g, c, PAGEABLE);
    must(c, g->rt->alloc_device(&g->dev_src, g->buffer_bytes), "allocating device memory");
    must(c, g->rt->alloc_device(&g->dev_dst, g->buffer_bytes), "allocating device memory");
    const unsigned char *pattern_copy = g->host_src[PINNED] ? g->host_src[PINNED] : g->host_src[PAGEABLE];
    must(c, g->rt->copy_sync(g->dev_src, pattern_copy, g->buffer_bytes), "loading the device's source buffer");
    for (int s = 0; s < 2; s++)
        must(c, g->rt->stream_create(&g->stream[s]), "creating a stream");
    must(c, g->rt->event_create(&g->start), "creating an event");
    must(c, g->rt->event_create(&g->leg_done), "creating an event");
    must(c, g->rt->event_create(&g->stop), "creating an event");
    return 0;
}

/* One copy of one leg (h2d, d2h or d2d) on stream `s`; NULL or the runtime's error. */
static const char *issue(const struct gpucopy *g, enum direction leg, enum host_memory m, enum engine e,
                         size_t bytes, cbk_gpu_stream s)
{
    void *dst = leg == D2H ? (void *)g->host_dst[m] : g->dev_dst;
    const void *src = leg == H2D ? (const void *)g->host_src[m] : g->dev_src;
    return e == ENGINE_KERNEL ? g->rt->copy_kernel_async(dst, src, bytes, s) : g->rt->copy_async(dst, src, bytes, s);
}

/* `count` rounds of copies: one leg on stream 0, or for bidir h2d on stream
 * 0 and d2h on stream 1 starting together. Returns the driver's seconds
 * (begin and end in begin_s and end_s) and the events' seconds. */
static const char *timed(const struct gpucopy *g, struct cbk_ctx *c, enum direction d, enum host_memory m,
                         enum engine e, size_t bytes, int64_t count, double *begin_s, double *end_s, double *event_s)
{
    const struct cbk_gpu_runtime *rt = g->rt;
    const char *err = NULL;
    enum direction first = d == BIDIR ? H2D : d;
    if ((err = rt->event_record(g->start, g->stream[0])) || (d == BIDIR && (err = rt->stream_wait(g->stream[1], g->start))))
        return err;
    *begin_s = cbk_now(c);
    for (int64_t i = 0; i < count && !err; i++) {
        err = issue(g, first, m, e, bytes, g->stream[0]);
        if (!err && d == BIDIR)
            err = issue(g, D2H, m, e, bytes, g->stream[1]);
    }
    if (!err && d == BIDIR && !(err = rt->event_record(g->leg_done, g->stream[1])))
        err = rt->stream_wait(g->stream[0], g->leg_done);
    if (!err)
        err = rt->event_record(g->stop, g->stream[0]);
    if (!err)
        err = rt->sync(g->stream[0]);
    *end_s = cbk_now(c);
    return err ? err : rt->event_elapsed_s(g->start, g->stop, event_s);
}

/* Every destination of this case holds its source's bytes: a copy that
 * did not happen cannot pass as a fast one. */
static bool copied(const struct gpucopy *g, struct cbk_ctx *c, enum direction d, enum host_memory m, size_t bytes)
{
    bool ok = true;
    if (d != D2H) { /* h2d, bidir and d2d write the device buffer; the device's source holds host_src's bytes */
        must(c, g->rt->copy_sync(g->check, g->dev_dst, bytes), "reading the device buffer back");
        ok = !memcmp(g->check, g->host_src[m], bytes);
    }
    if (d == D2H || d == BIDIR)
        ok = ok && !memcmp(g->host_dst[m], g->host_src[m], bytes);
    return ok;
}

/* Destinations cleared before each case, so old data cannot pass the check. */
static void clear(const struct gpucopy *g, struct cbk_ctx *c, enum host_memory m, size_t bytes)
{
    memset(g->check, 0, bytes);
    memset(g->host_dst[m], 0, bytes);
    must(c, g->rt->copy_sync(g->dev_dst, g->check, bytes), "clearing the device buffer");
}

static int64_t copies_for(const OPT *o, uint64_t bytes)
{
    int64_t k = (int64_t)(o->volume / bytes);
    if (k > o->iterations)
        k = o->iterations;
    return k < o->min_iterations ? o->min_iterations : k;
}

static void measure(const struct cbk_args *a, struct cbk_ctx *c, const struct gpucopy *g, enum direction d,
                    enum host_memory m, enum engine e, uint64_t size)
{
    const OPT *o = opt(a);
    size_t bytes = (size_t)size;
    int64_t count = copies_for(o, size);
    int legs = d == BIDIR ? 2 : 1;
    clear(g, c, m, bytes);
    double begin_s, end_s, event_s = 0;
    const char *err = NULL;
    for (int64_t i = 0; i < o->warmup && !err; i++)
        err = issue(g, d == BIDIR ? H2D : d, m, e, bytes, g->stream[0]);
    if (!err)
        err = g->rt->sync(g->stream[0]);
    cbk_barrier(c);
    if (!err)
        err = timed(g, c, d, m, e, bytes, count, &begin_s, &end_s, &event_s);
    if (err)
        cbk_fail(c, CBK_EXIT_FAILED, "gpucopy: %s %s copy of %zu bytes from %s memory on %s: %s", direction_names[d],
                 engine_names[e], bytes, host_memory_names[m], g->device.name, err);
    bool ok = copied(g, c, d, m, bytes);

    uint64_t moved = (uint64_t)bytes * (uint64_t)count * (uint64_t)legs;
    double driver_s = end_s - begin_s;
    struct cbk_phase p = { .phase = direction_names[d], .bytes = moved, .ops = (uint64_t)(count * legs),
                           .begin_s = begin_s, .end_s = end_s, .sweep_key = "copy_bytes" };
    cbk_phase_field(&p, CBK_U64("copy_bytes", bytes));
    cbk_phase_qualifier(&p, "host_memory", d == D2D ? "none" : host_memory_names[m]);
    cbk_phase_qualifier(&p, "engine", engine_names[e]);
    cbk_phase_field(&p, CBK_I64("copies", count));
    cbk_phase_field(&p, CBK_REAL("driver_seconds", driver_s));
    cbk_phase_field(&p, CBK_REAL("driver_gb_per_s", driver_s > 0 ? moved / driver_s / 1e9 : 0));
    cbk_phase_field(&p, CBK_REAL("driver_latency_us", driver_s / (double)count * 1e6));
    cbk_phase_field(&p, CBK_REAL("event_seconds", event_s));
    cbk_phase_field(&p, CBK_REAL("event_gb_per_s", event_s > 0 ? moved / event_s / 1e9 : 0));
    cbk_phase_field(&p, CBK_REAL("event_latency_us", event_s / (double)count * 1e6));
    if (d == D2D) /* what crossed the GPU's memory: every byte read and written */
        cbk_phase_field(&p, CBK_REAL("event_read_write_gb_per_s", event_s > 0 ? 2.0 * moved / event_s / 1e9 : 0));
    cbk_phase_field(&p, CBK_TEXT("gpu_name", g->device.name));
    cbk_phase_field(&p, CBK_TEXT("gpu_bus_id", g->device.bus_id));
    cbk_phase_field(&p, CBK_TEXT("gpu_runtime", g->rt->name));
    cbk_phase_field(&p, CBK_TEXT("gpu_driver_version", g->device.driver_version));
    cbk_phase_field(&p, CBK_TEXT("gpu_runtime_version", g->device.runtime_version));
    cbk_phase_field(&p, CBK_BOOL("validated", ok));
    if (m == PAGEABLE && d != D2D)
        cbk_phase_warn(&p, "pageable host memory: the driver stages every copy through pinned memory of its own, "
                           "so this is not the link's rate (--host-memory=pinned measures that)");
    if (driver_s < 20.0 * c->timer_resolution_s)
        cbk_phase_warn(&p, "the copies took under 20 clock ticks: raise --iterations or --volume");
    cbk_report(c, &p);
    if (!ok)
        cbk_fail(c, CBK_EXIT_FAILED, "gpucopy: validation failed: after the %s copies of %zu bytes (%s memory, %s) "
                 "a destination differs from its source", direction_names[d], bytes, host_memory_names[m], engine_names[e]);
}

static int run(const struct cbk_args *a, struct cbk_ctx *c)
{
    const struct gpucopy *g = c->state;
    const OPT *o = opt(a);
    for (int di = 0; di < o->directions.count; di++)
        for (int mi = 0; mi < o->host_memory.count; mi++) {
            if (o->directions.index[di] == D2D && mi > 0)
                break; /* no host memory in it: once */
            for (int ei = 0; ei < o->engines.count; ei++)
                for (int s = 0; s < g->plan.sizes; s++)
                    measure(a, c, g, (enum direction)o->directions.index[di], (enum host_memory)o->host_memory.index[mi],
                            (enum engine)o->engines.index[ei], g->plan.size[s]);
        }
    return 0;
}

static void teardown(const struct cbk_args *a, struct cbk_ctx *c)
{
    (void)a;
    struct gpucopy *g = c->state;
    if (!g)
        return;
    const struct cbk_gpu_runtime *rt = g->rt;
    for (int m = 0; m < HOST_MEMORIES; m++) {
        void (*release)(void *) = m == PINNED ? rt->free_pinned : free;
        if (g->host_src[m])
            release(g->host_src[m]);
        if (g->host_dst[m])
            release(g->host_dst[m]);
    }
    free(g->check);
    if (g->dev_src)
        rt->free_device(g->dev_src);
    if (g->dev_dst)
        rt->free_device(g->dev_dst);
    for (int s = 0; s < 2; s++)
        if (g->stream[s])
            rt->stream_destroy(g->stream[s]);
    cbk_gpu_event events[] = { g->start, g->leg_done, g->stop };
    for (int i = 0; i < 3; i++)
        if (events[i])
            rt->event_destroy(events[i]);
    free(g);
    c->state = NULL;
}

const struct cbk_kernel cbk_kernel_gpucopy = {
    .name = "gpucopy",
    .summary = "host-to-device, device-to-host and bidirectional copy bandwidth and latency over the GPU's link (nvbandwidth's cases)",
    .family = CBK_FAMILY_GPU,
    .flags = CBK_PARALLEL,
    .phase_words = phase_words,
    .params = params,
    .options_size = sizeof(OPT),
    .validate = validate,
    .setup = setup,
    .run = run,
    .teardown = teardown,
};
