"""The IO500 score of an io500-like run, computed the IO500 way (pure).

IO500 scores a system by the geometric mean of its bandwidth phases in
GiB/s (ior-easy and ior-hard, write and read) and the geometric mean of its
metadata phases in thousands of operations per second (mdtest-easy
write/stat/delete, mdtest-hard write/read/stat/delete, find), then the
geometric mean of the two. The io500-like suite has no find phase, so the
metadata mean is over the seven mdtest phases. Each phase's figure is the
median over the step's repetitions. The result is not an official IO500
result, and says so.
"""
from __future__ import annotations

import math
import statistics

from clusterbench.results.sample import Sample

# IO500 phase -> (step name, phase, cache/durability mode or None for any)
BANDWIDTH = {"ior-easy-write": ("ior-easy", "write", "fsync"), "ior-easy-read": ("ior-easy", "read", None),
             "ior-hard-write": ("ior-hard", "write", "fsync"), "ior-hard-read": ("ior-hard", "read", None)}
METADATA = {"mdtest-easy-write": ("mdtest-easy", "file-create"), "mdtest-easy-stat": ("mdtest-easy", "file-stat"),
            "mdtest-easy-delete": ("mdtest-easy", "file-remove"), "mdtest-hard-write": ("mdtest-hard", "file-create"),
            "mdtest-hard-read": ("mdtest-hard", "file-read"), "mdtest-hard-stat": ("mdtest-hard", "file-stat"),
            "mdtest-hard-delete": ("mdtest-hard", "file-remove")}
GIB = 1024.0 ** 3


def _median(steps: dict[str, list[Sample]], step: str, phase: str, mode: str | None, value) -> float | None:
    chosen = [s for s in steps.get(step, []) if s.phase == phase and (mode is None or s.mode == mode)]
    return statistics.median(value(s) for s in chosen) if chosen else None


def geomean(values: list[float]) -> float:
    return math.exp(sum(math.log(v) for v in values) / len(values))


def score_lines(run: dict) -> list[str]:
    """Lines to print after an io500-like run; empty when a phase is missing."""
    steps = {step["name"]: step["samples"] for step in run["steps"]}  # load_run's Sample objects
    bw = {k: _median(steps, *v, value=lambda s: s.bytes / s.seconds / GIB) for k, v in BANDWIDTH.items()}
    md = {k: _median(steps, *v, None, value=lambda s: s.ops / s.seconds / 1000.0) for k, v in METADATA.items()}
    if any(v is None or v <= 0 for v in [*bw.values(), *md.values()]):
        return ["io500-like: a phase is missing or failed; no score"]
    out = ["", "io500-like score (NOT an official IO500 result: laptop sizes, no stonewall, no find phase)"]
    out += [f"[RESULT] {k:<20s} {v:12.6f} GiB/s" for k, v in bw.items()]
    out += [f"[RESULT] {k:<20s} {v:12.6f} kIOPS" for k, v in md.items()]
    bw_score, md_score = geomean(list(bw.values())), geomean(list(md.values()))
    out.append(f"[SCORE ] Bandwidth {bw_score:.6f} GiB/s : IOPS {md_score:.6f} kiops : TOTAL "
               f"{math.sqrt(bw_score * md_score):.6f} (not an official IO500 result)")
    return out
