"""Memory cgroups for --memory-limit: a cgroup capped at N bytes that the
kernel's processes run in, so their page cache cannot grow past N (what
booting with mem= did for E4, without the reboot).

cgroup v2 (`memory.max`, `memory.peak`) where the memory controller is on
the unified hierarchy; v1 (`memory.limit_in_bytes`, `memory.max_usage_in_bytes`)
where it is still on a v1 hierarchy (hybrid set-ups, older distributions,
many containers). Both charge page cache to the cgroup that first touched
the page, so a capped writer waits for writeback once its cache is full.

Where a cgroup goes: v1 has no rule against processes in inner cgroups, so
ours is a child of the caller's own cgroup (any limit above still applies,
and a batch system's job cgroup stays the parent). v2 forbids enabling a
controller below a cgroup that holds processes, so ours sits at the top of
the hierarchy, which only root may write.

Stdlib only: the per-rank wrapper (cgexec) imports this on every node.
"""
from __future__ import annotations

import errno
import os
import signal
import time
from dataclasses import dataclass
from pathlib import Path

from clusterbench.environment import cgroup_paths


class CgroupUnavailable(Exception):
    """Why a memory cgroup cannot be made here: one line for the user."""


@dataclass(frozen=True)
class Hierarchy:
    version: int          # 1 or 2
    parent: Path          # where clusterbench's cgroups are created

    @property
    def limit_file(self) -> str:
        return "memory.max" if self.version == 2 else "memory.limit_in_bytes"

    @property
    def peak_file(self) -> str:
        return "memory.peak" if self.version == 2 else "memory.max_usage_in_bytes"

    def describe(self) -> str:
        return f"cgroup v{self.version} {self.limit_file}"


def find(mountinfo: str | None = None, proc_cgroup: str | None = None) -> Hierarchy:
    """The hierarchy that holds the memory controller here; raises CgroupUnavailable."""
    if mountinfo is None:
        mountinfo = Path("/proc/self/mountinfo").read_text()
    if proc_cgroup is None:
        proc_cgroup = Path("/proc/self/cgroup").read_text()
    mounts = cgroup_paths.mounts(mountinfo)
    for _root, point, fs, _opts in mounts:
        if fs == "cgroup2":
            try:
                controllers = (Path(point) / "cgroup.controllers").read_text().split()
            except OSError:
                continue
            if "memory" in controllers:
                return Hierarchy(2, Path(point))
    for root, point, fs, opts in mounts:
        if fs == "cgroup" and "memory" in opts.split(","):
            own = cgroup_paths.own_cgroup(proc_cgroup, "memory")
            if own is None:
                raise CgroupUnavailable("no memory line in /proc/self/cgroup")
            return Hierarchy(1, Path(point) / cgroup_paths.below_mount(own, root))
    raise CgroupUnavailable("no cgroup hierarchy with the memory controller is mounted "
                            "(neither cgroup2 with memory in cgroup.controllers nor a v1 memory hierarchy)")


def memory_total_bytes(meminfo: str | None = None) -> int | None:
    """This host's RAM (MemTotal); None where /proc/meminfo cannot be read."""
    try:
        text = Path("/proc/meminfo").read_text() if meminfo is None else meminfo
    except OSError:
        return None
    for line in text.splitlines():
        name, _, rest = line.partition(":")
        if name == "MemTotal" and rest.split()[:1] and rest.split()[0].isdigit():
            return int(rest.split()[0]) * 1024
    return None


def inherited_limit_bytes(h: Hierarchy) -> int | None:
    """The smallest limit of the cgroups above ours (v1: the caller's own and
    its ancestors', memory.stat's hierarchical_memory_limit; a Slurm job's,
    a container's), or None. v2 puts ours at the top: nothing above it."""
    if h.version != 1:
        return None
    try:
        for line in (h.parent / "memory.stat").read_text().splitlines():
            key, _, value = line.partition(" ")
            if key == "hierarchical_memory_limit" and value.strip().isdigit():
                return int(value) if int(value) < 2**60 else None   # v1 writes "none" as ~2^63
    except OSError:
        pass
    return None


