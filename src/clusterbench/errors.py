"""Errors a person acts on: one line, and the exit status says whose fault.

Exit status 2 means bad input (fix the command), 1 a failed measurement.
"""
from __future__ import annotations

import click


class _OneLine(click.ClickException):
    def format_message(self) -> str:
        # a value quoted back (a --dir, a label, a suite's name) may hold a
        # newline, escape codes or bytes that are not UTF-8: shown as text
        from clusterbench.output.render_text import plain

        return plain(self.message)


class BadInput(_OneLine):
    """The user's request cannot be carried out as given."""

    exit_code = 2


class MeasurementFailed(_OneLine):
    """A measurement ran but failed."""

    exit_code = 1


class WriteFailed(_OneLine):
    """The request was sound but the system could not carry it out (a full
    disk, an I/O error): exit 1 as a failed measurement, not 2, since the
    same command may succeed once space is freed."""

    exit_code = 1


class StoreFailed(WriteFailed):
    """The store could not be read or written (a full disk, an I/O error, a
    database server gone): exit 1, the run closed as failed where possible."""
