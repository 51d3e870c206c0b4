"""IOR's JSON summary (-O summaryFormat=JSON), 3.x and 4.x, including the
malformed documents real IOR versions wrote: read by lenient_json, each
repair named in the run's notes.

Per test: `Results` (IOR 4: a list of rows; IOR 3.3: a list per repetition
of rows; IOR 3.2: rows with an "iteration"), each write/read row one sample
(bwMiB, with iops, latency and the open/wrRd/close/total times in the
record); figures written as strings ("0.0003", IOR's "inf") are read as
numbers. Without Results rows, the `summary` entry's bwMeanMIB of the test
is one sample, with a note.
"""
from __future__ import annotations

import datetime as dt
import re

from clusterbench.importers import ImportedRun, Unreadable, lenient_json
from clusterbench.importers.ior_common import (DATE_FORMATS, JSON_CSV_TIME_RESOLUTION_S, count, number, sample,
                                               step_for, summary_means)

ROW_FIELDS = {"iops": "iops", "latency": "latency_s", "openTime": "open_s", "wrRdTime": "transfer_s",
              "closeTime": "close_s", "totalTime": "total_s", "blockKiB": "block_kib", "xferKiB": "xfer_kib"}

# where each checked figure of a sample is in the document, for the plausibility gate's message
MEMBERS = {"value": "bwMiB", "seconds": "totalTime", **{name: key for key, name in ROW_FIELDS.items()}}


def detect(text: str) -> bool:
    head = text[:4096]
    # the document's first line "{": IOR 3.2 prints its banner line before it, and a job's log
    # Slurm's and MPI's warnings ("srun: error: ...")
    brace = re.search(r"^[ \t]*\{", head, re.M)
    return brace is not None and bool(re.search(r'"(Command line|Began)"\s*:', head[brace.start():]))


def _date(text) -> dt.datetime | None:
    for fmt in DATE_FORMATS:
        try:
            return dt.datetime.strptime(str(text).strip(), fmt).replace(tzinfo=dt.timezone.utc)
        except ValueError:
            continue
    return None


def parse(text: str) -> list[ImportedRun]:
    try:
        doc, repairs = lenient_json.loads(text)
    except ValueError as e:
        raise Unreadable(str(e)) from None
    if not isinstance(doc, dict):
        raise Unreadable("the JSON document is not an object")
    banner = re.search(r"^IOR-(\S+): MPI Coordinated Test", text[:text.find("{")], re.M)
    version = doc.get("Version") or (banner.group(1) if banner else None)
    command = doc.get("Command line")
    run = ImportedRun("IOR", str(version) if version else None, "JSON",
                      command if isinstance(command, str) else None)
    run.notes += [f"damaged JSON: {r}" for r in repairs]
    run.started, run.finished = _date(doc.get("Began")), _date(doc.get("Finished"))
    machine = str(doc.get("Machine", "")).split()
    if len(machine) >= 2:
        run.hosts = [machine[1]]
        run.facts["os.kernel_name"] = machine[0]
    tests = doc.get("tests") if isinstance(doc.get("tests"), list) else []
    summary = [s for s in doc.get("summary", []) if isinstance(s, dict)] if isinstance(doc.get("summary"), list) else []
    for i, t in enumerate(tests):
        if isinstance(t, dict):
            _test(run, i, t, [s for s in summary if number(s.get("TestID")) in (None, i)])
    if not tests and summary:
        _test(run, 0, {}, summary)
    if not run.steps:
        raise Unreadable("no Results row and no summary entry of a write or read"
                         + (f" ({'; '.join(repairs)})" if repairs else ""))
    return [run]


def _rows(results) -> list[tuple[int, dict]]:
    """(repetition, row) from any of the shapes IOR versions wrote."""
    out = []
    if not isinstance(results, list):
        return out
    lists = 0
    for item in results:
        if isinstance(item, list):       # IOR 3.2/3.3: one list per repetition (3.2 adds empty ones)
            rows = [r for r in item if isinstance(r, dict)]
            out += [(lists, r) for r in rows]
            lists += bool(rows)
        elif isinstance(item, dict):     # IOR 4 (and 3.2: "iteration" in the row)
            rep = number(item.get("iteration"))
            out.append((int(rep) if rep is not None else -1, item))
    if any(rep == -1 for rep, _ in out):  # IOR 4 lists each repetition's write then read
        count: dict[str, int] = {}
        fixed = []
        for rep, r in out:
            op = str(r.get("access"))
            fixed.append((count.get(op, 0) if rep == -1 else rep, r))
            count[op] = count.get(op, 0) + 1
        out = fixed
    return out


def _test(run: ImportedRun, i: int, t: dict, summary: list[dict]) -> None:
    params = t.get("Parameters") if isinstance(t.get("Parameters"), dict) else {}
    opts = t.get("Options") if isinstance(t.get("Options"), dict) else {}
    first = summary[0] if summary else {}
    tasks = count(opts.get("tasks")) or count(first.get("numTasks")) or 1
    ppn = count(opts.get("clients per node")) or count(params.get("tasksPerNode")) or count(first.get("tasksPerNode"))
    described = {k: str(v) for k, v in {
        "api": params.get("api") or first.get("API"), "blockSize": params.get("blockSize") or first.get("blockSize"),
        "transferSize": params.get("transferSize") or first.get("transferSize"),
        "segmentCount": params.get("segmentCount") or first.get("segmentCount"),
        "filePerProc": params.get("filePerProc", first.get("filePerProc")), "collective": params.get("collective"),
        "fsync": params.get("fsync"), "fsyncPerWrite": params.get("fsyncperwrite"),
        "useO_DIRECT": params.get("useO_DIRECT")}.items() if v is not None}
    step, write_mode, read_mode = step_for(run.command, i, tasks, ppn, described, run.notes)
    for rep, row in _rows(t.get("Results")):
        op, bw = row.get("access"), number(row.get("bwMiB"))
        if op not in ("write", "read") or bw is None:
            continue
        fields = {name: number(row.get(key)) for key, name in ROW_FIELDS.items()}
        step.samples.append(sample(op, (write_mode, read_mode), bw, rep, seconds=fields.get("total_s"),
                                   time_resolution_s=JSON_CSV_TIME_RESOLUTION_S, member=MEMBERS, **fields))
    if not step.samples:
        summary_means(run, step, i, (write_mode, read_mode), summary,
                      {"operation": "operation", "mean": "bwMeanMIB", "max": "bwMaxMIB", "min": "bwMinMIB",
                       "repetitions": "repetitions", "seconds": "MeanTime"}, JSON_CSV_TIME_RESOLUTION_S)
    if step.samples:
        run.steps.append(step)

