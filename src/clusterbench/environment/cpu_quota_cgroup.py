"""The CPU time a job started here may use, in CPUs: the tightest CPU
bandwidth limit (CFS quota over period) over the capturing process's cgroup
and those above it (cgroup v2), or of its own v1 cpu cgroup.

A node whose jobs land in a cgroup with a CPU quota (a container's
--cpus, a systemd slice's CPUQuota=, a Kubernetes limit) has every CPU
online and in its cpuset, so neither cpu.online nor cpu.cgroup_cpus shows
it, and its threads are stopped for the rest of each period once the quota
is spent: its multi-threaded figures fall, and on a loaded node, where a
process gets less than the quota anyway, not even they (h03 of the test
cluster capped at 1 of its 2 CPUs ran Himeno at 1.12 of the median). The
limit is configuration; nodes that differ in it show in the comparison of
their snapshots. Where the cgroup is: cgroup_paths.py."""
from __future__ import annotations

from typing import TYPE_CHECKING

from clusterbench.environment.cgroup_paths import locate

if TYPE_CHECKING:   # the annotations only
    from clusterbench.environment.sources import Context

KEY = "cpu.cgroup_quota_cpus"
NO_LIMIT = "none"


def _cpus(quota: str, period: str) -> float | None:
    """quota / period in CPUs; None for no limit ("max" in v2, -1 in v1) or text that is no number."""
    try:
        q, p = int(quota), int(period)
    except ValueError:
        return None
    return q / p if q > 0 and p > 0 else None


def quota_cpus(ctx: Context) -> tuple[float | str | None, str]:
    """(the limit in CPUs, or NO_LIMIT; None when it cannot be read, with the reason)."""
    where = locate(ctx, "cpu")
    if isinstance(where, str):
        return None, where
    if where.version == 2:
        # v2: each level has its own cpu.max ("max 100000" or "50000 100000"), and the tightest binds
        limits = [_cpus(*(r.text.split() + ["", ""])[:2]) for d in where.dirs
                  if (r := ctx.read(f"{d}/cpu.max")).ok]
        bound = [x for x in limits if x is not None]
        return (round(min(bound), 2) if bound else NO_LIMIT), ""
    # v1: its own cgroup's quota (the ancestors' are not summed for us, and a job's limit is set
    # on the cgroup it runs in: docker's, systemd's)
    here = where.dirs[0]
    quota, period = ctx.read(f"{here}/cpu.cfs_quota_us"), ctx.read(f"{here}/cpu.cfs_period_us")
    if not (quota.ok and period.ok):
        return None, quota.error or period.error
    cpus = _cpus(quota.text.strip(), period.text.strip())
    return (round(cpus, 2) if cpus is not None else NO_LIMIT), ""


def collect_into(env: dict, ctx: Context) -> None:
    value, why = quota_cpus(ctx)
    if value is None:
        env[KEY + "_error"] = why
    else:
        env[KEY] = value
