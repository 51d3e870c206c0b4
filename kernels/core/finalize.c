#include "finalize.h"

#include "cbk.h"
#include "mpich_slab.h"
#include "seconds_knob.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifdef CBK_HAVE_MPI

/* Why a watchdog: Debian 12's MPICH 4.0.2 on UCX 1.13 hangs now and then in
 * MPI_Finalize between hosts that talk TCP (openucx/ucx#8738: the TCP
 * transport stops progressing endpoints that MPICH still flushes while it
 * closes them). One rank then spins in ucp_worker_progress, its peer waits
 * in the PMI barrier for it, and mpiexec never returns. The barrier below
 * makes it rare (no message is in flight when finalize starts); it does not
 * remove it (cbk mpi --op=pingpong between two test hosts still hung in 1
 * of 8 runs). Everything the run measured is written and flushed before the
 * barrier, so a rank that cannot finish finalizing loses nothing by
 * ending: every rank ends within the bound, the one spinning and the one
 * waiting for it, and the launcher sees each end with the run's status. */
struct watchdog {
    pthread_mutex_t lock;
    pthread_cond_t done_cv;
    int done;
    double timeout_s;
    int status;
    int rank;
};

static void *watch(void *arg)
{
    struct watchdog *w = arg;
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    double whole = (double)(time_t)w->timeout_s;
    deadline.tv_sec += (time_t)w->timeout_s;
    deadline.tv_nsec += (long)((w->timeout_s - whole) * 1e9);
    if (deadline.tv_nsec >= 1000000000L) {
        deadline.tv_sec++;
        deadline.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&w->lock);
    int rc = 0;
    /* only 0 (woken) or ETIMEDOUT: any other answer returns at once without
     * waiting, and looping on it would spin while holding the lock */
    while (!w->done && rc == 0)
        rc = pthread_cond_timedwait(&w->done_cv, &w->lock, &deadline);
    while (!w->done && rc != ETIMEDOUT)
        pthread_cond_wait(&w->done_cv, &w->lock);
    int finished = w->done;
    pthread_mutex_unlock(&w->lock);
    if (!finished) {
        char line[256];
        int n = snprintf(line, sizeof line,
                         "cbk: rank %d: MPI_Finalize did not return within %g s (CBK_FINALIZE_TIMEOUT_S); "
                         "the results were already written, ending with status %d\n",
                         w->rank, w->timeout_s, w->status);
        if (n > 0)
            (void)!write(STDERR_FILENO, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
        cbk_mpich_remove_slabs();
        _exit(w->status);
    }
    return NULL;
}

static double finalize_timeout_s(void)
{
    double v;
    cbk_seconds_knob("CBK_FINALIZE_TIMEOUT_S", CBK_FINALIZE_TIMEOUT_S_DEFAULT, &v);   /* refused at the start when bad */
    /* inf, or a bound past any deadline a timespec holds (1e300 made
     * (time_t) undefined and the deadline garbage): no bound, as 0 */
    return v > CBK_FINALIZE_TIMEOUT_S_MAX ? 0 : v;
}

void cbk_finalize(int status)
{
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    fflush(stdout);
    fflush(stderr);
    MPI_Barrier(MPI_COMM_WORLD);
    struct watchdog w = { .done = 0, .timeout_s = finalize_timeout_s(), .status = status, .rank = rank };
    pthread_mutex_init(&w.lock, NULL);
    pthread_cond_init(&w.done_cv, NULL);
    pthread_t thread;
    int watching = w.timeout_s > 0 && pthread_create(&thread, NULL, watch, &w) == 0;
    MPI_Finalize();
    if (watching) {
        pthread_mutex_lock(&w.lock);
        w.done = 1;
        pthread_cond_signal(&w.done_cv);
        pthread_mutex_unlock(&w.lock);
        pthread_join(thread, NULL);
    }
    pthread_cond_destroy(&w.done_cv);
    pthread_mutex_destroy(&w.lock);
}

#else

void cbk_finalize(int status)
{
    (void)status;
}

#endif
