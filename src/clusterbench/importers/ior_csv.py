"""IOR's CSV results (-O summaryFormat=CSV, IOR 4.0: 3.3.0 writes no result row in CSV;
usually with -O summaryFile=F): a heading line

    access,bw(MiB/s),IOPS,Latency,block(KiB),xfer(KiB),open(s),wr/rd(s),close(s),total(s),numTasks,iter

and one row per repetition and operation. Each write/read row is one
sample, as IOR's text Results rows are (ior_common: the pario step when
the file shows IOR's command line, else an `ior` step with the block and
transfer sizes and the task count the rows give). The CSV has no banner,
date, host or command line of its own: they are taken when the file also
holds IOR's text header (IOR writing both to stdout), else --host/--date.
"""
from __future__ import annotations

import re

from clusterbench.importers import ImportedRun, Unreadable, cut_short
from clusterbench.importers.ior_common import count, number, sample, step_for
from clusterbench.importers.ior_text import BANNER, _date

# the whole column list, so another tool's CSV that borrowed IOR's first two names is not taken for IOR's
HEADING = re.compile(r"^access,bw\(MiB/s\),IOPS,Latency,block\(KiB\),xfer\(KiB\),", re.M)
COLUMNS = {"IOPS": "iops", "Latency": "latency_s", "block(KiB)": "block_kib", "xfer(KiB)": "xfer_kib",
           "open(s)": "open_s", "wr/rd(s)": "transfer_s", "close(s)": "close_s", "total(s)": "total_s"}


def detect(text: str) -> bool:
    return bool(HEADING.search(text[:8192]))


def parse(text: str) -> list[ImportedRun]:
    text, cut = cut_short.whole_lines(text)
    heading = HEADING.search(text)
    if not heading:
        raise Unreadable("no CSV heading (\"access,bw(MiB/s),...\")")
    banner = BANNER.search(text)
    command = re.search(r"^Command line(?: used)?\s*: (.+)$", text, re.M)   # 3.x "used:", 4.0 aligned
    run = ImportedRun("IOR", banner.group(1) if banner else None, "CSV", command.group(1).strip() if command else None)
    began = re.search(r"^Began\s*: (.+)$", text, re.M)
    run.started = _date(began.group(1)) if began else None
    rows: list[tuple[int, dict[str, str]]] = []
    columns: list[str] = []
    first = text.count("\n", 0, heading.start()) + 1
    for n, line in enumerate(text[heading.start():].split("\n"), start=first):
        fields = line.strip().split(",")
        if line.startswith("access,"):
            columns = fields
        elif columns and fields[0] in ("write", "read") and len(fields) == len(columns):
            rows.append((n, dict(zip(columns, fields))))
    if not rows:
        raise Unreadable("no write or read row under the CSV heading")
    tasks = count(rows[0][1].get("numTasks")) or 1
    first_row = rows[0][1]
    described = {"blocksize": _kib_text(first_row.get("block(KiB)")), "xfersize": _kib_text(first_row.get("xfer(KiB)"))}
    step, write_mode, read_mode = step_for(run.command, 0, tasks, None, described, run.notes)
    for n, row in rows:
        bw = number(row.get("bw(MiB/s)"))
        if bw is None:
            continue
        fields = {name: number(row.get(col)) for col, name in COLUMNS.items() if col in row}
        rep = count(row.get("iter"))
        step.samples.append(sample(row["access"], (write_mode, read_mode), bw, rep or 0, line=n,
                                   seconds=fields.get("total_s"), **fields))
    if not step.samples:
        raise Unreadable("no bandwidth figure in the CSV rows")
    run.steps.append(step)
    if not banner:
        run.notes.append("IOR's CSV names no version, date, host or command line (give --host, --date)")
    if cut:
        run.notes.append(cut)
    return [run]


def _kib_text(text: str | None) -> str:
    """IOR's KiB figure ("131072.0000") as a size ("128m"), as IOR's own options write sizes."""
    kib = number(text)
    if kib is None or kib <= 0 or kib != int(kib):
        return ""
    for unit, suffix in ((1 << 20, "g"), (1 << 10, "m"), (1, "k")):
        if int(kib) % unit == 0:
            return f"{int(kib) // unit}{suffix}"
    return ""
