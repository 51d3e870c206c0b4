/* Monotonic wall-clock time. CLOCK_MONOTONIC is immune to NTP steps;
 * every timed region reads it before and after, nothing else. */
#ifndef CBK_TIMER_H
#define CBK_TIMER_H

#include <time.h>

static inline double cbk_clock(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* CPU time this thread has used, in seconds (what a poll costs, #39). */
static inline double cbk_thread_cpu(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Sleeps `seconds` (0 or less: not at all), the whole of it: a signal that
 * does not end the process resumes the sleep (IOR's -d, mdtest's -p). */
static inline void cbk_sleep_s(double seconds)
{
    if (seconds <= 0)
        return;
    struct timespec ts = { (time_t)seconds, (long)((seconds - (double)(time_t)seconds) * 1e9) };
    while (nanosleep(&ts, &ts))
        ;
}

/* Smallest observable step of cbk_clock(), measured as STREAM does:
 * the least non-zero difference between successive reads. */
double cbk_timer_resolution(void);

#endif
