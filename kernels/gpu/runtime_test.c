/* The test runtime behind struct cbk_gpu_runtime: host memory stands in
 * for GPU memory, so the GPU kernels' own code (size plans, the order of
 * streams and events, the check of every copy and array, the records, the
 * refusals and failures) runs in the tests of a machine without a GPU.
 * It measures no GPU: it is built only with -DCBK_GPU_TEST_RUNTIME=ON
 * (scripts/build-gpu-test-cbk.sh), its records say gpu_runtime "test" and
 * its devices "test GPU n (host memory)", and `clusterbench --version`
 * says so. Design: docs/gpu.md.
 *
 * Work runs when it is issued (a stream is a name, not a queue), so an
 * event is the time it was recorded, after all work issued before it, and
 * waits between streams are already met. The environment shapes the node:
 *   CBK_TEST_GPUS               devices visible (default 1; 0: none)
 *   CBK_TEST_GPU_MEMORY         memory per device (default 1g)
 *   CBK_TEST_GPU_PEAK_GB_PER_S  memory rate the device tells (default 0:
 *                               it does not say, as some runtimes do not)
 *   CBK_TEST_GPU_FAULT          a fault to plant: "lost-copy" (copies on a
 *                               stream move nothing), "triad" (triad uses
 *                               the wrong scalar), "alloc" (device memory
 *                               cannot be had), "no-peer" (no two devices
 *                               reach each other's memory)
 * and CUDA_VISIBLE_DEVICES narrows the node's devices to those a process
 * may see, as CUDA does (visible_devices), so a rank bound to its GPU by
 * clusterbench.launch.gpubind measures that GPU and names it. */
#include "gpu_runtime.h"

#include "../core/params.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_DEVICES 64
#define ALIGN_BYTES 256  /* cudaMalloc's alignment; also the header before each block */
#define PARTIALS 16      /* "blocks" of a reduction */

struct block_header {
    size_t bytes;
    int device;
};

static int current;                        /* the process's current device */
static uint64_t used_bytes[MAX_DEVICES];   /* device memory handed out, per visible device */

static bool fault(const char *name)
{
    const char *f = getenv("CBK_TEST_GPU_FAULT");
    return f && !strcmp(f, name);
}

/* The node's devices, "test GPU 0" to "test GPU n-1"; -1 where
 * CBK_TEST_GPUS is no whole number from 0 to MAX_DEVICES, which probe()
 * refuses as given: read with strtol alone, "abc" and "-3" were 0 devices
 * (and said "CBK_TEST_GPUS=0"), "100" was 64. */
static int node_device_count(void)
{
    const char *v = getenv("CBK_TEST_GPUS");
    if (!v || !*v)
        return 1;
    char *end;
    errno = 0;
    long n = strtol(v, &end, 10);
    return end == v || *end || errno || n < 0 || n > MAX_DEVICES ? -1 : (int)n;
}

static const char *const FAULTS[] = { "lost-copy", "triad", "alloc", "no-peer" };

/* Why the environment that shapes the test node is not one it can take
 * (NULL: it is): each variable named as given, so that a typo is not a
 * node of defaults (a fault never planted, 1 GiB of memory). */
