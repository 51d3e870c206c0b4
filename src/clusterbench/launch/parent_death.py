"""A launch that outlives clusterbench is told so: the kernel sends the
launcher SIGTERM when the clusterbench that started it dies (Linux
PR_SET_PDEATHSIG), and mpiexec, prterun and srun pass it on to every rank,
on every node, where cbk removes its files and ends, as on a Ctrl-C.

Without it, a kill -9 of clusterbench left its launch running with no one
to read it: cbk watches its orchestrator only on its own host (the boot id
and pid are that host's), so on a real cluster every node's rank ran on
(seqio writing its 128 MiB, a link matrix's every pair) until its next
record met the closed pipe, which ended mpiexec, whose proxies then killed
the ranks with SIGKILL before any could remove its private directory.

SIGTERM, not SIGINT: srun takes a single SIGINT as a request for its
status. The death watched is that of the thread that started the launch,
so only launches started by the main thread are armed (one started by a
worker thread would be ended when that thread ends)."""
from __future__ import annotations

import os
import signal
import threading
from collections.abc import Callable

PR_SET_PDEATHSIG = 1   # linux/prctl.h


def _prctl():
    try:
        import ctypes

        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):   # not Linux: launches are not armed
        return None


_PRCTL = _prctl()   # looked up before any fork: the child only calls it


def armed() -> Callable[[], None] | None:
    """A preexec_fn for Popen that arms the child, or None where it cannot be
    (no prctl; a thread other than the main one starting it)."""
    if _PRCTL is None or threading.current_thread() is not threading.main_thread():
        return None
    parent, sig = os.getpid(), int(signal.SIGTERM)

    def arm() -> None:
        _PRCTL(PR_SET_PDEATHSIG, sig, 0, 0, 0)
        if os.getppid() != parent:   # clusterbench died between the fork and the prctl
            os.kill(os.getpid(), sig)

    return arm
