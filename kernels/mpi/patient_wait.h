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

#define PATIENT_SPIN_S 1e-3

/* As MPI_Waitall with MPI_STATUSES_IGNORE. */
int cbk_patient_waitall(int n, MPI_Request *req);
/* As MPI_Waitany with MPI_STATUS_IGNORE: *idx is MPI_UNDEFINED when every
 * request was already null. */
int cbk_patient_waitany(int n, MPI_Request *req, int *idx);
/* As MPI_Barrier (MPI_Ibarrier, then a patient wait). */
int cbk_patient_barrier(MPI_Comm comm);

#endif
