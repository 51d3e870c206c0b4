"""Where this process's cgroup of a controller is: /proc/self/mountinfo's
cgroup mounts and /proc/self/cgroup's paths, parsed for the collectors that
read a cgroup's settings (memory_cgroup.py, cpuset_cgroup.py) and for
conditions/cgroup.py, which makes the cgroups of --memory-limit.

Stdlib only: the per-rank wrapper (conditions/cgexec) imports it on every node."""
from __future__ import annotations


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
