"""cbk's private directories left behind by a run that was killed (-9, a
node crash, a rank killed under MPI): find them by their owner stamp, tell
whether the owner is gone, remove them.

cbk makes every private directory as "<dir>/cbk-<kernel>-XXXXXX" and writes
its owner stamp ".cbk-owner" in it before any data (kernels/core/cleanup.c);
removing it, cbk moves the stamp beside it ("<dir>.cbk-owner"), removes
the directory, then the stamp, so a removal cut short by SIGKILL leaves a
directory, or a stamp alone, that still says whose it is. The stamp is
one JSON line with host, boot id, pid, the process's start in clock ticks
since boot, start time, cbk's run id and the store's run id. An owner is
gone when the stamp names this host and either the boot id differs (a
reboot) or no process with that pid and start time lives. A directory
without a readable stamp, another host's, a symlink, or another user's is
never touched.
"""
from __future__ import annotations

import dataclasses
import json
import os
import re
import socket
import stat
from collections.abc import Collection, Iterator
from pathlib import Path

STAMP = ".cbk-owner"
# cbk_private_dir's names: cbk-<kernel>-<mkdtemp's 6 characters>, and
# that of the stamp moved beside the directory while it is removed
NAME = re.compile(r"^cbk-(?P<kernel>[a-z][a-z0-9_-]*)-[A-Za-z0-9]{6}$")
BESIDE = re.compile(r"^(?P<dir>cbk-(?P<kernel>[a-z][a-z0-9_-]*)-[A-Za-z0-9]{6})" + re.escape(STAMP) + "$")


@dataclasses.dataclass(frozen=True)
class Orphan:
    path: Path
    size_bytes: int
    stamp: dict

    def describe(self) -> str:
        s = self.stamp
        run = f", run {s['store_run']}" if s.get("store_run") is not None else ""
        return (f"{os.fsdecode(self.path)!r} ({self.size_bytes / 2**20:.1f} MiB) of cbk pid {s.get('pid')} "
                f"on {s.get('host')}{run}, cbk run id {s.get('run_id')}")


def beside(path: Path) -> Path:
    """Where cbk moves the stamp of the directory `path` while removing it."""
    return path.with_name(path.name + STAMP)


def _read_stamp_file(path: Path) -> dict | None:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
        with os.fdopen(fd, "rb") as f:
            if not stat.S_ISREG(os.fstat(f.fileno()).st_mode) or os.fstat(f.fileno()).st_uid != os.geteuid():
                return None
            stamp = json.loads(f.read(4096))
    except (OSError, ValueError):
        return None
    if not isinstance(stamp, dict) or stamp.get("owner") != "cbk" or not isinstance(stamp.get("pid"), int):
        return None
    return stamp


def _read_stamp(path: Path) -> dict | None:
    """The stamp of the private directory `path`: in it, or moved beside it."""
    return _read_stamp_file(path / STAMP) or _read_stamp_file(beside(path))


def boot_id() -> str:
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return ""


def start_ticks(pid: int) -> int | None:
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2:].split()
    if fields[0] in ("Z", "X"):  # exited, not yet reaped: its files are nobody's
        return None
    return int(fields[19])  # field 22 of proc(5); fields[0] is field 3


def owner_alive(stamp: dict) -> bool | None:
    """True or False for an owner on this host; None for another host's
    (nothing here can tell, so it is left alone)."""
    if stamp.get("host") != socket.gethostname():
        return None
    if stamp.get("boot_id") and stamp["boot_id"] != boot_id():
        return False
    ticks = start_ticks(stamp["pid"])
    if ticks is None:
        return False
    return not stamp.get("start_ticks") or ticks == stamp["start_ticks"]


def _size_bytes(path: Path) -> int:
    total = 0
    for root, _dirs, files in os.walk(path):
        for name in files:
            try:
                total += os.lstat(os.path.join(root, name)).st_size
            except OSError:
                pass
    return total


def _cbk_dirs(parent: str | os.PathLike, kernels: Collection[str]) -> Iterator[tuple[os.DirEntry, os.stat_result]]:
    """The directories in parent named as cbk names its private ones, by a kernel cbk has."""
    try:
        entries = sorted(os.scandir(parent), key=lambda e: e.name)
    except OSError:
        return
    for entry in entries:
        m = NAME.match(entry.name if isinstance(entry.name, str) else os.fsdecode(entry.name))
        if not m or m["kernel"] not in kernels:
            continue
        try:
            st = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        if stat.S_ISDIR(st.st_mode):
            yield entry, st


