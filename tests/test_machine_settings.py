"""The machine-wide lock the tests that change shared settings hold
(tests/machine_settings.py): held exclusively, it keeps out another
process's shared or exclusive hold; shared holds go together."""
from __future__ import annotations

import fcntl
import os
import subprocess
import sys
from pathlib import Path

import pytest

import machine_settings

HOLDER = """
import sys, machine_settings
with machine_settings.held(exclusive=sys.argv[1] == "ex"):
    print("held", flush=True)
    sys.stdin.readline()
"""


def try_lock(mode: int) -> bool:
    fd = os.open(machine_settings.LOCK, os.O_RDWR | os.O_CREAT, 0o666)
    try:
        fcntl.flock(fd, mode | fcntl.LOCK_NB)
        return True
    except BlockingIOError:
        return False
    finally:
        os.close(fd)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("held,shared_ok,exclusive_ok", [("ex", False, False), ("sh", True, False)])
def test_an_exclusive_hold_keeps_everyone_out_and_shared_holds_go_together(held, shared_ok, exclusive_ok):
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parent)}
    p = subprocess.Popen([sys.executable, "-c", HOLDER, held], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         text=True, env=env)
    try:
        assert p.stdout.readline().strip() == "held"
        assert try_lock(fcntl.LOCK_SH) is shared_ok
        assert try_lock(fcntl.LOCK_EX) is exclusive_ok
    finally:
        p.communicate("\n", timeout=30)
    assert p.returncode == 0
    with machine_settings.held(exclusive=True):   # released with the holder (others may hold it a while)
        pass
