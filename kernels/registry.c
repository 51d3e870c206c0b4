/* The one list of kernels. Adding a kernel: one file under kernels/<family>/
 * and one line here (inside #ifdef CBK_HAVE_MPI when it needs MPI, inside
 * #ifdef CBK_HAVE_GPU when it needs a GPU runtime, then also a line in
 * cbk_left_out with its family, for the builds without it). */
#include "core/cbk.h"

#include <string.h>

extern const struct cbk_kernel cbk_kernel_null;
extern const struct cbk_kernel cbk_kernel_seqio;
extern const struct cbk_kernel cbk_kernel_manyfiles;
extern const struct cbk_kernel cbk_kernel_metadata;
extern const struct cbk_kernel cbk_kernel_randio;
extern const struct cbk_kernel cbk_kernel_himeno;
extern const struct cbk_kernel cbk_kernel_stream;
extern const struct cbk_kernel cbk_kernel_cpufreq;
extern const struct cbk_kernel cbk_kernel_tcp;
#ifdef CBK_HAVE_MPI
extern const struct cbk_kernel cbk_kernel_mpi;
extern const struct cbk_kernel cbk_kernel_pario;
extern const struct cbk_kernel cbk_kernel_linkmatrix;
#endif
#ifdef CBK_HAVE_GPU
extern const struct cbk_kernel cbk_kernel_gpucopy;
extern const struct cbk_kernel cbk_kernel_gpumem;
extern const struct cbk_kernel cbk_kernel_gpupeer;
#endif

const struct cbk_kernel *const cbk_kernels[] = {
    &cbk_kernel_seqio,
    &cbk_kernel_manyfiles,
    &cbk_kernel_metadata,
    &cbk_kernel_randio,
    &cbk_kernel_himeno,
    &cbk_kernel_stream,
    &cbk_kernel_cpufreq,
    &cbk_kernel_tcp,
    &cbk_kernel_null,
#ifdef CBK_HAVE_MPI
    &cbk_kernel_mpi,
    &cbk_kernel_pario,
    &cbk_kernel_linkmatrix,
#endif
#ifdef CBK_HAVE_GPU
    &cbk_kernel_gpucopy,
    &cbk_kernel_gpumem,
    &cbk_kernel_gpupeer,
#endif
    NULL,
};

#define NO_MPI "this cbk was built without MPI: rebuild it with an mpicc on PATH (or MPICC=/path/to/mpicc)"
#define NO_CUDA "this cbk was built without CUDA: rebuild it with nvcc on PATH or CUDACXX=/path/to/nvcc " \
    "(scripts/build-cuda-cbk.sh takes nvcc from PyPI)"
const struct cbk_left_out cbk_left_out[] = {
#ifndef CBK_HAVE_MPI
    { "mpi", CBK_FAMILY_MPI, NO_MPI }, { "pario", CBK_FAMILY_IO, NO_MPI }, { "linkmatrix", CBK_FAMILY_MPI, NO_MPI },
#endif
#ifndef CBK_HAVE_GPU
    { "gpucopy", CBK_FAMILY_GPU, NO_CUDA }, { "gpumem", CBK_FAMILY_GPU, NO_CUDA },
    { "gpupeer", CBK_FAMILY_GPU, NO_CUDA },
#endif
    { NULL, NULL, NULL },
};

const char *cbk_left_out_why(const char *name)
{
    for (const struct cbk_left_out *l = cbk_left_out; l->name; l++)
        if (!strcmp(l->name, name))
            return l->why;
    return NULL;
}

const struct cbk_kernel *cbk_find_kernel(const char *name)
{
    for (const struct cbk_kernel *const *k = cbk_kernels; *k; k++)
        if (!strcmp((*k)->name, name))
            return *k;
    return NULL;
}
