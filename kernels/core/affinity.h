/* CPU placement for compute kernels: the CPUs this process may use, ordered
 * one per physical core first and SMT siblings after (sysfs topology), so
 * "k threads" means k distinct cores while k <= cores. */
#ifndef CBK_AFFINITY_H
#define CBK_AFFINITY_H

#include "cbk.h"

#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CBK_MAX_CPUS 1024

struct cbk_cpu_order {
    int count;              /* CPUs in this process's affinity mask */
    int cores;              /* distinct physical cores among them */
    int cpu[CBK_MAX_CPUS];  /* cores first, then siblings */
    int sibling_rank[CBK_MAX_CPUS]; /* 0: first thread of its core, 1: second... */
};

/* The thread parameters of the threaded compute kernels (himeno, stream):
 * a kernel embeds struct cbk_thread_options in its options struct and puts
 * CBK_THREAD_PARAMS(its struct, the member, default, help of --threads) in
 * its parameter table. */
enum cbk_thread_sweep { CBK_SWEEP_NONE, CBK_SWEEP_THREADS };
enum cbk_bind { CBK_BIND_CORES, CBK_BIND_NONE };
extern const char *const cbk_thread_sweep_names[]; /* none, threads */
extern const char *const cbk_bind_names[];         /* cores, none */
struct cbk_thread_options {
    int64_t threads;            /* 0: the kernel's "all" (see cbk_thread_count) */
    enum cbk_thread_sweep sweep;
    enum cbk_bind bind;
};
#define CBK_THREAD_PARAMS(T, m, threads_default, threads_help) \
    { .name = "threads", CBK_AT_INT(T, m.threads), .default_value = (threads_default), .unit = "count", \
      .min = "0", .max = "1024", .help = (threads_help) }, \
    { .name = "sweep", CBK_AT_CHOICE(T, m.sweep, cbk_thread_sweep_names), .default_value = "none", \
      .help = "threads = one record per thread count 1 .. --threads (cores first, then SMT siblings: the E9 curve), " \
              "arrays reallocated and first-touched for each" }, \
    { .name = "bind", CBK_AT_CHOICE(T, m.bind, cbk_bind_names), .default_value = "cores", \
      .help = "cores = pin each thread to its own CPU, distinct physical cores first, then SMT siblings; " \
              "none = leave placement to the OS/launcher" }

/* CPUs in this process's affinity mask (1 when it cannot be read). */
int cbk_allowed_cpus(void);

/* Threads to start: --threads, or for 0 this process's share of the CPUs
 * it may use among `ranks_sharing` ranks on its node (one thread without
 * OpenMP). */
int cbk_thread_count(const struct cbk_thread_options *t, int ranks_sharing);

/* Fills `o` from sched_getaffinity and /sys/devices/system/cpu/cpuN/topology.
 * Returns 0 or -errno. Without topology files every CPU counts as a core. */
int cbk_cpu_order(struct cbk_cpu_order *o);

/* Pins the calling thread to one CPU. Returns 0 or an errno value. */
int cbk_pin_self(int cpu);

/* Lets the calling thread run only on the CPUs in `set` (fio's
 * cpus_allowed, shared by several threads). Returns 0 or an errno value. */
int cbk_pin_self_to_set(const cpu_set_t *set);

/* Parses a CPU list as taskset and fio's cpus_allowed write it ("1",
 * "0-3,8"): fills cpus (at most max) and returns the count, or -1 when the
 * text is not such a list or names a CPU this process may not use. */
int cbk_parse_cpu_list(const char *text, int *cpus, int max);

/* Writes "0,2,4" style lists into buf. */
void cbk_format_cpus(const int *cpus, int n, char *buf, size_t len);

/* Starts an OpenMP team of `threads` (one thread without OpenMP); when `pin`,
 * thread t of the rank with node_rank r goes to order->cpu[(r * threads + t)
 * mod count]. Records each thread's CPU in cpu_of_thread (CBK_MAX_CPUS long)
 * and as a list in `cpus`. Returns how many pins failed. */
int cbk_place_threads(const struct cbk_cpu_order *order, int threads, int node_rank, bool pin,
                      int *cpu_of_thread, char *cpus, size_t cpus_len);

/* The team of a threaded kernel (himeno, stream), so the thread checks,
 * placement and sweep live here once: embed it in the kernel's state.
 * Threads that each run a loop of their own start with threads.h. */
struct cbk_thread_team {
    struct cbk_cpu_order order;       /* read once: pinning the main thread narrows its mask */
    int threads;                      /* the team placed now */
    int threads_max;                  /* --threads, or this rank's share for 0 */
    int cpu_of_thread[CBK_MAX_CPUS];
    char cpus[4096];                  /* where the team runs, "0,2,4" */
};

/* For validate(): --threads within the CPUs this process may use (one
 * thread without OpenMP). Returns 0, or -1 with the reason in `why`. */
int cbk_thread_check(const struct cbk_thread_options *t, int ranks_sharing, char *why, size_t len);

/* For setup(): reads the CPU order and the team's largest size; a failure
 * ends the run with "<kernel>: ...". */
void cbk_thread_team_init(struct cbk_thread_team *team, const struct cbk_thread_options *t, int ranks_sharing,
                          struct cbk_ctx *c, const char *kernel);

/* Places a team of `threads` as --bind says (cbk_place_threads); a failed
 * pin ends the run. */
void cbk_thread_team_place(struct cbk_thread_team *team, const struct cbk_thread_options *t, int threads,
                           struct cbk_ctx *c, const char *kernel);

#endif