static const char *environment_refusal(char *why, size_t len)
{
    const char *v;
    uint64_t bytes;
    if (node_device_count() < 0) {
        snprintf(why, len, "the test runtime's CBK_TEST_GPUS=%s is no number of devices from 0 to %d "
                 "(a cbk for tests: docs/gpu.md)", getenv("CBK_TEST_GPUS"), MAX_DEVICES);
        return why;
    }
    if ((v = getenv("CBK_TEST_GPU_MEMORY")) && *v && (cbk_parse_size(v, &bytes) || bytes == 0)) {
        snprintf(why, len, "the test runtime's CBK_TEST_GPU_MEMORY=%s is no size in bytes above 0 (1g, 512m; "
                 "a cbk for tests: docs/gpu.md)", v);
        return why;
    }
    if ((v = getenv("CBK_TEST_GPU_PEAK_GB_PER_S")) && *v) {
        char *end;
        double rate = strtod(v, &end);
        if (end == v || *end || !isfinite(rate) || rate < 0) {
            snprintf(why, len, "the test runtime's CBK_TEST_GPU_PEAK_GB_PER_S=%s is no rate in GB/s of 0 or more "
                     "(a cbk for tests: docs/gpu.md)", v);
            return why;
        }
    }
    if ((v = getenv("CBK_TEST_GPU_FAULT")) && *v) {
        bool known = false;
        for (size_t i = 0; i < sizeof FAULTS / sizeof *FAULTS; i++)
            known = known || !strcmp(v, FAULTS[i]);
        if (!known) {
            snprintf(why, len, "the test runtime's CBK_TEST_GPU_FAULT=%s is no fault it plants (lost-copy, triad, "
                     "alloc, no-peer; a cbk for tests: docs/gpu.md)", v);
            return why;
        }
    }
    return NULL;
}

/* The node's devices this process sees, in the order CUDA_VISIBLE_DEVICES
 * names them: visible device i is node device node_index[i]. Read as the
 * CUDA driver reads it (PyTorch's _parse_visible_devices mirrors it): each
 * comma-separated entry is read as strtoul reads it (blanks first, then
 * the leading digits: "1gpu" is 1); the list stops at the first entry
 * with no digits or naming no device of the node, so an empty value hides
 * every device; an index named twice hides them all. Unset: all visible.
 * The test devices have no UUIDs, so a GPU- or MIG- entry stops the list
 * here. */
static int visible_devices(int node_index[MAX_DEVICES])
{
    int node = node_device_count();
    const char *v = getenv("CUDA_VISIBLE_DEVICES");
    if (node <= 0)
        return 0;
    if (!v) {
        for (int i = 0; i < node; i++)
            node_index[i] = i;
        return node;
    }
    int n = 0;
    for (const char *entry = v; n < MAX_DEVICES; entry++) {
        while (*entry == ' ' || *entry == '\t')
            entry++;
        if (*entry < '0' || *entry > '9')
            break;
        char *end;
        unsigned long index = strtoul(entry, &end, 10);
        if (index >= (unsigned long)node)
            break;
        for (int i = 0; i < n; i++)
            if (node_index[i] == (int)index)
                return 0;
        node_index[n++] = (int)index;
        entry = strchr(end, ',');
        if (!entry)
            break;
    }
    return n;
}

static int device_count(void)
{
    int node_index[MAX_DEVICES];
    return visible_devices(node_index);
}

static uint64_t memory_bytes(void)
{
    uint64_t bytes = 1ull << 30;
    const char *v = getenv("CBK_TEST_GPU_MEMORY");
    if (v && *v)
        cbk_parse_size(v, &bytes);
    return bytes;
}

static const char *probe(char *why, size_t len)
{
    if (environment_refusal(why, len))
        return why;
    if (device_count() > 0)
        return NULL;
    const char *visible = getenv("CUDA_VISIBLE_DEVICES");
    if (visible && node_device_count() > 0)
        snprintf(why, len, "no GPU visible to this process (CUDA_VISIBLE_DEVICES=%s): it leaves none of the test "
                 "runtime's %d devices (CBK_TEST_GPUS; a cbk for tests: docs/gpu.md)", visible, node_device_count());
    else
        snprintf(why, len, "no GPU visible to this process: the test runtime was given CBK_TEST_GPUS=%s "
                 "(a cbk for tests: docs/gpu.md)", getenv("CBK_TEST_GPUS"));
    return why;
}

