"""IOR 3.x and 4.x text output: the banner (version, Began, Command line,
Machine), per test its Options block and Results table (one row per
repetition and operation), and the `Summary of all tests` table.
IOR 3.0 and 3.1 print the same figures under other headings: `Command line
used:`, `Test 0 started:`, a `Summary:` block of `key = value` lines for
the options, and the results table with no `Results:` line before it.
IOR 2.10 prints `Run began:`/`Run finished:`, that `Summary:` block, and no
row per repetition: only its summary table ("Operation  Max (MiB) ...").

Samples come from the Results rows (bandwidth in MiB/s as IOR printed it,
with its IOPS, latency and open/wr-rd/close/total times in the record).
A test whose Results rows are missing (IOR ran without them, or the file
was cut) takes the Summary's Max/Min/Mean as one sample of the mean, with
a note. Older versions print fewer columns; columns are found by their
heading, not their place.
"""
from __future__ import annotations

import datetime as dt
import re

from clusterbench.importers import ImportedRun, Unreadable, invocations, refuse_garbled
from clusterbench.importers.ior_common import DATE_FORMATS, count, number, sample, step_for, summary_means

LINE = "\0line"   # a row's line in the file, kept beside its columns (no heading is that)
BANNER = re.compile(r"^IOR-(\S+): MPI Coordinated Test of Parallel I/O", re.M)
MARK = BANNER   # where an IOR run starts, anywhere in a file (importers.other_tools_in)
KEY_VALUE = re.compile(r"^([A-Za-z][\w /()#.-]*?)\s*: ?(.*)$")
# IOR 3.0/3.1: "Test 0 started: ..." opens a test; its "Summary:" block is "\tapi                = POSIX"
OLD_TEST = re.compile(r"^Test \d+ started:")
OLD_SETUP = re.compile(r"^\s+([a-z][\w ]*?)\s*= ?(.*)$")
OLD_CLIENTS = re.compile(r"(\d+) \((\d+) per node\)")
RESULT_COLUMNS = {"bw(MiB/s)": "bw", "IOPS": "iops", "Latency(s)": "latency_s", "block(KiB)": "block_kib",
                  "xfer(KiB)": "xfer_kib", "open(s)": "open_s", "wr/rd(s)": "transfer_s", "close(s)": "close_s",
                  "total(s)": "total_s", "iter": "iter"}


def detect(text: str) -> bool:
    return bool(BANNER.search(text[:8192]))


def _date(text: str | None) -> dt.datetime | None:
    for fmt in DATE_FORMATS:
        try:
            return dt.datetime.strptime((text or "").strip(), fmt).replace(tzinfo=dt.timezone.utc)
        except ValueError:
            continue
    return None


def parse(text: str) -> list[ImportedRun]:
    return invocations.text_runs(text, BANNER, _run,
                                 "no IOR banner (\"IOR-x.y.z: MPI Coordinated Test of Parallel I/O\")")


