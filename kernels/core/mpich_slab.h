/* MPICH's shared-memory slab and the files it leaves in /dev/shm.
 *
 * MPICH (ch4, 4.2 and later) keeps each job's slab as a named file,
 * /dev/shm/mpich_shm_<world id>_<node>, from MPI_Init until MPI_Finalize.
 * A job that ends otherwise (MPI_Abort, SIGKILL) leaves it: memory of the
 * node, 2 MiB a job, until someone removes it. A singleton's world id is
 * its process id, so a later singleton given the same pid opens the old
 * file: another user's, and MPI_Init fails with "Out of memory"
 * (MPIDI_POSIX_comm_bootstrap); its own, and it reuses a stale slab. On a
 * shared node where other jobs were killed, that was one cbk launch in ten
 * (2026-12-06: 5,400 such files, 32,768 pids). */
#ifndef CBK_MPICH_SLAB_H
#define CBK_MPICH_SLAB_H

/* In a singleton of an MPICH cbk whose pid names a slab file this user
 * may not open (another user's): forks until a child's pid names none it
 * cannot open, and returns in that child, which a kill -9 of the parent
 * ends too (PR_SET_PDEATHSIG); the parent passes stop signals on, waits,
 * and exits as the child did (removing the child's slab if a signal ended
 * it). Otherwise (this user's own stale file MPICH reuses) returns at once.
 * Call before MPI_Init, before any thread or signal handler. */
void cbk_mpich_fresh_singleton_pid(void);

/* Notes the names of the MPICH slab files this process has mapped and
 * owns: call right after MPI_Init. */
void cbk_mpich_note_slabs(void);

/* Removes the files noted (async-signal-safe): on the ways out that skip
 * MPI_Finalize, which would remove them (MPI_Abort, a stop signal, a
 * finalize that hangs). Every rank of the job is past MPI_Init by then, so
 * none still has to open them by name. */
void cbk_mpich_remove_slabs(void);

#endif
