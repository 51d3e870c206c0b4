"""A launch's stdout and stderr pipes, with their read ends kept open in
the launch too, so a launch outliving clusterbench can still write.

After a kill -9 of clusterbench, the launch is told to stop (SIGTERM: its
parent-death signal, launch/parent_death.py, and cbk's own watch) and each
rank removes its private directory. With plain pipes, the first line any
rank wrote then (cbk's 'stopped' record) reached mpiexec, whose write to a
pipe no one read any more killed it with SIGPIPE; Hydra's proxy, its
mpiexec gone, sent every rank SIGKILL 3 ms after the SIGTERM, and pario's
shared directory stayed behind in about half of the kills (traced with
strace: SIGTERM, the record, mpiexec killed by SIGPIPE, kill(-rank,
SIGKILL)). Here mpiexec holds a read end of its own output pipes (never
read: only there): its writes land in the pipe's buffer, it passes the
stop on, waits for the ranks and ends when they have cleaned up (MPICH's
Hydra and Open MPI's prterun alike: neither closes the inherited ends).

The buffer bounds what a launch may write after clusterbench has died
without blocking: PIPE_BYTES, asked for (a stop's records are a few
hundred bytes).
"""
from __future__ import annotations

import contextlib
import fcntl
import os

# a launch's writes after clusterbench died: room for its last records and an MPI's abort banner
PIPE_BYTES = 1 << 20
F_SETPIPE_SZ = getattr(fcntl, "F_SETPIPE_SZ", 1031)   # linux/fcntl.h


def _pipe() -> tuple[int, int]:
    read_fd, write_fd = os.pipe()
    with contextlib.suppress(OSError):   # above /proc/sys/fs/pipe-max-size: the default 64 KiB stays
        fcntl.fcntl(write_fd, F_SETPIPE_SZ, PIPE_BYTES)
    return read_fd, write_fd


class KeptOutput:
    """Popen arguments (popen_args) and, once the launch is started, its
    output as text files (stdout, stderr), as Popen(text=True) gives them."""

    def __init__(self) -> None:
        self._out = _pipe()
        self._err = _pipe()

    def popen_args(self) -> dict:
        # pass_fds: the launch inherits the read ends (not close-on-exec), so a reader lives as long as it does
        return {"stdout": self._out[1], "stderr": self._err[1], "pass_fds": (self._out[0], self._err[0])}

    def started(self):
        """Once Popen has started the launch: the write ends closed here (else
        this process would never read an end of file); the read ends as text."""
        os.close(self._out[1])
        os.close(self._err[1])
        return open(self._out[0], encoding=None), open(self._err[0], encoding=None)

    def close(self) -> None:
        """Where Popen failed: every end closed."""
        for fd in (*self._out, *self._err):
            with contextlib.suppress(OSError):
                os.close(fd)