def _run(text: str, first_line: int) -> ImportedRun:
    """One run of IOR: `text` from its banner (or the file's start) to the
    next banner; `first_line` is the file's line `text` starts on."""
    m = BANNER.search(text)
    if not m:   # the banner line itself was cut short
        raise Unreadable("no IOR banner (\"IOR-x.y.z: MPI Coordinated Test of Parallel I/O\")")
    lines = text[m.start():].split("\n")
    banner_line = first_line + text.count("\n", 0, m.start())
    head: dict[str, str] = {}
    tests: list[dict] = []     # each: options, rows, summary
    section, columns = None, None
    summary_cols: list[str] = []
    summary: list[dict[str, str]] = []
    for line_no, line in enumerate(lines[1:], start=banner_line + 1):
        stripped = line.strip()
        if stripped.startswith("TestID") or OLD_TEST.match(stripped):
            tests.append({"options": {}, "rows": []})
            section = "test"
            continue
        if stripped.startswith("Options:"):
            section = "options"
            continue
        if stripped == "Summary:" and section in ("test", None):   # IOR 2.10 and 3.0/3.1's options
            if section is None:   # IOR 2.10 starts no "Test 0": its one test opens here
                tests.append({"options": {}, "rows": []})
            section = "setup"
            continue
        if stripped.startswith("Results:"):
            section, columns = "results", None
            continue
        if section in ("test", "setup") and stripped.startswith("access") and "bw(MiB/s)" in stripped:
            section = "results"   # IOR 3.0/3.1: the table's heading with no "Results:" line before it
        if section in ("test", "setup") and stripped.startswith("Operation") and "Max (MiB)" in stripped:
            section = "summary"   # IOR 2.10: the summary of its one test, with no "Summary of all tests:" line
        if section == "setup":
            kv = OLD_SETUP.match(line)
            if kv and tests:
                clients = OLD_CLIENTS.fullmatch(kv.group(2).strip())
                if kv.group(1) == "clients" and clients:
                    tests[-1]["options"].update({"tasks": clients.group(1), "clients per node": clients.group(2)})
                else:
                    tests[-1]["options"][kv.group(1)] = kv.group(2).strip()
            continue
        if stripped.startswith("Summary of all tests:"):
            section = "summary"
            continue
        if section == "results":
            if stripped.startswith("access"):
                columns = re.split(r"\s+", stripped)
                continue
            fields = stripped.split()
            if columns and fields and fields[0] in ("write", "read") and len(fields) == len(columns) and tests:
                refuse_garbled(fields, line_no)
                tests[-1]["rows"].append({**dict(zip(columns, fields)), LINE: line_no})
            continue
        if section == "summary":
            if stripped.startswith("Operation"):
                # IOR 2.10 heads "Max (MiB)  Min (MiB)  Mean (MiB)   Std Dev ... Mean (s)", 2 spaces apart:
                # named as 3.x names them ("Max(MiB)", "Mean(s)")
                summary_cols = [c.replace(" ", "") for c in re.split(r"\s{2,}", stripped)] \
                    if "Max (MiB)" in stripped else stripped.split()
            elif summary_cols and stripped.split()[:1] in (["write"], ["read"]):
                refuse_garbled(stripped.split(), line_no)
                row = dict(zip(summary_cols, stripped.split()))
                if "reps" not in row and tests and tests[-1]["options"].get("repetitions"):
                    row["reps"] = tests[-1]["options"]["repetitions"]   # IOR 2.10: from its options
                summary.append({**row, LINE: line_no})
            elif stripped.startswith(("Finished", "Run finished")) and KEY_VALUE.match(stripped):
                head["Finished"] = KEY_VALUE.match(stripped).group(2)
            continue
        kv = KEY_VALUE.match(line)
        if not kv:
            continue
        key, value = kv.group(1).strip(), kv.group(2).strip()
        if section == "options" and tests:
            tests[-1]["options"][key] = value
        elif section is None or section == "test":
            head.setdefault(key, value)
    run = ImportedRun("IOR", m.group(1), "text", head.get("Command line", head.get("Command line used")))
    run.started, run.finished = _date(head.get("Began", head.get("Run began"))), _date(head.get("Finished"))
    machine = head.get("Machine", "").split()
    if len(machine) >= 2:
        run.hosts = [machine[1]]
        run.facts["os.kernel_name"] = machine[0]
    if not tests and summary:   # IOR with its results table only (-q, or the head cut off)
        tests = [{"options": {}, "rows": []}]
    for i, t in enumerate(tests):
        _test(run, i, t, [s for s in summary if s.get("Test#", str(i)) == str(i)])
    if not run.steps:
        raise Unreadable("no Results row and no Summary row of a write or read")
    return run


def _test(run: ImportedRun, i: int, t: dict, summary: list[dict[str, str]]) -> None:
    opts = t["options"]
    tasks = count(opts.get("tasks")) or count(summary[0].get("#Tasks") if summary else None) or 1
    ppn = count(opts.get("clients per node")) or count(summary[0].get("tPN") if summary else None)
    described = {"api": opts.get("api") or (summary[0].get("API") if summary else None) or "",
                 "access": opts.get("access", ""), "type": opts.get("type", ""),
                 "segments": opts.get("segments") or (summary[0].get("segcnt", "") if summary else ""),
                 "xfersize": opts.get("xfersize") or (summary[0].get("xsize", "") if summary else ""),
                 "blocksize": opts.get("blocksize") or (summary[0].get("blksiz", "") if summary else "")}
    step, write_mode, read_mode = step_for(run.command, i, tasks, ppn, described, run.notes)
    for row in t["rows"]:
        bw = number(row.get("bw(MiB/s)"))
        if bw is None:
            continue
        fields = {RESULT_COLUMNS[c]: number(v) for c, v in row.items() if c in RESULT_COLUMNS and c != "bw(MiB/s)"}
        rep = int(fields.pop("iter", None) or 0)   # a heading without "iter" (a damaged file): 0
        step.samples.append(sample(row["access"], (write_mode, read_mode), bw, rep,
                                   seconds=fields.get("total_s"), line=row[LINE], **fields))
    if not step.samples:
        summary_means(run, step, i, (write_mode, read_mode), summary,
                      {"operation": "Operation", "mean": "Mean(MiB)", "max": "Max(MiB)", "min": "Min(MiB)",
                       "repetitions": "reps", "seconds": "Mean(s)"})
    if step.samples:
        run.steps.append(step)

