"""Intel MPI Benchmarks text output (IMB-MPI1, 2017-2021): the header
(version, date, calling sequence, OS), then per benchmark and process
count ("# Benchmarking Allreduce", "# #processes = 4") a table with
`#bytes #repetitions` and t[usec] or t_min/t_max/t_avg, and Mbytes/sec.

Each (benchmark, process count) is a step. One the mpi kernel also runs
(PingPong as pingpong; Allreduce, Reduce, Alltoall, Allgather, Bcast,
Barrier) is an mpi step with sync=none (IMB times back-to-back calls,
docs/kernels/mpi.md) whose samples are the kernel's: phase the op, one per
size, the time in us (PingPong's t, else t_avg; IMB-NBC's t_pure, the
non-blocking collective alone, with t_ovrl, t_CPU and overlap), with t_min/t_max,
repetitions and Mbytes/sec in the record as bandwidth_mb_s (10^6 bytes/s).
IMB 2018 on divides by 10^6 (IMB_output.c: MEGA = 1.0/1e6); IMB 3.x and 4.x
by 2^20 (MEGA = 1.0/1048576.0: 4.1's PingPong prints 9426.16 for 4 MiB in
424.35 us), so their figure is kept as bandwidth_mib_s and converted. PingPing,
Sendrecv, Exchange and the rest are `imb` steps named by the benchmark.
"""
from __future__ import annotations

import datetime as dt
import math
import re

from clusterbench.importers import ImportedRun, ImportedStep, Unreadable, invocations, measurement, printed_step, refuse_garbled

# 4.x to 2018 print "Intel (R)", 2017 "update 2" (IMB_g_info.c's VERSION); 2019 on "Intel(R)", "Update 1"
BANNER = re.compile(r"^#\s+Intel ?\(R\) MPI Benchmarks (\d+(?:\.\d+)*(?: [Uu]pdate \d+)?)(?:, (.+?))?\s*$", re.M)
MARK = BANNER   # where an IMB run starts, anywhere in a file (importers.other_tools_in)
# -multi 0|1: "# Benchmarking Multi-PingPong", "# ( 2 groups of 2 processes each running simultaneous )"
SECTION = re.compile(r"^# Benchmarking (\S+)\s*\n# (?:#processes = (\d+)|"
                     r"\( (\d+) groups of (\d+) processes each running simultaneous \))", re.M)
MPI_OPS = {"PingPong": "pingpong", "Allreduce": "allreduce", "Reduce": "reduce", "Alltoall": "alltoall",
           "Allgather": "allgather", "Bcast": "bcast", "Barrier": "barrier"}
COLUMNS = {"#bytes": "message_bytes", "#repetitions": "repetitions", "t[usec]": "t_usec", "t_min[usec]": "t_min_us",
           "t_max[usec]": "t_max_us", "t_avg[usec]": "t_avg_us", "Mbytes/sec": "bandwidth_mb_s",
           "Msg/sec": "messages_per_s", "Group": "group",   # -multi 1: a row per group
           # IMB-NBC: the collective alone (t_pure), overlapped with computation (t_ovrl), the computation
           # alone (t_CPU), and how much of the communication the computation hid
           "t_pure[usec]": "t_pure_us", "t_ovrl[usec]": "t_ovrl_us", "t_CPU[usec]": "t_cpu_us",
           "overlap[%]": "overlap_percent"}


def detect(text: str) -> bool:
    # 64 KiB: a log may hold the job script's echo, module loads and shell prompts before IMB's banner
    return bool(BANNER.search(text[:65536]))


def parse(text: str) -> list[ImportedRun]:
    return invocations.text_runs(text, BANNER, _run,
                                 "no IMB banner (\"Intel(R) MPI Benchmarks YYYY, MPI-1 part\")")


def _run(text: str, first_line: int) -> ImportedRun:
    """One run of IMB: `text` from its banner (or the file's start) to the
    next banner; `first_line` is the file's line it starts on."""
    banner = BANNER.search(text)
    if not banner:   # the banner line itself was cut short
        raise Unreadable("no IMB banner (\"Intel(R) MPI Benchmarks YYYY, MPI-1 part\")")
    calling = re.search(r"^# Calling sequence was:\s*\n(?:#\s*\n)*#\s*(\S.*?)\s*$", text, re.M)
    run = ImportedRun("IMB", re.sub(r" [Uu]pdate ", "u", banner.group(1)), "text",
                      calling.group(1) if calling else None)
    date = re.search(r"^# Date\s*: (.+?)\s*$", text, re.M)
    if date:
        try:
            run.started = dt.datetime.strptime(date.group(1), "%a %b %d %H:%M:%S %Y").replace(tzinfo=dt.timezone.utc)
        except ValueError:
            run.notes.append(f"the date '{date.group(1)}' is not IMB's format: not taken")
    system = [re.search(rf"^# {k}\s*: (.*?)\s*$", text, re.M) for k in ("System", "Release", "Machine")]
    if all(system):
        run.facts["import.system"] = " ".join(m.group(1) for m in system)
    binary = _binary_megabytes(banner.group(1))
    if binary:
        run.notes.append(f"IMB {run.version} prints Mbytes/sec in 2^20 bytes/s: kept as bandwidth_mib_s, "
                         "bandwidth_mb_s converted to 10^6")
    sections = list(SECTION.finditer(text))
    line, counted = first_line, 0   # the file's line at offset `counted`, counted on as the sections go
    for i, s in enumerate(sections):
        line += text.count("\n", counted, s.end())
        counted = s.end()
        body = text[s.end(): sections[i + 1].start() if i + 1 < len(sections) else len(text)]
        groups = int(s.group(3)) if s.group(3) else None
        step = _section(s.group(1), int(s.group(2)) if s.group(2) else groups * int(s.group(4)), body, line, binary)
        if groups:   # the benchmark in that many groups at once: an imb step, never the mpi kernel's one pair
            step.params["groups"] = str(groups)
        if step.samples:
            run.steps.append(step)
        else:   # a table whose columns hold no figure read here: say so rather than store the file without it
            run.notes.append(f"IMB {s.group(1)}: no row read (no t[usec], t_avg[usec], t_pure[usec] or Mbytes/sec "
                             "column): not taken")
    if not run.steps:
        raise Unreadable("no benchmark table (\"# Benchmarking NAME\", \"# #processes = N\", rows)")
    return run


