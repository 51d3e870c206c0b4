/* gpupeer: copies between the GPUs of one node, as nvbandwidth's
 * device_to_device_memcpy_*_ce cases and CUDA's p2pBandwidthLatencyTest
 * measure them: for each pair of GPUs one way (unidir) and both ways at
 * once (bidir, two streams, bytes of both counted), with peer access on
 * (the copy goes over NVLink or PCIe straight into the other GPU's memory)
 * and off (the driver stages it through host memory). A pair whose GPUs
 * cannot reach each other (cudaDeviceCanAccessPeer says no) is measured
 * staged either way and says so. Each measurement is `iterations` copies
 * of --size back to back, issued on the source GPU's stream, timed by the
 * driver's clock and by events, as gpucopy times its copies; then the
 * destination is read back and compared with its source.
 *
 * One process sees every GPU of the node (no --gpus-per-rank binding);
 * with fewer than two visible it refuses in one line. Method:
 * docs/kernels/gpupeer.md. */
#include "gpu_runtime.h"

#include "../core/cbk.h"
#include "../core/params.h"
#include "../core/pattern.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_GPUS 64
#define MAX_SIZE_TEXT "16g"

enum pairs { PAIRS_ALL, PAIRS_ADJACENT };
static const char *const pairs_names[] = { "all", "adjacent", NULL };
enum peer { PEER_ON, PEER_OFF };
static const char *const peer_names[] = { "on", "off", NULL };
enum direction { UNIDIR, BIDIR };
static const char *const direction_names[] = { "unidir", "bidir", NULL };
/* each direction's phase as a report prints it (the record keeps the name) */
static const struct cbk_phase_words phase_words[] = {
    { "unidir", "one way" }, { "bidir", "both ways" }, { NULL, NULL },
};

struct gpupeer_options {
    enum pairs pairs;
    struct cbk_choice_list peer;
    struct cbk_choice_list directions;
    uint64_t size;
    int64_t iterations, warmup;
};
#define OPT struct gpupeer_options
static const OPT *opt(const struct cbk_args *a) { return cbk_options(a); }

static const struct cbk_param params[] = {
    { .name = "pairs", CBK_AT_CHOICE(OPT, pairs, pairs_names), .default_value = "all",
      .help = "all = every pair of GPUs (unidir: both orders); adjacent = GPU i with GPU i+1 only (a quick pass on many GPUs)" },
    { .name = "peer", CBK_AT_CHOICE_LIST(OPT, peer, peer_names), .default_value = "on,off",
      .help = "on = peer access enabled: the copy goes straight into the other GPU's memory (NVLink or PCIe); "
              "off = disabled: the driver stages the copy through host memory" },
    { .name = "direction", CBK_AT_CHOICE_LIST(OPT, directions, direction_names), .default_value = "unidir,bidir",
      .help = "unidir = one GPU copies to the other; bidir = both copy to each other at once on two streams (bytes of both counted)" },
    { .name = "size", CBK_AT_SIZE(OPT, size), .default_value = "256m", .unit = "bytes", .min = "4k", .max = MAX_SIZE_TEXT,
      .help = "bytes per copy; every GPU holds two buffers of this size" },
    { .name = "iterations", CBK_AT_INT(OPT, iterations), .default_value = "20", .unit = "count", .min = "1", .max = "1000000",
      .help = "timed copies per measurement, back to back" },
    { .name = "warmup", CBK_AT_INT(OPT, warmup), .default_value = "3", .unit = "count", .min = "0", .max = "1000000",
      .help = "untimed copies before each measurement's timed ones" },
    { 0 },
};

struct gpu {
    struct cbk_gpu_device_info info;
    void *src, *dst;              /* src holds this GPU's own pattern */
    cbk_gpu_stream stream;
    cbk_gpu_event start, done, stop;
};

struct gpupeer {
    const struct cbk_gpu_runtime *rt;
    int count;
    struct gpu gpu[MAX_GPUS];
    size_t buffer_bytes;          /* --size rounded up to whole pattern units */
    unsigned char *expect, *got;  /* host copies for the comparison */
};

static void must(struct cbk_ctx *c, const char *err, const char *what)
{
    if (err)
        cbk_fail(c, CBK_EXIT_FAILED, "gpupeer: %s: %s", what, err);
}

/* The parameter table's bounds are checked before this; here the devices,
 * so a node with one GPU refuses before anything is stored. */
