/* The CUDA runtime behind struct cbk_gpu_runtime: host calls to the CUDA
 * runtime API here, device code in cuda_device_code.cu. The process's
 * device is device 0: clusterbench.launch.gpubind has already narrowed
 * CUDA_VISIBLE_DEVICES to the rank's own GPU. Only gpupeer, which needs
 * every GPU of the node in one process, selects others. */
#include "gpu_runtime.h"
#include "cuda_device_code.h"

#include <cuda_runtime_api.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *text_of(cudaError_t e)
{
    return e == cudaSuccess ? NULL : cudaGetErrorString(e);
}

static const char *probe(char *why, size_t len)
{
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e == cudaSuccess && count > 0) {
        e = cudaSetDevice(0);
        if (e == cudaSuccess)
            return NULL;
    }
    const char *visible = getenv("CUDA_VISIBLE_DEVICES");
    char seen[96] = "";
    if (visible)
        snprintf(seen, sizeof seen, " (CUDA_VISIBLE_DEVICES=%s)", visible);
    if (e != cudaSuccess)
        snprintf(why, len, "no GPU visible to this process%s: the CUDA runtime says \"%s\" (%s); run it on a node with an NVIDIA GPU and its driver",
                 seen, cudaGetErrorString(e), cudaGetErrorName(e));
    else
        snprintf(why, len, "no GPU visible to this process%s: the CUDA runtime found no device; run it on a node with an NVIDIA GPU", seen);
    return why;
}

static void version_text(int v, char *buf, size_t len)
{
    snprintf(buf, len, "%d.%d", v / 1000, v % 1000 / 10);
}

static const char *device_info_at(int device, struct cbk_gpu_device_info *d)
{
    struct cudaDeviceProp prop;
    cudaError_t e = cudaGetDeviceProperties(&prop, device);
    if (e != cudaSuccess)
        return text_of(e);
    size_t name_len = strnlen(prop.name, sizeof d->name - 1);
    memcpy(d->name, prop.name, name_len);
    d->name[name_len] = '\0';
    if (cudaDeviceGetPCIBusId(d->bus_id, (int)sizeof d->bus_id, device) != cudaSuccess)
        snprintf(d->bus_id, sizeof d->bus_id, "unknown");
    d->memory_bytes = prop.totalGlobalMem;
    /* cudaMemGetInfo answers for the current device */
    int current = 0;
    size_t free_bytes = 0, total = 0;
    cudaGetDevice(&current);
    bool here = current == device || cudaSetDevice(device) == cudaSuccess;
    d->free_bytes = here && cudaMemGetInfo(&free_bytes, &total) == cudaSuccess ? free_bytes : 0;
    if (current != device)
        cudaSetDevice(current);
    d->multiprocessors = prop.multiProcessorCount;
    d->compute_major = prop.major;
    d->compute_minor = prop.minor;
    int clock_khz = 0, bus_bits = 0;
    if (cudaDeviceGetAttribute(&clock_khz, cudaDevAttrMemoryClockRate, device) == cudaSuccess &&
        cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, device) == cudaSuccess)
        d->memory_peak_gb_per_s = 2.0 * clock_khz * 1e3 * (bus_bits / 8.0) / 1e9; /* double data rate */
    int v = 0;
    version_text(cudaDriverGetVersion(&v) == cudaSuccess ? v : 0, d->driver_version, sizeof d->driver_version);
    version_text(cudaRuntimeGetVersion(&v) == cudaSuccess ? v : 0, d->runtime_version, sizeof d->runtime_version);
    return NULL;
}

static const char *device_info(struct cbk_gpu_device_info *d) { return device_info_at(0, d); }

static int device_count(void)
{
    int count = 0;
    return cudaGetDeviceCount(&count) == cudaSuccess ? count : 0;
}

static const char *select_device(int device) { return text_of(cudaSetDevice(device)); }

static const char *peer_access(int from, int to, bool enable, bool *possible)
{
    int can = 0;
    cudaError_t e = cudaDeviceCanAccessPeer(&can, from, to);
    *possible = e == cudaSuccess && can;
    if (e != cudaSuccess || !can)
        return text_of(e);
    int current = 0;
    cudaGetDevice(&current);
    if ((e = cudaSetDevice(from)) != cudaSuccess)
        return text_of(e);
    e = enable ? cudaDeviceEnablePeerAccess(to, 0) : cudaDeviceDisablePeerAccess(to);
    /* already as asked: not an error; clear it, or the next call reports it */
    if (e == cudaErrorPeerAccessAlreadyEnabled || e == cudaErrorPeerAccessNotEnabled) {
        cudaGetLastError();
        e = cudaSuccess;
    }
    cudaSetDevice(current);
    return text_of(e);
}

static const char *copy_peer_async(void *dst, int dst_device, const void *src, int src_device, size_t bytes,
                                   cbk_gpu_stream s)
{
    return text_of(cudaMemcpyPeerAsync(dst, dst_device, src, src_device, bytes, (cudaStream_t)s));
}