static const char *device_info_at(int device, struct cbk_gpu_device_info *d)
{
    int node_index[MAX_DEVICES];
    if (device < 0 || device >= visible_devices(node_index))
        return "invalid device ordinal";
    memset(d, 0, sizeof *d);
    /* named by the node's numbering, as nvidia-smi names a GPU whatever a
     * process's CUDA_VISIBLE_DEVICES calls it */
    int node = node_index[device];
    snprintf(d->name, sizeof d->name, "test GPU %d (host memory)", node);
    /* a bus no real device sits on: a lookup of its PCIe link finds none */
    snprintf(d->bus_id, sizeof d->bus_id, "0000:%02x:00.0", 0xc0 + node);
    d->memory_bytes = memory_bytes();
    d->free_bytes = d->memory_bytes > used_bytes[device] ? d->memory_bytes - used_bytes[device] : 0;
    const char *peak = getenv("CBK_TEST_GPU_PEAK_GB_PER_S");
    d->memory_peak_gb_per_s = peak ? strtod(peak, NULL) : 0;
    d->multiprocessors = 1;
    snprintf(d->driver_version, sizeof d->driver_version, "test");
    snprintf(d->runtime_version, sizeof d->runtime_version, "test");
    return NULL;
}

static const char *device_info(struct cbk_gpu_device_info *d) { return device_info_at(current, d); }

static const char *select_device(int device)
{
    if (device < 0 || device >= device_count())
        return "invalid device ordinal";
    current = device;
    return NULL;
}

static const char *peer_access(int from, int to, bool enable, bool *possible)
{
    (void)enable; /* host memory: every copy is the same memmove either way */
    *possible = !fault("no-peer") && from != to;
    return NULL;
}

/* Device memory arrives holding bytes of no meaning, as cudaMalloc's may:
 * a kernel that reads before it writes fails its check here too. */
static const char *alloc_device(void **p, size_t bytes)
{
    *p = NULL;
    if (fault("alloc") || used_bytes[current] + bytes > memory_bytes())
        return "out of memory";
    unsigned char *raw;
    if (posix_memalign((void **)&raw, ALIGN_BYTES, ALIGN_BYTES + bytes))
        return "out of memory";
    struct block_header h = { .bytes = bytes, .device = current };
    memcpy(raw, &h, sizeof h);
    memset(raw + ALIGN_BYTES, 0xa5, bytes);
    used_bytes[current] += bytes;
    *p = raw + ALIGN_BYTES;
    return NULL;
}

static void free_device(void *p)
{
    unsigned char *raw = (unsigned char *)p - ALIGN_BYTES;
    struct block_header h;
    memcpy(&h, raw, sizeof h);
    used_bytes[h.device] -= h.bytes;
    free(raw);
}

static const char *alloc_pinned(void **p, size_t bytes)
{
    return posix_memalign(p, ALIGN_BYTES, bytes ? bytes : 1) ? "out of memory" : NULL;
}
static void free_pinned(void *p) { free(p); }
/* freed by free_device, as cudaFree frees managed memory */
static const char *alloc_managed(void **p, size_t bytes) { return alloc_device(p, bytes); }

/* A stream is a name; creating one still allocates, so a stream leaked or
 * destroyed twice shows in a sanitizer's report. */
static const char *stream_create(cbk_gpu_stream *s)
{
    *s = malloc(1);
    return *s ? NULL : "out of memory";
}
static void stream_destroy(cbk_gpu_stream s) { free(s); }

static const char *event_create(cbk_gpu_event *e)
{
    *e = calloc(1, sizeof(double));
    return *e ? NULL : "out of memory";
}
static void event_destroy(cbk_gpu_event e) { free(e); }

