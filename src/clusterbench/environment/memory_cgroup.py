"""The memory a job started here may use: the smallest memory cgroup limit
over the capturing process's cgroup and those above it (cgroup v1 or v2).

A node whose jobs land in a smaller cgroup (a stale Slurm cgroup.conf, a
container with its own limit, a systemd slice left from a test) runs every
benchmark that fits and kills the job that does not: the limit is
configuration, and nodes that differ in it must show in the comparison of
their snapshots. The mount and /proc/self/cgroup parsing is shared with
conditions/cgroup.py, which makes the cgroups of --memory-limit."""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:   # conditions/cgexec imports the parsing on every node of a run: no more than it needs
    from clusterbench.environment.sources import Context

KEY = "memory.cgroup_limit_bytes"
NO_LIMIT = "none"
UNLIMITED_FROM = 2**60   # v1 writes "no limit" as a page-rounded 2^63 - 1


def mounts(mountinfo: str) -> list[tuple[str, str, str, str]]:
    """(root, mount point, fs type, super options) of each line of /proc/self/mountinfo."""
    out = []
    for line in mountinfo.splitlines():
        left, sep, right = line.partition(" - ")
        a, b = left.split(), right.split()
        if sep and len(a) >= 5 and len(b) >= 1:
            unescape = (lambda s: s.replace("\\040", " ").replace("\\011", "\t").replace("\\134", "\\"))
            out.append((unescape(a[3]), unescape(a[4]), b[0], b[2] if len(b) > 2 else ""))
    return out


def own_cgroup(proc_cgroup: str, controller: str | None) -> str | None:
    """This process's cgroup path in the v1 hierarchy of `controller`, or in v2 (controller None)."""
    for line in proc_cgroup.splitlines():
        num, _, rest = line.partition(":")
        controllers, _, path = rest.partition(":")
        if controller is None and num == "0" and controllers == "":
            return path
        if controller is not None and controller in controllers.split(","):
            return path
    return None


def below_mount(own: str, root: str) -> str:
    """The cgroup's path under its mount: without a cgroup namespace a
    container's mount root is its own cgroup, and /proc shows the full path."""
    rel = own[len(root):] if root != "/" and own.startswith(root) else own
    return rel.strip("/")


def shows(own: str, root: str) -> bool:
    """Whether a mount starting at cgroup `root` holds the cgroup `own`: from
    a private cgroup namespace the host's mount is listed too, its root seen
    as "/../..", holding none of this process's cgroups."""
    return root == "/" or own == root or own.startswith(root.rstrip("/") + "/")


def _number(text: str) -> int | None:
    t = text.strip()
    return int(t) if t.isdigit() and int(t) < UNLIMITED_FROM else None


def limit_bytes(ctx: Context) -> tuple[int | str | None, str]:
    """(the limit in bytes, or NO_LIMIT; None when it cannot be read, with the reason)."""
    info, cg = ctx.read("/proc/self/mountinfo"), ctx.read("/proc/self/cgroup")
    if not (info.ok and cg.ok):
        return None, info.error or cg.error
    found = mounts(info.text)
    for root, point, fs, _opts in found:
        controllers = ctx.read(f"{point}/cgroup.controllers") if fs == "cgroup2" else None
        if controllers is None or not controllers.ok or "memory" not in controllers.text.split():
            continue
        own = own_cgroup(cg.text, None)
        if own is None:
            return None, "no cgroup v2 line (0::) in /proc/self/cgroup"
        if not shows(own, root):
            continue
        parts = below_mount(own, root).split("/") if below_mount(own, root) else []
        # v2: each level has its own memory.max, and the tightest one binds, the mount's own root
        # included (the host's root has none; a container's namespace root is its cgroup, with its limit)
        limits = [_number(r.text) for i in range(len(parts), -1, -1)
                  if (r := ctx.read("/".join([point.rstrip("/"), *parts[:i], "memory.max"]))).ok]
        bound = [x for x in limits if x is not None]
        return (min(bound) if bound else NO_LIMIT), ""
    for root, point, fs, opts in found:
        if fs == "cgroup" and "memory" in opts.split(","):
            own = own_cgroup(cg.text, "memory")
            if own is None:
                return None, "no memory line in /proc/self/cgroup"
            if not shows(own, root):
                continue
            here = f"{point}/{below_mount(own, root)}".rstrip("/")
            stat = ctx.read(f"{here}/memory.stat")
            if not stat.ok:
                return None, stat.error
            # v1 sums the hierarchy for us: the smallest limit of this cgroup and its ancestors
            for line in stat.text.splitlines():
                key, _, value = line.partition(" ")
                if key == "hierarchical_memory_limit":
                    return (_number(value) or NO_LIMIT), ""
            return None, f"no hierarchical_memory_limit in {here}/memory.stat"
    return None, "no memory cgroup hierarchy mounted (cgroup2 with memory, or v1 memory)"


def collect_into(env: dict, ctx: Context) -> None:
    value, why = limit_bytes(ctx)
    if value is None:
        env[KEY + "_error"] = why
    else:
        env[KEY] = value
