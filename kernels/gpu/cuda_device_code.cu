/* Device code for the CUDA runtime: the copy kernel of gpucopy
 * --engine=kernel and the array kernels of gpumem. The array kernels are
 * launched as BabelStream's CUDA version launches them (its defaults,
 * GRID_STRIDE and UNROLL_FACTOR 4): blocks of 256 threads, a grid of
 * n / 4 / 256 blocks, each thread striding over the grid, about four
 * elements each; the reductions run a fixed grid of 4 blocks of 1,024
 * threads per multiprocessor (BabelStream's dot_num_blocks) and the host
 * adds the partial sums. */
#include "cuda_device_code.h"

#include <cuda_runtime.h>
#include <stdint.h>

#define BLOCK_THREADS 256
#define ELEMENTS_PER_THREAD 4
#define REDUCE_THREADS 1024
#define REDUCE_BLOCKS_PER_SM 4

static int multiprocessors(void)
{
    static int count;
    if (!count) {
        int device = 0;
        if (cudaGetDevice(&device) != cudaSuccess ||
            cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, device) != cudaSuccess || count < 1)
            count = 1;
    }
    return count;
}

static unsigned blocks_for(size_t n)
{
    size_t threads = (n + ELEMENTS_PER_THREAD - 1) / ELEMENTS_PER_THREAD;
    return (unsigned)((threads + BLOCK_THREADS - 1) / BLOCK_THREADS);
}

/* The grid-stride loop every array kernel runs. */
#define FOR_EACH(i, n) \
    _Pragma("unroll 4") \
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < (n); i += (size_t)gridDim.x * blockDim.x)

/* 16 bytes per thread per step (nvbandwidth's SM copy moves uint4), the
 * tail byte by byte; a grid-stride loop so one launch covers any size. */
__global__ void copy_bytes(unsigned char *__restrict__ dst, const unsigned char *__restrict__ src, size_t bytes)
{
    size_t stride = (size_t)gridDim.x * blockDim.x;
    size_t first = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    size_t vectors = bytes / sizeof(uint4);
    bool aligned = ((uintptr_t)dst % sizeof(uint4)) == 0 && ((uintptr_t)src % sizeof(uint4)) == 0;
    if (!aligned)
        vectors = 0;
    for (size_t i = first; i < vectors; i += stride)
        ((uint4 *)dst)[i] = ((const uint4 *)src)[i];
    for (size_t i = vectors * sizeof(uint4) + first; i < bytes; i += stride)
        dst[i] = src[i];
}

extern "C" int cbk_cuda_copy_kernel(void *dst, const void *src, size_t bytes, void *stream)
{
    size_t vectors = bytes / sizeof(uint4) + 1;
    size_t wanted = (vectors + 255) / 256;
    size_t most = (size_t)multiprocessors() * 8;
    unsigned blocks = (unsigned)(wanted < most ? wanted : most);
    copy_bytes<<<blocks, 256, 0, (cudaStream_t)stream>>>((unsigned char *)dst, (const unsigned char *)src, bytes);
    return (int)cudaGetLastError();
}

__global__ void fill(double *a, double value, size_t n)
{
    FOR_EACH(i, n)
        a[i] = value;
}

extern "C" int cbk_cuda_fill(double *a, double value, size_t n, void *stream)
{
    fill<<<blocks_for(n), BLOCK_THREADS, 0, (cudaStream_t)stream>>>(a, value, n);
    return (int)cudaGetLastError();
}

__global__ void copy(const double *__restrict__ a, double *__restrict__ c, size_t n)
{
    FOR_EACH(i, n)
        c[i] = a[i];
}

__global__ void scale(double *__restrict__ b, const double *__restrict__ c, double scalar, size_t n)
{
    FOR_EACH(i, n)
        b[i] = scalar * c[i];
}

__global__ void add(const double *__restrict__ a, const double *__restrict__ b, double *__restrict__ c, size_t n)
{
    FOR_EACH(i, n)
        c[i] = a[i] + b[i];
}

__global__ void triad(double *__restrict__ a, const double *__restrict__ b, const double *__restrict__ c,
                      double scalar, size_t n)
{
    FOR_EACH(i, n)
        a[i] = b[i] + scalar * c[i];
}

extern "C" int cbk_cuda_stream_op(int op, double *a, double *b, double *c, double scalar, size_t n, void *stream)
{
    cudaStream_t s = (cudaStream_t)stream;
    unsigned blocks = blocks_for(n);
    switch (op) {
    case 0: copy<<<blocks, BLOCK_THREADS, 0, s>>>(a, c, n); break;
    case 1: scale<<<blocks, BLOCK_THREADS, 0, s>>>(b, c, scalar, n); break;
    case 2: add<<<blocks, BLOCK_THREADS, 0, s>>>(a, b, c, n); break;
    case 3: triad<<<blocks, BLOCK_THREADS, 0, s>>>(a, b, c, scalar, n); break;
    default: return (int)cudaErrorInvalidValue;
    }
    return (int)cudaGetLastError();
}

/* One block's sum in shared memory, halved each step. */
__device__ void block_sum(double *shared, double mine, double *partial)
{
    shared[threadIdx.x] = mine;
    for (unsigned half = blockDim.x / 2; half > 0; half /= 2) {
        __syncthreads();
        if (threadIdx.x < half)
            shared[threadIdx.x] += shared[threadIdx.x + half];
    }
    if (threadIdx.x == 0)
        partial[blockIdx.x] = shared[0];
}

__global__ void dot(const double *__restrict__ a, const double *__restrict__ b, size_t n, double *partial)
{
    __shared__ double shared[REDUCE_THREADS];
    double sum = 0.0;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        sum += a[i] * b[i];
    block_sum(shared, sum, partial);
}

__global__ void abs_error(const double *__restrict__ a, double expect, size_t n, double *partial)
{
    __shared__ double shared[REDUCE_THREADS];
    double sum = 0.0;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        sum += fabs(a[i] - expect);
    block_sum(shared, sum, partial);
}

extern "C" int cbk_cuda_reduce_blocks(void)
{
    return multiprocessors() * REDUCE_BLOCKS_PER_SM;
}

extern "C" int cbk_cuda_dot(const double *a, const double *b, size_t n, double *partial, void *stream)
{
    dot<<<cbk_cuda_reduce_blocks(), REDUCE_THREADS, 0, (cudaStream_t)stream>>>(a, b, n, partial);
    return (int)cudaGetLastError();
}

extern "C" int cbk_cuda_abs_error(const double *a, double expect, size_t n, double *partial, void *stream)
{
    abs_error<<<cbk_cuda_reduce_blocks(), REDUCE_THREADS, 0, (cudaStream_t)stream>>>(a, expect, n, partial);
    return (int)cudaGetLastError();
}
