"""Column widths that keep every word of a table whole.

When a table is wider than the console, rich narrows its widest columns
first, down to any width, and then every column alike: at 80 columns
`list` broke 'duration' as 'duratio|n' and each date as '2026-12|-07',
and at 20 every heading and figure was cut into 2-letter pieces. Here
each column gets at least its least width: its whole cells where it does
not wrap (an id, a count), else its longest word (up to FOLDED_WORD where
the column folds a long word: a path in a command); what the console
has beyond that goes to the columns that lack least of their longest line
first. Where even the least widths do not fit, the table is drawn
at their sum (the terminal then wraps its lines, each word whole).
"""
from __future__ import annotations

from typing import Iterable

from rich.cells import cell_len
from rich.console import Console
from rich.table import Table

# the least width of a column whose words may fold (overflow="fold"): a path breaks, not the table
FOLDED_WORD = 12


def _lines(console: Console, cell) -> list[str]:
    text = console.render_str(cell) if isinstance(cell, str) else cell
    return getattr(text, "plain", str(text)).split("\n")


def _widths(console: Console, table: Table) -> tuple[list[int], list[int]]:
    """Each column's least width (as above) and its natural one (its longest line)."""
    least, natural = [], []
    for column in table.columns:
        lines = [line for cell in [column.header, *column.cells] for line in _lines(console, cell)]
        longest = max((cell_len(line) for line in lines), default=0)
        words = max((cell_len(word) for line in lines for word in line.split()), default=0)
        # a column that folds (a label, a command) may break a long word (a path) at FOLDED_WORD
        least.append(longest if column.no_wrap else min(words, FOLDED_WORD) if column.overflow == "fold" else words)
        natural.append(longest)
    return least, natural


def fit(console: Console, table: Table) -> int:
    """Sets the table's column widths for the console's width; returns the
    width to draw it at (the console's, or more where the least widths need it)."""
    least, natural = _widths(console, table)
    rules = len(table.columns) + 1 if table.box else 0
    extra = len(table.columns) * (table.padding[1] + table.padding[3]) + rules
    if sum(natural) + extra <= console.width:
        return console.width   # rich draws it as it is
    if sum(least) + extra > console.width:
        table.padding, extra = (0, 0, 0, 0), rules   # the rules alone part the cells (as terminal.py's FOLD)
    room = console.width - extra
    widths = list(least)
    spare = room - sum(least)
    # what is left goes first to the columns that lack least of their longest line ('batch job' on one
    # line, a status whole), the rest to the long ones (a command), which wrap anyway
    for i in sorted(range(len(widths)), key=lambda k: (natural[k] - least[k], k)):
        given = max(0, min(natural[i] - least[i], spare))
        widths[i] += given
        spare -= given
    for column, width in zip(table.columns, widths):
        column.width = max(width, 1)
    return max(console.width, sum(widths) + extra)


def print_whole(console: Console, table: Table) -> None:
    """Prints the table with every word and figure whole (fit)."""
    _print_at(console, table, fit(console, table))


def print_first_fitting(console: Console, tables: Iterable[Table]) -> None:
    """Prints the first of the tables (each a narrower layout of the same
    rows: a column left out, as `ps` leaves out what it has no room for)
    that fits the console with every word whole; the last where none does."""
    table = width = None
    for table in tables:
        width = fit(console, table)
        if width <= console.width:
            break
    _print_at(console, table, width)


def _print_at(console: Console, table: Table, width: int) -> None:
    if width <= console.width:
        console.print(table)
        return
    shown = console.width
    console.width = width
    try:
        console.print(table, crop=False)
    finally:
        console.width = shown
