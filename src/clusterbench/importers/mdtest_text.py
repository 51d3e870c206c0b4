"""mdtest text output (LLNL's mdtest 1.7 to 1.9.3, the 1.9.3 in IOR 3.2,
IOR 3.3, 4.0 and IOR's master after 4.0, "4.1.0+dev"): the launch line
(version, tasks, nodes), the command line, and the SUMMARY rate (and
time) tables, one row per operation.

mdtest prints only the max, min, mean and standard deviation over its
iterations (each iteration's figure with -v, rank 0's: mdtest_iterations.py
takes them as the repetitions where they are the iterations), so each
operation is otherwise one sample: the mean rate in items/s,
under the metadata kernel's phase name (dir-create, file-stat, tree-remove,
...), with max, min, standard deviation, iterations, the mean time, the
items per rank and the tree's shape in the record (mdtest_items.py). A
run the stonewall timer (-W) stopped keeps what mdtest printed of it
(mdtest_stonewall.py), a run that took its file phases' count from a
stonewall status file (-x) that count (mdtest_status_file.py); a phase
mdtest warned of failed items in is left out (mdtest_failed_items.py).
The command line is read by clusterbench's mdtest parser
(clusterbench.tools.mdtest_args) into the metadata step `clusterbench
mdtest` runs for the same line; a line it refuses is stored as an mdtest
step.
"""
from __future__ import annotations

import datetime as dt
import re

from clusterbench.errors import BadInput
from clusterbench.importers import (ImportedRun, ImportedStep, Unreadable, invocations, mdtest_failed_items,
                                   mdtest_items, mdtest_iterations, mdtest_status_file, mdtest_stonewall, measurement,
                                   number_on_line)
from clusterbench.importers.ior_common import argv_of, number

# LLNL's mdtest 1.8 and older: "... on 1 nodes"
LAUNCHED = re.compile(r"^mdtest-(\S+) was launched with (\d+) total task\(s\) on (\d+) node(?:\(s\)|s)", re.M)
MARK = LAUNCHED   # where an mdtest run starts, anywhere in a file (importers.other_tools_in)
COMMAND = re.compile(r"^Command line used: (.+)$", re.M)
# 3.x/4.0: "SUMMARY rate: (of 2 iterations)" and "SUMMARY time: ..."; 1.9.x (LLNL's, before
# IOR took it in): "SUMMARY: (of 3 iterations)", rates only; IOR's master since 2023 (commit
# 05742a7) "SUMMARY rate (in ops/sec): ...", and since 2024 (dcc4e40) "SUMMARY time (in ms/op): ..."
TABLE = re.compile(r"^SUMMARY(?: (rate|time))?(?: \(in ([^)\n]*)\))?:? \(of (\d+) iterations?\)", re.M)
# printf's nan and inf too: a row holding one was no row, and its phase was dropped unsaid
NUM = r"(-?[\d.]+(?:e[-+]?\d+)?|-?nan|-?inf)"
# max, min, mean, std dev over the iterations; with --showRankStatistics (IOR 4.0 and later) first the
# max, min and mean of every rank's own rate (or time) over ranks and iterations
ROW = re.compile(rf"^\s+([A-Z][a-z]+(?: [a-z]+)+)\s*:?\s+(?:{NUM}\s+{NUM}\s+{NUM}\s+)?"
                 rf"{NUM}\s+{NUM}\s+{NUM}\s+{NUM}\s*$", re.M)
# "2 tasks, 100 files/directories" (also "... files", "... directories"): the items of each phase
ITEMS = re.compile(r"^\d+ tasks, (\d+) (?:files/directories|files|directories)$", re.M)
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
    written: dict = {}   # -x file -> what the last run of the log to write it left there (mdtest_status_file)
    return invocations.text_runs(text, LAUNCHED, lambda part, line: _run(part, line, written),
                                 "no launch line (\"mdtest-x.y.z was launched with N total task(s) on M node(s)\")",
                                 lead=STARTED)


