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

from clusterbench.environment.cgroup_paths import below_mount, mounts, own_cgroup, shows

if TYPE_CHECKING:
    from clusterbench.environment.sources import Context

KEY = "cpu.cgroup_cpus"


def cpus(ctx: Context) -> tuple[str | None, str]:
    """(the cpuset's CPU list as the kernel writes it, e.g. "0-3,6"; None when
    it cannot be read, with the reason)."""
    info, cg = ctx.read("/proc/self/mountinfo"), ctx.read("/proc/self/cgroup")
    if not (info.ok and cg.ok):
        return None, info.error or cg.error
    found = mounts(info.text)
    for root, point, fs, _opts in found:
        controllers = ctx.read(f"{point}/cgroup.controllers") if fs == "cgroup2" else None
        if controllers is None or not controllers.ok or "cpuset" not in controllers.text.split():
            continue
        own = own_cgroup(cg.text, None)
        if own is None or not shows(own, root):
            continue
        parts = below_mount(own, root).split("/") if below_mount(own, root) else []
        # v2: the file is there where the controller is enabled; below that a cgroup has its parent's CPUs
        for i in range(len(parts), -1, -1):
            effective = ctx.read("/".join([point.rstrip("/"), *parts[:i], "cpuset.cpus.effective"]))
            if effective.ok and effective.text.strip():
                return effective.text.strip(), ""
        return None, f"no cpuset.cpus.effective from {point} down to this process's cgroup"
    for root, point, fs, opts in found:
        if fs == "cgroup" and "cpuset" in opts.split(","):
            own = own_cgroup(cg.text, "cpuset")
            if own is None:
                return None, "no cpuset line in /proc/self/cgroup"
            if not shows(own, root):
                continue
            here = f"{point}/{below_mount(own, root)}".rstrip("/")
            # v1: effective_cpus (3.x kernels and later) is what the ancestors leave of cpuset.cpus
            for name in ("cpuset.effective_cpus", "cpuset.cpus"):
                listed = ctx.read(f"{here}/{name}")
                if listed.ok and listed.text.strip():
                    return listed.text.strip(), ""
            return None, f"no cpuset.effective_cpus or cpuset.cpus in {here}"
    return None, "no cpuset cgroup hierarchy mounted (cgroup2 with cpuset, or v1 cpuset)"


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
