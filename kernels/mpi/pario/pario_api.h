/* pario's I/O back ends, one vtable per API as IOR has them (aiori).
 * The kernel (pario.c) decides who opens what, pario_layout.c which offsets
 * each rank moves; a back end only opens, moves bytes at offsets, syncs and
 * closes.
 * Adding an API = one file defining one `const struct pario_api` and one
 * line in the table in pario.c. */
#ifndef PARIO_API_H
#define PARIO_API_H

#include <mpi.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum pario_open { PARIO_WRITE, PARIO_READ };

struct pario_file {
    const char *path;
    bool direct;     /* set by the driver before open: bypass the page cache */
    int fd;          /* posix */
    MPI_File fh;     /* mpiio */
    const char *hints;          /* mpiio: "key=value,..." for MPI_File_open, or "" */
    char hints_in_effect[2048]; /* mpiio: "key=value;..." as MPI_File_get_info returns them */
    char err[512];   /* the last failure: call, path and the library's reason */
};

struct pario_api {
    const char *name;
    bool collective; /* offers collective transfers (write_at_all) */
    /* Opens `path`: every rank of `comm` calls it together (MPI_COMM_SELF
     * for a file one rank opens alone). Each returns 0, or -1 with f->err
     * filled. */
    int (*open)(struct pario_file *f, const char *path, enum pario_open how, MPI_Comm comm);
    /* Moves exactly `len` bytes; `collective` only when the API has it. */
    int (*write_at)(struct pario_file *f, uint64_t offset, const void *buf, size_t len, bool collective);
    int (*read_at)(struct pario_file *f, uint64_t offset, void *buf, size_t len, bool collective);
    /* Durable: data on the device (MPI_File_sync is collective over the
     * opening communicator). */
    int (*sync)(struct pario_file *f);
    int (*close)(struct pario_file *f);
};

extern const struct pario_api pario_posix;
extern const struct pario_api pario_mpiio;

#endif
