"""What a suite killed with -9 left up or mounted, taken down by the next
suite (#33): its test clusters (namespaces, links, GlusterFS) and the file
systems its tests mounted (tmpfs, loop devices, FUSE). Its processes are
process_guard's.

Each suite marks its pytest folder (/tmp/pytest-of-USER/pytest-N) with its
session; everything a test makes lives under its tmp_path, so under that
folder. At start, a suite looks at the mounts under the other folders: one
whose marking session is gone is a killed suite's, and is taken down (a
test cluster through its state file, then what is still mounted, deepest
first). A folder of a suite that still runs, or one without a marking (not
ours), is left alone.

What a suite makes outside that folder (the PostgreSQL server's data, which
the postgres user must reach; the per-process command caches; the CLI fork
server's socket folder) lives in
temporary folders under /tmp marked the same way, removed by the next suite
when their session is gone (a suite killed with -9 left three servers' data,
400 MiB, and a 185 MiB uv cache, 2026-12-06).
"""
from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

import process_guard

MARK = ".clusterbench-suite"
# the temporary folders a suite makes outside its pytest folder (marked_temp_dir)
TEMP_PREFIXES = ("cb-pg-", "clusterbench-test-cache-", "clusterbench-test-fork-")


def mark(basetemp: Path) -> None:
    (basetemp / MARK).write_text(process_guard.SESSION)


def marked_temp_dir(prefix: str) -> Path:
    """A new folder in the system's temporary directory, marked with this
    suite's session; prefix one of TEMP_PREFIXES."""
    assert prefix in TEMP_PREFIXES, prefix
    folder = Path(tempfile.mkdtemp(prefix=prefix))
    mark(folder)
    return folder


def _session_gone(folder: Path) -> bool:
    try:
        session = (folder / MARK).read_text().strip()
    except OSError:
        return False   # not marked: not a suite of this project's, or an older one
    return not process_guard.session_alive(session.split(":", 1)[0])


def _mount_points() -> list[Path]:
    # clusterbench's own reader: it undoes mountinfo's octal escapes (\\040 for a space) and leaves a
    # non-ASCII path's UTF-8 as it is
    from clusterbench.environment.storage import parse_mountinfo

    return [Path(m["mount_point"]) for m in parse_mountinfo(Path("/proc/self/mountinfo").read_text())]


def _dead_folders(root: Path, mine: Path) -> set[Path]:
    folders = set()
    for p in _mount_points():
        if not p.is_relative_to(root) or p.is_relative_to(mine) or p == root:
            continue
        folder = root / p.relative_to(root).parts[0]
        if _session_gone(folder):
            folders.add(folder)
    return folders


def sweep(basetemp: Path) -> list[str]:
    """Takes down what killed suites left under basetemp's parent; returns
    what it took down, one line each."""
    from clusterbench.testbed import cluster as tc

    root, done = basetemp.parent, []
    for folder in sorted(_dead_folders(root, basetemp)):
        states = {p.parent.parent for p in _mount_points()
                  if p.is_relative_to(folder) and p.parent.name in ("uts", "ipc")}
        for state_dir in sorted(states):
            if (state_dir / tc.STATE_FILE).exists():
                try:
                    tc.down(state_dir)
                    done.append(f"test cluster {state_dir}")
                except Exception as e:   # noqa: BLE001  (what is left is unmounted below)
                    done.append(f"test cluster {state_dir}: {e}")
        for p in sorted((p for p in _mount_points() if p.is_relative_to(folder)),
                        key=lambda p: len(p.parts), reverse=True):
            if subprocess.run(["umount", str(p)], capture_output=True).returncode:
                subprocess.run(["umount", "-l", str(p)], capture_output=True)
            done.append(f"mount {p}")
    temp = Path(tempfile.gettempdir())
    for folder in sorted(f for prefix in TEMP_PREFIXES for f in temp.glob(prefix + "*")):
        if folder.is_dir() and not folder.is_symlink() and _session_gone(folder):
            shutil.rmtree(folder, ignore_errors=True)
            done.append(f"folder {folder}")
    return done
