"""The console result tables are printed on."""
from __future__ import annotations

import os

import click
from rich.console import Console

PIPED_WIDTH = 160
WIDTH_KEY = "clusterbench.width"  # in click's context meta, set by --width


def stdout_console(width: int | None = None) -> Console:
    """--width when given; else fits a terminal. Piped into a file or a CI
    log, rich would assume 80 columns and cut cells short (…): take
    PIPED_WIDTH unless $COLUMNS says."""
    ctx = click.get_current_context(silent=True)
    width = width or (ctx.meta.get(WIDTH_KEY) if ctx else None)
    if width:
        return Console(width=width)
    console = Console()
    if not console.is_terminal and "COLUMNS" not in os.environ:
        console = Console(width=PIPED_WIDTH)
    return console


def stderr_console() -> Console:
    """Progress and notes on stderr: as wide as the terminal, PIPED_WIDTH
    when piped (unless $COLUMNS says), so a figure in a CI log is whole."""
    console = Console(stderr=True)
    if not console.is_terminal and "COLUMNS" not in os.environ:
        console = Console(stderr=True, width=PIPED_WIDTH)
    return console