static int validate(const struct cbk_args *a, struct cbk_ctx *c, char *why, size_t len)
{
    (void)a, (void)c;
    const struct cbk_gpu_runtime *rt = cbk_gpu_runtime();
    if (rt->probe(why, len))
        return -1;
    int n = rt->device_count();
    if (n < 2) {
        const char *visible = getenv("CUDA_VISIBLE_DEVICES");
        snprintf(why, len, "gpupeer copies between GPUs and this process sees %d%s%s%s: run it on a node with "
                 "several GPUs, as one process without --gpus-per-rank", n, visible ? " (CUDA_VISIBLE_DEVICES=" : "",
                 visible ? visible : "", visible ? ")" : "");
        return -1;
    }
    if (n > MAX_GPUS) {
        snprintf(why, len, "gpupeer handles up to %d GPUs in one process, this one sees %d", MAX_GPUS, n);
        return -1;
    }
    return 0;
}

static int setup(const struct cbk_args *a, struct cbk_ctx *c)
{
    struct gpupeer *g = calloc(1, sizeof *g);
    if (!g)
        cbk_fail(c, CBK_EXIT_FAILED, "gpupeer: out of memory");
    c->state = g;
    g->rt = cbk_gpu_runtime();
    g->count = g->rt->device_count();
    uint64_t size = opt(a)->size;
    g->buffer_bytes = (size_t)((size + CBK_PATTERN_UNIT - 1) / CBK_PATTERN_UNIT * CBK_PATTERN_UNIT);
    if (posix_memalign((void **)&g->expect, CBK_PATTERN_UNIT, g->buffer_bytes) ||
        posix_memalign((void **)&g->got, CBK_PATTERN_UNIT, g->buffer_bytes))
        cbk_fail(c, CBK_EXIT_FAILED, "gpupeer: out of host memory for two buffers of %zu bytes", g->buffer_bytes);
    char b1[32], b2[32];
    for (int d = 0; d < g->count; d++) {
        struct gpu *u = &g->gpu[d];
        must(c, g->rt->device_info_at(d, &u->info), "reading a device's properties");
        if (2 * (uint64_t)g->buffer_bytes > u->info.free_bytes)
            cbk_fail(c, CBK_EXIT_BAD_INPUT, "gpupeer: two buffers of %s do not fit the %s free on GPU %d (%s): lower --size",
                     cbk_format_size(g->buffer_bytes, b1, sizeof b1), cbk_format_size(u->info.free_bytes, b2, sizeof b2),
                     d, u->info.name);
        must(c, g->rt->select_device(d), "selecting a GPU");
        must(c, g->rt->alloc_device(&u->src, g->buffer_bytes), "allocating device memory");
        must(c, g->rt->alloc_device(&u->dst, g->buffer_bytes), "allocating device memory");
        must(c, g->rt->stream_create(&u->stream), "creating a stream");
        must(c, g->rt->event_create(&u->start), "creating an event");
        must(c, g->rt->event_create(&u->done), "creating an event");
        must(c, g->rt->event_create(&u->stop), "creating an event");
        /* each GPU's own data: a copy from the wrong GPU cannot pass the check */
        struct cbk_pattern pattern;
        if (cbk_pattern_init(&pattern, c->run_id, (uint32_t)d, g->buffer_bytes))
            cbk_fail(c, CBK_EXIT_FAILED, "gpupeer: out of memory for the data pattern");
        cbk_pattern_fill(&pattern, g->expect, 0);
        cbk_pattern_free(&pattern);
        must(c, g->rt->copy_sync(u->src, g->expect, g->buffer_bytes), "loading a GPU's source buffer");
    }
    must(c, g->rt->select_device(0), "selecting a GPU");
    return 0;
}

/* Peer access between a and b, both ways, as asked; whether it can be had. */
static bool set_peer(const struct gpupeer *g, struct cbk_ctx *c, int a, int b, bool on)
{
    bool ab = false, ba = false;
    must(c, g->rt->peer_access(a, b, on, &ab), "setting peer access");
    must(c, g->rt->peer_access(b, a, on, &ba), "setting peer access");
    return ab && ba;
}

/* `count` copies from `from` to `to` on the source's stream; for bidir the
 * same from `to` to `from` on its stream at once. Returns the driver's
 * begin and end and the events' seconds. */
