"""A reader that leaves early (`clusterbench show 3 | head -1`, a pager
quit, `run quick | head`) stops nothing: what the command prints after
that goes to /dev/null, and the command finishes its work (a run stores,
a suite writes its report) and exits with the status that work gives.

Python raises BrokenPipeError at the next write instead; click turned that
into exit 1 (here: a measurement failed) whether or not the work was done,
and a suite piped into head lost the report it writes after its table.

A stream that cannot be written for another reason (`export 1 > out.json`
on a full disk: ENOSPC; EIO) is said once on stderr, in one line, and its
later writes go to /dev/null as well, so the work still finishes (a run
stores); the command then exits 1, not 0, as what it printed is lost (a
traceback of click's echo was all it said)."""
from __future__ import annotations

import os
import sys

# what could not be written, once per stream: "standard output (No space left on device)"
LOST: list[str] = []


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

    def __init__(self, stream, name: str = "standard output"):
        self._stream = stream
        self._name = name

    def _gone(self) -> None:
        point_at_devnull(self._stream.fileno())
        self._stream.flush()   # what the buffer held goes to /dev/null too

    def _lost(self, e: OSError) -> None:
        LOST.append(f"{self._name} ({e.strerror or e})")
        self._gone()
        if self._name != "standard error":
            try:
                sys.__stderr__.write(f"Error: cannot write {LOST[-1]}: the rest of it is lost\n")
                sys.__stderr__.flush()
            except OSError:
                pass

    def write(self, data):
        try:
            return self._stream.write(data)
        except BrokenPipeError:
            self._gone()
            return len(data)
        except OSError as e:
            self._lost(e)
            return len(data)

    def writelines(self, lines) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        try:
            self._stream.flush()
        except BrokenPipeError:
            self._gone()
        except OSError as e:
            self._lost(e)

    @property
    def buffer(self):
        # click writes bytes to it when the locale's encoding is not one it trusts
        return KeepWriting(self._stream.buffer, self._name)

    def __getattr__(self, name):
        return getattr(self._stream, name)


def keep_writing_when_the_reader_leaves() -> None:
    """Wraps sys.stdout and sys.stderr (2>&1 | head closes both)."""
    for name, said in (("stdout", "standard output"), ("stderr", "standard error")):
        stream = getattr(sys, name)
        if stream is not None and not isinstance(stream, KeepWriting):
            setattr(sys, name, KeepWriting(stream, said))


def exit_status(status: int | str | None) -> int | str | None:
    """The command's exit status, 1 where it would be 0 but what it printed was lost."""
    return 1 if LOST and status in (0, None) else status
