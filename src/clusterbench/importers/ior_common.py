"""What IOR's text and JSON outputs share: a test's step and its samples'
modes, from IOR's command line read by clusterbench's own IOR parser
(clusterbench.tools.ior_args), so an imported line and `clusterbench ior` of the
same line become the same pario step and compare key by key.

IOR's figures per repetition and operation are bandwidth in MiB/s (bytes /
the time from first open to last close, as pario's rate), so the samples
are pario's: phase write/read, unit MiB/s, the write's mode the durability
the line asked for (-e fsync, -Y fsync-each, O_DIRECT direct, else
buffered: seqio's and pario's name for a write into the page cache) and
the read's `direct` with O_DIRECT, else `unknown`: IOR itself does not
empty the page cache before reading, so what the read came from is not
known (as a dd read without drop_caches), and each such sample says why in
its warnings. It was `cold`, pario's state for the line, beside a warning
saying no cache was dropped.
"""
from __future__ import annotations

import math
import re
import shlex

from clusterbench.errors import BadInput
from clusterbench.importers import ImportedStep, measurement

READ_WARNING = "imported from IOR: IOR does not empty the page cache before reading (pario does)"
UNKNOWN_READ = "unknown"   # the cache state of a read IOR made without O_DIRECT (records.md, cache modes)
DATE_FORMATS = ("%a %b %d %H:%M:%S %Y",)


def argv_of(command_line: str) -> list[str]:
    try:
        return shlex.split(command_line)
    except ValueError:
        return command_line.split()


def step_for(command_line: str | None, test_id: int, tasks: int, tasks_per_node: int | None,
             described: dict[str, str], notes: list[str]) -> tuple[ImportedStep, str, str]:
    """The test's step and the (write mode, read mode) of its samples.
    `described`: the test's parameters as the output file shows them, used
    (as an `ior` step) when the command line cannot be read as pario's."""
    from clusterbench.tools.ior_args import translate

    ppn = tasks_per_node if tasks_per_node and tasks_per_node != tasks else None
    if command_line and _reads_files(argv_of(command_line)):
        note = ("the command line names a script or hints file, which the output does not hold: "
                "stored as an ior step with the parameters the output shows")
        if note not in notes:   # once per run, not once per test of the script
            notes.append(note)
    elif command_line:
        try:
            t = translate(["mpiexec", "-n", str(tasks), *argv_of(command_line)])
            test = t.tests[test_id] if test_id < len(t.tests) else None
        except BadInput as e:
            notes.append(f"the command line is not one pario runs ({e.message}): stored as an ior step")
            test = None
        if test is not None:
            p = test.params
            direct = p.get("direct") == "true"
            write = "direct" if direct else {"end": "fsync", "each": "fsync-each"}.get(p.get("fsync", "none"), "buffered")
            return (ImportedStep(f"ior test {test_id}: {command_line}", "pario", dict(p), tasks, ppn),
                    write, "direct" if direct else UNKNOWN_READ)
    elif not any("no command line" in n for n in notes):
        notes.append("no command line in the file: stored as an ior step with the parameters it shows")
    write = "fsync-each" if described.get("fsyncPerWrite") == "1" else \
        "fsync" if described.get("fsync") == "1" else "buffered"
    if described.get("useO_DIRECT") == "1":
        write = "direct"
    return (ImportedStep(f"ior test {test_id}", "ior", {k: v for k, v in described.items() if v not in ("", None)},
                         tasks, ppn), write, "direct" if write == "direct" else UNKNOWN_READ)


def _reads_files(argv: list[str]) -> bool:
    """-f SCRIPT and hints files: the parser would read them from this machine, where they are not the run's."""
    return any(a.startswith("-f") or "hintsfilename" in a.lower() for a in argv)


# IOR's JSON and CSV print times to 4 decimals (%.4f), its bandwidth from the time unrounded: a repetition
# under 50 us (a small file read from the page cache) prints totalTime 0.0000 beside its MiB/s, a time too
# short to print, not none. The text prints 6 decimals: 0.000000 there (under 0.5 us for an open, a
# transfer and a close) is no time IOR measures, and the plausibility gate refuses it.
JSON_CSV_TIME_RESOLUTION_S = 1e-4
TIME_TOO_SHORT = "imported from IOR: its time printed as 0 (under the 4 decimals IOR prints): not known"


def sample(op: str, modes: tuple[str, str], mib_per_s: float, repetition: int, *,
           time_resolution_s: float | None = None, **fields):
    mode = modes[0] if op == "write" else modes[1]
    too_short = time_resolution_s is not None and fields.get("seconds") == 0 and (mib_per_s or 0) > 0
    if too_short:
        fields["seconds"] = None
    s = measurement(op, mode, mib_per_s, "MiB/s", repetition=repetition, **fields)
    if too_short:
        s.warnings.append(TIME_TOO_SHORT)
    if op == "read" and mode == UNKNOWN_READ:
        s.warnings.append(READ_WARNING)
    return s


def number(text) -> float | None:
    """IOR's figures as numbers: JSON numbers, numbers written as strings
    ("0.0003", "inf"), text columns (printf's "nan", "-nan", "inf"); None for '-', 'NA' and
    anything else."""
    if isinstance(text, bool):
        return None
    if isinstance(text, (int, float)):
        return float(text)
    if isinstance(text, str) and re.fullmatch(r"\s*(-?\d+(\.\d*)?([eE][-+]?\d+)?|[-+]?(nan|inf))\s*", text, re.I):
        # nan and inf as printf wrote them: read, so import_runs leaves them out *and says so*
        return float(text)
    return None


def count(text) -> int | None:
    """A positive whole number (repetitions), else None."""
    n = number(text)
    # "inf" is read (number), and int() of it raised OverflowError: no count
    return int(n) if n is not None and math.isfinite(n) and n == int(n) and n > 0 else None


def summary_means(run, step: ImportedStep, test_id: int, modes: tuple[str, str], summary: list[dict],
                  keys: dict[str, str], time_resolution_s: float | None = None) -> None:
    """A test without Results rows (IOR ran with fewer details, or the rows
    were lost): each Summary line's mean over repetitions as one sample.
    `keys` names the summary's fields in this format (text column headings
    or JSON keys) for: operation, mean, max, min, repetitions, seconds."""
    for s in summary:
        mean = number(s.get(keys["mean"]))
        if s.get(keys["operation"]) in ("write", "read") and mean is not None:
            where = {"line": s["\0line"]} if "\0line" in s else {"member": {"value": keys["mean"]}}
            step.samples.append(sample(s[keys["operation"]], modes, mean, 0, **where,
                                       max_mib_per_s=number(s.get(keys["max"])),
                                       min_mib_per_s=number(s.get(keys["min"])),
                                       repetitions=count(s.get(keys["repetitions"])),
                                       seconds=number(s.get(keys["seconds"])),
                                       time_resolution_s=time_resolution_s))
    if step.samples:
        run.notes.append(f"test {test_id}: no Results rows: the summary's mean over repetitions taken as one sample")
