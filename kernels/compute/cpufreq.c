/* cpufreq: the effective clock with k of n CPUs busy, k = 1 .. n (E9:
 * turbo clock vs active cores). Each busy thread is pinned to its own CPU
 * (distinct physical cores first, then SMT siblings) and runs a chain of
 * dependent integer adds: one add per cycle on every current x86 and Arm
 * core, so adds per second is the clock. Reported beside what cpufreq
 * sysfs says and whether turbo/boost is on. */
#include "../core/affinity.h"
#include "../core/cbk.h"
#include "../core/threads.h"
#include "../core/timer.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>



struct cpufreq_options {
    double seconds;
    int64_t max_busy;
    int64_t step;
};
#define OPT struct cpufreq_options
static const OPT *opt(const struct cbk_args *a) { return cbk_options(a); }

static const struct cbk_param params[] = {
    { .name = "seconds", CBK_AT_REAL(OPT, seconds), .default_value = "1", .unit = "s", .min = "0.01", .max = "3600",
      .help = "time each busy-thread count runs" },
    { .name = "max-busy", CBK_AT_INT(OPT, max_busy), .default_value = "0", .unit = "count", .min = "0", .max = "1024",
      .help = "largest number of busy CPUs (k runs 1 .. this); 0 = every CPU this process may use, SMT siblings included" },
    { .name = "step", CBK_AT_INT(OPT, step), .default_value = "1", .unit = "count", .min = "1", .max = "1024",
      .help = "k goes 1, 1+step, ...; the largest k is always measured" },
    { 0 },
};

#define ADDS_PER_BLOCK 100
#define BLOCKS_PER_CHECK 20000 /* 2M adds (about 1 ms) between clock reads */

/* ADDS_PER_BLOCK dependent adds: each needs the previous result, so they
 * retire one per cycle whatever the core's width. The loop counter runs
 * on another ALU in parallel and is hidden. Register + register, never an
 * immediate: Golden Cove and later fold `add reg, imm` chains in the
 * renamer (several per cycle), which would read as 3x the clock. */
#if defined(__x86_64__) || defined(__i386__)
#define ADD1 "add %1, %0\n\t"
#define CHAIN_ISA "x86 add"
#elif defined(__aarch64__)
#define ADD1 "add %0, %0, %1\n\t"
#define CHAIN_ISA "aarch64 add"
#endif
#ifdef ADD1
#define ADD10 ADD1 ADD1 ADD1 ADD1 ADD1 ADD1 ADD1 ADD1 ADD1 ADD1
#define ADD100 ADD10 ADD10 ADD10 ADD10 ADD10 ADD10 ADD10 ADD10 ADD10 ADD10
static uint64_t chain(uint64_t blocks, uint64_t x, uint64_t one)
{
    for (uint64_t i = 0; i < blocks; i++)
        __asm__ volatile(ADD100 : "+r"(x) : "r"(one));
    return x;
}
#else
#define CHAIN_ISA "none"
#endif

struct worker {
    int cpu, pin_error;
    double seconds, elapsed_s, cpu_s, mhz, wall_mhz;
    uint64_t adds, sink, one;
    pthread_barrier_t *start;
};

static double thread_cpu_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void *busy(void *arg)
{
    struct worker *w = arg;
    w->pin_error = cbk_pin_self(w->cpu);
    pthread_barrier_wait(w->start);
#ifdef ADD1
    uint64_t x = (uint64_t)w->cpu, blocks = 0;
    double c0 = thread_cpu_s(), t0 = cbk_clock(), t = t0;
    do {
        x = chain(BLOCKS_PER_CHECK, x, w->one);
        blocks += BLOCKS_PER_CHECK;
        t = cbk_clock();
    } while (t - t0 < w->seconds);
    w->sink = x;
    w->adds = blocks * ADDS_PER_BLOCK;
    w->elapsed_s = t - t0;
    w->cpu_s = thread_cpu_s() - c0;
    /* per second on the CPU, not of wall time: on a shared machine the
     * thread may be descheduled, which is not a slower clock */
    w->mhz = (double)w->adds / w->cpu_s / 1e6;
    w->wall_mhz = (double)w->adds / w->elapsed_s / 1e6;
#endif
    return NULL;
}

/* Reads a sysfs value into buf; returns 0, or fills buf with "unavailable: reason". */
static int read_sysfs(const char *path, char *buf, size_t len)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(buf, len, "unavailable: %s: %s", path, strerror(errno));
        return -1;
    }
    if (!fgets(buf, (int)len, f)) {
        snprintf(buf, len, "unavailable: %s is empty", path);
        fclose(f);
        return -1;
    }
    fclose(f);
    buf[strcspn(buf, "\n")] = '\0';
    return 0;
}

