"""The resource limits a job started as the capture was gets: the soft
limits of /proc/self/limits that decide whether an HPC program runs.

A node whose limits differ (a missing line in limits.conf, a daemon
started without Slurm's PropagateResourceLimits, an ssh session that never
passed pam_limits) runs every benchmark of the suite alike and fails the
user's job: InfiniBand and RoCE register memory only as far as the locked
memory limit lets them (64 KiB on h03 of the test cluster, 8 MiB on the
others: the snapshots said nothing of it), Fortran and OpenMP programs
keep arrays on the stack, MPI opens a socket or file per peer. The soft
limit is what the job has; a process may raise it up to the hard one, which
few programs do. The capturing process's own limits are the job's: a
cluster run captures each node's snapshot through the launcher its ranks
start by."""
from __future__ import annotations

from clusterbench.environment.sources import Context

# /proc/self/limits row -> key; the limits a job's success depends on, not those set from
# the machine's size (processes, pending signals), which would differ between nodes of
# different memory with nothing configured
LIMITS = {"Max locked memory": "limits.locked_memory_bytes", "Max stack size": "limits.stack_bytes",
          "Max open files": "limits.open_files", "Max address space": "limits.address_space_bytes",
          "Max data size": "limits.data_bytes", "Max file size": "limits.file_size_bytes",
          "Max cpu time": "limits.cpu_seconds", "Max core file size": "limits.core_file_bytes"}
UNLIMITED = "unlimited"


def soft_limits(text: str) -> dict[str, int | str]:
    """Each row's soft limit: an int, or "unlimited". Columns are fixed-width after a
    name of several words, so the row's name is matched and the numbers split after it."""
    out: dict[str, int | str] = {}
    for line in text.splitlines():
        for name in LIMITS:
            if line.startswith(name + " "):
                soft = line[len(name):].split()[0]
                out[name] = UNLIMITED if soft == UNLIMITED else int(soft)
    return out


def collect(env: dict, ctx: Context) -> None:
    r = ctx.read("/proc/self/limits")
    try:
        found = soft_limits(r.text) if r.ok else {}
        why = r.error
    except (ValueError, IndexError):
        found, why = {}, f"unexpected /proc/self/limits: {r.text.strip()[:80]!r}"
    for name, key in LIMITS.items():
        if name in found:
            env[key] = found[name]
        else:
            env[key + "_error"] = why or f"no {name!r} row in /proc/self/limits"
