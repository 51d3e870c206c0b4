"""The CPUs a job started here may use: the effective CPUs of the capturing
process's cpuset cgroup (cgroup v1 or v2).

A node whose jobs land in a cpuset of fewer CPUs than it has online (a
stale Slurm cgroup.conf, a container's --cpuset-cpus, a systemd slice's
AllowedCPUs) runs every multi-threaded benchmark at a fraction of its
speed, and cpu.online, the machine's, does not show it. The cgroup's, not
the process's own affinity: the launch that captures a node's snapshot may
bind it to one core (Open MPI binds a one-process launch to core 0 by
default, srun to the step's CPUs), which says how that launch was placed,
not what the node gives a job."""
from __future__ import annotations

from typing import TYPE_CHECKING

from clusterbench.environment.cgroup_paths import locate

if TYPE_CHECKING:
    from clusterbench.environment.sources import Context

KEY = "cpu.cgroup_cpus"


def cpus(ctx: Context) -> tuple[str | None, str]:
    """(the cpuset's CPU list as the kernel writes it, e.g. "0-3,6"; None when
    it cannot be read, with the reason)."""
    where = locate(ctx, "cpuset")
    if isinstance(where, str):
        return None, where
    # v2: the file is there where the controller is enabled; below that a cgroup has its parent's
    # CPUs. v1: effective_cpus (3.x kernels and later) is what the ancestors leave of cpuset.cpus
    names = ("cpuset.cpus.effective",) if where.version == 2 else ("cpuset.effective_cpus", "cpuset.cpus")
    for d in where.dirs:
        for name in names:
            listed = ctx.read(f"{d}/{name}")
            if listed.ok and listed.text.strip():
                return listed.text.strip(), ""
    above = f"{where.dirs[-1]} down to this process's cgroup" if where.version == 2 else where.dirs[0]
    return None, f"no {' or '.join(names)} in {above}"


def collect_into(env: dict, ctx: Context) -> None:
    from clusterbench.environment.sources import format_cpu_list, parse_cpu_list

    value, why = cpus(ctx)
    if value is None:
        env[KEY + "_error"] = why
        return
    try:
        env[KEY] = format_cpu_list(parse_cpu_list(value))   # one spelling: "0-1", never "0,1"
    except ValueError:
        env[KEY + "_error"] = f"not a CPU list: {value[:80]!r}"
