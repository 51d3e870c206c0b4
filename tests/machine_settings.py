"""One lock on the machine for the settings all its processes share
(transparent huge pages, vm.dirty_*, the PM QoS CPU latency, and the memory
cgroups clusterbench makes, which tests count before and after). A test that
changes one holds it exclusively; a test whose verdict depends on one (that
the kernel gave huge pages) holds it shared. The workers of one suite and
two suites on one machine take turns: a run-conditions test had set THP to
"never" for a second while another suite's pario test judged its buffers
(fresh-clone CI with a second copy beside it, 2026-12-06), and a test
reading the value to restore while another had it changed would restore
the other's (#33).

The lock file stays in /run/lock (emptied at boot); a lock on a file that
is removed and made again would not exclude anyone.
"""
from __future__ import annotations

import contextlib
import fcntl
import os
import tempfile
from pathlib import Path

_DIR = "/run/lock" if os.path.isdir("/run/lock") else tempfile.gettempdir()
LOCK = Path(_DIR) / "clusterbench-tests-machine-settings.lock"


@contextlib.contextmanager
def held(exclusive: bool):
    fd = os.open(LOCK, os.O_RDWR | os.O_CREAT, 0o666)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
        yield
    finally:
        os.close(fd)   # closing the last descriptor releases the lock
