"""The restoration journal: what a run changed, written before each change.

One journal per run that changes something, in the user's state directory
($CLUSTERBENCH_STATE_DIR, else e.g. ~/.local/state/clusterbench/restore):
`HOST-PID-TOKEN.json` (the entries, rewritten atomically) beside
`HOST-PID-TOKEN.lock`, which the run holds locked (flock) while it lives.
The kernel drops that lock however the run ends, kill -9 and a crash
included; so a journal whose lock can be taken belongs to a run that ended
without undoing its changes, and `replay_stale` (run by every clusterbench
command, and by `clusterbench clean`) undoes them. Journals of other hosts
(a home directory shared over NFS) are left to their own host.
"""
from __future__ import annotations

import fcntl
import json
import os
import socket
import sys
from pathlib import Path
from typing import Callable

from clusterbench.files.safe_write import write_atomically

SETTINGS_LOCK = "settings-{host}.lock"


def state_dir() -> Path:
    env = os.environ.get("CLUSTERBENCH_STATE_DIR")
    if env:
        return Path(env) / "restore"
    from platformdirs import user_state_dir

    return Path(user_state_dir("clusterbench")) / "restore"


def _host() -> str:
    return socket.gethostname()


def _lock(path: Path, blocking: bool) -> int | None:
    """An fd holding an exclusive flock on path, or None when another process holds it."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | (0 if blocking else fcntl.LOCK_NB))
    except BlockingIOError:
        os.close(fd)
        return None
    return fd


def _write_atomically(path: Path, doc: dict) -> None:
    # synced, rename included, before the change it records is made
    write_atomically(path, json.dumps(doc, indent=1))


class Journal:
    """This run's journal: `add` persists entries before the caller changes anything."""

    def __init__(self, command: str):
        self.dir = state_dir()
        self.dir.mkdir(parents=True, exist_ok=True)
        stem = f"{_host()}-{os.getpid()}-{os.urandom(4).hex()}"
        self.path = self.dir / f"{stem}.json"
        self.lock_path = self.dir / f"{stem}.lock"
        self._fd = _lock(self.lock_path, blocking=True)
        self.doc = {"host": _host(), "pid": os.getpid(), "command": command, "entries": []}
        _write_atomically(self.path, self.doc)

    @property
    def entries(self) -> list[dict]:
        return self.doc["entries"]

    def add(self, *entries: dict) -> None:
        self.entries.extend(entries)
        _write_atomically(self.path, self.doc)

    def drop(self, entry: dict) -> None:
        """Forgets an entry that is undone."""
        self.doc["entries"] = [e for e in self.entries if e is not entry]
        _write_atomically(self.path, self.doc)

    def close(self) -> None:
        """Removes the journal once nothing is left to undo; else keeps it for `clean`."""
        if not self.entries:
            self.path.unlink(missing_ok=True)
            self.lock_path.unlink(missing_ok=True)
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def settings_lock() -> int | None:
    """One run at a time changes this host's settings: an fd holding the lock, or None if another run has it."""
    d = state_dir()
    d.mkdir(parents=True, exist_ok=True)
    return _lock(d / SETTINGS_LOCK.format(host=_host()), blocking=False)


def undo(entry: dict) -> None:
    """Undoes one entry; raises OSError when it cannot."""
    if entry["kind"] == "cgroup":
        from clusterbench.conditions import cgroup

        if not cgroup.evict_and_remove(Path(entry["path"])):
            raise OSError(f"cgroup {entry['path']} still holds processes")
        return
    from clusterbench.conditions import settings

    try:
        settings.restore(entry)
    except settings.SettingError as e:
        raise OSError(str(e)) from None


def undo_all(entries: list[dict], done: Callable[[dict], None]) -> list[str]:
    """Undoes entries newest first (a value changed twice ends at the oldest
    before-value); calls done(entry) after each success; returns failures."""
    failures = []
    for entry in reversed(list(entries)):
        try:
            undo(entry)
        except OSError as e:
            failures.append(str(e))
            continue
        done(entry)
    return failures


def replay_stale(say: Callable[[str], None] = lambda m: print(m, file=sys.stderr)) -> int:
    """Undoes what runs that ended without restoring left changed on this
    host; returns how many journals were replayed. Cheap when there are none."""
    d = state_dir()
    try:
        stale = sorted(d.glob(f"{_host()}-*.json")) if d.is_dir() else []
    except OSError:
        return 0  # a state directory this user cannot read holds no journal of this user's runs
    replayed = 0
    for path in stale:
        try:
            fd = _lock(path.with_suffix(".lock"), blocking=False)
        except OSError:
            continue
        if fd is None:
            continue  # its run is alive
        try:
            try:
                doc = json.loads(path.read_text())
            except FileNotFoundError:  # its run closed it as we looked
                path.with_suffix(".lock").unlink(missing_ok=True)
                continue
            except (OSError, ValueError) as e:
                say(f"clusterbench: cannot read the restoration journal {path}: {e}")
                continue
            if doc.get("host") != _host():
                continue
            entries = list(doc.get("entries", []))
            if not entries:
                path.unlink(missing_ok=True)
                path.with_suffix(".lock").unlink(missing_ok=True)
                continue
            say(f"clusterbench: run pid {doc.get('pid')} ({doc.get('command') or '?'}) ended without "
                f"restoring what it changed; restoring now")

            def done(entry: dict) -> None:
                doc["entries"] = [e for e in doc["entries"] if e != entry]
                _write_atomically(path, doc)
                say(f"clusterbench: {describe(entry)}")

            failures = undo_all(entries, done)
            for f in failures:
                say(f"clusterbench: could not restore: {f} (kept in {path}; retry with clusterbench clean)")
            if not failures:
                path.unlink(missing_ok=True)
                path.with_suffix(".lock").unlink(missing_ok=True)
            replayed += 1
        finally:
            os.close(fd)
    return replayed


def describe(entry: dict) -> str:
    if entry["kind"] == "cgroup":
        return f"removed the memory cgroup {entry['path']}"
    if entry["kind"] == "pm-qos":
        return f"{entry['setting']}: the request ended with its process, nothing to restore"
    where = f" ({entry['path']})" if entry.get("path") else ""
    return f"restored {entry['setting']} to {entry.get('before') or 'off'}{where}"
