/* The one way a kernel starts threads that each run a loop of their own:
 * randio's jobs, cpufreq's busy CPUs, tcp's data connections and its
 * loopback server. (A data-parallel loop runs on the OpenMP team instead,
 * affinity.h's struct cbk_thread_team, which himeno and stream use.) No
 * kernel calls pthread_create: starting, a failed start and joining live
 * here once. A thread that must run on given CPUs places itself first
 * thing (cbk_pin_self, cbk_pin_self_to_set in affinity.h), so its memory
 * and its clock readings are on those CPUs from the start. */
#ifndef CBK_THREADS_H
#define CBK_THREADS_H

#include <pthread.h>
#include <stddef.h>

struct cbk_threads {
    pthread_t *ids;
    int started;   /* threads started and not yet joined */
};

/* Starts n threads, thread i running main(args + i * arg_bytes): one
 * element each of the kernel's array of per-thread structs. Returns 0, or
 * the errno value of the start that failed; t->started then says which
 * one (the threads before it keep running until cbk_threads_join). A
 * zeroed struct cbk_threads is ready; so is one joined before. */
int cbk_threads_start(struct cbk_threads *t, int n, void *(*main)(void *), void *args, size_t arg_bytes);

/* Waits for every started thread and frees the ids; does nothing when
 * none runs, so it is safe on a zeroed struct and after a failed start. */
void cbk_threads_join(struct cbk_threads *t);

#endif