static const char *alloc_device(void **p, size_t bytes) { return text_of(cudaMalloc(p, bytes)); }
static void free_device(void *p) { cudaFree(p); }
static const char *alloc_pinned(void **p, size_t bytes)
{
    return text_of(cudaHostAlloc(p, bytes, cudaHostAllocMapped | cudaHostAllocPortable));
}
static void free_pinned(void *p) { cudaFreeHost(p); }
static const char *alloc_managed(void **p, size_t bytes)
{
    return text_of(cudaMallocManaged(p, bytes, cudaMemAttachGlobal));
}

static const char *stream_create(cbk_gpu_stream *s)
{
    cudaStream_t t;
    cudaError_t e = cudaStreamCreateWithFlags(&t, cudaStreamNonBlocking);
    *s = t;
    return text_of(e);
}
static void stream_destroy(cbk_gpu_stream s) { cudaStreamDestroy((cudaStream_t)s); }

static const char *event_create(cbk_gpu_event *ev)
{
    cudaEvent_t t;
    cudaError_t e = cudaEventCreate(&t);
    *ev = t;
    return text_of(e);
}
static void event_destroy(cbk_gpu_event e) { cudaEventDestroy((cudaEvent_t)e); }
static const char *event_record(cbk_gpu_event e, cbk_gpu_stream s)
{
    return text_of(cudaEventRecord((cudaEvent_t)e, (cudaStream_t)s));
}
static const char *stream_wait(cbk_gpu_stream s, cbk_gpu_event e)
{
    return text_of(cudaStreamWaitEvent((cudaStream_t)s, (cudaEvent_t)e, 0));
}
static const char *event_elapsed_s(cbk_gpu_event start, cbk_gpu_event stop, double *seconds)
{
    float ms = 0;
    cudaError_t e = cudaEventElapsedTime(&ms, (cudaEvent_t)start, (cudaEvent_t)stop);
    *seconds = ms / 1e3;
    return text_of(e);
}

static const char *copy_async(void *dst, const void *src, size_t bytes, cbk_gpu_stream s)
{
    return text_of(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, (cudaStream_t)s));
}
static const char *copy_kernel_async(void *dst, const void *src, size_t bytes, cbk_gpu_stream s)
{
    return text_of((cudaError_t)cbk_cuda_copy_kernel(dst, src, bytes, s));
}
/* cudaMemcpy from pageable memory may return before its DMA has landed, and
 * the kernels' streams do not wait for the legacy stream it runs on: the
 * device synchronised, so the copy is complete for every stream. */
static const char *copy_sync(void *dst, const void *src, size_t bytes)
{
    cudaError_t e = cudaMemcpy(dst, src, bytes, cudaMemcpyDefault);
    return text_of(e == cudaSuccess ? cudaDeviceSynchronize() : e);
}
static const char *sync(cbk_gpu_stream s) { return text_of(cudaStreamSynchronize((cudaStream_t)s)); }

static const char *fill(double *a, double value, size_t n, cbk_gpu_stream s)
{
    return text_of((cudaError_t)cbk_cuda_fill(a, value, n, s));
}
static const char *stream_op(enum cbk_gpu_stream_op op, double *a, double *b, double *c, double scalar, size_t n,
                             cbk_gpu_stream s)
{
    return text_of((cudaError_t)cbk_cuda_stream_op((int)op, a, b, c, scalar, n, s));
}

static size_t reduce_partials(void) { return (size_t)cbk_cuda_reduce_blocks(); }

static const char *finish_sum(double *partial_device, double *partial_host, double *sum, cbk_gpu_stream s)
{
    size_t count = reduce_partials();
    cudaError_t e = cudaMemcpyAsync(partial_host, partial_device, count * sizeof(double), cudaMemcpyDeviceToHost,
                                    (cudaStream_t)s);
    if (e == cudaSuccess)
        e = cudaStreamSynchronize((cudaStream_t)s);
    double total = 0.0;
    for (size_t i = 0; i < count; i++)
        total += partial_host[i];
    *sum = total;
    return text_of(e);
}

static const char *dot(const double *a, const double *b, size_t n, double *partial_device, double *partial_host,
                       double *sum, cbk_gpu_stream s)
{
    cudaError_t e = (cudaError_t)cbk_cuda_dot(a, b, n, partial_device, s);
    return e != cudaSuccess ? text_of(e) : finish_sum(partial_device, partial_host, sum, s);
}

static const char *abs_error_sum(const double *a, double expect, size_t n, double *partial_device,
                                 double *partial_host, double *sum, cbk_gpu_stream s)
{
    cudaError_t e = (cudaError_t)cbk_cuda_abs_error(a, expect, n, partial_device, s);
    return e != cudaSuccess ? text_of(e) : finish_sum(partial_device, partial_host, sum, s);
}

const struct cbk_gpu_runtime cbk_gpu_runtime_cuda = {
    .name = "cuda",
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
    .copy_kernel_async = copy_kernel_async,
    .copy_sync = copy_sync,
    .sync = sync,
    .fill = fill,
    .stream_op = stream_op,
    .reduce_partials = reduce_partials,
    .dot = dot,
    .abs_error_sum = abs_error_sum,
};
