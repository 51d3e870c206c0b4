"""IOR's CSV results (-O summaryFormat=CSV, IOR 4.0: 3.3.0 writes no result row in CSV;
usually with -O summaryFile=F): a heading line

    access,bw(MiB/s),IOPS,Latency,block(KiB),xfer(KiB),open(s),wr/rd(s),close(s),total(s),numTasks,iter

and one row per repetition and operation. Each write/read row is one
sample, as IOR's text Results rows are (ior_common: the pario step when
the file shows IOR's command line, else an `ior` step with the block and
transfer sizes and the task count the rows give). The CSV has no banner,
date, host or command line of its own: they are taken when the file also
holds IOR's text header (IOR writing both to stdout), else --host/--date.
A file of several tables (runs appended to one file) is a run per table,
or per IOR banner where it has them.
"""
from __future__ import annotations

import re

from clusterbench.importers import ImportedRun, Unreadable, invocations, refuse_garbled
from clusterbench.importers.ior_common import JSON_CSV_TIME_RESOLUTION_S, count, number, sample, step_for
from clusterbench.importers.ior_text import BANNER, _date

# the whole column list, so another tool's CSV that borrowed IOR's first two names is not taken for IOR's
HEADING = re.compile(r"^access,bw\(MiB/s\),IOPS,Latency,block\(KiB\),xfer\(KiB\),", re.M)
COLUMNS = {"IOPS": "iops", "Latency": "latency_s", "block(KiB)": "block_kib", "xfer(KiB)": "xfer_kib",
           "open(s)": "open_s", "wr/rd(s)": "transfer_s", "close(s)": "close_s", "total(s)": "total_s"}


def detect(text: str) -> bool:
    return bool(HEADING.search(text[:8192]))


def parse(text: str) -> list[ImportedRun]:
    # One run per IOR banner where the file holds IOR's text too; else one per CSV heading, which IOR
    # prints once per test (ior.c, TestIoSys at repetition 0): a CSV alone cannot tell a second run
    # appended to the file from a second test of one run's -f script, and two runs taken as one
    # held the same repetitions twice under one step.
    banner = BANNER if BANNER.search(text) else HEADING
    runs = invocations.text_runs(text, banner, _run, "no CSV heading (\"access,bw(MiB/s),...\")")
    if banner is HEADING and len(runs) > 1:
        runs[0].notes.append(f"{len(runs)} CSV tables and no IOR banner: each table taken as a run (one IOR run "
                             "of a -f script with several tests prints a table per test too)")
    return runs


def _run(text: str, first_line: int) -> ImportedRun:
    """One run of IOR: `text` from its banner or CSV heading to the next
    run's; each CSV table in it is a test (a step); `first_line` is the
    file's line it starts on."""
    banner = BANNER.search(text)
    command = re.search(r"^Command line(?: used)?\s*: (.+)$", text, re.M)   # 3.x "used:", 4.0 aligned
    run = ImportedRun("IOR", banner.group(1) if banner else None, "CSV", command.group(1).strip() if command else None,
                      no_version="IOR's CSV names no version (its text banner, where the file holds it, does)")
    began = re.search(r"^Began\s*: (.+)$", text, re.M)
    run.started = _date(began.group(1)) if began else None
    headings = list(HEADING.finditer(text))
    if not headings:
        raise Unreadable("no CSV heading (\"access,bw(MiB/s),...\")")
    for test_id, heading in enumerate(headings):
        end = headings[test_id + 1].start() if test_id + 1 < len(headings) else len(text)
        step = _step(run, test_id, text[heading.start():end], first_line + text.count("\n", 0, heading.start()))
        if step is not None:
            run.steps.append(step)
    if not run.steps:
        raise Unreadable("no write or read row with a bandwidth under the CSV heading")
    if not banner:
        run.notes.append("IOR's CSV names no version, date, host or command line (give --host, --date)")
    return run


def _step(run: ImportedRun, test_id: int, table: str, first_line: int):
    """The step of one CSV table (its heading and rows), None without a row to take."""
    rows: list[tuple[int, dict[str, str]]] = []
    lines = table.split("\n")
    columns = lines[0].strip().split(",")
    for n, line in enumerate(lines[1:], start=first_line + 1):
        fields = line.strip().split(",")
        if fields[0] in ("write", "read") and len(fields) == len(columns):
            refuse_garbled(fields, n)
            rows.append((n, dict(zip(columns, fields))))
    if not rows:
        return None
    tasks = count(rows[0][1].get("numTasks")) or 1
    first_row = rows[0][1]
    described = {"blocksize": _kib_text(first_row.get("block(KiB)")), "xfersize": _kib_text(first_row.get("xfer(KiB)"))}
    step, write_mode, read_mode = step_for(run.command, test_id, tasks, None, described, run.notes)
    for n, row in rows:
        bw = number(row.get("bw(MiB/s)"))
        if bw is None:
            continue
        fields = {name: number(row.get(col)) for col, name in COLUMNS.items() if col in row}
        rep = count(row.get("iter"))
        step.samples.append(sample(row["access"], (write_mode, read_mode), bw, rep or 0, line=n,
                                   seconds=fields.get("total_s"), time_resolution_s=JSON_CSV_TIME_RESOLUTION_S,
                                   **fields))
    return step if step.samples else None


def _kib_text(text: str | None) -> str:
    """IOR's KiB figure ("131072.0000") as a size ("128m"), as IOR's own options write sizes."""
    kib = number(text)
    if kib is None or kib <= 0 or kib != int(kib):
        return ""
    for unit, suffix in ((1 << 20, "g"), (1 << 10, "m"), (1, "k")):
        if int(kib) % unit == 0:
            return f"{int(kib) // unit}{suffix}"
    return ""
