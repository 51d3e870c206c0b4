/* Patient waits on MPI requests: see patient_wait.h. */
#include "patient_wait.h"

#include <errno.h>
#include <stdbool.h>
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

/* Polls test(arg) until it says done: without pause for PATIENT_SPIN_S,
 * then with sleeps. Returns the first MPI error. */
static int patient(int (*test)(void *arg, int *done), void *arg)
{
    double start = MPI_Wtime();
    for (;;) {
        int done = 0, err = test(arg, &done);
        if (err != MPI_SUCCESS || done)
            return err;
        double waited = MPI_Wtime() - start;
        if (waited > PATIENT_SPIN_S)
            sleep_a_little(waited);
    }
}

struct many {
    int n;
    MPI_Request *req;
    int *idx;
};

static int test_all(void *arg, int *done)
{
    struct many *m = arg;
    return MPI_Testall(m->n, m->req, done, MPI_STATUSES_IGNORE);
}

static int test_any(void *arg, int *done)
{
    struct many *m = arg;
    return MPI_Testany(m->n, m->req, m->idx, done, MPI_STATUS_IGNORE);
}

int cbk_patient_waitall(int n, MPI_Request *req)
{
    struct many m = { n, req, NULL };
    return patient(test_all, &m);
}

int cbk_patient_waitany(int n, MPI_Request *req, int *idx)
{
    struct many m = { n, req, idx };
    return patient(test_any, &m);
}

int cbk_patient_barrier(MPI_Comm comm)
{
    MPI_Request req;
    int err = MPI_Ibarrier(comm, &req);
    return err != MPI_SUCCESS ? err : cbk_patient_waitall(1, &req);
}