/* Turbo/boost: the generic cpufreq switch, or intel_pstate's inverted one. */
static void boost_state(char *buf, size_t len)
{
    char v[64];
    if (!read_sysfs("/sys/devices/system/cpu/cpufreq/boost", v, sizeof v)) {
        snprintf(buf, len, "%s (cpufreq/boost=%s)", !strcmp(v, "1") ? "enabled" : "disabled", v);
        return;
    }
    if (!read_sysfs("/sys/devices/system/cpu/intel_pstate/no_turbo", v, sizeof v)) {
        snprintf(buf, len, "%s (intel_pstate/no_turbo=%s)", !strcmp(v, "0") ? "enabled" : "disabled", v);
        return;
    }
    snprintf(buf, len, "unavailable: neither /sys/devices/system/cpu/cpufreq/boost nor intel_pstate/no_turbo exists");
}

/* Nominal clock: the "@ 2.30GHz" of the model name, else "cpu MHz". */
static double nominal_mhz(const char **source)
{
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[512];
    double ghz = 0, mhz = 0;
    *source = "unavailable: /proc/cpuinfo unreadable";
    if (!f)
        return 0;
    while (fgets(line, sizeof line, f)) {
        char *at;
        if (!strncmp(line, "model name", 10) && (at = strstr(line, "@ ")) && sscanf(at + 2, "%lfGHz", &ghz) == 1)
            break;
        if (!strncmp(line, "cpu MHz", 7) && !mhz)
            sscanf(strchr(line, ':') ? strchr(line, ':') + 1 : line, "%lf", &mhz);
    }
    fclose(f);
    if (ghz > 0) {
        *source = "/proc/cpuinfo model name";
        return ghz * 1000.0;
    }
    if (mhz > 0)
        *source = "/proc/cpuinfo cpu MHz (the model name has no GHz figure)";
    return mhz;
}

static int max_busy(const struct cbk_args *a, const struct cbk_cpu_order *o)
{
    int k = (int)opt(a)->max_busy;
    return k ? k : o->count;
}

static int validate(const struct cbk_args *a, struct cbk_ctx *c, char *why, size_t len)
{
    (void)c;
#ifndef ADD1
    (void)a;
    snprintf(why, len, "cpufreq: no dependent-add chain for this instruction set (x86 and aarch64 only)");
    return -1;
#else
    struct cbk_cpu_order o;
    int rc = cbk_cpu_order(&o);
    if (rc) {
        snprintf(why, len, "sched_getaffinity: %s", strerror(-rc));
        return -1;
    }
    if (max_busy(a, &o) > o.count) {
        snprintf(why, len, "--max-busy=%d but this process may use only %d CPUs", max_busy(a, &o), o.count);
        return -1;
    }
    return 0;
#endif
}

