/* Where the mpi kernel's messages live (--buffer, docs/gpu.md): host
 * memory; GPU memory handed to MPI directly when the library says it is
 * CUDA-aware (MPIX_GPU_query_support of MPICH 4, MPIX_Query_cuda_support of
 * Open MPI's CUDA extension), else staged through pinned host memory, one
 * copy per message inside the timed loop (what a program must do with a
 * library that is not); or managed memory, handed to MPI as it is (the
 * pages migrate to whichever side touches them). Point-to-point only: the
 * collectives' result checks read their buffers on the host. */
#include "mpi_kernel.h"

#include "../core/buffer.h"

#include <stdio.h>
#include <string.h>
#ifdef CBK_HAVE_GPU
#include "../gpu/gpu_runtime.h"
#endif
#if defined(OPEN_MPI) && OPEN_MPI && defined(__has_include)
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>
#endif
#endif

const char *const mpi_buffer_names[] = { [MPI_BUFFER_HOST] = "host", [MPI_BUFFER_DEVICE] = "device",
                                         [MPI_BUFFER_MANAGED] = "managed", NULL };

int mpi_buffer_check(enum mpi_buffer b, const struct cbk_choice_list *ops, char *why, size_t len)
{
    if (b == MPI_BUFFER_HOST)
        return 0;
    for (int i = 0; i < ops->count; i++)
        if (mpi_ops[ops->index[i]].kind != PT2PT) {
            snprintf(why, len, "--buffer=%s: only pingpong, bw and bibw take GPU buffers so far, not %s",
                     mpi_buffer_names[b], mpi_op_names[ops->index[i]]);
            return -1;
        }
#ifdef CBK_HAVE_GPU
    return cbk_gpu_runtime()->probe(why, len) ? -1 : 0;
#else
    snprintf(why, len, "--buffer=%s needs a cbk built with CUDA: rebuild it with nvcc on PATH or CUDACXX=/path/to/nvcc "
             "(scripts/build-cuda-cbk.sh takes nvcc from PyPI)", mpi_buffer_names[b]);
    return -1;
#endif
}

#ifdef CBK_HAVE_GPU
/* Whether the library passes device pointers itself, and how it was asked. */
static bool cuda_aware(const char **query)
{
#if !defined(CBK_HAVE_CUDA)
    /* the test runtime's "device" memory is host memory (docs/gpu.md) */
    *query = "not asked: the GPU runtime is not CUDA";
    return false;
#elif defined(MPIX_GPU_SUPPORT_CUDA)
    int yes = 0;
    *query = "MPIX_GPU_query_support";
    return MPIX_GPU_query_support(MPIX_GPU_SUPPORT_CUDA, &yes) == MPI_SUCCESS && yes;
#elif defined(OMPI_HAVE_MPI_EXT_CUDA) && OMPI_HAVE_MPI_EXT_CUDA
    *query = "MPIX_Query_cuda_support";
    return MPIX_Query_cuda_support() == 1;
#else
    *query = "none: this MPI has no CUDA query, so it is taken as not CUDA-aware";
    return false;
#endif
}
#endif

int mpi_buffers_alloc(struct mpi_state *s, size_t send_bytes, size_t recv_bytes, char *why, size_t len)
{
    if (s->buffer == MPI_BUFFER_HOST) {
        s->buffer_path = "host";
        s->send = cbk_buffer_alloc(send_bytes);
        s->recv = cbk_buffer_alloc(recv_bytes);
        if (!s->send || !s->recv)
            snprintf(why, len, "cannot allocate host buffers of %zu bytes", send_bytes);
        return s->send && s->recv ? 0 : -1;
    }
#ifdef CBK_HAVE_GPU
    const struct cbk_gpu_runtime *rt = cbk_gpu_runtime();
    const char *err = NULL;
    if (s->buffer == MPI_BUFFER_MANAGED) {
        s->buffer_path = "managed";
        s->buffer_query = "not asked: managed memory is host-addressable";
        if (!(err = rt->alloc_managed((void **)&s->send, send_bytes)))
            err = rt->alloc_managed((void **)&s->recv, recv_bytes);
    } else if (cuda_aware(&s->buffer_query)) {
        s->buffer_path = "cuda-aware";
        if (!(err = rt->alloc_device((void **)&s->send, send_bytes)))
            err = rt->alloc_device((void **)&s->recv, recv_bytes);
    } else {
        s->buffer_path = "staged";
        s->staged = true;
        if (!(err = rt->alloc_device(&s->dev_send, send_bytes)) && !(err = rt->alloc_device(&s->dev_recv, recv_bytes)) &&
            !(err = rt->alloc_pinned((void **)&s->send, send_bytes)))
            err = rt->alloc_pinned((void **)&s->recv, recv_bytes);
    }
    if (err)
        snprintf(why, len, "cannot allocate %s buffers of %zu bytes: %s", mpi_buffer_names[s->buffer], send_bytes, err);
    return err ? -1 : 0;
#else
    snprintf(why, len, "--buffer=%s needs a cbk built with CUDA", mpi_buffer_names[s->buffer]);
    return -1;
#endif
}

void mpi_buffers_free(struct mpi_state *s)
{
    if (s->buffer == MPI_BUFFER_HOST) {
        cbk_buffer_free(s->send);
        cbk_buffer_free(s->recv);
        return;
    }
#ifdef CBK_HAVE_GPU
    const struct cbk_gpu_runtime *rt = cbk_gpu_runtime();
    void (*release)(void *) = s->staged ? rt->free_pinned : rt->free_device;
    if (s->send)
        release(s->send);
    if (s->recv)
        release(s->recv);
    if (s->dev_send)
        rt->free_device(s->dev_send);
    if (s->dev_recv)
        rt->free_device(s->dev_recv);
#endif
}

/* Staged path, inside the timed loops: the message copied out of the GPU
 * before its send, and into the GPU after its receive. The copy is
 * synchronous, as a program's cudaMemcpy before MPI_Send is. Returns 0 or
 * MPI_ERR_OTHER, OR-ed into the loop's code. */
int mpi_stage_out(struct mpi_state *s, size_t bytes)
{
#ifdef CBK_HAVE_GPU
    return cbk_gpu_runtime()->copy_sync(s->send, s->dev_send, bytes) ? MPI_ERR_OTHER : MPI_SUCCESS;
#else
    (void)s;
    (void)bytes;
    return MPI_ERR_OTHER;
#endif
}

int mpi_stage_in(struct mpi_state *s, size_t bytes)
{
#ifdef CBK_HAVE_GPU
    return cbk_gpu_runtime()->copy_sync(s->dev_recv, s->recv, bytes) ? MPI_ERR_OTHER : MPI_SUCCESS;
#else
    (void)s;
    (void)bytes;
    return MPI_ERR_OTHER;
#endif
}
