"""Errors a person acts on: one line, and the exit status says whose fault.

Exit status 2 means bad input (fix the command), 1 a failed measurement.
"""
from __future__ import annotations

import click


class BadInput(click.ClickException):
    """The user's request cannot be carried out as given."""

    exit_code = 2


class MeasurementFailed(click.ClickException):
    """A measurement ran but failed."""

    exit_code = 1
