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

/* Smallest observable step of cbk_clock(), measured as STREAM does:
 * the least non-zero difference between successive reads. */
double cbk_timer_resolution(void);

#endif
