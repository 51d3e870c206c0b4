/* A rank's note of a long MPI_Init: see start_watch.h. */
#include "start_watch.h"

#include <stddef.h>

#ifdef CBK_HAVE_MPI
#include "patient_wait.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* The first of names that is set to a whole number >= 0; -1 when none is. */
static long first_count(const char *const *names)
{
    for (; *names; names++) {
        const char *text = getenv(*names);
        char *end = NULL;
        long v = text && *text ? strtol(text, &end, 10) : -1;
        if (end && !*end && v >= 0)
            return v;
    }
    return -1;
}

struct cbk_stall_watch *cbk_start_watch_begin(void)
{
    /* Hydra and Slurm's PMI-1/PMI-2; Open MPI; Slurm's own, whatever its --mpi */
    static const char *const rank_names[] = { "PMI_RANK", "OMPI_COMM_WORLD_RANK", "SLURM_PROCID", NULL };
    static const char *const size_names[] = { "PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "SLURM_NTASKS", NULL };
    long rank = first_count(rank_names), size = first_count(size_names);
    if (rank < 0 || size < 2 || rank >= size || size > 1L << 30)
        return NULL;
    /* the watch keeps the pointer: this host's name as every rank's (host_chars 0), for MPI
     * is not up to gather the others' */
    static char host[PATIENT_HOST_CHARS];
    if (gethostname(host, sizeof host - 1) != 0)
        snprintf(host, sizeof host, "%s", "unknown host");
    struct patient_peers on = { .rank = (int)rank, .hosts = host, .host_chars = 0,
                                .note_after_s = cbk_wait_note_s() };
    snprintf(on.every_rank, sizeof on.every_rank, "%ld ranks", size);
    struct cbk_stall_watch *w = cbk_stall_watch_start(&on);
    cbk_stall_watch_enter(w, NULL, 0, "MPI_Init of %s", on.every_rank);
    return w;
}

void cbk_start_watch_end(struct cbk_stall_watch *w)
{
    cbk_stall_watch_leave(w);
    cbk_stall_watch_stop(w);
}

#else

struct cbk_stall_watch *cbk_start_watch_begin(void)
{
    return NULL;
}

void cbk_start_watch_end(struct cbk_stall_watch *w)
{
    (void)w;
}

#endif
