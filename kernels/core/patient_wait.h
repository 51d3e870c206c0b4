/* Waits on MPI requests that spin only while a completion is near (in core
 * for the driver's waits too; built only with MPI, CBK_HAVE_MPI): they poll
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
#define PATIENT_HOST_CHARS 64
#define PATIENT_NOTE_S_DEFAULT 30.0
#define PATIENT_HOSTS_NAMED 16      /* more than these: "300 ranks on more than 16 hosts" */

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
    /* "3 ranks on h01, h02, h03": the waits that know no peer (a barrier, a
     * collective) say whom they are of, so that the ranks that do not say
     * so, and a host none of whose ranks does, can be named from every
     * rank's notes together (launch/messages.py: waits_named) */
    char every_rank[PATIENT_HOSTS_NAMED * (PATIENT_HOST_CHARS + 2) + 32];
};

/* As MPI_Waitall with MPI_STATUSES_IGNORE; peer[i] is the rank request i
 * is with (MPI_PROC_NULL: none), on says who waits (NULL: say nothing). */
int cbk_patient_waitall(int n, MPI_Request *req, const int *peer, const struct patient_peers *on);
/* As MPI_Waitany with MPI_STATUS_IGNORE: *idx is MPI_UNDEFINED when every
 * request was already null. */
int cbk_patient_waitany(int n, MPI_Request *req, int *idx, const int *peer, const struct patient_peers *on);
/* As MPI_Wait with MPI_STATUS_IGNORE on a collective's request (it knows no
 * peer): a long wait says it is "in <what>", which says whom the
 * collective is of (on->every_rank), so that the rank that does not say so
 * is named from every rank's notes together. */
int cbk_patient_wait_in(MPI_Request *req, const char *what, const struct patient_peers *on);
/* As MPI_Barrier, by zero-byte messages in ceil(log2 size) rounds (a
 * dissemination barrier), each rank's round waiting on one peer: a long
 * wait names it, "on rank 2 (h03) in a barrier of <every_rank>"; that
 * peer may wait itself, and whichever rank does not say so holds them all.
 * Not for a timed region: its waits sleep, so ranks leave it up to about
 * 1 ms apart (an MPI_Barrier after it aligns them again). */
int cbk_patient_barrier(MPI_Comm comm, const struct patient_peers *on);

/* CBK_WAIT_NOTE_S, in seconds (PATIENT_NOTE_S_DEFAULT when unset; 0: say
 * nothing). */
double cbk_wait_note_s(void);
/* Fills on for this rank of comm: every rank's host name (collective; a
 * buffer of PATIENT_HOST_CHARS a rank, the caller frees on->hosts),
 * every_rank and CBK_WAIT_NOTE_S. Its own wait is patient: a rank stopped
 * before it (a node frozen in the set-up) leaves the others saying they
 * wait "in the set-up's exchange of host names". Returns -1 when out of
 * memory (on->hosts NULL). */
int cbk_patient_peers_gather(MPI_Comm comm, struct patient_peers *on);

/* A stall watch: for the waits that may not be patient, those of a timed
 * loop (a patient wait polls and sleeps where the library would block:
 * that is a different measurement). A thread of its own, which never
 * calls MPI (MPI_THREAD_FUNNELED is all cbk asks for), sleeps until a
 * watched stretch has stood still note_after_s, then says so on stderr, once,
 * as a patient wait does: "cbk: rank 1 (h02) has waited 30 s in <what>",
 * <what> naming the phase and, where the loop has one, the peer, else
 * on->every_rank. It cannot tell which rank of a collective is missing:
 * it may not ask MPI, nothing a rank posts before the loop says how far
 * another got in it, and the loop writes nothing another rank could read
 * (that would be work in the timed region). The ranks that do not say so
 * are the ones missing, named from every rank's notes together. Entering
 * (a lock, a clock read and a signal that wakes the thread) and leaving (a
 * lock) are outside the timed loop: enter before the barrier or untimed
 * warm-up exchange that starts it, so that the thread's wake-up is
 * absorbed there. Nothing inside the loop changes; the thread wakes during a loop only once every
 * note_after_s of it (30 s by default), to read the times the loop has
 * written: a loop shorter than that never meets it. */
struct cbk_stall_watch;
/* NULL (every call below then does nothing) when on says nothing or no
 * thread can be started. */
struct cbk_stall_watch *cbk_stall_watch_start(const struct patient_peers *on);
/* Watches from now on, until leave, under the name printf(fmt, ...).
 * progress: the count doubles the stretch's loop writes as it goes (its
 * per-iteration times), read by the thread once every note_after_s: a
 * stretch is noted once they have not changed for note_after_s, so a
 * long loop that moves on is not taken for a stall. NULL: noted once the
 * stretch has lasted note_after_s. */
void cbk_stall_watch_enter(struct cbk_stall_watch *w, const double *progress, size_t count, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
void cbk_stall_watch_leave(struct cbk_stall_watch *w);
void cbk_stall_watch_stop(struct cbk_stall_watch *w);

#endif