static int run(const struct cbk_args *a, struct cbk_ctx *c)
{
    struct cbk_cpu_order o;
    int rc = cbk_cpu_order(&o);
    if (rc)
        cbk_fail(c, CBK_EXIT_FAILED, "cpufreq: sched_getaffinity: %s", strerror(-rc));
    const int n = max_busy(a, &o), step = (int)opt(a)->step;
    const double seconds = opt(a)->seconds;
    const char *nominal_source;
    const double nominal = nominal_mhz(&nominal_source);
    char boost[160];
    boost_state(boost, sizeof boost);
    struct worker *w = calloc((size_t)n, sizeof *w);
    if (!w)
        cbk_fail(c, CBK_EXIT_FAILED, "cpufreq: out of memory");

    for (int k = 1; k <= n; k = (k < n && k + step > n) ? n : k + step) {
        pthread_barrier_t start;
        if ((rc = pthread_barrier_init(&start, NULL, (unsigned)k + 1)))
            cbk_fail(c, CBK_EXIT_FAILED, "cpufreq: pthread_barrier_init: %s", strerror(rc));
        /* the count of busy CPUs is the sweep: summaries group by it */
        struct cbk_phase p = { .phase = "clock", .sweep_key = "busy_cpus", .ops = (uint64_t)k };
        for (int i = 0; i < k; i++)
            w[i] = (struct worker){ .cpu = o.cpu[i], .seconds = seconds, .start = &start, .one = 1 };
        struct cbk_threads busy_threads = { 0 };
        if ((rc = cbk_threads_start(&busy_threads, k, busy, w, sizeof *w)))
            cbk_fail(c, CBK_EXIT_FAILED, "cpufreq: pthread_create: %s", strerror(rc));
        pthread_barrier_wait(&start);
        p.begin_s = cbk_now(c);
        /* sysfs's view, sampled half way through the busy period */
        struct timespec half = { (time_t)(seconds / 2), (long)((seconds / 2 - (double)(time_t)(seconds / 2)) * 1e9) };
        while (nanosleep(&half, &half))
            ;
        char cur[2048] = "", one[128], path[128];
        bool cur_ok = true;
        for (int i = 0; i < k; i++) {
            snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/cpufreq/scaling_cur_freq", o.cpu[i]);
            if (read_sysfs(path, one, sizeof one)) {
                snprintf(cur, sizeof cur, "%s", one);
                cur_ok = false;
                break;
            }
            size_t used = strlen(cur);
            snprintf(cur + used, sizeof cur - used, "%s%.0f", i ? "," : "", atof(one) / 1000.0);
        }
        cbk_threads_join(&busy_threads);
        p.end_s = cbk_now(c);
        pthread_barrier_destroy(&start);

        double sum = 0, lo = 1e300, hi = 0, on_cpu = 1.0, wall_sum = 0;
        char per[4096] = "", cpus[4096];
        int cpu_list[CBK_MAX_CPUS], siblings = 0;
        for (int i = 0; i < k; i++) {
            if (w[i].pin_error)
                cbk_fail(c, CBK_EXIT_FAILED, "cpufreq: pthread_setaffinity_np to CPU %d: %s", w[i].cpu, strerror(w[i].pin_error));
            sum += w[i].mhz;
            wall_sum += w[i].wall_mhz;
            if (w[i].cpu_s / w[i].elapsed_s < on_cpu)
                on_cpu = w[i].cpu_s / w[i].elapsed_s;
            lo = w[i].mhz < lo ? w[i].mhz : lo;
            hi = w[i].mhz > hi ? w[i].mhz : hi;
            size_t used = strlen(per);
            snprintf(per + used, sizeof per - used, "%s%.1f", i ? "," : "", w[i].mhz);
            cpu_list[i] = o.cpu[i];
            siblings += o.sibling_rank[i] > 0;
            p.bytes = 0;
        }
        cbk_format_cpus(cpu_list, k, cpus, sizeof cpus);
        double mean = sum / k;
        /* the driver's rate is value / (end - begin): scaling the mean by
         * the span makes the record's rate the mean clock in MHz */
        p.value = mean * (p.end_s - p.begin_s);
        p.value_unit = "MHz";
        cbk_phase_field(&p, CBK_I64("busy_cpus", k));
        cbk_phase_field(&p, CBK_I64("cpus_available", o.count));
        cbk_phase_field(&p, CBK_I64("physical_cores", o.cores));
        cbk_phase_field(&p, CBK_I64("smt_siblings_busy", siblings));
        cbk_phase_field(&p, CBK_TEXT("cpus", cpus));
        cbk_phase_field(&p, CBK_REAL("mhz_mean", mean));
        cbk_phase_field(&p, CBK_REAL("mhz_min", lo));
        cbk_phase_field(&p, CBK_REAL("mhz_max", hi));
        cbk_phase_field(&p, CBK_TEXT("mhz_per_thread", per));
        cbk_phase_field(&p, CBK_REAL("wall_mhz_mean", wall_sum / k));
        cbk_phase_field(&p, CBK_REAL("min_on_cpu_fraction", on_cpu));
        if (on_cpu < 0.95)
            cbk_phase_warn(&p, "a busy thread was on its CPU less than 95% of the time (shared machine?): MHz are per second on the CPU");
        cbk_phase_field(&p, CBK_TEXT("sysfs_cur_mhz", cur));
        char maxf[128];
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/cpufreq/cpuinfo_max_freq", o.cpu[0]);
        if (!read_sysfs(path, one, sizeof one))
            snprintf(maxf, sizeof maxf, "%.0f", atof(one) / 1000.0);
        else
            snprintf(maxf, sizeof maxf, "%s", one);
        cbk_phase_field(&p, CBK_TEXT("sysfs_max_mhz", maxf));
        cbk_phase_field(&p, CBK_TEXT("boost", boost));
        cbk_phase_field(&p, CBK_REAL("nominal_mhz", nominal));
        cbk_phase_field(&p, CBK_TEXT("nominal_source", nominal_source));
        cbk_phase_field(&p, CBK_TEXT("method", CHAIN_ISA " chain, " "one dependent add per cycle, threads pinned cores first"));
        if (!cur_ok)
            cbk_phase_warn(&p, "cpufreq sysfs not available: only the measured clock is reported");
        cbk_report(c, &p);
    }
    free(w);
    return 0;
}

const struct cbk_kernel cbk_kernel_cpufreq = {
    .name = "cpufreq",
    .summary = "effective clock (MHz) with k of n CPUs busy, k = 1 .. n, vs cpufreq sysfs and turbo state (E9)",
    .family = CBK_FAMILY_COMPUTE,
    .params = params,
    .options_size = sizeof(OPT),
    .validate = validate,
    .run = run,
};