static const char *timed(const struct gpupeer *g, struct cbk_ctx *c, int from, int to, bool both, size_t bytes,
                         int64_t count, double *begin_s, double *end_s, double *event_s)
{
    const struct cbk_gpu_runtime *rt = g->rt;
    const struct gpu *s = &g->gpu[from], *t = &g->gpu[to];
    const char *err = NULL;
    if ((err = rt->select_device(from)) || (err = rt->event_record(s->start, s->stream)))
        return err;
    if (both && ((err = rt->select_device(to)) || (err = rt->stream_wait(t->stream, s->start))))
        return err;
    *begin_s = cbk_now(c);
    for (int64_t i = 0; i < count && !err; i++) {
        if (!(err = rt->select_device(from)))
            err = rt->copy_peer_async(t->dst, to, s->src, from, bytes, s->stream);
        if (!err && both && !(err = rt->select_device(to)))
            err = rt->copy_peer_async(s->dst, from, t->src, to, bytes, t->stream);
    }
    /* the source's stream waits for the other leg, so its stop event closes both */
    if (!err && both && !(err = rt->select_device(to)))
        err = rt->event_record(t->done, t->stream);
    if (!err)
        err = rt->select_device(from);
    if (!err && both)
        err = rt->stream_wait(s->stream, t->done);
    if (!err && !(err = rt->event_record(s->stop, s->stream)))
        err = rt->sync(s->stream);
    *end_s = cbk_now(c);
    return err ? err : rt->event_elapsed_s(s->start, s->stop, event_s);
}

/* copy_sync waits for the current device: make it the buffer's own, so a
 * clearing copy has landed before the timed copies start. */
static void copy_on(const struct gpupeer *g, struct cbk_ctx *c, int device, void *dst, const void *src, size_t bytes,
                    const char *what)
{
    must(c, g->rt->select_device(device), "selecting a GPU");
    must(c, g->rt->copy_sync(dst, src, bytes), what);
}

/* The destination of from -> to holds from's source bytes. */
static bool arrived(const struct gpupeer *g, struct cbk_ctx *c, int from, int to, size_t bytes)
{
    copy_on(g, c, from, g->expect, g->gpu[from].src, bytes, "reading a source buffer back");
    copy_on(g, c, to, g->got, g->gpu[to].dst, bytes, "reading a destination buffer back");
    return !memcmp(g->expect, g->got, bytes);
}

/* Destinations cleared before each measurement, so old data cannot pass. */
static void clear(const struct gpupeer *g, struct cbk_ctx *c, int d, size_t bytes)
{
    memset(g->got, 0, bytes);
    copy_on(g, c, d, g->gpu[d].dst, g->got, bytes, "clearing a destination buffer");
}

static void measure(const struct cbk_args *a, struct cbk_ctx *c, const struct gpupeer *g, int from, int to,
                    enum direction d, enum peer peer)
{
    const OPT *o = opt(a);
    size_t bytes = (size_t)o->size;
    bool both = d == BIDIR, on = peer == PEER_ON;
    bool possible = set_peer(g, c, from, to, on);
    clear(g, c, to, bytes);
    if (both)
        clear(g, c, from, bytes);
    const char *err = NULL;
    for (int64_t i = 0; i < o->warmup && !err; i++)
        if (!(err = g->rt->select_device(from)))
            err = g->rt->copy_peer_async(g->gpu[to].dst, to, g->gpu[from].src, from, bytes, g->gpu[from].stream);
    if (!err && !(err = g->rt->select_device(from)))
        err = g->rt->sync(g->gpu[from].stream);
    cbk_barrier(c);
    double begin_s = 0, end_s = 0, event_s = 0;
    if (!err)
        err = timed(g, c, from, to, both, bytes, o->iterations, &begin_s, &end_s, &event_s);
    if (err)
        cbk_fail(c, CBK_EXIT_FAILED, "gpupeer: %s copy of %zu bytes between GPU %d and GPU %d, peer access %s: %s",
                 direction_names[d], bytes, from, to, peer_names[peer], err);
    bool ok = arrived(g, c, from, to, bytes) && (!both || arrived(g, c, to, from, bytes));