def caps_nothing(limit_bytes: int, meminfo: str | None = None, h: Hierarchy | None = None) -> str | None:
    """Why a cap of limit_bytes would cap nothing on this host, or None. The
    page cache can use all the RAM the kernel has left, never more: a cap at
    or above the RAM never binds, and the run would be recorded as capped.
    Nor does a cap at or above the limit of a cgroup above ours (given h):
    the run would be recorded with a cap that was not the one that held."""
    total = memory_total_bytes(meminfo)
    if total is not None and limit_bytes >= total:
        return (f"this host has {total / 2**30:.1f} GiB of memory, so a cap at or above it caps nothing "
                f"(give less than {total >> 20}m)")
    inherited = inherited_limit_bytes(h) if h else None
    if inherited is not None and limit_bytes >= inherited:
        return (f"the cgroup this runs in ({h.parent}) is already capped at {inherited / 2**30:.2f} GiB, so a cap "
                f"at or above it caps nothing (give less than {inherited >> 20}m)")
    return None


def _write(path: Path, text: str) -> None:
    with open(path, "w") as f:
        f.write(text)


def _refusal(e: OSError, what: str, h: Hierarchy) -> CgroupUnavailable:
    if e.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        return CgroupUnavailable(f"--memory-limit needs root or a delegated cgroup: cannot {what} "
                                 f"({os.strerror(e.errno).lower()})")
    return CgroupUnavailable(f"cannot {what}: {os.strerror(e.errno).lower() if e.errno else e}")


def create(h: Hierarchy, name: str, limit_bytes: int) -> Path:
    """The cgroup `name` under the hierarchy's parent, capped at limit_bytes.
    Several ranks on one host create it at once: an existing one is reused."""
    path = h.parent / name
    if h.version == 2:
        try:
            if "memory" not in (h.parent / "cgroup.subtree_control").read_text().split():
                _write(h.parent / "cgroup.subtree_control", "+memory")
        except OSError as e:
            raise _refusal(e, f"enable the memory controller in {h.parent}/cgroup.subtree_control", h) from None
    try:
        path.mkdir(exist_ok=True)
    except OSError as e:
        raise _refusal(e, f"create the cgroup {path}", h) from None
    try:
        _write(path / h.limit_file, str(limit_bytes))
    except OSError as e:
        remove(path)
        raise _refusal(e, f"write {limit_bytes} to {path}/{h.limit_file}", h) from None
    return path


def join_self(path: Path) -> None:
    """Moves the calling process into the cgroup ("0" means the writer)."""
    _write(path / "cgroup.procs", "0")


def _read_int(path: Path) -> int | None:
    try:
        return int(path.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def peak_bytes(h: Hierarchy, path: Path) -> int | None:
    """Most memory (page cache included) the cgroup held; None where the kernel keeps no peak (v2 before 5.19)."""
    return _read_int(path / h.peak_file)


def oom_kills(h: Hierarchy, path: Path) -> int:
    """Processes the out-of-memory killer ended inside the cgroup."""
    try:
        text = (path / ("memory.events" if h.version == 2 else "memory.oom_control")).read_text()
    except OSError:
        return 0
    for line in text.splitlines():
        k, _, v = line.partition(" ")
        if k == "oom_kill" and v.strip().isdigit():
            return int(v)
    return 0


def members(path: Path) -> list[int]:
    try:
        return [int(p) for p in (path / "cgroup.procs").read_text().split()]
    except (OSError, ValueError):
        return []


def remove(path: Path, wait_s: float = 2.0) -> bool:
    """rmdir once empty; True if this call removed it. False while processes
    are still inside (another rank on this host: the last one out removes
    it) or when another rank removed it first."""
    deadline = time.monotonic() + wait_s
    while True:
        try:
            path.rmdir()
            return True
        except FileNotFoundError:
            return False
        except OSError as e:
            if e.errno != errno.EBUSY or members(path):
                return False
            # empty but busy: a process that just exited is still being released
            if time.monotonic() > deadline:
                return False
            time.sleep(0.02)


def evict_and_remove(path: Path, grace_s: float = 15.0) -> bool:
    """Removes a cgroup of a run that is over: its leftover processes (a
    killed run's kernels, nobody else's: the name is the run's own) get
    SIGINT, so cbk removes its files, then SIGKILL after grace_s."""
    if not path.exists():
        return True
    for sig, wait in ((signal.SIGINT, grace_s), (signal.SIGKILL, 5.0)):
        pids = members(path)
        if not pids:
            break
        for pid in pids:
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + wait
        while members(path) and time.monotonic() < deadline:
            time.sleep(0.05)
    return remove(path) or not path.exists()
