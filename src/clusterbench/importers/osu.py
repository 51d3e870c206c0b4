"""OSU micro-benchmarks text output (5.x-7.x): the title line ("# OSU MPI
Latency Test v5.3"), optional datatype/pairs lines, the column heading, and
one row per message size.

A test the mpi kernel also runs becomes an mpi step (op pingpong, bw, bibw,
allreduce, reduce, alltoall, allgather, bcast, barrier) whose samples are
the kernel's: phase the op, one per size (sweep size_bytes), qualifier
algorithm "library", the average latency in us, or for bandwidth MiB/s
(OSU's MB/s are 10^6 bytes/s: converted, and kept as rate_decimal). Min and
max latency and iterations (-f) go in the record. osu_mbw_mr is the mpi
kernel's bw over its pairs, osu_multi_lat its pingpong over pairs. Every
other test (gather, scatter, the non-blocking ones, ...) is an `osu` step
named by its title. OSU prints no rank count for collectives: give --np.
"""
from __future__ import annotations

import re

from clusterbench.importers import ImportedRun, ImportedStep, Unreadable, measurement

TITLE = re.compile(r"^# OSU (?:MPI[-\w]* )?(.+?) Test v(\S+)\s*$", re.M)
MPI_OPS = {"Latency": "pingpong", "Bandwidth": "bw", "Bi-Directional Bandwidth": "bibw",
           "Multiple Bandwidth / Message Rate": "bw", "Multi Latency": "pingpong",
           "Allreduce Latency": "allreduce", "Reduce Latency": "reduce", "All-to-All Personalized Exchange Latency":
           "alltoall", "Alltoall Latency": "alltoall", "Allgather Latency": "allgather", "Broadcast Latency": "bcast",
           "Bcast Latency": "bcast", "Barrier Latency": "barrier"}
POINT_TO_POINT = {"Latency", "Bandwidth", "Bi-Directional Bandwidth", "Multiple Bandwidth / Message Rate", "Multi Latency"}
MB = 1e6
MIB = 1 << 20


def detect(text: str) -> bool:
    return bool(TITLE.search(text[:4096]))


def _columns(heading: str) -> list[str]:
    """"# Size       Avg Latency(us)   Min Latency(us) ..." -> names."""
    body = heading.lstrip("#").strip()
    return [c.strip() for c in re.split(r"\s{2,}", body) if c.strip()]


def parse(text: str) -> list[ImportedRun]:
    titles = list(TITLE.finditer(text))
    if not titles:
        raise Unreadable("no OSU title line (\"# OSU MPI ... Test vX.Y\")")
    run = ImportedRun("OSU", titles[0].group(2), "text", None)
    for i, t in enumerate(titles):
        body = text[t.end(): titles[i + 1].start() if i + 1 < len(titles) else len(text)]
        step = _test(t.group(1).strip(), body, run)
        if step.samples:
            run.steps.append(step)
    if not run.steps:
        raise Unreadable("no result row under the column heading")
    return [run]


def _test(title: str, body: str, run: ImportedRun) -> ImportedStep:
    op = MPI_OPS.get(title)
    pairs = re.search(r"\[ pairs: (\d+) \]", body)
    ranks = 2 * int(pairs.group(1)) if pairs else 2 if title in POINT_TO_POINT else 0
    if ranks == 0 and not any("rank count" in n for n in run.notes):
        run.notes.append("OSU prints no rank count for collectives: stored as 0 ranks (give --np)")
    datatype = re.search(r"^# Datatype: (\w+)", body, re.M)
    params = {"op": op} if op else {"test": title}
    if title == "Multiple Bandwidth / Message Rate":
        window = re.search(r"\[ window size: (\d+) \]", body)
        if window:
            params["window"] = window.group(1)
    step = ImportedStep(f"OSU {title}", "mpi" if op else "osu", params, ranks)
    columns: list[str] = []
    for line in body.splitlines():
        s = line.strip()
        if s.startswith("#"):
            if re.search(r"(Latency|Bandwidth|MB/s)", s) and not s.startswith("# OSU"):
                columns = _columns(s)
            continue
        fields = s.split()
        if not columns or not fields or len(fields) != len(columns):
            continue
        row = dict(zip(columns, fields))
        try:
            step.samples.append(_sample(op or _slug(title), row, datatype.group(1) if datatype else None))
        except ValueError:
            continue   # a line of other output in the table
    return step


def _slug(title: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")


def _sample(phase: str, row: dict, datatype: str | None):
    # the mpi kernel's barrier is a sweep point of size 0
    size = int(row["Size"]) if "Size" in row else 0 if phase == "barrier" else None
    sweep = ("size_bytes", size) if size is not None else None
    extra = {"iterations": int(row["Iterations"]) if "Iterations" in row else None, "element_type": datatype}
    bw = row.get("Bandwidth (MB/s)") or row.get("MB/s") or row.get("Bandwidth(MB/s)")
    if bw is not None:
        mb = float(bw)
        rate = row.get("Messages/s")
        return measurement(phase, "n/a", mb * MB / MIB, "MiB/s", sweep=sweep, qualifiers={"algorithm": "library"},
                           rate_decimal=mb, rate_decimal_unit="MB/s",
                           messages_per_s=float(rate) if rate is not None else None, **extra)
    avg = row.get("Latency (us)") or row.get("Avg Latency(us)") or row.get("Latency(us)")
    if avg is None:
        raise ValueError("no figure")
    lo, hi = row.get("Min Latency(us)"), row.get("Max Latency(us)")
    return measurement(phase, "n/a", float(avg), "us", sweep=sweep, qualifiers={"algorithm": "library"},
                       t_avg_us=float(avg), t_min_us=float(lo) if lo else None, t_max_us=float(hi) if hi else None,
                       seconds=float(avg) / 1e6, **extra)
