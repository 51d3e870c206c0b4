/* Waits on MPI requests that spin only while a completion is near: they poll
 * (MPI_Test*) without pause for the first PATIENT_SPIN_S of a wait, as the
 * library's own wait would, then sleep between polls, each sleep at most
 * 1/64 of the time waited so far (and at most 1 ms), so a completion is
 * seen at most about 1.6 % late.
 *
 * Why: a rank waiting on a slow link (a shaped test-cluster link, a
 * congested one) or on its turn (linkmatrix's one-pair pattern) spins at
 * 100 % CPU for as long as it waits; where ranks share cores (a test
 * cluster on a laptop, an oversubscribed node) that CPU is taken from the
 * ranks doing the work. On a real link a message completes within the spin,
 * so nothing changes there. */
#ifndef CBK_PATIENT_WAIT_H
#define CBK_PATIENT_WAIT_H

#include <mpi.h>
#include <stddef.h>

#define PATIENT_SPIN_S 1e-3
#define PATIENT_BARRIER_TAG 32767   /* the largest tag MPI guarantees: none of a kernel's own */

/* Whom a wait is on, so that a wait past note_after_s says so on stderr,
 * once, naming each peer whose request is still open: "cbk: rank 1 (h02)
 * has waited 30 s on rank 2 (h03)". A peer stopped (a node frozen, its
 * processes SIGSTOPped) holds every rank for ever; the launcher's time
 * limit then ends the step, and this line names the node it waited on. */
struct patient_peers {
    int rank;                  /* the waiting rank */
    const char *hosts;         /* every rank's host name, host_chars apart */
    size_t host_chars;
    double note_after_s;       /* <= 0: say nothing */
};

/* As MPI_Waitall with MPI_STATUSES_IGNORE; peer[i] is the rank request i
 * is with (MPI_PROC_NULL: none), on says who waits (NULL: say nothing). */
int cbk_patient_waitall(int n, MPI_Request *req, const int *peer, const struct patient_peers *on);
/* As MPI_Waitany with MPI_STATUS_IGNORE: *idx is MPI_UNDEFINED when every
 * request was already null. */
int cbk_patient_waitany(int n, MPI_Request *req, int *idx, const int *peer, const struct patient_peers *on);
/* As MPI_Barrier, by zero-byte messages through rank 0, whose long wait
 * names the rank not yet arrived; another rank's is said to be in a
 * barrier (whichever rank is late holds it). */
int cbk_patient_barrier(MPI_Comm comm, const struct patient_peers *on);

#endif
