"""The memory a job started here may use: the smallest memory cgroup limit
over the capturing process's cgroup and those above it (cgroup v1 or v2).

A node whose jobs land in a smaller cgroup (a stale Slurm cgroup.conf, a
container with its own limit, a systemd slice left from a test) runs every
benchmark that fits and kills the job that does not: the limit is
configuration, and nodes that differ in it must show in the comparison of
their snapshots. Where the cgroup is: cgroup_paths.py."""
from __future__ import annotations

from typing import TYPE_CHECKING

from clusterbench.environment.cgroup_paths import locate

if TYPE_CHECKING:   # the annotations only
    from clusterbench.environment.sources import Context

KEY = "memory.cgroup_limit_bytes"
NO_LIMIT = "none"
UNLIMITED_FROM = 2**60   # v1 writes "no limit" as a page-rounded 2^63 - 1


def _number(text: str) -> int | None:
    t = text.strip()
    return int(t) if t.isdigit() and int(t) < UNLIMITED_FROM else None


def limit_bytes(ctx: Context) -> tuple[int | str | None, str]:
    """(the limit in bytes, or NO_LIMIT; None when it cannot be read, with the reason)."""
    where = locate(ctx, "memory")
    if isinstance(where, str):
        return None, where
    if where.version == 2:
        # v2: each level has its own memory.max, and the tightest one binds, the mount's own root
        # included (the host's root has none; a container's namespace root is its cgroup, with its limit)
        limits = [_number(r.text) for d in where.dirs if (r := ctx.read(f"{d}/memory.max")).ok]
        bound = [x for x in limits if x is not None]
        return (min(bound) if bound else NO_LIMIT), ""
    here = where.dirs[0]
    stat = ctx.read(f"{here}/memory.stat")
    if not stat.ok:
        return None, stat.error
    # v1 sums the hierarchy for us: the smallest limit of this cgroup and its ancestors
    for line in stat.text.splitlines():
        key, _, value = line.partition(" ")
        if key == "hierarchical_memory_limit":
            return (_number(value) or NO_LIMIT), ""
    return None, f"no hierarchical_memory_limit in {here}/memory.stat"


def collect_into(env: dict, ctx: Context) -> None:
    value, why = limit_bytes(ctx)
    if value is None:
        env[KEY + "_error"] = why
    else:
        env[KEY] = value
