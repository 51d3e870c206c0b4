"""What a user without root meets, as a real unprivileged process (uid 65534):
a cold read by drop-caches refused before anything is timed, a store in
another user's directory or file refused in one line (and read where it can
be), and MPICH's slab files in /dev/shm neither tripping cbk nor left by it.
As root, each case drops to 65534 in the child; as a user, it runs as that
user, which is the point."""
from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from unprivileged import CLI_SCRIPT, NOBODY, drop_root

@pytest.fixture
def nobody_dir():
    """A directory the unprivileged process may write (pytest's tmp_path is root's only)."""
    d = Path(tempfile.mkdtemp(prefix="cb-nobody-", dir="/tmp"))
    os.chmod(d, 0o777)
    try:
        yield d
    finally:
        shutil.rmtree(d)


def records(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines() if line.startswith("{")]


def cbk_as_nobody(cbk_bin: str, *args: str, cwd: Path) -> subprocess.CompletedProcess:
    try:
        return subprocess.run([cbk_bin, *args], cwd=cwd, capture_output=True, text=True, timeout=60,
                              preexec_fn=drop_root)
    except PermissionError:
        pytest.skip(f"{cbk_bin} cannot be run by uid {NOBODY} here")


# --- a cold read by drop-caches ---------------------------------------------------------------------------

@pytest.mark.timeout(60)
@pytest.mark.parametrize("args", [
    ["seqio", "--file-size=1m", "--cold-method=drop-caches"],
    ["manyfiles", "--files=2", "--file-size=64k", "--read=cold", "--cold-method=drop-caches"],
    ["pario", "--block-size=1m", "--transfer-size=256k", "--cold=drop-caches"],
])
def test_drop_caches_without_root_is_refused_before_the_write_is_timed(cbk_bin, nobody_dir, args):
    """It was found at the read: the write had been measured, the run failed (exit 1) and was stored."""
    p = cbk_as_nobody(cbk_bin, *args, f"--dir={nobody_dir}", cwd=nobody_dir)
    if os.access("/proc/sys/vm/drop_caches", os.W_OK) and os.geteuid() != 0:
        pytest.skip("this user may write /proc/sys/vm/drop_caches")
    assert p.returncode == 2, p.stdout + p.stderr
    errors = [r for r in records(p.stdout + p.stderr) if r["type"] == "error"]
    assert errors and "drop-caches needs to write /proc/sys/vm/drop_caches" in errors[0]["message"], p.stderr
    assert "fadvise" in errors[0]["message"]
    assert not [r for r in records(p.stdout) if r["type"] == "measurement"]
    assert list(nobody_dir.iterdir()) == []  # no private directory, no file


@pytest.mark.timeout(60)
def test_drop_caches_refused_through_the_cli_stores_nothing(cbk_bin, nobody_dir):
    env = dict(os.environ, CLUSTERBENCH_CBK=cbk_bin, CLUSTERBENCH_DB=f"sqlite:///{nobody_dir / 'r.db'}",
               HOME=str(nobody_dir), CLUSTERBENCH_STATE_DIR=str(nobody_dir / "state"), COLUMNS="200",
               PATH=str(Path(cbk_bin).parent) + os.pathsep + os.environ.get("PATH", ""))
    (nobody_dir / "d").mkdir(mode=0o777)
    os.chmod(nobody_dir / "d", 0o777)
    p = subprocess.run([sys.executable, "-c", CLI_SCRIPT, "run", "seqio", f"--dir={nobody_dir / 'd'}",
                        "--file-size=1m", "--repeat", "1", "--cold-method=drop-caches"],
                       cwd=nobody_dir, env=env, capture_output=True, text=True, timeout=60)
    assert p.returncode == 2, p.stdout + p.stderr
    assert len(p.stderr.strip().splitlines()) == 1 and "cold-method=drop-caches needs" in p.stderr, p.stderr
    assert sorted(x.name for x in nobody_dir.iterdir()) == ["d"] and not list((nobody_dir / "d").iterdir())
