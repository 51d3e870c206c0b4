/* The device code of the CUDA runtime (cuda_device_code.cu, built by nvcc),
 * called from runtime_cuda.c (built by the C compiler, -Wall -Wextra). Each
 * launcher returns a cudaError_t as an int; 0 is success. */
#ifndef CBK_CUDA_DEVICE_CODE_H
#define CBK_CUDA_DEVICE_CODE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

int cbk_cuda_copy_kernel(void *dst, const void *src, size_t bytes, void *stream);
int cbk_cuda_fill(double *a, double value, size_t n, void *stream);
/* op: enum cbk_gpu_stream_op */
int cbk_cuda_stream_op(int op, double *a, double *b, double *c, double scalar, size_t n, void *stream);
/* partial sums, one per block, into `partial` (cbk_cuda_reduce_blocks() doubles) */
int cbk_cuda_dot(const double *a, const double *b, size_t n, double *partial, void *stream);
int cbk_cuda_abs_error(const double *a, double expect, size_t n, double *partial, void *stream);
int cbk_cuda_reduce_blocks(void);

#ifdef __cplusplus
}
#endif

#endif