def _binary_megabytes(version: str) -> bool:
    """IMB before 2017 (3.x, 4.x): Mbytes/sec are 2^20 bytes/s. The 2018
    sources, whose legacy files were last changed in 2016, divide by 10^6."""
    first = re.match(r"\d+", version)
    return bool(first) and int(first.group()) < 2017


def _section(name: str, ranks: int, body: str, first_line: int, binary_megabytes: bool = False) -> ImportedStep:
    """`first_line`: the file's line the body starts on (the process count's);
    `binary_megabytes`: its Mbytes/sec are 2^20 bytes/s (IMB 3.x, 4.x)."""
    op = MPI_OPS.get(name)
    params = ({"op": op} | ({"sync": "none"} if op != "pingpong" else {})) if op else {"benchmark": name}
    # IMB-IO and IMB-EXT run each benchmark twice, "MODE: AGGREGATE" (one synchronisation per -iter
    # calls) and "MODE: NON-AGGREGATE" (one per call): two sections of one name whose times differ a
    # hundredfold, which one step held as one measurement
    mode = re.search(r"^#\s+MODE: ([\w-]+)", body.split("#bytes", 1)[0], re.M)
    if mode:
        params["mode"] = mode.group(1).lower()
    step = ImportedStep(f"IMB {name} np {ranks}" + (f" {params['mode']}" if mode else ""), "mpi" if op else "imb",
                        params, ranks)
    columns: list[str] = []
    for n, line in enumerate(body.split("\n")):
        s = line.strip()
        if s.startswith(("#bytes", "#repetitions", "Group ")):
            columns = s.split()
            continue
        if s.startswith("#") and columns:
            break   # the next section's rule, or the end
        fields = s.split()
        if not columns or len(fields) != len(columns):
            continue
        refuse_garbled(fields, first_line + n)
        try:
            row = {COLUMNS.get(c, c): float(v) for c, v in zip(columns, fields)}
        except ValueError:
            continue
        keys = [COLUMNS.get(c, c) for c in columns]
        t_key = next((k for k in ("t_usec", "t_avg_us", "t_pure_us") if k in row), None)
        t = row[t_key] if t_key else None
        if t is None and "bandwidth_mb_s" not in row:
            continue
        if "message_bytes" in row and not (math.isfinite(row["message_bytes"]) and row["message_bytes"] >= 0
                                           and row["message_bytes"] == int(row["message_bytes"])):
            # float() read "inf" and "nan", and int() of them ended the import (OverflowError, ValueError)
            raise Unreadable(f"line {first_line + n}: {fields[columns.index('#bytes')]!r} is no message size in bytes")
        size = int(row["message_bytes"]) if "message_bytes" in row else 0 if op == "barrier" else None
        if op in ("allreduce", "reduce") and size == 0:
            continue   # the kernel's reductions start at one float
        row.pop("message_bytes", None)
        if binary_megabytes and "bandwidth_mb_s" in row:
            row["bandwidth_mib_s"] = row.pop("bandwidth_mb_s")
            row["bandwidth_mb_s"] = row["bandwidth_mib_s"] * 2**20 / 1e6
        where = {"sweep": ("size_bytes", size) if size is not None else None, "qualifiers": {"algorithm": "library"},
                 "line": first_line + n, "iterations": int(row.pop("repetitions")) if "repetitions" in row else None}
        if t is None:   # Uniband, Biband (2018 on): no time, the rate of a window of messages in flight
            if not size:
                continue   # 0 bytes: a rate of 0 MiB/s by definition, no measurement of the link
            step.samples.append(measurement(name.lower(), "n/a", row["bandwidth_mb_s"] * 1e6 / 2**20, "MiB/s",
                                            **where, **row))
            continue
        step.samples.append(measurement(op or name.lower(), "n/a", t, "us", seconds=t / 1e6,
                                        rate_step=printed_step(fields[keys.index(t_key)]), **where, **row))
    return step