    int legs = both ? 2 : 1;
    uint64_t moved = (uint64_t)bytes * (uint64_t)o->iterations * (uint64_t)legs;
    double driver_s = end_s - begin_s;
    char gpus[32];
    snprintf(gpus, sizeof gpus, both ? "%d<>%d" : "%d>%d", from, to);
    const struct gpu *s = &g->gpu[from], *t = &g->gpu[to];
    struct cbk_phase p = { .phase = direction_names[d], .bytes = moved, .ops = (uint64_t)(o->iterations * legs),
                           .begin_s = begin_s, .end_s = end_s };
    cbk_phase_qualifier(&p, "gpus", gpus);
    cbk_phase_qualifier(&p, "peer", peer_names[peer]);
    cbk_phase_field(&p, CBK_I64("src_gpu", from));
    cbk_phase_field(&p, CBK_I64("dst_gpu", to));
    cbk_phase_field(&p, CBK_U64("copy_bytes", bytes));
    cbk_phase_field(&p, CBK_I64("copies", o->iterations));
    cbk_phase_field(&p, CBK_BOOL("peer_possible", possible));
    cbk_phase_field(&p, CBK_BOOL("peer_direct", on && possible));
    cbk_phase_field(&p, CBK_REAL("driver_seconds", driver_s));
    cbk_phase_field(&p, CBK_REAL("driver_gb_per_s", driver_s > 0 ? moved / driver_s / 1e9 : 0));
    cbk_phase_field(&p, CBK_REAL("event_seconds", event_s));
    cbk_phase_field(&p, CBK_REAL("event_gb_per_s", event_s > 0 ? moved / event_s / 1e9 : 0));
    cbk_phase_field(&p, CBK_REAL("event_latency_us", event_s / (double)o->iterations * 1e6));
    cbk_phase_field(&p, CBK_TEXT("src_gpu_name", s->info.name));
    cbk_phase_field(&p, CBK_TEXT("src_gpu_bus_id", s->info.bus_id));
    cbk_phase_field(&p, CBK_TEXT("dst_gpu_name", t->info.name));
    cbk_phase_field(&p, CBK_TEXT("dst_gpu_bus_id", t->info.bus_id));
    cbk_phase_field(&p, CBK_TEXT("gpu_runtime", g->rt->name));
    cbk_phase_field(&p, CBK_TEXT("gpu_driver_version", s->info.driver_version));
    cbk_phase_field(&p, CBK_TEXT("gpu_runtime_version", s->info.runtime_version));
    cbk_phase_field(&p, CBK_BOOL("validated", ok));
    if (on && !possible)
        cbk_phase_warn(&p, "these two GPUs cannot reach each other's memory (cudaDeviceCanAccessPeer says no): the "
                           "driver staged the copy through host memory, as with --peer=off");
    if (driver_s < 20.0 * c->timer_resolution_s)
        cbk_phase_warn(&p, "the copies took under 20 clock ticks: raise --iterations or --size");
    cbk_report(c, &p);
    if (!ok)
        cbk_fail(c, CBK_EXIT_FAILED, "gpupeer: validation failed: after the %s copies of %zu bytes between GPU %d and "
                 "GPU %d (peer access %s) a destination differs from its source", direction_names[d], bytes, from, to,
                 peer_names[peer]);
}

static int run(const struct cbk_args *a, struct cbk_ctx *c)
{
    const struct gpupeer *g = c->state;
    const OPT *o = opt(a);
    for (int di = 0; di < o->directions.count; di++) {
        enum direction d = (enum direction)o->directions.index[di];
        for (int pi = 0; pi < o->peer.count; pi++)
            for (int i = 0; i < g->count; i++)
                for (int j = 0; j < g->count; j++) {
                    bool adjacent = j == i + 1 || (d == UNIDIR && j == i - 1);
                    bool wanted = o->pairs == PAIRS_ALL ? i != j && (d == UNIDIR || i < j) : adjacent;
                    if (wanted)
                        measure(a, c, g, i, j, d, (enum peer)o->peer.index[pi]);
                }
    }
    return 0;
}

static void teardown(const struct cbk_args *a, struct cbk_ctx *c)
{
    (void)a;
    struct gpupeer *g = c->state;
    if (!g)
        return;
    const struct cbk_gpu_runtime *rt = g->rt;
    for (int d = 0; d < g->count; d++) {
        struct gpu *u = &g->gpu[d];
        if (rt->select_device(d))
            continue;
        if (u->src)
            rt->free_device(u->src);
        if (u->dst)
            rt->free_device(u->dst);
        if (u->stream)
            rt->stream_destroy(u->stream);
        cbk_gpu_event events[] = { u->start, u->done, u->stop };
        for (int i = 0; i < 3; i++)
            if (events[i])
                rt->event_destroy(events[i]);
    }
    free(g->expect);
    free(g->got);
    free(g);
    c->state = NULL;
}

const struct cbk_kernel cbk_kernel_gpupeer = {
    .name = "gpupeer",
    .summary = "copy bandwidth between the GPUs of one node, one way and both ways, peer access on and off "
               "(nvbandwidth's device-to-device cases)",
    .family = CBK_FAMILY_GPU,
    .phase_words = phase_words,
    .params = params,
    .options_size = sizeof(OPT),
    .validate = validate,
    .setup = setup,
    .run = run,
    .teardown = teardown,
};
