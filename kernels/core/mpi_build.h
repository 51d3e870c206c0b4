/* Which MPI cbk was compiled against, as mpi.h said at build time.
 * MPI_Get_library_version names the library loaded at run time instead:
 * a site that loads another MPI module than the one cbk was built with
 * sees the two differ (clusterbench --version warns). */
#ifndef CBK_MPI_BUILD_H
#define CBK_MPI_BUILD_H

/* "MPICH 4.1.2", "Open MPI 4.1.5", "Intel MPI 2021.10.0", ...; "none"
 * without MPI. */
const char *cbk_mpi_built_with(void);
/* The MPI compiler wrapper CMake found ("none" without MPI). */
const char *cbk_mpi_compiler(void);

#endif
