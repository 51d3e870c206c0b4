"""mdtest text output (mdtest 1.9.3 in IOR 3.2, 3.3 and 4.0): the launch
line (version, tasks, nodes), the command line, and the SUMMARY rate (and
time) tables, one row per operation.

mdtest prints only the max, min, mean and standard deviation over its
iterations, so each operation is one sample: the mean rate in items/s,
under the metadata kernel's phase name (dir-create, file-stat, tree-remove,
...), with max, min, standard deviation, iterations and the mean time in
the record. The command line is read by clusterbench's mdtest parser
(clusterbench.tools.mdtest_args) into the metadata step `clusterbench mdtest`
runs for the same line; a line it refuses is stored as an mdtest step.
"""
from __future__ import annotations

import datetime as dt
import re

from clusterbench.errors import BadInput
from clusterbench.importers import ImportedRun, ImportedStep, Unreadable, cut_short, invocations, measurement
from clusterbench.importers.ior_common import argv_of, number

LAUNCHED = re.compile(r"^mdtest-(\S+) was launched with (\d+) total task\(s\) on (\d+) node\(s\)", re.M)
COMMAND = re.compile(r"^Command line used: (.+)$", re.M)
# 3.x/4.x: "SUMMARY rate: (of 2 iterations)" and "SUMMARY time: ..."; 1.9.x (LLNL's, before
# IOR took it in): "SUMMARY: (of 3 iterations)", rates only
TABLE = re.compile(r"^SUMMARY(?: (rate|time))?:? \(of (\d+) iterations?\)", re.M)
ROW = re.compile(r"^\s+([A-Z][a-z]+(?: [a-z]+)+)\s*:?\s+(-?[\d.]+(?:e[-+]?\d+)?)\s+(-?[\d.]+(?:e[-+]?\d+)?)\s+"
                 r"(-?[\d.]+(?:e[-+]?\d+)?)\s+(-?[\d.]+(?:e[-+]?\d+)?)\s*$", re.M)
STARTED = re.compile(r"^-- started at (\d\d/\d\d/\d{4} \d\d:\d\d:\d\d) --", re.M)
FINISHED = re.compile(r"^-- finished at (\d\d/\d\d/\d{4} \d\d:\d\d:\d\d) --", re.M)
PHASES = {"Directory creation": "dir-create", "Directory stat": "dir-stat", "Directory rename": "dir-rename",
          "Directory read": "dir-read", "Directory removal": "dir-remove", "File creation": "file-create",
          "File stat": "file-stat", "File read": "file-read", "File removal": "file-remove",
          "Tree creation": "tree-create", "Tree removal": "tree-remove"}


def detect(text: str) -> bool:
    # 64 KiB: a log may hold the job script's echo, module loads and shell prompts before mdtest's own lines
    return bool(LAUNCHED.search(text[:65536]))


def _date(m) -> dt.datetime | None:
    try:
        return dt.datetime.strptime(m.group(1), "%m/%d/%Y %H:%M:%S").replace(tzinfo=dt.timezone.utc) if m else None
    except ValueError:
        return None


def parse(text: str) -> list[ImportedRun]:
    if not LAUNCHED.search(text):
        raise Unreadable("no launch line (\"mdtest-x.y.z was launched with N total task(s) on M node(s)\")")
    text, cut = cut_short.whole_lines(text)
    runs = invocations.runs_of(text, LAUNCHED, _run, lead=STARTED)
    if cut:
        runs[-1].notes.append(cut)
    return runs


def _run(text: str, first_line: int) -> ImportedRun:
    """One run of mdtest: `text` from its "-- started at" line (or the
    file's start) to the next run's; `first_line` is the file's line it starts on."""
    launched = LAUNCHED.search(text)
    if not launched:   # the launch line itself was cut short
        raise Unreadable("no launch line (\"mdtest-x.y.z was launched with N total task(s) on M node(s)\")")
    command = COMMAND.search(text)
    run = ImportedRun("mdtest", launched.group(1), "text", command.group(1).strip() if command else None)
    run.started, run.finished = _date(STARTED.search(text)), _date(FINISHED.search(text))
    ranks, nodes = int(launched.group(2)) or 1, int(launched.group(3)) or 1
    tables = list(TABLE.finditer(text))
    if not tables:
        raise Unreadable("no SUMMARY table")
    figures: dict[str, dict] = {}
    for i, t in enumerate(tables):
        body = text[t.end(): tables[i + 1].start() if i + 1 < len(tables) else len(text)]
        table_line = first_line + text.count("\n", 0, t.end())
        for row in ROW.finditer(body):
            phase = PHASES.get(row.group(1))
            if phase is None:
                continue
            mx, mn, mean, sd = (number(row.group(k)) for k in range(2, 6))
            f = figures.setdefault(phase, {"iterations": int(t.group(2))})
            if t.group(1) in ("rate", None):
                f["line"] = table_line + body.count("\n", 0, row.start(1))
                f.update(mean_items_per_s=mean, max_items_per_s=mx, min_items_per_s=mn, stddev_items_per_s=sd)
            else:
                f.update(seconds=mean, max_seconds=mx, min_seconds=mn)
    step = _step(run, ranks, nodes)
    for phase, f in figures.items():
        if f.get("mean_items_per_s") is None:
            continue
        mean = f.pop("mean_items_per_s")
        step.samples.append(measurement(phase, "n/a", mean, "items/s", **f))
    if not step.samples:
        raise Unreadable("no operation row in the SUMMARY rate table")
    if any(f.get("iterations", 1) > 1 for f in figures.values()):
        run.notes.append("mdtest prints only max/min/mean over its iterations: the mean stored as one sample")
    run.steps.append(step)
    return run


def _step(run: ImportedRun, ranks: int, nodes: int) -> ImportedStep:
    from clusterbench.tools.mdtest_args import translate

    ppn = ranks // nodes if nodes > 1 else None
    if run.command:
        try:
            line = translate(["mpiexec", "-n", str(ranks), *argv_of(run.command)])
            return ImportedStep(f"mdtest: {run.command}", "metadata", dict(line.params), ranks, ppn)
        except BadInput as e:
            run.notes.append(f"the command line is not one the metadata kernel runs ({e.message}): "
                             "stored as an mdtest step")
    return ImportedStep("mdtest", "mdtest", {"command": run.command or ""}, ranks, ppn)
