"""The version a tool printed when asked for it (`dd --version`, `iperf -v`,
`netperf -V`) in a log that holds its runs too: dd, iperf 2 and netperf
print none beside their figures, so a transcript's own version line is
the one place a file states it. A run takes the last one printed before
its end (a log may upgrade the tool between runs)."""
from __future__ import annotations

import re


def lines_of(text: str, pattern: re.Pattern) -> list[tuple[int, str]]:
    """(line number, version) of each match of `pattern` (re.M, its group 1 the version)."""
    return [(text.count("\n", 0, m.start()) + 1, m.group(1)) for m in pattern.finditer(text)]


def before(found: list[tuple[int, str]], line: int) -> str | None:
    """The version of the last of `found` printed at or before `line`."""
    return next((v for n, v in reversed(found) if n <= line), None)
