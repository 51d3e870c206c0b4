"""Figures written for another locale: "1.234,5" or "26,05", a decimal
comma (and dots between thousands), as a spreadsheet or a report tool
writes them when someone "tidies" a log. None of the tools read here prints
them (they printf in the C locale) but dd, whose importer reads its own
(an importer's locale_lines says which of its lines are another locale's),
so no other parser reads such a row: it is
skipped like any line of other output, and was skipped without a word.
This counts those lines, so the run's note (or the refusal of a file left
with nothing) says how many were not read."""
from __future__ import annotations

import re

# A whitespace-separated token that is a decimal-comma number: not a CSV row
# ("write,30.3,...": one token with letters) nor a JSON array ("1,": no digit after)
DECIMAL_COMMA = re.compile(r"-?(?:\d{1,3}(?:\.\d{3})+|\d+),\d+")
_ANY = re.compile(r"\d,\d")


def lines_of(text: str) -> list[int]:
    """The numbers (1-based) of the lines holding a figure with a decimal comma."""
    if not _ANY.search(text):   # the usual file: one scan, no line split
        return []
    return [n for n, line in enumerate(text.split("\n"), 1)
            if _ANY.search(line) and any(DECIMAL_COMMA.fullmatch(tok) for tok in line.split())]


def note(lines: list[int]) -> str:
    shown = ", ".join(map(str, lines[:5])) + (", ..." if len(lines) > 5 else "")
    return (f"{len(lines)} line(s) with numbers written for another locale (decimal comma, as '1.234,5'), "
            f"which no tool prints: not read (line {shown})")
