/* The MPI flavour and version of mpi.h, fixed at compile time. Derived
 * MPICHs (Intel MPI, MVAPICH) define MPICH_VERSION too, so they are
 * tested first. */
#include "mpi_build.h"

#ifdef CBK_HAVE_MPI
#include <mpi.h>
#endif

#define CBK_STR_(x) #x
#define CBK_STR(x) CBK_STR_(x)

#ifndef CBK_MPI_COMPILER
#define CBK_MPI_COMPILER "none"
#endif

const char *cbk_mpi_built_with(void)
{
#if !defined(CBK_HAVE_MPI)
    return "none";
#elif defined(I_MPI_VERSION)
    return "Intel MPI " I_MPI_VERSION;
#elif defined(MVAPICH2_VERSION)
    return "MVAPICH " MVAPICH2_VERSION;
#elif defined(MVAPICH_VERSION)
    return "MVAPICH " MVAPICH_VERSION;
#elif defined(MPICH_VERSION)
    return "MPICH " MPICH_VERSION;
#elif defined(OPEN_MPI) && defined(OMPI_MAJOR_VERSION)
    return "Open MPI " CBK_STR(OMPI_MAJOR_VERSION) "." CBK_STR(OMPI_MINOR_VERSION) "." CBK_STR(OMPI_RELEASE_VERSION);
#else
    return "unknown MPI (MPI standard " CBK_STR(MPI_VERSION) "." CBK_STR(MPI_SUBVERSION) ")";
#endif
}

const char *cbk_mpi_compiler(void)
{
    return CBK_MPI_COMPILER;
}
