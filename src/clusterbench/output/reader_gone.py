"""A reader that leaves early (`clusterbench show 3 | head -1`, a pager
quit, `run quick | head`) stops nothing: what the command prints after
that goes to /dev/null, and the command finishes its work (a run stores,
a suite writes its report) and exits with the status that work gives.

Python raises BrokenPipeError at the next write instead; click turned that
into exit 1 (here: a measurement failed) whether or not the work was done,
and a suite piped into head lost the report it writes after its table."""
from __future__ import annotations

import os
import sys


def point_at_devnull(fd: int) -> None:
    """fd now writes to /dev/null: later writes of ours, and of children
    started after, succeed and go nowhere."""
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(null, fd)
    finally:
        os.close(null)


class KeepWriting:
    """A standard stream whose writes outlive its reader; every other
    attribute is the stream's own (encoding, isatty, fileno...)."""

    def __init__(self, stream):
        self._stream = stream

    def _gone(self) -> None:
        point_at_devnull(self._stream.fileno())
        self._stream.flush()   # what the buffer held goes to /dev/null too

    def write(self, data):
        try:
            return self._stream.write(data)
        except BrokenPipeError:
            self._gone()
            return len(data)

    def writelines(self, lines) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        try:
            self._stream.flush()
        except BrokenPipeError:
            self._gone()

    @property
    def buffer(self):
        # click writes bytes to it when the locale's encoding is not one it trusts
        return KeepWriting(self._stream.buffer)

    def __getattr__(self, name):
        return getattr(self._stream, name)


def keep_writing_when_the_reader_leaves() -> None:
    """Wraps sys.stdout and sys.stderr (2>&1 | head closes both)."""
    for name in ("stdout", "stderr"):
        stream = getattr(sys, name)
        if stream is not None and not isinstance(stream, KeepWriting):
            setattr(sys, name, KeepWriting(stream))
