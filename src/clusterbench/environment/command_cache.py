"""What version commands printed, kept until the next boot, so a run does
not start them every time.

`fi_info --version` takes 0.2 s on a host whose libfabric links the qib PSM
library (its constructor calibrates the CPU clock by sleeping): most of the
snapshot's time and a fifth of a run's overhead, for a line that changes
only when software is installed (cc, mpiexec, mpicc and ucx_info cost 5 to
10 ms each). Collectors mark such commands `stable` (Context.run); their
output is kept only when they succeed, under a key of everything the
output can depend on:

- the boot (/proc/sys/kernel/random/boot_id): a new kernel, new modules;
- the command line and the executable PATH found, with its file identity
  (device, inode, size, mtime, ctime): an upgrade replaces the file;
- /etc/ld.so.cache's identity: every package manager runs ldconfig after
  installing a shared library, so an upgraded libfabric1 alone changes it;
- the identity of each LD_LIBRARY_PATH directory: `install` replaces a
  library by unlinking it, which changes its directory's mtime;
- the whole environment and working directory (a module load, MPICH_CC,
  a ucx.conf in the current directory), this clusterbench's version and
  SCHEMA (the form of what is kept).

Nothing else is kept: files under /proc and /sys are read every run (all
of them together take a few milliseconds), as are commands that report
state (nvidia-smi's link speed, ibv_devinfo's port state, ip route).

The file is per host and boot, under $XDG_CACHE_HOME/clusterbench (a shared
home serves many nodes), written whole to a temporary file and renamed,
and ignored when unreadable or not what this code wrote. The environment
package is stdlib only (it runs on compute nodes), hence no platformdirs.
"""
from __future__ import annotations

import hashlib
import json
import os
import socket
import tempfile
import threading
from pathlib import Path
from typing import Mapping

from clusterbench.files.cache_folder import cache_folder

SCHEMA = 1
BOOT_ID = Path("/proc/sys/kernel/random/boot_id")
LOADER_CACHE = "/etc/ld.so.cache"
MAX_ENTRIES = 100   # about ten environments of ten commands: the file stays small to read (100 kB)


def identity(path: str) -> list[int] | None:
    """What changes when a file is replaced or rewritten; None if it is not there."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return [st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns]


class CommandCache:
    """Outputs of stable commands on this host in this boot; thread-safe (collectors run in threads)."""

    def __init__(self, path: Path, boot_id: str):
        self.path, self.boot_id = path, boot_id
        self._lock = threading.Lock()
        self._entries: dict[str, dict] = {}
        self._changed = False
        try:
            kept = json.loads(path.read_text(encoding="utf-8"))
            if kept.get("schema") == SCHEMA and kept.get("boot_id") == boot_id and isinstance(kept["entries"], dict):
                self._entries = {k: v for k, v in kept["entries"].items()
                                 if isinstance(v, dict) and isinstance(v.get("text"), str)}
        except (OSError, ValueError, AttributeError, KeyError, TypeError):
            pass  # none yet, unreadable or corrupt: start empty, the next save replaces it

    @classmethod
    def for_this_boot(cls, where: Path | None = None) -> CommandCache | None:
        """None when the boot cannot be told apart (no boot_id): nothing is kept then."""
        try:
            boot_id = BOOT_ID.read_text().strip()
        except OSError:
            return None
        if not boot_id:
            return None
        return cls((where or cache_folder()) / f"commands-{socket.gethostname()}-{boot_id}.json", boot_id)

    def key(self, exe: str, argv: list[str], env: Mapping[str, str]) -> str | None:
        """The entry's name, or None when the executable is gone (nothing to key on)."""
        exe_identity = identity(exe)
        if exe_identity is None:
            return None
        from clusterbench import __version__

        library_dirs = [d for d in env.get("LD_LIBRARY_PATH", "").split(os.pathsep) if d]
        try:
            cwd = os.getcwd()
        except OSError:
            return None
        # `_` is the shell's note of the command it started (`time clusterbench` and `clusterbench`
        # differ there); no program reads it
        variables = sorted((k, v) for k, v in env.items() if k != "_")
        parts = [SCHEMA, __version__, self.boot_id, argv, exe, exe_identity, identity(LOADER_CACHE),
                 [(d, identity(d)) for d in library_dirs], variables, cwd]
        return hashlib.sha256(json.dumps(parts, default=str).encode("utf-8", "surrogateescape")).hexdigest()

    def get(self, key: str) -> str | None:
        with self._lock:
            entry = self._entries.get(key)
        return entry["text"] if entry else None

    def put(self, key: str, text: str) -> None:
        with self._lock:
            self._entries[key] = {"text": text}
            self._changed = True

    def save(self) -> None:
        """Writes the file if anything was added; a cache that cannot be written costs only time."""
        with self._lock:
            if not self._changed:
                return
            entries = dict(list(self._entries.items())[-MAX_ENTRIES:])
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".commands-", suffix=".tmp")
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as f:
                    json.dump({"schema": SCHEMA, "boot_id": self.boot_id, "entries": entries}, f)
                os.replace(tmp, self.path)
            except BaseException:
                os.unlink(tmp)
                raise
            self._forget_earlier_boots()
        except OSError:
            pass

    def _forget_earlier_boots(self) -> None:
        prefix = f"commands-{socket.gethostname()}-"
        for old in self.path.parent.glob(f"{prefix}*.json"):
            # not host "vm-2"'s file when this is "vm": a boot id is as long as this one
            if old != self.path and len(old.name) == len(self.path.name):
                try:
                    old.unlink()
                except OSError:
                    pass
