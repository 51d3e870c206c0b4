"""No process of the suite outlives its test (#33).

Every test runs with CLUSTERBENCH_TEST_PROCESS=<session>:<test> in its
environment; whatever it starts (the CLI, mpiexec, the ssh stand-in, every
rank, a Slurm job's steps) inherits it. After the test, a process still
carrying the test's tag is left behind: it is killed with its tree, and the
test fails, naming it. Fixtures that outlive one test on purpose (the
PostgreSQL server, test clusters of module scope) carry the session's
shared tag instead (`shared`): between tests it is the environment's, so a
fixture of wider scope gets it, and a suite killed with -9 has them swept by
the next suite like the rest. At the end, nothing carrying the session's tag
may be left.
Two suites on one machine have different session tags, so neither sees the
other's processes.
"""
from __future__ import annotations

import contextlib
import os
import time
import uuid

VAR = "CLUSTERBENCH_TEST_PROCESS"


def _start_ticks(pid: int | str) -> str | None:
    """A process's start time (clock ticks since boot, /proc/PID/stat field
    22): with the pid, it names one process for ever, where a pid alone may
    be reused."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return None
    return stat.rsplit(b")", 1)[1].split()[19].decode()


# <pid>-<start ticks>-<random>: each pytest process (each xdist worker too)
# is its own session, alive while the pytest the user started is (an xdist
# worker's is its parent: a suite killed with -9 takes its workers along,
# and older suites, which look for "pytest" in the owner's command line,
# see a live session)
_OWNER = os.getppid() if os.environ.get("PYTEST_XDIST_WORKER") else os.getpid()
SESSION = f"{_OWNER}-{_start_ticks(_OWNER)}-{uuid.uuid4().hex[:8]}"


def test_tag(index: int) -> str:
    return f"{SESSION}:{index}"


def _tags() -> list[tuple[int, str, str]]:
    """(pid, tag, command line) of every process with a tag (this one excepted)."""
    needle = f"{VAR}=".encode()
    out = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry.name}/environ", "rb") as f:
                env = f.read()
            tag = next((item[len(needle):] for item in env.split(b"\0") if item.startswith(needle)), None)
            if tag is None:
                continue
            with open(f"/proc/{entry.name}/cmdline", "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode(errors="replace").strip()
        except OSError:   # gone meanwhile, or a kernel thread
            continue
        if cmd:   # a zombie has none: its parent reaps it
            out.append((int(entry.name), tag.decode(errors="replace"), cmd))
    return out


def tagged(prefix: str) -> list[tuple[int, str]]:
    """(pid, command line) of every process whose tag starts with prefix."""
    return [(pid, cmd) for pid, tag, cmd in _tags() if tag.startswith(prefix)]


def session_alive(session: str) -> bool:
    """Whether the pytest process that owns the tag <pid>-<start>-<id> still
    runs (an xdist worker's command line does not say pytest, so the pid and
    its start time decide)."""
    parts = session.split("-")
    if len(parts) == 2:   # <pid>-<id>, an older suite's tag: alive while its pid is a pytest
        try:
            with open(f"/proc/{parts[0]}/cmdline", "rb") as f:
                return b"pytest" in f.read()
        except (OSError, ValueError):
            return False
    return parts[0].isdigit() and _start_ticks(parts[0]) == parts[1]


def sweep_dead_sessions() -> list[tuple[int, str]]:
    """Kills what a suite killed with -9 left running (its pytest is gone,
    its tagged processes are not), so it is not in this run's way; another
    suite that still runs is left alone. Returns what was killed."""
    from clusterbench.launch.processes import stop_tree

    dead = [(pid, cmd) for pid, tag, cmd in _tags() if not session_alive(tag.split(":", 1)[0])]
    for pid, _ in dead:
        stop_tree(pid, grace_s=2.0)
    return dead


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


def shared_tag() -> str:
    """The tag of what outlives one test on purpose (the PostgreSQL server,
    test clusters of module scope): the session's, so a suite killed with -9
    has them swept too, and no test's, so no test is failed for them."""
    return f"{SESSION}:shared"


@contextlib.contextmanager
def shared():
    """Starts what must outlive the test that first asked for it."""
    saved = os.environ.get(VAR)
    os.environ[VAR] = shared_tag()
    try:
        yield
    finally:
        if saved is None:
            os.environ.pop(VAR, None)
        else:
            os.environ[VAR] = saved
