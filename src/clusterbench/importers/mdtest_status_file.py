"""mdtest's stonewall status file (-x FILE; IOR 3.3.0, 4.0.0 and IOR's
master read and write it the same way, mdtest.c file_test).

A run that creates files (-C, or no phase chosen: all) with -x writes from
rank 0, at the end of each iteration's creation, the per-rank item count
every rank went on to: with -W, the most any rank had created at the limit
(the "max" of "Continue stonewall hit min: .. max: 734 avg: .."), else -n.
A run with -x that creates no files (-T, -E, -r without -C) reads that
count before its file phases and stats, reads and removes that many items
per rank instead of -n's, yet its "2 tasks, 200000 files" line still says
-n. It prints the count only with -v ("Read stonewall status; items: 590").
mdtest's rates are of the items done (items / the slowest rank's time), so
they stand; the count is taken from that -v line, else from a run earlier
in the same log that wrote the file, else it is not in the output. A file
mdtest could not read ("WARNING: Could not read stonewall status file";
3.3.0 "could not") leaves -n's count.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from clusterbench.importers.ior_common import argv_of

READ_COUNT = re.compile(r"Read stonewall status; items: (\d+)")   # after -v's "V-1: Rank   0 Line  1289 "
NOT_READ = re.compile(r"^WARNING: [Cc]ould not read stonewall status file", re.M)
CREATE, OTHER_PHASES = "-C", ("-T", "-E", "-r")
# the phases that do the file's count in a run that reads it (its file-create did nothing)
READING_PHASES = ("file-stat", "file-read", "file-remove")


@dataclass
class StatusFile:
    path: str
    reads: bool                          # the run read the file (it created no files)
    per_rank: int | None = None          # items per rank its file phases did, when known
    source: str = ""                     # where per_rank comes from
    unreadable: bool = False             # mdtest warned it could not read the file: -n's count stands

    def file_items(self, ranks: int, asked: list[int]) -> list[int] | None:
        """The item counts of the file phases for the time table's check;
        None when the run read a count the output does not hold."""
        if not self.reads or self.unreadable:
            return asked
        return [self.per_rank * ranks] if self.per_rank is not None else None

    def fields(self, ranks: int) -> dict:
        out = {"stonewall_status_file": self.path}
        if self.reads and self.per_rank is not None:
            out.update(stonewall_status_file_items_per_rank=self.per_rank,
                       stonewall_status_file_items=self.per_rank * ranks)
        return out

    def note(self, ranks: int, items_line: str | None, asked: int | None) -> str | None:
        """`asked`: the line's item count (all ranks), which a count read
        from the file may equal (a creating run the limit did not stop
        writes -n's)."""
        if not self.reads:
            return None
        head = f"stonewall status file (-x {self.path}): "
        line = f"the line '{items_line}'" if items_line else "-n"
        if self.unreadable:
            return head + f"mdtest could not read it (its WARNING), so the file phases did the count of {line}"
        if self.per_rank is None:
            return head + (f"the file phases did the count mdtest read from it, which this output does not hold "
                           f"(mdtest prints it with -v; a run earlier in the same log that wrote the file gives "
                           f"it too), not the count of {line}: the rates are of the items done and stand, their "
                           f"item count is unknown")
        done = self.per_rank * ranks
        if done == asked:
            return head + (f"mdtest read {self.per_rank} items per rank from it ({self.source}): its file phases "
                           f"did {done} items per iteration, the count of {line}")
        return head + (f"mdtest read {self.per_rank} items per rank from it ({self.source}), so its file phases "
                       f"did {done} items per iteration, not the count of {line}: the rates are of those")


def read(text: str, command: str | None, written: dict[str, tuple[int | None, int]]) -> StatusFile | None:
    """The run's use of -x (None without it). `written`: path -> (items per
    rank, first line) of the last run earlier in the log that wrote it."""
    argv = argv_of(command or "")
    path = _value(argv, "-x")
    if path is None:
        return None
    chosen = [a for a in argv if a == CREATE or a in OTHER_PHASES]
    if not chosen or CREATE in chosen:
        return StatusFile(path, reads=False)
    status = StatusFile(path, reads=True)
    printed = READ_COUNT.search(text)
    if printed:
        status.per_rank, status.source = int(printed.group(1)), "it printed so, -v"
    elif NOT_READ.search(text):
        status.unreadable = True
    elif written.get(path, (None, 0))[0] is not None:
        status.per_rank, at = written[path]
        status.source = f"what the run at line {at} of this log wrote to it"
    return status


def remember(status: StatusFile | None, written: dict, limited: bool, hits: list[tuple[int, int, float]],
             asked: int | None, ranks: int, iterations: int, first_line: int) -> None:
    """What a run that created files left in its -x file: the last
    iteration's count, known when every iteration stopped at the limit
    (that hit's most) or none did (-n, the line's count over the ranks).
    Without -W (`limited`) mdtest writes nothing there."""
    if status is None or status.reads or not limited:
        return
    if hits and len(hits) == iterations:
        written[status.path] = (hits[-1][1], first_line)
    elif not hits and asked:
        written[status.path] = (asked // ranks, first_line)
    else:
        written[status.path] = (None, first_line)


def _value(argv: list[str], flag: str) -> str | None:
    """An option's value ("-x FILE", "-xFILE")."""
    for i, a in enumerate(argv):
        if a == flag:
            return argv[i + 1] if i + 1 < len(argv) else None
        if a.startswith(flag) and len(a) > len(flag):
            return a[len(flag):]
    return None
