/* Patient waits on MPI requests: see patient_wait.h. */
/* Only where MPI is built in: core builds without it too (CMakeLists.txt). */
#ifdef CBK_HAVE_MPI
#include "patient_wait.h"

#include "seconds_knob.h"
#include "threads.h"
#include "test_stop.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

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
    const int *peer;   /* the rank of each request, or NULL (a barrier, a collective) */
    const char *what;  /* where a wait with no peer is: "a barrier of 3 ranks on ..." */
};

/* One line: the peers whose requests are still open after waited_s (a
 * request's status is read without completing it), or what it is in. */
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
    /* a wait with peers inside a larger whole (a barrier's round) says both:
     * the peer it waits on may itself wait, on the rank that says nothing */
    fprintf(stderr, "cbk: rank %d (%s) has waited %.0f s %s%s%s%s\n", on->rank,
            on->hosts + (size_t)on->rank * on->host_chars, waited_s, m->peer ? "on " : "in ",
            m->peer ? (len ? said : "its peers") : m->what, m->peer && m->what ? " in " : "",
            m->peer && m->what ? m->what : "");
    fflush(stderr);
}

/* One wait's clock, which the waits of its parts share (a barrier's
 * rounds): the spin, the sleeps and the one note count from its start. */
struct waited {
    double start_s;
    bool noted;
};

static struct waited waited_from_now(const struct patient_peers *on)
{
    return (struct waited){ MPI_Wtime(), !on || on->note_after_s <= 0 };
}

/* Polls test(m) until it says done: without pause for PATIENT_SPIN_S of
 * w, then with sleeps; past on->note_after_s of w, says whom it waits on,
 * once a w. Returns the first MPI error. */
static int patient_part(int (*test)(struct many *m, int *done), struct many *m, const struct patient_peers *on,
                        struct waited *w)
{
    for (;;) {
        int done = 0, err = test(m, &done);
        if (err != MPI_SUCCESS || done)
            return err;
        double waited = MPI_Wtime() - w->start_s;
        if (waited > PATIENT_SPIN_S) {
            if (!w->noted && waited > on->note_after_s) {
                note_wait(m, on, waited);
                w->noted = true;
            }
            sleep_a_little(waited);
        }
    }
}

static int patient(int (*test)(struct many *m, int *done), struct many *m, const struct patient_peers *on)
{
    struct waited w = waited_from_now(on);
    return patient_part(test, m, on, &w);
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
    struct many m = { n, req, NULL, peer, NULL };
    return patient(test_all, &m, on);
}

int cbk_patient_waitany(int n, MPI_Request *req, int *idx, const int *peer, const struct patient_peers *on)
{
    struct many m = { n, req, idx, peer, NULL };
    return patient(test_any, &m, on);
}

int cbk_patient_wait_in(MPI_Request *req, const char *what, const struct patient_peers *on)
{
    struct many m = { 1, req, NULL, NULL, what };
    return patient(test_all, &m, on);
}

/* A dissemination barrier (Hensgen, Finkel and Manber 1988; MPICH's own
 * MPI_Barrier for small communicators): in round k every rank sends to
 * rank + 2^k and hears from rank - 2^k, so after ceil(log2 size) rounds
 * each has heard, through some chain, from every rank; each rank sends and
 * waits on one message a round, log2 of the ranks in all (the barrier
 * through rank 0 it replaces had rank 0 wait on each rank in turn, linear
 * in the ranks, and it runs between every kernel's repetitions). Each
 * round's wait is on one peer, so a long one names it; that peer may be
 * waiting itself, so the note says it is in a barrier of every rank, and
 * the rank that does not say so (a node stopped) holds it. One clock for
 * all rounds: the note comes once, note_after_s after the barrier began.
 * One tag serves every round and every barrier: the sources of one
 * barrier's rounds are all different (2^k < size), and messages between
 * two ranks on one tag are never overtaken, so a barrier's message is
 * never taken by another. */
int cbk_patient_barrier(MPI_Comm comm, const struct patient_peers *on)
{
    int rank, size, err = MPI_SUCCESS;
    char word = 0;   /* no byte moves; a buffer all the same, for MPI libraries that check it */
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    cbk_test_stop_at(rank, "barrier");
    char what[sizeof on->every_rank + 32];
    snprintf(what, sizeof what, "a barrier of %s", on ? on->every_rank : "every rank");
    struct waited w = waited_from_now(on);
    /* the distance doubles each round; past size / 2 that round is the last
     * (doubling it could overflow an int) */
    for (int distance = 1; distance < size && err == MPI_SUCCESS;
         distance = distance > size / 2 ? size : 2 * distance) {
        /* rank + distance and rank - distance, modulo size, with no sum past size */
        int peer[2] = { distance < size - rank ? rank + distance : rank - (size - distance),
                        rank >= distance ? rank - distance : rank + (size - distance) };
        MPI_Request req[2];
        MPI_Isend(&word, 0, MPI_BYTE, peer[0], PATIENT_BARRIER_TAG, comm, &req[0]);
        MPI_Irecv(&word, 0, MPI_BYTE, peer[1], PATIENT_BARRIER_TAG, comm, &req[1]);
        struct many m = { 2, req, NULL, peer, what };
        err = patient_part(test_all, &m, on, &w);
    }
    return err;
}

