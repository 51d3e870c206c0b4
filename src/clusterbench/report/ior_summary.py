"""IOR's own text summary of a pario run (Max Write/Max Read and the
per-operation Max/Min/Mean/StdDev table), computed over the repetitions as
IOR computes it, for `clusterbench ior` users who compare it with IOR's."""
from __future__ import annotations

import math

from clusterbench.sample import Sample

MIB, MB = 1048576.0, 1e6


def ior_figures(samples: list[Sample]) -> dict[str, list[Sample]]:
    """Per IOR operation, the samples IOR would have reported: the write
    figure includes fsync when -e was given (mode fsync), as IOR's does."""
    ops: dict[str, list[Sample]] = {"write": [], "read": []}
    writes = [s for s in samples if s.phase == "write"]
    if any(s.mode == "fsync" for s in writes):
        writes = [s for s in writes if s.mode == "fsync"]
    ops["write"] = writes
    ops["read"] = [s for s in samples if s.phase == "read"]
    return {k: v for k, v in ops.items() if v}


def _stats(values: list[float]) -> tuple[float, float, float, float]:
    """Max, min, mean and IOR's standard deviation (population: divided by n)."""
    mean = sum(values) / len(values)
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / len(values))
    return max(values), min(values), mean, sd


def summary_lines(figures: dict[str, list[Sample]], params: dict, ranks: int, ppn: int | None) -> list[str]:
    out = []
    for op, recs in figures.items():
        bw = [r.bytes / r.seconds / MIB for r in recs]
        out.append(f"Max {op.capitalize()}: {max(bw):.2f} MiB/sec ({max(bw) * MIB / MB:.2f} MB/sec)")
    out.append("")
    out.append("Summary of all tests:")
    out.append(f"{'Operation':<10} {'Max(MiB)':>10} {'Min(MiB)':>10} {'Mean(MiB)':>10} {'StdDev':>10} "
               f"{'Max(OPs)':>10} {'Min(OPs)':>10} {'Mean(OPs)':>10} {'StdDev':>10} {'Mean(s)':>10} "
               f"{'#Tasks':>6} {'tPN':>4} {'reps':>4} {'fPP':>4} {'aggs(MiB)':>10}")
    for op, recs in figures.items():
        bw = _stats([r.bytes / r.seconds / MIB for r in recs])
        iops = _stats([r.ops / r.seconds for r in recs])
        mean_s = sum(r.seconds for r in recs) / len(recs)
        fpp = 1 if params.get("strategy") == "split" else 0
        out.append(f"{op:<10} {bw[0]:>10.2f} {bw[1]:>10.2f} {bw[2]:>10.2f} {bw[3]:>10.2f} "
                   f"{iops[0]:>10.2f} {iops[1]:>10.2f} {iops[2]:>10.2f} {iops[3]:>10.2f} {mean_s:>10.5f} "
                   f"{ranks:>6} {ppn or ranks:>4} {len(recs):>4} {fpp:>4} {recs[0].bytes / MIB:>10.2f}")
    return out
