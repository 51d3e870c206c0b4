#include "buffer.h"

#include "cgroup_memory.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define SMALL_HUGE_PAGE ((size_t)2 << 20)

void *cbk_buffer_alloc(size_t bytes)
{
    void *p = NULL;
    size_t rounded = (bytes + CBK_ALIGN_BYTES - 1) / CBK_ALIGN_BYTES * CBK_ALIGN_BYTES;
    if (rounded == 0 || posix_memalign(&p, CBK_ALIGN_BYTES, rounded))
        return NULL;
    memset(p, 0, rounded);
    return p;
}

void cbk_buffer_free(void *p) { free(p); }

/* The size of a transparent huge page (2 MiB on x86-64; 512 MiB with
 * arm64's 64 KiB base pages); 0 unknown. */
static size_t huge_page_bytes(void)
{
    FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size", "r");
    unsigned long long bytes = 0;
    if (f) {
        if (fscanf(f, "%llu", &bytes) != 1)
            bytes = 0;
        fclose(f);
    }
    return (size_t)bytes;
}

/* The "FIELD: N kB" line of a /proc file (meminfo, smaps_rollup) in KiB; -1 unknown. */
static long proc_kib(const char *path, const char *field)
{
    FILE *f = fopen(path, "r");
    char line[256];
    size_t len = strlen(field);
    long kib = -1;
    if (!f)
        return -1;
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, field, len) && line[len] == ':' && sscanf(line + len + 1, "%ld kB", &kib) == 1)
            break;
    fclose(f);
    return kib;
}

void *cbk_buffer_alloc_huge(size_t bytes, size_t *huge_bytes)
{
    size_t page = huge_page_bytes();
    *huge_bytes = 0;
    if (page == 0 || page > SMALL_HUGE_PAGE * ((bytes + SMALL_HUGE_PAGE - 1) / SMALL_HUGE_PAGE))
        return cbk_buffer_alloc(bytes);
    void *p = NULL;
    size_t rounded = (bytes + page - 1) / page * page;
    if (rounded == 0 || posix_memalign(&p, page, rounded))
        return NULL;
    /* advice only: refused where THP is not built in, ignored where it is "never" */
    (void)madvise(p, rounded, MADV_HUGEPAGE);
    /* how much became huge, from this process's total before and after the first touch
     * (cbk allocates its buffers before any timing, one at a time) */
    long before = proc_kib("/proc/self/smaps_rollup", "AnonHugePages");
    memset(p, 0, rounded);
    long after = proc_kib("/proc/self/smaps_rollup", "AnonHugePages");
    if (before >= 0 && after > before) {
        size_t got = (size_t)(after - before) * 1024;
        *huge_bytes = got < rounded ? got : rounded;
    }
    return p;
}

/* The smaller of MemAvailable and the memory cgroup's headroom, in KiB;
 * *from_cgroup says which it was. */
static long available_kib(bool *from_cgroup)
{
    long machine = proc_kib("/proc/meminfo", "MemAvailable"), cgroup = cbk_cgroup_headroom_kib();
    *from_cgroup = cgroup >= 0 && (machine < 0 || cgroup < machine);
    return *from_cgroup ? cgroup : machine;
}

long cbk_mem_available_kib(void)
{
    bool from_cgroup;
    return available_kib(&from_cgroup);
}

const char *cbk_mem_available_note(void)
{
    bool from_cgroup;
    available_kib(&from_cgroup);
    return from_cgroup ? " under this process's memory cgroup limit" : "";
}

int cbk_check_memory(const char *what, uint64_t rank_bytes, int ranks, char *why, size_t why_len)
{
    double need = (double)rank_bytes * (ranks > 1 ? ranks : 1), avail_kib = (double)cbk_mem_available_kib();
    if (avail_kib <= 0 || need <= 0.9 * 1024.0 * avail_kib)
        return 0;
    double need_gib = need / 1073741824.0;   /* a tenth shown where whole GiB would read 0 */
    snprintf(why, why_len, "%s: buffers of %.*f GiB on this node, but only %.1f GiB is available%s", what,
             need_gib < 10 ? 1 : 0, need_gib, avail_kib / 1048576.0, cbk_mem_available_note());
    return -1;
}

void *cbk_buffer_alloc_pages(size_t bytes, bool huge, size_t *huge_bytes)
{
    if (huge)
        return cbk_buffer_alloc_huge(bytes, huge_bytes);
    *huge_bytes = 0;
    void *p = NULL;
    size_t rounded = (bytes + CBK_ALIGN_BYTES - 1) / CBK_ALIGN_BYTES * CBK_ALIGN_BYTES;
    if (rounded == 0 || posix_memalign(&p, CBK_ALIGN_BYTES, rounded))
        return NULL;
    (void)madvise(p, rounded, MADV_NOHUGEPAGE); /* advice: where THP is not built in there is nothing to keep off */
    memset(p, 0, rounded);
    return p;
}