def _run(text: str, first_line: int, written: dict) -> ImportedRun:
    """One run of mdtest: `text` from its "-- started at" line (or the
    file's start) to the next run's; `first_line` is the file's line it
    starts on; `written`: what earlier runs of the log left in -x files."""
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
    if all(t.group(1) == "time" for t in tables):
        raise Unreadable("only the SUMMARY time table (mdtest -Z): the rates are not in this output (run mdtest "
                         "without -Z, or with -P for both tables)")
    for t in tables:   # mdtest runs one iteration at least: a table of none is a hand edit (max() of nothing)
        if int(t.group(3)) == 0:
            raise Unreadable(f"line {first_line + text.count(chr(10), 0, t.start())}: '{t.group(0)}': a SUMMARY "
                             "of no iteration, which mdtest does not print")
    rates: dict[str, dict] = {}
    times: dict[str, dict] = {}
    items = list(ITEMS.finditer(text))
    asked, iterations = (int(items[-1].group(1)) if items else None), int(tables[0].group(3))
    tree = mdtest_items.tree_of(argv_of(run.command)) if run.command else None
    # LLNL's format ("SUMMARY: (of N iterations)", no "rate"/"time") counted -I -L items it never made
    leaf_factor = tree and mdtest_items.llnl_leaf_factor(tree, tables[0].group(1) is None)
    if leaf_factor:
        asked = tree.items_per_dir_option * tree.leaves * ranks
    stonewall = mdtest_stonewall.read(text, ranks, first_line)
    status = mdtest_status_file.read(text, run.command, written)
    mdtest_status_file.remember(status, written, mdtest_stonewall.limit_seconds(run.command) is not None,
                                stonewall.hits, asked, ranks, iterations, first_line)
    file_items = stonewall.items_per_iteration(asked, iterations)
    if status:
        file_items = status.file_items(ranks, file_items)
    dir_items = _dir_items(asked, iterations, stonewall, status, ranks)
    for i, t in enumerate(tables):
        body = text[t.end(): tables[i + 1].start() if i + 1 < len(tables) else len(text)]
        table_line = first_line + text.count("\n", 0, t.end())
        stonewall.read_summary_row(body, t.group(1) == "time")
        for row in ROW.finditer(body):
            phase = PHASES.get(row.group(1))
            if phase is None:
                continue
            at = table_line + body.count("\n", 0, row.start(1))
            for figure in row.groups()[1:]:   # "1.2.3" fits the pattern: its phase was dropped, unsaid
                if figure is not None:
                    number_on_line(figure, at)
            mx, mn, mean, sd = (number(row.group(k)) for k in range(5, 9))
            if t.group(1) in ("rate", None):
                if leaf_factor and phase.startswith(("dir-", "file-")):   # to the 3 decimals mdtest printed
                    mx, mn, mean, sd = (round(x * leaf_factor, 3) if x is not None else None
                                        for x in (mx, mn, mean, sd))
                rates[phase] = {"iterations": int(t.group(3)), "line": at,
                                "mean_items_per_s": mean, "max_items_per_s": mx, "min_items_per_s": mn,
                                "stddev_items_per_s": sd}
                if row.group(2) is not None and not phase.startswith("tree-"):   # a tree's is rank 0's alone
                    rates[phase].update(rank_items_per_s_max=number(row.group(2)),
                                        rank_items_per_s_min=number(row.group(3)),
                                        rank_items_per_s_mean=number(row.group(4)))
            else:
                times[phase] = {"seconds": mean, "max_seconds": mx, "min_seconds": mn}
    failed = mdtest_failed_items.failed_per_phase(text)
    if failed:
        left_out = mdtest_failed_items.left_out(failed, bool(stonewall.hits))
        for phase in left_out:
            rates.pop(phase, None)
            times.pop(phase, None)
        run.notes.append(mdtest_failed_items.note(failed, left_out))
    if times and (file_items is None or dir_items is None):   # the directories' None only with the files'
        run.notes.append("the SUMMARY time table cannot be checked against the file phases' item count (read "
                         "from the stonewall status file, not printed): left out")
    elif times:
        if _seconds_per_phase(rates, times, dir_items, file_items):
            for phase, f in rates.items():
                f.update(times.get(phase, {}))
        else:
            run.notes.append("the SUMMARY time table does not read as each phase's seconds (the item count over "
                             "the rates): left out")
    step = _step(run, ranks, nodes)
    # mdtest prints 0.000 for a phase that did no operation (its rate is 0 when its item sum is:
    # -n 0, or a phase not chosen, -C/-T/-E/-r): not a rate of 0, no rate at all
    idle = [p for p, f in rates.items() if f["mean_items_per_s"] == 0 and f["max_items_per_s"] == 0]
    rates.get("file-create", {}).update(stonewall.fields(run.command))
    _add_item_counts(rates, tree, mdtest_items.one_count(dir_items, ranks), mdtest_items.one_count(file_items, ranks))
    if leaf_factor:
        run.notes.append(mdtest_items.llnl_leaf_note(tree, ranks, items[-1].group(0) if items else None))
    if stonewall.hits:
        run.notes.append(stonewall.note(items[-1].group(0) if items else None, iterations))
    if status:
        for phase in ("file-create",) if not status.reads else mdtest_status_file.READING_PHASES:
            if phase in rates:
                rates[phase].update(status.fields(ranks))
        note = status.note(ranks, items[-1].group(0) if items else None, asked)
        if note:
            run.notes.append(note)
    # -v's per-iteration lines (LLNL's -I -L rates were scaled above: their lines are not)
    per_iteration = mdtest_iterations.read(text, first_line) if not leaf_factor else {}
    rank0_only, as_mean = [], False
    for phase, f in rates.items():
        if f.get("mean_items_per_s") is None or phase in idle:
            continue
        each = per_iteration.get(phase, [])
        if mdtest_iterations.are_the_iterations(each, f["iterations"], f["max_items_per_s"], f["min_items_per_s"],
                                                f["mean_items_per_s"]):
            f.pop("line")
            if "seconds" in f:   # the time table's mean over the iterations is not this iteration's time
                f["mean_seconds"] = f.pop("seconds")
            for j, it in enumerate(each):
                step.samples.append(measurement(phase, "n/a", it.items_per_s, "items/s", repetition=j, line=it.line,
                                                iteration_seconds=it.seconds, **f))
            continue
        if each:
            f["rank0_iteration_items_per_s"] = [it.items_per_s for it in each]
            rank0_only.append(phase)
        as_mean = as_mean or f.get("iterations", 1) > 1
        mean = f.pop("mean_items_per_s")
        step.samples.append(measurement(phase, "n/a", mean, "items/s", **f))
    if not step.samples:
        raise Unreadable("no operation row in the SUMMARY rate table" + (
            f" (every phase printed 0: no operation was done, {len(idle)} phases)" if idle else ""))
    if idle:
        run.notes.append(f"{len(idle)} phase(s) printed a rate of 0 (no operation done: not run, or 0 items), "
                         f"left out: {', '.join(idle)}")
    if rank0_only:
        run.notes.append(mdtest_iterations.note(rank0_only, ranks))
    if as_mean and not rank0_only:
        run.notes.append("mdtest prints only max/min/mean over its iterations (each iteration's figure with -v, on "
                         "one rank): the mean stored as one sample")
    run.steps.append(step)
    return run


