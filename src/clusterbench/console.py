"""The console result tables are printed on."""
from __future__ import annotations

import os

from rich.console import Console

PIPED_WIDTH = 160


def stdout_console() -> Console:
    """Fits a terminal. Piped into a file or a CI log, rich would assume 80
    columns and cut cells short (…): take PIPED_WIDTH unless $COLUMNS says."""
    console = Console()
    if not console.is_terminal and "COLUMNS" not in os.environ:
        console = Console(width=PIPED_WIDTH)
    return console