def orphans(parent: str | os.PathLike, kernels: Collection[str]) -> list[Orphan]:
    """Stamped private directories in `parent` (not below) whose owner is gone.
    kernels: the names cbk has (catalogue.py); a cbk-zzz-XXXXXX of a kernel
    cbk does not have is not cbk's, whatever its stamp says."""
    found = []
    for entry, st in _cbk_dirs(parent, kernels):
        if st.st_uid != os.geteuid():
            continue
        path = Path(entry.path)
        stamp = _read_stamp(path)
        if stamp is None or owner_alive(stamp) is not False:
            continue
        found.append(Orphan(path, _size_bytes(path), stamp))
    # a stamp beside no directory: a removal killed between its rmdir and unlink
    try:
        entries = sorted(os.scandir(parent), key=lambda e: e.name)
    except OSError:
        entries = []
    for entry in entries:
        m = BESIDE.match(os.fsdecode(entry.name))
        if not m or m["kernel"] not in kernels or os.path.lexists(os.path.join(parent, m["dir"])):
            continue
        stamp = _read_stamp_file(Path(entry.path))
        if stamp is not None and owner_alive(stamp) is False:
            found.append(Orphan(Path(parent) / m["dir"], 0, stamp))
    return found


def others_users(parent: str | os.PathLike, kernels: Collection[str]) -> list[tuple[str, str]]:
    """(name, owner) of the private directories in parent that another user
    owns: never ours to remove, and their stamps are usually unreadable, so
    whether they are stale is not known here; on a shared scratch a user
    should hear they are there, not that there are none."""
    import pwd

    found = []
    for entry, st in _cbk_dirs(parent, kernels):
        if st.st_uid == os.geteuid():
            continue
        try:
            owner = pwd.getpwuid(st.st_uid).pw_name
        except KeyError:
            owner = f"uid {st.st_uid}"
        found.append((os.fsdecode(entry.name), owner))
    return found


def _remove_tree(dir_fd: int) -> None:
    """Empties the directory open as dir_fd, never following a symlink."""
    for name in os.listdir(dir_fd):
        try:
            os.unlink(name, dir_fd=dir_fd)
            continue
        except IsADirectoryError:
            pass
        except PermissionError:  # Linux says EISDIR; others EPERM
            if not stat.S_ISDIR(os.lstat(name, dir_fd=dir_fd).st_mode):
                raise
        sub = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=dir_fd)
        try:
            _remove_tree(sub)
        finally:
            os.close(sub)
        os.rmdir(name, dir_fd=dir_fd)


def _move_stamp_beside(dir_fd: int, to: Path) -> None:
    """The stamp of the directory open as dir_fd moved to `to` as cbk moves
    it (kernels/core/cleanup.c): a link, then the unlink, so that a file
    already there is never replaced (rename would); rename where the file
    system has no hard links."""
    try:
        inside = os.lstat(STAMP, dir_fd=dir_fd)
    except FileNotFoundError:  # moved beside already
        return
    try:
        os.link(STAMP, to, src_dir_fd=dir_fd)
    except FileExistsError:
        there = os.lstat(to)
        if (there.st_dev, there.st_ino) != (inside.st_dev, inside.st_ino):
            raise
    except OSError:
        os.rename(STAMP, to, src_dir_fd=dir_fd)
        return
    os.unlink(STAMP, dir_fd=dir_fd)


def remove(orphan: Orphan) -> None:
    """Removes one orphan as cbk does: its files, its stamp moved beside
    it, the directory, the stamp, so an interrupted removal is found again."""
    try:
        fd = os.open(orphan.path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except FileNotFoundError:  # its stamp alone was left
        os.unlink(beside(orphan.path))
        return
    try:
        for name in os.listdir(fd):
            if name == STAMP:
                continue
            try:
                os.unlink(name, dir_fd=fd)
            except (IsADirectoryError, PermissionError):
                sub = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
                try:
                    _remove_tree(sub)
                finally:
                    os.close(sub)
                os.rmdir(name, dir_fd=fd)
        _move_stamp_beside(fd, beside(orphan.path))
    finally:
        os.close(fd)
    os.rmdir(orphan.path)
    os.unlink(beside(orphan.path))


def sweep(parent: str | os.PathLike, kernels: Collection[str], note) -> None:
    """Before a run in `parent`: removes the orphans there, saying so; a
    failure to remove one is said too and does not stop the run."""
    for orphan in orphans(parent, kernels):
        try:
            remove(orphan)
            note(f"removed a stale private directory {orphan.describe()}")
        except OSError as e:
            note(f"cannot remove the stale private directory {os.fsdecode(orphan.path)!r}: {e.strerror}")
