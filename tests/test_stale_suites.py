"""A suite killed with -9 leaves its test clusters up and its file systems
mounted; the next suite takes them down, and leaves those of a suite that
still runs alone (tests/stale_suites.py, #33)."""
from __future__ import annotations

import secrets
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

import process_guard
import stale_suites
from clusterbench.testbed import cluster as tc

pytestmark = pytest.mark.skipif(tc.why_not() is not None, reason=f"no test cluster: {tc.why_not()}")


def mounted(p: Path) -> bool:
    return subprocess.run(["mountpoint", "-q", str(p)]).returncode == 0


def suite_folder(root: Path, session: str) -> Path:
    """A pytest folder beside this suite's, marked by session, with a tmpfs mounted in it."""
    folder = root / f"pytest-cbktest-{secrets.token_hex(3)}"
    (folder / "mnt").mkdir(parents=True)
    (folder / stale_suites.MARK).write_text(session)
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(folder / "mnt")], check=True)
    return folder


def test_what_a_killed_suite_left_is_taken_down_and_a_running_suites_is_not(tmp_path):
    # the suites' folders of this test stand in a root of its own (inside this suite's folder, which is
    # marked as running), so a second suite starting beside this one cannot sweep the "killed" one first
    root = tmp_path / "pytest-of-someone"
    mine = root / "pytest-7"
    mine.mkdir(parents=True)
    # a pid that is not running: the session of a suite killed with -9
    dead_pid = max(int(p.name) for p in Path("/proc").iterdir() if p.name.isdigit()) + 100000
    dead = suite_folder(root, f"{dead_pid}-123-deadbeef:shared")
    alive = suite_folder(root, process_guard.SESSION)   # this very suite: it runs
    cluster = None
    try:
        cluster = tc.up(dead / "popen-gw0" / "tb", 2)
        namespaces = [h.ns for h in cluster.hosts]
        assert set(namespaces) <= set(tc._namespaces())

        swept = stale_suites.sweep(mine)

        assert f"test cluster {dead / 'popen-gw0' / 'tb'}" in swept, swept
        assert not set(namespaces) & set(tc._namespaces())
        assert not (dead / "popen-gw0" / "tb" / tc.STATE_FILE).exists()
        assert not mounted(dead / "mnt") and f"mount {dead / 'mnt'}" in swept, swept
        assert mounted(alive / "mnt") and not any(str(alive) in line for line in swept), swept
    finally:
        if cluster is not None and (cluster.dir / tc.STATE_FILE).exists():
            tc.down(cluster.dir)
        for folder in (dead, alive):
            if mounted(folder / "mnt"):
                subprocess.run(["umount", str(folder / "mnt")], check=True)
            shutil.rmtree(folder)


def test_a_killed_suites_temporary_folders_are_removed_and_others_are_left(tmp_path_factory):
    """The PostgreSQL data, the command caches and the fork server's folder a suite keeps in /tmp: a dead
    session's marked folder goes, this suite's and an unmarked one stay."""
    mine = tmp_path_factory.getbasetemp()
    mine = mine.parent if mine.name.startswith("popen-") else mine
    dead_pid = max(int(p.name) for p in Path("/proc").iterdir() if p.name.isdigit()) + 100000
    dead = stale_suites.marked_temp_dir("cb-pg-")
    (dead / stale_suites.MARK).write_text(f"{dead_pid}-123-deadbeef:shared")
    (dead / "data").mkdir()
    (dead / "data" / "PG_VERSION").write_text("15\n")
    dead_fork = stale_suites.marked_temp_dir("clusterbench-test-fork-")   # the CLI fork server's socket folder
    (dead_fork / stale_suites.MARK).write_text(f"{dead_pid}-123-deadbeef:shared")
    alive = stale_suites.marked_temp_dir("clusterbench-test-cache-")
    unmarked = Path(tempfile.mkdtemp(prefix="cb-pg-"))
    try:
        swept = stale_suites.sweep(mine)
        assert f"folder {dead}" in swept and not dead.exists(), swept
        assert f"folder {dead_fork}" in swept and not dead_fork.exists(), swept
        assert alive.exists() and unmarked.exists()
        assert not any(str(alive) in line or str(unmarked) in line for line in swept), swept
    finally:
        for folder in (dead, dead_fork, alive, unmarked):
            shutil.rmtree(folder, ignore_errors=True)
