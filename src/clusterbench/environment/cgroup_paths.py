"""Where this process's cgroup of a controller is: /proc/self/mountinfo's
cgroup mounts and /proc/self/cgroup's paths, parsed for the collectors that
read a cgroup's settings (memory_cgroup.py, cpuset_cgroup.py) and for
conditions/cgroup.py, which makes the cgroups of --memory-limit.

Stdlib only: the per-rank wrapper (conditions/cgexec) imports it on every node."""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:   # the annotations only
    from clusterbench.environment.sources import Context


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


@dataclass(frozen=True)
class Located:
    version: int        # 1 or 2
    # v2: this process's cgroup directory, then each one above it up to its mount's root (a setting
    # there binds, or is inherited, below); v1: its directory alone
    dirs: list[str]


def locate(ctx: Context, controller: str) -> Located | str:
    """This process's cgroup of `controller` (cgroup v2 where its hierarchy
    has the controller, else v1), or why it cannot be told."""
    info, cg = ctx.read("/proc/self/mountinfo"), ctx.read("/proc/self/cgroup")
    if not (info.ok and cg.ok):
        return info.error or cg.error
    found = mounts(info.text)
    for root, point, fs, _opts in found:
        controllers = ctx.read(f"{point}/cgroup.controllers") if fs == "cgroup2" else None
        if controllers is None or not controllers.ok or controller not in controllers.text.split():
            continue
        own = own_cgroup(cg.text, None)
        if own is None:
            return "no cgroup v2 line (0::) in /proc/self/cgroup"
        if not shows(own, root):
            continue
        parts = below_mount(own, root).split("/") if below_mount(own, root) else []
        return Located(2, ["/".join([point.rstrip("/"), *parts[:i]]) for i in range(len(parts), -1, -1)])
    for root, point, fs, opts in found:
        if fs == "cgroup" and controller in opts.split(","):
            own = own_cgroup(cg.text, controller)
            if own is None:
                return f"no {controller} line in /proc/self/cgroup"
            if not shows(own, root):
                continue
            return Located(1, [f"{point}/{below_mount(own, root)}".rstrip("/")])
    return f"no {controller} cgroup hierarchy mounted (cgroup2 with {controller}, or v1 {controller})"