def _dir_items(asked: int | None, iterations: int, stonewall, status, ranks: int) -> list[int] | None:
    """The directory phases' item counts per iteration (mdtest_items); None
    where a later iteration did a count read from the status file that the
    output does not hold."""
    later = [most * ranks for _, most, _ in stonewall.hits]
    if status and status.reads and not status.unreadable:
        if status.per_rank is None:
            return None if iterations > 1 else ([asked] if asked else [])
        later.append(status.per_rank * ranks)
    return mdtest_items.dir_items_per_iteration(asked, iterations, later)


def _add_item_counts(rates: dict, tree, dir_per_rank: int | None, file_per_rank: int | None) -> None:
    """items_per_rank (where every iteration did one count) and the tree's
    shape in each phase's record, named as the metadata kernel names them."""
    for phase, f in rates.items():
        if phase.startswith("tree-"):   # its rate counts tree directories, not items
            f.update({"tree_dirs": tree.dirs} if tree else {})
            continue
        per_rank = dir_per_rank if phase.startswith("dir-") else file_per_rank
        if per_rank is not None:
            f["items_per_rank"] = per_rank
        if tree:
            f.update(tree.fields(per_rank))


def _seconds_per_phase(rates: dict, times: dict, dir_items: list[int], file_items: list[int]) -> bool:
    """Whether the time table holds each phase's seconds (the slowest rank's,
    per iteration), the figure `rate = items / seconds` was made of. mdtest
    prints that array (time[]) in every version, but since 2024 (IOR commit
    dcc4e40) heads it "(in ms/op)": 100 items at 8,485 ops/s print 0.012,
    which is 12 ms for the phase, not 0.012 ms per operation. So the table is
    taken only where it is what mdtest's code says: every file and directory
    phase's shortest time is the items over its highest rate, its longest the
    items over its lowest rate, to the 3 decimals printed (the tree phases
    count tree directories, not items, and are not checked). `items`: the
    item counts an iteration may have done, `file_items` for the file
    phases: more than one where the stonewall timer cut iterations short
    (then the highest rate and the shortest time may be of iterations of
    different counts: each product lies between the least and the most)."""
    checked = 0
    for phase, r in rates.items():
        t = times.get(phase)
        if t is None or phase.startswith("tree-") or not r["max_items_per_s"]:
            continue
        counts = file_items if phase.startswith("file-") else dir_items
        if not counts:
            return False
        least, most = min(counts), max(counts)
        for seconds, rate in ((t["min_seconds"], r["max_items_per_s"]), (t["max_seconds"], r["min_items_per_s"])):
            if seconds is None or rate is None:
                return False
            if rate and not (least - 0.0005 * rate - 0.01 * least <= seconds * rate
                             <= most + 0.0005 * rate + 0.01 * most):
                return False
        checked += 1
    return checked > 0


def _step(run: ImportedRun, ranks: int, nodes: int) -> ImportedStep:
    from clusterbench.tools.mdtest_args import translate

    ppn = ranks // nodes if nodes > 1 else None
    if run.command:
        try:
            # the run's -d as it gave it: where this machine has that path is no part of the run
            line = translate(["mpiexec", "-n", str(ranks), *argv_of(run.command)], here=False)
            return ImportedStep(f"mdtest: {run.command}", "metadata", dict(line.params), ranks, ppn)
        except BadInput as e:
            run.notes.append(f"the command line is not one the metadata kernel runs ({e.message}): "
                             "stored as an mdtest step")
    return ImportedStep("mdtest", "mdtest", {"command": run.command or ""}, ranks, ppn)
