"""A launch's processes: the launcher, the ssh stand-ins or proxies it
started, and every rank under them. A step that overruns its time limit,
or is stopped, is ended as a whole tree, so nothing of it is left running
with init as its parent (killing mpiexec alone orphans its ranks)."""
from __future__ import annotations

import signal
import subprocess
import threading
import time
from collections.abc import Callable

from clusterbench.output.figure_digits import as_given

# How long a stopped launch may take to end after SIGINT (cbk removes its
# files on it, mpiexec forwards it) before what is left of it is killed.
STOP_GRACE_S = 15


def tree(pid: int) -> list:
    """The process and all its descendants (psutil.Process), parents first;
    [] once it is gone. Taken before anything is signalled: a process whose
    parent dies is re-parented to init and drops out of a later look."""
    import psutil

    try:
        root = psutil.Process(pid)
        return [root, *root.children(recursive=True)]
    except psutil.Error:
        return []


def _alive(procs: list) -> list:
    import psutil

    out = []
    for p in procs:
        try:
            if p.is_running() and p.status() != psutil.STATUS_ZOMBIE:
                out.append(p)
        except psutil.Error:
            pass
    return out


def _signal(procs: list, sig: int) -> None:
    import psutil

    for p in procs:
        try:
            p.send_signal(sig)
        except psutil.Error:
            pass


def _wait_gone(procs: list, seconds: float) -> list:
    """Polls (never waits on) the processes: the launcher is our child, and
    reaping it here would hide its exit status from subprocess."""
    deadline = time.monotonic() + seconds
    alive = _alive(procs)
    while alive and time.monotonic() < deadline:
        time.sleep(0.05)
        alive = _alive(alive)
    return alive


def signal_trees(pids: list[int], sig: int) -> None:
    """sig to every process of each tree (Ctrl-Z's SIGSTOP and fg's SIGCONT)."""
    _signal([p for pid in pids for p in tree(pid)], sig)


def stop_tree(pid: int, grace_s: float = STOP_GRACE_S) -> None:
    """SIGINT (and SIGCONT) to every process of the tree at once, then
    SIGKILL to what is left after grace_s."""
    stop_trees([pid], grace_s)


def stop_trees(pids: list[int], grace_s: float = STOP_GRACE_S) -> None:
    """stop_tree for several launches at once (run cluster's nodes): every
    process of every tree gets its SIGINT before any is waited for, so a
    node does not run on while another cleans up."""
    procs = [p for pid in pids for p in tree(pid)]
    _signal(procs, signal.SIGINT)
    # a stopped process (a node frozen, then found by run cluster's straggler rule; a Ctrl-Z'd
    # launch) holds its SIGINT until continued: it would sit out the grace and lose its clean-up
    _signal(procs, signal.SIGCONT)
    left = _wait_gone(procs, grace_s)
    # a rank may have started children of its own meanwhile
    for p in list(left):
        left += [c for c in tree(p.pid) if c not in left]
    _signal(left, signal.SIGKILL)
    _wait_gone(left, 5.0)


# How long a launch of several ranks may take until cbk's `started` record
# says every rank is past MPI_Init (--start-timeout). A rank that dies
# before MPI_Init (a node's loader missing a library, a wrong path, a
# missing device) leaves the others there for ever under MPICH's Hydra.
# Generous: a healthy start over ssh on a loaded node takes seconds, one of
# thousands of ranks reading their libraries from a shared file system
# tens of seconds.
START_TIMEOUT_S = 120.0


class Deadline:
    """Ends a launch's process tree when it outlives timeout_s (None: never),
    when its ranks have not all started within start_timeout_s (None: no
    bound; `started` once cbk says they have), or when told to (end).
    `expired` says afterwards whether it did. heard: what the launch wrote
    on stderr so far, kept as it stood when the launch was ended, so the
    message quotes what the ranks said before the stop's own chatter.
    placement: the host each rank was placed on (Launcher.placement), so
    that a rank that said nothing is named with its host."""

    def __init__(self, proc: subprocess.Popen, timeout_s: float | None, start_timeout_s: float | None = None,
                 heard: Callable[[], str] | None = None, placement=None):
        self.proc = proc
        self.timeout_s = timeout_s
        self.start_timeout_s = start_timeout_s
        self.expired = False
        self.reason: str | None = None   # why it was ended before its time limit (end, not started)
        self._heard = heard
        self._placement = placement
        self._said_before_stop: str | None = None
        self._lock = threading.Lock()
        self._started = start_timeout_s is None
        self._timers = [threading.Timer(timeout_s, self._expire)] if timeout_s else []
        if start_timeout_s:
            self._timers.append(threading.Timer(start_timeout_s, self._not_started))
        for timer in self._timers:
            timer.daemon = True
            timer.start()

    def started(self) -> None:
        """cbk said every rank is past MPI_Init (its first record): the start bound is met."""
        with self._lock:
            self._started = True

    def _not_started(self) -> None:
        with self._lock:
            if self._started or self.reason:
                return
            self.reason = (f"did not start: not every rank was past MPI_Init after {as_given(self.start_timeout_s)} s "
                           f"(--start-timeout); the launcher and every rank were stopped")
        self._expire()

    def _expire(self) -> None:
        if self.proc.poll() is None:
            self.expired = True
            if self._heard:
                self._said_before_stop = self._heard()
            stop_tree(self.proc.pid)

    def end(self, reason: str) -> None:
        """Ends the launch now, in a thread of its own (the tree's grace
        takes seconds), for reason (message): run cluster's straggler rule."""
        self.cancel()
        self.reason = reason
        threading.Thread(target=self._expire, daemon=True).start()

    def cancel(self) -> None:
        for timer in self._timers:
            timer.cancel()

    def message(self, stderr: str = "") -> str:
        """Why it was ended, and whom its ranks said they waited on (stderr: what the launch wrote)."""
        from clusterbench.launch.messages import last_cbk_line, rank_said, waits_named

        said_before = self._said_before_stop if self._said_before_stop is not None else stderr
        waits = waits_named(said_before, self._placement and self._placement.heard(said_before))
        why = self.reason or (f"timed out: still running after {as_given(self.timeout_s)} s (--step-timeout); "
                              f"the launcher and every rank were stopped")
        if waits and self._started:
            return f"{why}; {waits}"
        # no rank waited where a note is made, or the ranks waited in MPI_Init (their notes name the
        # rank that did not, kernels/core/start_watch.h): what cbk said last is the cause, where it
        # said anything; a rank that never became cbk (its loader's "error while loading shared
        # libraries") said it in its own words, not in the launcher's tagged lines
        said = rank_said(said_before) if not self._started else last_cbk_line(said_before)
        return "; ".join([why, *([waits] if waits else []), *([f"before it a rank said: {said}"] if said else [])])

    def __enter__(self) -> Deadline:
        return self

    def __exit__(self, *exc) -> None:
        self.cancel()
