/* The GPU runtime behind the GPU kernels: one table of function pointers
 * (as randio's engines and IOR's aiori), filled by runtime_cuda.c (and a
 * future runtime_hip.c); runtime_test.c fills it with host memory for the
 * tests of a build without a GPU (CBK_GPU_TEST_RUNTIME). The kernels call only this table, never a runtime
 * library, so a second runtime is one more file. Every call that can fail
 * returns NULL, or the runtime's own text for the error (e.g. "CUDA driver
 * version is insufficient for CUDA runtime version"), so the caller writes
 * one line with its own context. Streams and events are opaque. Design:
 * docs/gpu.md. */
#ifndef CBK_GPU_RUNTIME_H
#define CBK_GPU_RUNTIME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct cbk_gpu_device_info {
    char name[128];
    char bus_id[32];              /* PCI domain:bus:device.function, as nvidia-smi prints it */
    uint64_t memory_bytes, free_bytes;
    /* 2 x memory clock x bus width, as BabelStream and the data sheets
     * compute it; 0 when the runtime does not say */
    double memory_peak_gb_per_s;
    int multiprocessors;
    int compute_major, compute_minor;
    char driver_version[16], runtime_version[16]; /* "13.0" */
};

/* The device-memory operations of gpumem, STREAM's four (as STREAM writes
 * them: c = a; b = s c; c = a + b; a = b + s c). */
enum cbk_gpu_stream_op { CBK_GPU_COPY, CBK_GPU_SCALE, CBK_GPU_ADD, CBK_GPU_TRIAD };

typedef void *cbk_gpu_stream;
typedef void *cbk_gpu_event;

struct cbk_gpu_runtime {
    const char *name;                 /* "cuda" */
    /* NULL when a device of the process is usable, else why not, in the
     * runtime's words; fills `why` with one line naming what to do */
    const char *(*probe)(char *why, size_t len);
    const char *(*device_info)(struct cbk_gpu_device_info *d);
    /* Several devices of one process (gpupeer); the others work on the
     * current one, device 0 unless select_device chose another. Streams,
     * events and device memory belong to the device current when they
     * were made. */
    int (*device_count)(void);
    const char *(*device_info_at)(int device, struct cbk_gpu_device_info *d);
    const char *(*select_device)(int device);
    /* Whether `from` may read and write `to`'s memory directly (over NVLink
     * or PCIe, without host memory between), and turns that access on or
     * off for `from` (a no-op when it cannot be had). */
    const char *(*peer_access)(int from, int to, bool enable, bool *possible);
    /* A copy between two devices' memory on stream `s`: directly when peer
     * access is on, else staged by the driver through host memory. */
    const char *(*copy_peer_async)(void *dst, int dst_device, const void *src, int src_device, size_t bytes,
                                   cbk_gpu_stream s);
    const char *(*alloc_device)(void **p, size_t bytes);
    void (*free_device)(void *p);
    /* page-locked, mapped into the device's address space (a copy kernel
     * reads it across the link) */
    const char *(*alloc_pinned)(void **p, size_t bytes);
    void (*free_pinned)(void *p);
    /* managed (unified) memory: host and device both touch it, pages migrate; freed by free_device */
    const char *(*alloc_managed)(void **p, size_t bytes);
    const char *(*stream_create)(cbk_gpu_stream *s);
    void (*stream_destroy)(cbk_gpu_stream s);
    const char *(*event_create)(cbk_gpu_event *e);
    void (*event_destroy)(cbk_gpu_event e);
    const char *(*event_record)(cbk_gpu_event e, cbk_gpu_stream s);
    /* `s` waits for `e` without blocking the host: two streams start together */
    const char *(*stream_wait)(cbk_gpu_stream s, cbk_gpu_event e);
    const char *(*event_elapsed_s)(cbk_gpu_event start, cbk_gpu_event stop, double *seconds);
    /* the copy engine: any direction, the runtime infers it from the pointers */
    const char *(*copy_async)(void *dst, const void *src, size_t bytes, cbk_gpu_stream s);
    /* the same copy done by a kernel on the GPU's cores (nvbandwidth's _sm
     * cases): host memory must be pinned */
    const char *(*copy_kernel_async)(void *dst, const void *src, size_t bytes, cbk_gpu_stream s);
    /* complete for every stream on return */
    const char *(*copy_sync)(void *dst, const void *src, size_t bytes);
    const char *(*sync)(cbk_gpu_stream s);
    const char *(*fill)(double *a, double value, size_t n, cbk_gpu_stream s);
    const char *(*stream_op)(enum cbk_gpu_stream_op op, double *a, double *b, double *c, double scalar, size_t n,
                             cbk_gpu_stream s);
    /* The reductions leave one partial sum per block in `partial_device`
     * (reduce_partials() doubles), copy them to `partial_host` (pinned, as
     * many) and add them there, so the sum is complete on return
     * (BabelStream's Dot does the same). */
    size_t (*reduce_partials)(void);
    /* sum of a[i] * b[i] */
    const char *(*dot)(const double *a, const double *b, size_t n, double *partial_device, double *partial_host,
                       double *sum, cbk_gpu_stream s);
    /* sum of |a[i] - expect|: STREAM's check, done where the arrays live */
    const char *(*abs_error_sum)(const double *a, double expect, size_t n, double *partial_device,
                                 double *partial_host, double *sum, cbk_gpu_stream s);
};

/* The runtime this build has; the GPU kernels are left out of a build with none. */
#ifdef CBK_GPU_TEST_RUNTIME
extern const struct cbk_gpu_runtime cbk_gpu_runtime_test;
static inline const struct cbk_gpu_runtime *cbk_gpu_runtime(void) { return &cbk_gpu_runtime_test; }
#else
extern const struct cbk_gpu_runtime cbk_gpu_runtime_cuda;
static inline const struct cbk_gpu_runtime *cbk_gpu_runtime(void) { return &cbk_gpu_runtime_cuda; }
#endif

#endif
