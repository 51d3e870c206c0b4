#ifndef CBK_CGROUP_MEMORY_H
#define CBK_CGROUP_MEMORY_H

/* What this process's memory cgroups let it still allocate, in KiB: for
 * each cgroup on its path that has a limit (v2 memory.max, v1
 * hierarchical_memory_limit), the limit less what is charged, plus the
 * inactive page cache the kernel reclaims before it calls the OOM killer;
 * the smallest of them. -1 when no cgroup limits it (or none can be read).
 * A Slurm job (ConstrainRAMSpace), a container or clusterbench's own
 * --memory-limit caps a process far below the machine's MemAvailable. */
long cbk_cgroup_headroom_kib(void);

#endif
