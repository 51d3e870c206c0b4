"""No process of the suite outlives its test (#33).

Every test runs with CLUSTERBENCH_TEST_PROCESS=<session>:<test> in its
environment; whatever it starts (the CLI, mpiexec, the ssh stand-in, every
rank, a Slurm job's steps) inherits it. After the test, a process still
carrying the test's tag is left behind: it is killed with its tree, and the
test fails, naming it. Fixtures that outlive one test on purpose (the
PostgreSQL server, test clusters of module scope) start without the tag
(`untagged`). At the end, nothing carrying the session's tag may be left.
Two suites on one machine have different session tags, so neither sees the
other's processes.
"""
from __future__ import annotations

import contextlib
import os
import time
import uuid

VAR = "CLUSTERBENCH_TEST_PROCESS"
SESSION = f"{os.getpid()}-{uuid.uuid4().hex[:8]}"


def test_tag(index: int) -> str:
    return f"{SESSION}:{index}"


def tagged(prefix: str) -> list[tuple[int, str]]:
    """(pid, command line) of every process whose environment holds a tag
    starting with prefix (this process excepted)."""
    needle = f"{VAR}={prefix}".encode()
    out = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry.name}/environ", "rb") as f:
                env = f.read()
            if not any(item.startswith(needle) for item in env.split(b"\0")):
                continue
            with open(f"/proc/{entry.name}/cmdline", "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode(errors="replace").strip()
        except OSError:   # gone meanwhile, or a kernel thread
            continue
        if cmd:   # a zombie has none: its parent reaps it
            out.append((int(entry.name), cmd))
    return out


def left_behind(prefix: str, wait_s: float = 10.0) -> list[tuple[int, str]]:
    """Processes of prefix still there after wait_s (a killed launcher's
    ranks may take a moment to see it); each is killed with its tree."""
    deadline = time.monotonic() + wait_s
    found = tagged(prefix)
    while found and time.monotonic() < deadline:
        time.sleep(0.2)
        found = tagged(prefix)
    if found:
        from clusterbench.launch.processes import stop_tree

        for pid, _ in found:
            stop_tree(pid, grace_s=2.0)
    return found


@contextlib.contextmanager
def untagged():
    """Starts what must outlive the test that first asked for it."""
    saved = os.environ.pop(VAR, None)
    try:
        yield
    finally:
        if saved is not None:
            os.environ[VAR] = saved
