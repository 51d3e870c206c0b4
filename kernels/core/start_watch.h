/* A rank's note of a long MPI_Init. A rank that dies before MPI_Init (its
 * node's loader missing a library, a wrong path, a missing device) holds
 * the others there for ever under MPICH's Hydra, where no patient wait
 * (patient_wait.h) can note it: MPI is not up. Each rank of a job says, past
 * CBK_WAIT_NOTE_S, "cbk: rank 0 (h01) has waited 30 s in MPI_Init of 2
 * ranks", so that the rank that does not say so (dead, or never started)
 * is named from every rank's notes together (launch/messages.py:
 * waits_named), when the orchestrator ends the launch (--start-timeout). */
#ifndef CBK_START_WATCH_H
#define CBK_START_WATCH_H

struct cbk_stall_watch;

/* Before MPI_Init: a watch of it, where the process manager says this
 * process is a rank of a job of several (PMI_RANK and PMI_SIZE, Open MPI's,
 * Slurm's); NULL otherwise, or without MPI. */
struct cbk_stall_watch *cbk_start_watch_begin(void);
/* Once MPI_Init has returned: the watch ended (NULL: nothing to do). */
void cbk_start_watch_end(struct cbk_stall_watch *w);

#endif
