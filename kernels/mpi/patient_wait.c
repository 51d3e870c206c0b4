/* Patient waits on MPI requests: see patient_wait.h. */
#include "patient_wait.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <time.h>

/* Sleeps of a few microseconds are what keeps a completion seen on time:
 * the kernel's default timer slack (50 us) would lengthen every one. Set
 * once, for this thread (the ranks' waits are on their main thread). */
static void sleep_a_little(double waited_s)
{
    static bool slack_set;
    if (!slack_set) {
        prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
        slack_set = true;
    }
    double s = waited_s / 64;
    if (s > 1e-3)
        s = 1e-3;
    struct timespec ts = { 0, (long)(s * 1e9) };
    while (nanosleep(&ts, &ts) && errno == EINTR)
        ;
}

struct many {
    int n;
    MPI_Request *req;
    int *idx;
    const int *peer;   /* the rank of each request, or NULL (a barrier) */
};

/* One line: the peers whose requests are still open after waited_s (a
 * request's status is read without completing it), or the barrier. */
static void note_wait(const struct many *m, const struct patient_peers *on, double waited_s)
{
    char said[1024] = "";
    size_t len = 0;
    int named[8], n_named = 0;   /* each peer once, however many of its requests are open */
    for (int i = 0; m->peer && i < m->n && n_named < 8 && len < sizeof said; i++) {
        int complete = 0, p = m->peer[i];
        if (p < 0 || m->req[i] == MPI_REQUEST_NULL)
            continue;
        MPI_Request_get_status(m->req[i], &complete, MPI_STATUS_IGNORE);
        bool already = false;
        for (int j = 0; j < n_named; j++)
            already = already || named[j] == p;
        if (complete || already)
            continue;
        named[n_named++] = p;
        len += (size_t)snprintf(said + len, sizeof said - len, "%srank %d (%s)", len ? " and " : "", p,
                                on->hosts + (size_t)p * on->host_chars);
    }
    fprintf(stderr, "cbk: rank %d (%s) has waited %.0f s %s%s\n", on->rank,
            on->hosts + (size_t)on->rank * on->host_chars, waited_s, m->peer ? "on " : "in a barrier of every rank",
            m->peer ? (len ? said : "its peers") : "");
    fflush(stderr);
}

/* Polls test(m) until it says done: without pause for PATIENT_SPIN_S,
 * then with sleeps; past on->note_after_s, says whom it waits on, once.
 * Returns the first MPI error. */
static int patient(int (*test)(struct many *m, int *done), struct many *m, const struct patient_peers *on)
{
    double start = MPI_Wtime();
    bool noted = !on || on->note_after_s <= 0;
    for (;;) {
        int done = 0, err = test(m, &done);
        if (err != MPI_SUCCESS || done)
            return err;
        double waited = MPI_Wtime() - start;
        if (waited > PATIENT_SPIN_S) {
            if (!noted && waited > on->note_after_s) {
                note_wait(m, on, waited);
                noted = true;
            }
            sleep_a_little(waited);
        }
    }
}

static int test_all(struct many *m, int *done)
{
    return MPI_Testall(m->n, m->req, done, MPI_STATUSES_IGNORE);
}

static int test_any(struct many *m, int *done)
{
    return MPI_Testany(m->n, m->req, m->idx, done, MPI_STATUS_IGNORE);
}

int cbk_patient_waitall(int n, MPI_Request *req, const int *peer, const struct patient_peers *on)
{
    struct many m = { n, req, NULL, peer };
    return patient(test_all, &m, on);
}

int cbk_patient_waitany(int n, MPI_Request *req, int *idx, const int *peer, const struct patient_peers *on)
{
    struct many m = { n, req, idx, peer };
    return patient(test_any, &m, on);
}

/* Every rank tells rank 0 it arrived, and rank 0, having heard from each
 * in turn, lets every rank go: rank 0's wait on each rank is on that rank,
 * so a rank that never arrives (a node stopped) is named. MPI_Ibarrier's
 * wait knows no peer: a rank stopped between two rounds left every other
 * saying only "in a barrier". Linear in the ranks, and only between the
 * timed rounds. Non-overtaking order on (rank, tag) keeps two barriers'
 * messages apart. */
int cbk_patient_barrier(MPI_Comm comm, const struct patient_peers *on)
{
    int rank, size, err = MPI_SUCCESS;
    char word = 0;   /* no byte moves; a buffer all the same, for MPI libraries that check it */
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    MPI_Request req[2];
    if (rank != 0) {
        struct many m = { 2, req, NULL, NULL };
        MPI_Isend(&word, 0, MPI_BYTE, 0, PATIENT_BARRIER_TAG, comm, &req[0]);
        MPI_Irecv(&word, 0, MPI_BYTE, 0, PATIENT_BARRIER_TAG, comm, &req[1]);
        return patient(test_all, &m, on);
    }
    for (int r = 1; r < size && err == MPI_SUCCESS; r++) {
        struct many m = { 1, req, NULL, &r };
        MPI_Irecv(&word, 0, MPI_BYTE, r, PATIENT_BARRIER_TAG, comm, &req[0]);
        err = patient(test_all, &m, on);
    }
    for (int r = 1; r < size && err == MPI_SUCCESS; r++) {
        struct many m = { 1, req, NULL, &r };
        MPI_Isend(&word, 0, MPI_BYTE, r, PATIENT_BARRIER_TAG, comm, &req[0]);
        err = patient(test_all, &m, on);
    }
    return err;
}
