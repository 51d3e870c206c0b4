#include "affinity.h"

#ifdef CBK_HAVE_OPENMP
#include <omp.h>
#endif

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>

const char *const cbk_thread_sweep_names[] = { [CBK_SWEEP_NONE] = "none", [CBK_SWEEP_THREADS] = "threads", NULL };
const char *const cbk_bind_names[] = { [CBK_BIND_CORES] = "cores", [CBK_BIND_NONE] = "none", NULL };

int cbk_allowed_cpus(void)
{
    cpu_set_t set;
    return sched_getaffinity(0, sizeof set, &set) ? 1 : CPU_COUNT(&set);
}

int cbk_thread_count(const struct cbk_thread_options *t, int ranks_sharing)
{
    int n = (int)t->threads;
#ifndef CBK_HAVE_OPENMP
    if (n == 0)
        return 1; /* "all" is one thread without OpenMP */
#endif
    if (n == 0) {
        n = cbk_allowed_cpus() / (ranks_sharing > 0 ? ranks_sharing : 1);
        if (n < 1)
            n = 1;
    }
    return n;
}

/* Reads one integer from a sysfs file; -1 when absent. */
static long read_long(const char *path)
{
    FILE *f = fopen(path, "r");
    long v = -1;
    if (!f)
        return -1;
    if (fscanf(f, "%ld", &v) != 1)
        v = -1;
    fclose(f);
    return v;
}

int cbk_cpu_order(struct cbk_cpu_order *o)
{
    cpu_set_t set;
    memset(o, 0, sizeof *o);
    if (sched_getaffinity(0, sizeof set, &set))
        return -errno;
    int cpus[CBK_MAX_CPUS], n = 0;
    long core_key[CBK_MAX_CPUS];
    for (int cpu = 0; cpu < CPU_SETSIZE && cpu < CBK_MAX_CPUS; cpu++) {
        if (!CPU_ISSET(cpu, &set))
            continue;
        char path[128];
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/topology/core_id", cpu);
        long core = read_long(path);
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/topology/physical_package_id", cpu);
        long pkg = read_long(path);
        /* Unknown topology: each CPU its own core, the safe reading. */
        core_key[n] = core < 0 ? -1 - cpu : (pkg < 0 ? 0 : pkg) * 1000000L + core;
        cpus[n++] = cpu;
    }
    /* rank of each CPU within its core, in CPU number order */
    int rank[CBK_MAX_CPUS], max_rank = 0;
    for (int i = 0; i < n; i++) {
        rank[i] = 0;
        for (int j = 0; j < i; j++)
            if (core_key[j] == core_key[i])
                rank[i]++;
        if (rank[i] > max_rank)
            max_rank = rank[i];
        if (rank[i] == 0)
            o->cores++;
    }
    for (int r = 0; r <= max_rank; r++)
        for (int i = 0; i < n; i++)
            if (rank[i] == r) {
                o->sibling_rank[o->count] = r;
                o->cpu[o->count++] = cpus[i];
            }
    return 0;
}

int cbk_pin_self(int cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

int cbk_pin_self_to_set(const cpu_set_t *set)
{
    return pthread_setaffinity_np(pthread_self(), sizeof *set, set);
}

int cbk_parse_cpu_list(const char *text, int *cpus, int max)
{
    cpu_set_t allowed;
    if (sched_getaffinity(0, sizeof allowed, &allowed))
        return -1;
    int n = 0;
    const char *p = text;
    while (*p) {
        char *end;
        long lo = strtol(p, &end, 10), hi = lo;
        if (end == p || lo < 0)
            return -1;
        p = end;
        if (*p == '-') {
            hi = strtol(p + 1, &end, 10);
            if (end == p + 1 || hi < lo)
                return -1;
            p = end;
        }
        for (long c = lo; c <= hi; c++) {
            if (c >= CPU_SETSIZE || !CPU_ISSET((int)c, &allowed) || n == max)
                return -1;
            cpus[n++] = (int)c;
        }
        if (*p == ',')
            p++;
        else if (*p)
            return -1;
    }
    return n ? n : -1;
}

void cbk_format_cpus(const int *cpus, int n, char *buf, size_t len)
{
    size_t used = 0;
    if (len)
        buf[0] = '\0';
    for (int i = 0; i < n && used < len; i++) {
        int w = snprintf(buf + used, len - used, "%s%d", i ? "," : "", cpus[i]);
        if (w < 0)
            break;
        used += (size_t)w;
    }
}

int cbk_place_threads(const struct cbk_cpu_order *order, int threads, int node_rank, bool pin,
                      int *cpu_of_thread, char *cpus, size_t cpus_len)
{
    int failed = 0;
#ifdef CBK_HAVE_OPENMP
#pragma omp parallel num_threads(threads) reduction(+:failed)
#endif
    {
#ifdef CBK_HAVE_OPENMP
        int t = omp_get_thread_num();
#else
        int t = 0;
#endif
        if (pin && order->count > 0)
            failed += cbk_pin_self(order->cpu[(node_rank * threads + t) % order->count]) != 0;
        if (t < CBK_MAX_CPUS)
            cpu_of_thread[t] = sched_getcpu();
    }
    cbk_format_cpus(cpu_of_thread, threads < CBK_MAX_CPUS ? threads : CBK_MAX_CPUS, cpus, cpus_len);
    return failed;
}

int cbk_thread_check(const struct cbk_thread_options *t, int ranks_sharing, char *why, size_t len)
{
    int threads = cbk_thread_count(t, ranks_sharing);
#ifdef CBK_HAVE_OPENMP
    int allowed = cbk_allowed_cpus();
    if (threads > allowed) {
        snprintf(why, len, "--threads=%d but this process may use only %d CPUs", threads, allowed);
        return -1;
    }
#else
    if (threads > 1) {
        snprintf(why, len, "--threads=%d but cbk was built without OpenMP (one thread only)", threads);
        return -1;
    }
#endif
    return 0;
}

void cbk_thread_team_init(struct cbk_thread_team *team, const struct cbk_thread_options *t, int ranks_sharing,
                          struct cbk_ctx *c, const char *kernel)
{
    team->threads = team->threads_max = cbk_thread_count(t, ranks_sharing);
    int rc = cbk_cpu_order(&team->order);
    if (rc)
        cbk_fail(c, CBK_EXIT_FAILED, "%s: sched_getaffinity: %s", kernel, strerror(-rc));
}

void cbk_thread_team_place(struct cbk_thread_team *team, const struct cbk_thread_options *t, int threads,
                           struct cbk_ctx *c, const char *kernel)
{
    team->threads = threads;
    int failed = cbk_place_threads(&team->order, threads, c->node_rank, t->bind == CBK_BIND_CORES,
                                   team->cpu_of_thread, team->cpus, sizeof team->cpus);
    if (failed)
        cbk_fail(c, CBK_EXIT_FAILED, "%s: pthread_setaffinity_np failed for %d threads", kernel, failed);
}
