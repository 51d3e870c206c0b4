"""mdtest -v's per-iteration lines ("V-1: Rank   0 Line  1113    Directory
creation:          0.028 sec,        717.459 ops/sec"; -vv prints the same
among its other lines), IOR's mdtest 3.3 to 4.1.0+dev.

They are rank 0's figures: in 3.3 rank 0's own view of the iteration (all
items over its own time), in 4.0 and later rank 0's own items over its own
time (mdtest.c, directory_test/file_test: res->rate of o.items, the items
of one rank). The SUMMARY table is over every rank (3.3: each rank's view,
4.0 on: the slowest rank's rate times the ranks), and the tree phases are
rank 0's alone in both. So the lines are each iteration's figure only
where they give the SUMMARY row back: its max, min and mean to the three
decimals printed (one rank; every tree phase). There they are taken as the
repetitions; elsewhere they are kept in the record, under rank 0's name,
and the SUMMARY mean stays the one sample (docs/import.md).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from clusterbench.importers import number_on_line

PHASES = {"Directory creation": "dir-create", "Directory stat": "dir-stat", "Directory rename": "dir-rename",
          "Directory read": "dir-read", "Directory removal": "dir-remove", "File creation": "file-create",
          "File stat": "file-stat", "File read": "file-read", "File removal": "file-remove",
          "Tree creation": "tree-create", "Tree removal": "tree-remove"}
# the prefix varies ("V-1: Rank   0 Line  2091 V-1: main:   Tree creation", "... main   Tree removal");
# "File creation (stonewall):" is no phase (its ops/sec is an item sum)
LINE = re.compile(r"^V-1: (?:Rank\s+\d+ Line\s+\d+ )?(?:V-1: )?(?:main:? )?\s*"
                  rf"({'|'.join(PHASES)})\s*:\s+(-?[\d.]+) sec,\s+(-?[\d.]+) ops/sec\s*$", re.M)
# a figure printed "%14.3f": each line's and each SUMMARY column's off by up to half of 0.001
PRINTED = 0.0011


@dataclass
class Iteration:
    items_per_s: float
    seconds: float      # as printed: 3 decimals, 0.000 for a phase under half a millisecond
    line: int


def read(text: str, first_line: int) -> dict[str, list[Iteration]]:
    """Each phase's per-iteration lines in order; `first_line`: the file's line `text` starts on."""
    out: dict[str, list[Iteration]] = {}
    for m in LINE.finditer(text):
        line = first_line + text.count("\n", 0, m.start())
        out.setdefault(PHASES[m.group(1)], []).append(
            Iteration(number_on_line(m.group(3), line), number_on_line(m.group(2), line), line))
    return out


def are_the_iterations(each: list[Iteration], iterations: int, most: float | None, least: float | None,
                       mean: float | None) -> bool:
    """Whether the lines are the SUMMARY row's iterations: as many, and
    their max, min and mean are the row's (to the decimals printed)."""
    if len(each) != iterations or None in (most, least, mean):
        return False
    rates = [i.items_per_s for i in each]
    return (abs(max(rates) - most) <= PRINTED and abs(min(rates) - least) <= PRINTED
            and abs(sum(rates) / len(rates) - mean) <= PRINTED)


def note(phases: list[str], ranks: int) -> str:
    return (f"mdtest -v's per-iteration lines of {', '.join(phases)} are rank 0's own figures, not the iteration's "
            f"over the {ranks} ranks (they do not give the SUMMARY's max, min and mean back): kept as "
            "rank0_iteration_items_per_s, the SUMMARY mean stored as one sample")
