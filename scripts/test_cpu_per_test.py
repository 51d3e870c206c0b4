"""pytest plugin that scripts/test-cpu-profile.py loads (-p test_cpu_per_test):
each test's CPU from its setup to its teardown, in its worker's own process
(time.process_time: what the test does in Python, its rendering and
analysis) and in the children the worker waited for (RUSAGE_CHILDREN:
every short process /proc sampling misses), one line a test in
$CLUSTERBENCH_TEST_CPU_LOG/<pid>.tsv. A module's fixtures are charged to
the test that set them up and the one that tore them down."""
from __future__ import annotations

import os
import resource
import time
from pathlib import Path

import pytest


def _children_s() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    own, children, wall = time.process_time(), _children_s(), time.monotonic()
    yield
    line = (f"{item.nodeid}\t{time.process_time() - own:.3f}\t{_children_s() - children:.3f}\t"
            f"{time.monotonic() - wall:.3f}\n")
    with open(Path(os.environ["CLUSTERBENCH_TEST_CPU_LOG"]) / f"{os.getpid()}.tsv", "a") as f:
        f.write(line)