double cbk_wait_note_s(void)
{
    double v;
    cbk_seconds_knob("CBK_WAIT_NOTE_S", PATIENT_NOTE_S_DEFAULT, &v);   /* refused at the start when bad */
    return v;
}

/* "3 ranks on h01, h02, h03": each host once, in the order of its first
 * rank; past PATIENT_HOSTS_NAMED hosts no names ("300 ranks on more than
 * 16 hosts"), so that a line stays short on a large job. */
static void describe_every_rank(struct patient_peers *on, int size)
{
    const char *named[PATIENT_HOSTS_NAMED];
    int n_named = 0;
    bool more = false;
    for (int r = 0; r < size && !more; r++) {
        const char *h = on->hosts + (size_t)r * on->host_chars;
        bool seen = false;
        for (int j = 0; j < n_named && !seen; j++)
            seen = strcmp(named[j], h) == 0;
        if (!seen && n_named == PATIENT_HOSTS_NAMED)
            more = true;
        else if (!seen)
            named[n_named++] = h;
    }
    size_t len = (size_t)snprintf(on->every_rank, sizeof on->every_rank, "%d ranks on ", size);
    if (more) {
        snprintf(on->every_rank + len, sizeof on->every_rank - len, "more than %d hosts", PATIENT_HOSTS_NAMED);
        return;
    }
    for (int j = 0; j < n_named && len < sizeof on->every_rank; j++)
        len += (size_t)snprintf(on->every_rank + len, sizeof on->every_rank - len, "%s%s", j ? ", " : "", named[j]);
}

int cbk_patient_peers_gather(MPI_Comm comm, struct patient_peers *on)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    cbk_test_stop_at(rank, "setup");
    char me[PATIENT_HOST_CHARS] = { 0 };
    gethostname(me, sizeof me - 1);
    char *hosts = calloc((size_t)size, PATIENT_HOST_CHARS);
    /* until the names are here, this rank's own: host_chars 0 makes every rank's name it */
    struct patient_peers self = { .rank = rank, .hosts = me, .host_chars = 0, .note_after_s = cbk_wait_note_s() };
    char what[128];
    snprintf(what, sizeof what,
             "the set-up's exchange of host names, a collective of %d ranks: a rank that does not say so holds it",
             size);
    /* every rank takes part, out of memory or not: the others would wait in it */
    MPI_Request req;
    MPI_Iallgather(me, PATIENT_HOST_CHARS, MPI_CHAR, hosts ? hosts : me, hosts ? PATIENT_HOST_CHARS : 0, MPI_CHAR,
                   comm, &req);
    cbk_patient_wait_in(&req, what, &self);
    *on = (struct patient_peers){ rank, hosts, PATIENT_HOST_CHARS, self.note_after_s, "" };
    if (hosts)
        describe_every_rank(on, size);
    return hosts ? 0 : -1;
}

/* The watch's state, under lock: `stretch` counts the stretches entered,
 * so a note is said once per stretch, and only of the one still open. */
struct cbk_stall_watch {
    pthread_mutex_t lock;
    pthread_cond_t changed;   /* on CLOCK_MONOTONIC: a clock set back or forth moves no note */
    struct cbk_threads thread;   /* the one watching thread (core/threads.h) */
    struct patient_peers on;
    bool open, quit;
    unsigned long stretch, noted;
    struct timespec since;
    const volatile uint64_t *progress;   /* what the stretch's loop writes as it goes (NULL: nothing) */
    size_t progress_words;
    char what[512];
};

static double seconds_between(const struct timespec *a, const struct timespec *b)
{
    return (double)(b->tv_sec - a->tv_sec) + (double)(b->tv_nsec - a->tv_nsec) * 1e-9;
}

static struct timespec later(struct timespec t, double s)
{
    double whole = (double)(time_t)s;
    t.tv_sec += (time_t)whole;
    t.tv_nsec += (long)((s - whole) * 1e9);
    if (t.tv_nsec >= 1000000000L) {
        t.tv_sec++;
        t.tv_nsec -= 1000000000L;
    }
    return t;
}

