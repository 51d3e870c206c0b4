/* pario MPI-IO back end, as IOR -a MPIIO: MPI_File_write_at (independent)
 * or MPI_File_write_at_all (collective, so ROMIO's two-phase I/O and data
 * sieving apply); MPI_File_sync for durability. File errors return codes
 * (MPI_ERRORS_RETURN is the default handler for files), turned into text
 * with MPI_Error_string. */
#include "pario_api.h"

#include <stdio.h>
#include <string.h>

static int check(struct pario_file *f, int rc, const char *call)
{
    if (rc == MPI_SUCCESS)
        return 0;
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, msg, &len);
    snprintf(f->err, sizeof f->err, "%s %s: %.*s", call, f->path, len, msg);
    return -1;
}

/* MPI counts are int: move more than 1 GiB in pieces (transfers are at
 * most 2 GiB by validation, so this loops at most twice). */
#define PIECE_BYTES ((size_t)1 << 30)

static int moved(struct pario_file *f, MPI_Status *st, size_t want, const char *call)
{
    int count = 0;
    MPI_Get_count(st, MPI_BYTE, &count);
    if ((size_t)count == want)
        return 0;
    snprintf(f->err, sizeof f->err, "%s %s: moved %d of %zu bytes (file shorter than expected?)", call,
             f->path, count, want);
    return -1;
}

/* "key=value,key=value" (validated by pario) into an MPI_Info, as IOR's
 * IOR_HINT__MPI__key=value lines become one. */
static MPI_Info info_of(const char *hints)
{
    MPI_Info info = MPI_INFO_NULL;
    if (!hints || !*hints)
        return info;
    MPI_Info_create(&info);
    char buf[2048];
    snprintf(buf, sizeof buf, "%s", hints);
    for (char *save = NULL, *kv = strtok_r(buf, ",", &save); kv; kv = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(kv, '=');
        if (eq) {
            *eq = '\0';
            MPI_Info_set(info, kv, eq + 1);
        }
    }
    return info;
}

/* The hints the library attached to the open file ("key=value;..."). */
static void hints_in_effect(struct pario_file *f)
{
    MPI_Info info;
    int nkeys = 0, flag, pos = 0;
    f->hints_in_effect[0] = '\0';
    if (MPI_File_get_info(f->fh, &info) != MPI_SUCCESS)
        return;
    MPI_Info_get_nkeys(info, &nkeys);
    for (int i = 0; i < nkeys && pos < (int)sizeof f->hints_in_effect; i++) {
        char key[MPI_MAX_INFO_KEY + 1], value[256];
        MPI_Info_get_nthkey(info, i, key);
        MPI_Info_get(info, key, sizeof value - 1, value, &flag);
        pos += snprintf(f->hints_in_effect + pos, sizeof f->hints_in_effect - (size_t)pos, "%s%s=%s", i ? ";" : "",
                        key, flag ? value : "");
    }
    MPI_Info_free(&info);
}

static int mpiio_open(struct pario_file *f, const char *path, enum pario_open how, MPI_Comm comm)
{
    f->path = path;
    int mode = how == PARIO_WRITE ? MPI_MODE_WRONLY | MPI_MODE_CREATE : MPI_MODE_RDONLY;
    MPI_Info info = info_of(f->hints);
    int rc = check(f, MPI_File_open(comm, path, mode, info, &f->fh), "MPI_File_open");
    if (info != MPI_INFO_NULL)
        MPI_Info_free(&info);
    if (!rc)
        hints_in_effect(f);
    return rc;
}

static int mpiio_write_at(struct pario_file *f, uint64_t offset, const void *buf, size_t len, bool collective)
{
    const char *p = buf;
    for (size_t done = 0; done < len;) {
        size_t n = len - done < PIECE_BYTES ? len - done : PIECE_BYTES;
        MPI_Status st;
        MPI_Offset at = (MPI_Offset)(offset + done);
        int rc = collective ? MPI_File_write_at_all(f->fh, at, p + done, (int)n, MPI_BYTE, &st)
                            : MPI_File_write_at(f->fh, at, p + done, (int)n, MPI_BYTE, &st);
        const char *call = collective ? "MPI_File_write_at_all" : "MPI_File_write_at";
        if (check(f, rc, call) || moved(f, &st, n, call))
            return -1;
        done += n;
    }
    return 0;
}

static int mpiio_read_at(struct pario_file *f, uint64_t offset, void *buf, size_t len, bool collective)
{
    char *p = buf;
    for (size_t done = 0; done < len;) {
        size_t n = len - done < PIECE_BYTES ? len - done : PIECE_BYTES;
        MPI_Status st;
        MPI_Offset at = (MPI_Offset)(offset + done);
        int rc = collective ? MPI_File_read_at_all(f->fh, at, p + done, (int)n, MPI_BYTE, &st)
                            : MPI_File_read_at(f->fh, at, p + done, (int)n, MPI_BYTE, &st);
        const char *call = collective ? "MPI_File_read_at_all" : "MPI_File_read_at";
        if (check(f, rc, call) || moved(f, &st, n, call))
            return -1;
        done += n;
    }
    return 0;
}

static int mpiio_sync(struct pario_file *f) { return check(f, MPI_File_sync(f->fh), "MPI_File_sync"); }

static int mpiio_close(struct pario_file *f) { return check(f, MPI_File_close(&f->fh), "MPI_File_close"); }

const struct pario_api pario_mpiio = {
    .name = "mpiio",
    .collective = true,
    .open = mpiio_open,
    .write_at = mpiio_write_at,
    .read_at = mpiio_read_at,
    .sync = mpiio_sync,
    .close = mpiio_close,
};
