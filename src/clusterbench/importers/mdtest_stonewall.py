"""What mdtest prints of its stonewall timer (-W SECONDS, "stop the create
phase after so many seconds"; mdtest 1.9.3 in IOR 3.2 to IOR's master).

When the timer stops the file creation phase before every rank has created
its items, mdtest prints, once per iteration it stopped,

    Continue stonewall hit min: 280 max: 362 avg: 321.0

(what the ranks had created at the limit: the least, the most, the mean
per rank), and every rank then goes on creating up to that most (mdtest.c
updateStoneWallIterations), so that iteration's file phases (create, stat,
read, remove) did `max x ranks` items: not the count of the "2 tasks,
200000 files" line, which is what -n asked. The SUMMARY rates are of the
items done (items / slowest rank's time), so they stand; the items of the
line do not. IOR 3.3.0 adds a summary row

    File create (stonewall)   :   NA   NA   766.250   NA

the items created before the limit over the time to the limit, summed over
the iterations (in the time table: those seconds); 4.0 dropped it.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from clusterbench.importers import number_on_line
from clusterbench.importers.ior_common import argv_of, number

HIT = re.compile(r"^Continue stonewall hit min: (\d+) max: (\d+) avg: ([\d.]+)", re.M)
SUMMARY_ROW = re.compile(r"^\s+File create \(stonewall\)\s*:?\s+NA\s+NA\s+(\S+)\s+NA\s*$", re.M)


@dataclass
class Stonewall:
    ranks: int
    hits: list[tuple[int, int, float]] = field(default_factory=list)   # (min, max, mean) items per rank
    items_per_s: float | None = None     # 3.3.0's summary row, rate table
    seconds: float | None = None         # 3.3.0's summary row, time table

    @property
    def printed(self) -> bool:
        """Whether the output says anything of the timer (3.3.0 prints its
        row for every -W run, stopped or not)."""
        return bool(self.hits) or self.items_per_s is not None or self.seconds is not None

    def read_summary_row(self, table_body: str, time_table: bool) -> None:
        m = SUMMARY_ROW.search(table_body)
        if m:
            if time_table:
                self.seconds = number(m.group(1))
            else:
                self.items_per_s = number(m.group(1))

    def items_per_iteration(self, asked: int | None, iterations: int) -> list[int]:
        """The item counts the iterations' file phases may have done: each
        stopped one its ranks' most times the ranks; one the timer did not
        stop, what -n asked (the line's count)."""
        done = [most * self.ranks for _, most, _ in self.hits]
        if asked and len(self.hits) < iterations:
            done.append(asked)
        return done

    def fields(self, command: str | None) -> dict:
        """The record fields of the file-create sample: what mdtest printed
        of the stop, per iteration it stopped, in mdtest's order; the limit
        and 0 stopped iterations for a -W run the limit never stopped;
        nothing for a run without -W."""
        limit = limit_seconds(command)
        if limit is None and not self.printed:
            return {}
        out = {"stonewall_limit_seconds": limit,
               "stonewall_stopped_iterations": len(self.hits),
               "stonewall_items_done": [most * self.ranks for _, most, _ in self.hits],
               "stonewall_rank_items_least": [least for least, _, _ in self.hits],
               "stonewall_rank_items_most": [most for _, most, _ in self.hits],
               "stonewall_rank_items_mean": [mean for _, _, mean in self.hits],
               "stonewall_items_per_s": self.items_per_s, "stonewall_seconds_total": self.seconds}
        return {k: v for k, v in out.items() if v is not None and v != []}

    def note(self, items_line: str | None, iterations: int) -> str:
        done = ", ".join(str(most * self.ranks) for _, most, _ in self.hits)
        asked_text = f", not the count of the line '{items_line}'" if items_line else ""
        return (f"stonewall (-W): the time limit stopped file creation in {len(self.hits)} of {iterations} "
                f"iteration(s); the ranks then created up to the most any rank had, so those iterations' file "
                f"phases did {done} items{asked_text}: the rates are of those (what each rank had created at "
                f"the limit is in file-create's record)")


def read(text: str, ranks: int, first_line: int = 1) -> Stonewall:
    """`first_line`: the file's line `text` starts on, named where a figure is garbled."""
    return Stonewall(ranks, [(int(m.group(1)), int(m.group(2)),
                              number_on_line(m.group(3), first_line + text.count("\n", 0, m.start())))
                             for m in HIT.finditer(text)])


def limit_seconds(command: str | None) -> float | None:
    """-W's seconds from mdtest's command line ("-W 1", "-W1")."""
    argv = argv_of(command or "")
    for i, a in enumerate(argv):
        value = argv[i + 1] if a == "-W" and i + 1 < len(argv) else a[2:] if a.startswith("-W") else None
        if value is not None:
            return number(value)
    return None