static const char *event_record(cbk_gpu_event e, cbk_gpu_stream s)
{
    (void)s;
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    *(double *)e = (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
    return NULL;
}

static const char *stream_wait(cbk_gpu_stream s, cbk_gpu_event e)
{
    (void)s, (void)e;
    return NULL;
}

static const char *event_elapsed_s(cbk_gpu_event start, cbk_gpu_event stop, double *seconds)
{
    double a = *(double *)start, b = *(double *)stop;
    if (a == 0 || b == 0)
        return "device not ready (an event was never recorded)";
    *seconds = b - a;
    return NULL;
}

static const char *copy_async(void *dst, const void *src, size_t bytes, cbk_gpu_stream s)
{
    (void)s;
    if (!fault("lost-copy"))
        memmove(dst, src, bytes);
    return NULL;
}

static const char *copy_peer_async(void *dst, int dst_device, const void *src, int src_device, size_t bytes,
                                   cbk_gpu_stream s)
{
    if (dst_device < 0 || dst_device >= device_count() || src_device < 0 || src_device >= device_count())
        return "invalid device ordinal";
    return copy_async(dst, src, bytes, s);
}

static const char *copy_sync(void *dst, const void *src, size_t bytes)
{
    memmove(dst, src, bytes);
    return NULL;
}

static const char *sync(cbk_gpu_stream s)
{
    (void)s;
    return NULL;
}

static const char *fill(double *a, double value, size_t n, cbk_gpu_stream s)
{
    (void)s;
    for (size_t i = 0; i < n; i++)
        a[i] = value;
    return NULL;
}

static const char *stream_op(enum cbk_gpu_stream_op op, double *a, double *b, double *c, double scalar, size_t n,
                             cbk_gpu_stream s)
{
    (void)s;
    double triad_scalar = fault("triad") ? scalar + 1.0 : scalar;
    for (size_t i = 0; i < n; i++)
        switch (op) {
        case CBK_GPU_COPY: c[i] = a[i]; break;
        case CBK_GPU_SCALE: b[i] = scalar * c[i]; break;
        case CBK_GPU_ADD: c[i] = a[i] + b[i]; break;
        case CBK_GPU_TRIAD: a[i] = b[i] + triad_scalar * c[i]; break;
        }
    return NULL;
}

static size_t reduce_partials(void) { return PARTIALS; }

/* As the CUDA runtime's reductions: one partial per block in device
 * memory, copied to the host's partials and added there. */
static const char *reduce(const double *a, const double *b, double expect, size_t n, double *partial_device,
                          double *partial_host, double *sum)
{
    size_t chunk = (n + PARTIALS - 1) / PARTIALS;
    for (size_t k = 0; k < PARTIALS; k++) {
        double part = 0;
        for (size_t i = k * chunk; i < n && i < (k + 1) * chunk; i++)
            part += b ? a[i] * b[i] : fabs(a[i] - expect);
        partial_device[k] = part;
    }
    memcpy(partial_host, partial_device, PARTIALS * sizeof(double));
    double total = 0;
    for (size_t k = 0; k < PARTIALS; k++)
        total += partial_host[k];
    *sum = total;
    return NULL;
}

static const char *dot(const double *a, const double *b, size_t n, double *partial_device, double *partial_host,
                       double *sum, cbk_gpu_stream s)
{
    (void)s;
    return reduce(a, b, 0, n, partial_device, partial_host, sum);
}

static const char *abs_error_sum(const double *a, double expect, size_t n, double *partial_device,
                                 double *partial_host, double *sum, cbk_gpu_stream s)
{
    (void)s;
    return reduce(a, NULL, expect, n, partial_device, partial_host, sum);
}

const struct cbk_gpu_runtime cbk_gpu_runtime_test = {
    .name = "test",
    .probe = probe,
    .device_info = device_info,
    .device_count = device_count,
    .device_info_at = device_info_at,
    .select_device = select_device,
    .peer_access = peer_access,
    .copy_peer_async = copy_peer_async,
    .alloc_device = alloc_device,
    .free_device = free_device,
    .alloc_pinned = alloc_pinned,
    .free_pinned = free_pinned,
    .alloc_managed = alloc_managed,
    .stream_create = stream_create,
    .stream_destroy = stream_destroy,
    .event_create = event_create,
    .event_destroy = event_destroy,
    .event_record = event_record,
    .stream_wait = stream_wait,
    .event_elapsed_s = event_elapsed_s,
    .copy_async = copy_async,
    .copy_kernel_async = copy_async,
    .copy_sync = copy_sync,
    .sync = sync,
    .fill = fill,
    .stream_op = stream_op,
    .reduce_partials = reduce_partials,
    .dot = dot,
    .abs_error_sum = abs_error_sum,
};
