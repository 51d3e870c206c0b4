"""The console result tables are printed on."""
from __future__ import annotations

import os

import click
from rich.console import Console

PIPED_WIDTH = 160
# the narrowest the tables are drawn (and --width's least): a terminal or $COLUMNS narrower than this
# is drawn at it, and the terminal wraps the lines, whole. At COLUMNS=20 rich cut each heading, title
# and figure into 2-3 letter pieces ('pha|se', '196.8' as 'media|n'), which no one could read
MIN_WIDTH = 40
WIDTH_KEY = "clusterbench.width"  # in click's context meta, set by --width


class TrailingSpaceStripper:
    """A text file that writes each line without its trailing spaces; a
    line still open is held until its end or a flush."""

    def __init__(self, file):
        self.file = file
        self._open = ""

    def write(self, text: str) -> int:
        *lines, self._open = (self._open + text).split("\n")
        if lines:
            self.file.write("".join(line.rstrip(" ") + "\n" for line in lines))
        return len(text)

    def flush(self) -> None:
        if self._open:
            self.file.write(self._open)
            self._open = ""
        self.file.flush()

    def isatty(self) -> bool:
        return False

    @property
    def encoding(self) -> str:
        return getattr(self.file, "encoding", "utf-8")


def stdout_console(width: int | None = None) -> Console:
    """--width when given; else fits a terminal. Piped into a file or a CI
    log, rich would assume 80 columns and cut cells short (…): take
    PIPED_WIDTH unless $COLUMNS says."""
    ctx = click.get_current_context(silent=True)
    width = width or (ctx.meta.get(WIDTH_KEY) if ctx else None)
    console = Console(width=width) if width else Console()
    if console.is_terminal:
        return console if console.width >= MIN_WIDTH else Console(width=MIN_WIDTH)
    # piped: no trailing spaces (rich pads titles and captions to the table's width)
    console = Console(file=TrailingSpaceStripper(console.file), force_terminal=False,
                      width=width or (None if "COLUMNS" in os.environ else PIPED_WIDTH))
    if console.width < MIN_WIDTH:
        console = Console(file=console.file, force_terminal=False, width=MIN_WIDTH)
    return console


def stderr_console() -> Console:
    """Progress and notes on stderr: as wide as the terminal, PIPED_WIDTH
    when piped (unless $COLUMNS says), so a figure in a CI log is whole."""
    console = Console(stderr=True)
    if not console.is_terminal and "COLUMNS" not in os.environ:
        console = Console(stderr=True, width=PIPED_WIDTH)
    elif console.width < MIN_WIDTH:
        console = Console(stderr=True, width=MIN_WIDTH)
    return console
