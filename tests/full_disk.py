"""A full file system for a test: a 1 MiB tmpfs mounted in a private mount
namespace (`unshare -m`), so it is gone with the shell that uses it and
nothing outside sees it. Needs root (or skips)."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

# $FULL: the tmpfs; fill: writes a file named filler until the tmpfs has no byte left
PRELUDE = """
mount -t tmpfs -o size=1m cbtest "$FULL" || exit 99
fill() { dd if=/dev/zero of="$FULL/filler" bs=4k status=none 2>/dev/null; sync; }
"""


def run_on_full_disk(tmp_path, script: str, env: dict, timeout_s: float = 300) -> subprocess.CompletedProcess:
    """Runs script (sh) with $FULL a fresh tmpfs under tmp_path and $PY this Python."""
    if os.geteuid() != 0 or not shutil.which("unshare"):
        pytest.skip("needs root for a private tmpfs mount")
    full = tmp_path / "full"
    full.mkdir(exist_ok=True)
    r = subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c", PRELUDE + script],
                       capture_output=True, text=True, timeout=timeout_s,
                       env=dict(env, FULL=str(full), PY=sys.executable))
    if r.returncode == 99:
        pytest.skip(f"cannot mount a tmpfs here: {r.stderr.strip()}")
    return r
