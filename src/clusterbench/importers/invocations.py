"""One file, several runs of a tool: a job script that ran IOR twice, a
log that `>>` appended to, two OSU tests of one size series. Each run of
the tool starts with its own banner line, which is where the file is cut:
parsed as one run, the second run's tests were taken as more tests of the
first (IOR: its test 1, a step of no command line), its figures as more
repetitions of the first's, or one run's rows overwrote the other's
(mdtest), and the second's date and host were lost."""
from __future__ import annotations

import re


def parts(text: str, banner: re.Pattern, lead: re.Pattern | None = None) -> list[tuple[int, int, int]]:
    """(start, end, first line) of each run in text, cut at each match of
    `banner` (a ^-anchored, re.M pattern); what precedes the first banner
    (a job script's echo, scheduler warnings) belongs to the first run.
    `lead`: a line the tool prints just before its banner (mdtest's
    "-- started at"), moved into the run it opens."""
    starts = [m.start() for m in banner.finditer(text)]
    if not starts:
        return [(0, len(text), 1)]
    if lead is not None:
        for i in range(1, len(starts)):
            before = [m.start() for m in lead.finditer(text, starts[i - 1], starts[i])]
            if before:
                starts[i] = before[-1]
    starts[0] = 0
    out, line, counted = [], 1, 0
    for i, start in enumerate(starts):
        line += text.count("\n", counted, start)
        counted = start
        out.append((start, starts[i + 1] if i + 1 < len(starts) else len(text), line))
    return out


def runs_of(text: str, banner: re.Pattern, parse_one, lead: re.Pattern | None = None) -> list:
    """parse_one(part, first_line) -> ImportedRun for each run in text (see
    parts), as each_taken takes them."""
    return each_taken(parts(text, banner, lead), lambda part: parse_one(text[part[0]:part[1]], part[2]),
                      lambda part: f"the run starting at line {part[2]}")


def each_taken(items, parse_one, named, missing: str = "nothing to read") -> list:
    """parse_one(item) -> ImportedRun for each of a file's runs (a text part,
    a dd command, a netperf test). A run with nothing to take (one killed
    before its results, then run again in the same job) is left out with a
    note on the runs taken, named by named(item) ("the dd at line 4"); when
    no run has anything, the first one's Unreadable is raised (or
    Unreadable(missing) for a file of none)."""
    from clusterbench.importers import Unreadable

    runs, skipped, first_error = [], [], None
    for item in items:
        try:
            runs.append(parse_one(item))
        except Unreadable as e:
            first_error = first_error or e
            skipped.append(f"{named(item)} was not taken: {e}")
    if not runs:
        raise first_error or Unreadable(missing)
    runs[0].notes.extend(skipped)
    return runs


def text_runs(text: str, banner: re.Pattern, parse_one, missing: str, lead: re.Pattern | None = None) -> list:
    """A text format's runs (runs_of), read from the file's whole lines
    (cut_short.py: a last line cut mid-figure is left out, the last run's
    note says so); Unreadable(missing) when no run's banner is there."""
    from clusterbench.importers import Unreadable, cut_short

    if not banner.search(text):
        raise Unreadable(missing)
    text, cut = cut_short.whole_lines(text)
    runs = runs_of(text, banner, parse_one, lead)
    if cut:
        runs[-1].notes.append(cut)
    return runs


def line_of(part: str, position: int, first_line: int) -> int:
    """The file's line number of `position` in a run's part that starts on `first_line` (see parts)."""
    return first_line + part.count("\n", 0, position)