/* FNV-1a over the words a loop writes (its per-iteration times): read
 * while the loop may write them, which is why volatile and whole words
 * (an aligned 8-byte load is never torn on the machines cbk runs on); a
 * torn or stale read only delays a note by one period. */
static uint64_t hash_of(const volatile uint64_t *words, size_t n)
{
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < n; i++)
        h = (h ^ words[i]) * 1099511628211ULL;
    return h;
}

/* Sleeps until an open stretch is due, then says so, once. A stretch with
 * a progress region is due when that region has not changed for
 * note_after_s (read once a period: a loop that runs long but moves on,
 * a large sweep's timed loop, says nothing); one without, when it has
 * lasted note_after_s. */
static void *watch(void *arg)
{
    struct cbk_stall_watch *w = arg;
    pthread_mutex_lock(&w->lock);
    while (!w->quit) {
        if (!w->open || w->noted == w->stretch) {
            pthread_cond_wait(&w->changed, &w->lock);
            continue;
        }
        unsigned long stretch = w->stretch;
        struct timespec due = later(w->since, w->on.note_after_s), still_since = w->since;
        bool hashed = false;
        uint64_t last = 0;
        for (;;) {
            int rc = 0;
            while (!w->quit && w->open && w->stretch == stretch && rc != ETIMEDOUT)
                rc = pthread_cond_timedwait(&w->changed, &w->lock, &due);
            if (w->quit || !w->open || w->stretch != stretch || !w->progress)
                break;
            const volatile uint64_t *words = w->progress;
            size_t n = w->progress_words;
            pthread_mutex_unlock(&w->lock);   /* enter and leave need not wait for a hash of MiBs */
            uint64_t h = hash_of(words, n);
            pthread_mutex_lock(&w->lock);
            if (hashed && h == last)
                break;
            clock_gettime(CLOCK_MONOTONIC, &still_since);
            hashed = true;
            last = h;
            due = later(still_since, w->on.note_after_s);
        }
        if (w->quit || !w->open || w->stretch != stretch)
            continue;
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        fprintf(stderr, "cbk: rank %d (%s) has waited %.0f s in %s\n", w->on.rank,
                w->on.hosts + (size_t)w->on.rank * w->on.host_chars, seconds_between(&still_since, &now), w->what);
        fflush(stderr);
        w->noted = stretch;
    }
    pthread_mutex_unlock(&w->lock);
    return NULL;
}

struct cbk_stall_watch *cbk_stall_watch_start(const struct patient_peers *on)
{
    if (!on || !on->hosts || !(on->note_after_s > 0) || on->note_after_s > 365.0 * 86400)
        return NULL;
    struct cbk_stall_watch *w = calloc(1, sizeof *w);
    pthread_condattr_t attr;
    if (!w || pthread_condattr_init(&attr)) {
        free(w);
        return NULL;
    }
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_mutex_init(&w->lock, NULL);
    pthread_cond_init(&w->changed, &attr);
    pthread_condattr_destroy(&attr);
    w->on = *on;
    if (cbk_threads_start(&w->thread, 1, watch, w, sizeof *w)) {
        cbk_threads_join(&w->thread);   /* none started: frees the ids */
        pthread_cond_destroy(&w->changed);
        pthread_mutex_destroy(&w->lock);
        free(w);
        return NULL;
    }
    return w;
}

void cbk_stall_watch_enter(struct cbk_stall_watch *w, const double *progress, size_t count, const char *fmt, ...)
{
    if (!w)
        return;
    pthread_mutex_lock(&w->lock);
    w->progress = (const volatile uint64_t *)(const volatile void *)progress;
    w->progress_words = progress ? count : 0;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(w->what, sizeof w->what, fmt, ap);
    va_end(ap);
    clock_gettime(CLOCK_MONOTONIC, &w->since);
    w->open = true;
    w->stretch++;
    pthread_cond_signal(&w->changed);
    pthread_mutex_unlock(&w->lock);
}

void cbk_stall_watch_leave(struct cbk_stall_watch *w)
{
    if (!w)
        return;
    /* no signal: the thread, woken now, might run beside another rank's
     * timed loop on this node; it finds the stretch closed at its due time
     * or at the next enter, whichever comes first */
    pthread_mutex_lock(&w->lock);
    w->open = false;
    pthread_mutex_unlock(&w->lock);
}

void cbk_stall_watch_stop(struct cbk_stall_watch *w)
{
    if (!w)
        return;
    pthread_mutex_lock(&w->lock);
    w->quit = true;
    pthread_cond_signal(&w->changed);
    pthread_mutex_unlock(&w->lock);
    cbk_threads_join(&w->thread);
    pthread_cond_destroy(&w->changed);
    pthread_mutex_destroy(&w->lock);
    free(w);
}

#endif
