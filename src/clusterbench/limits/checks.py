"""The warnings stored with samples: each one is an exceeded ceiling's own
sentence (limits/ceilings.py), so a rule lives in one place and the limit
column and the warning can never disagree; the GPU and clock rules, whose
figures have no ceiling in the I/O sense, add theirs."""
from __future__ import annotations

from typing import Iterable

from clusterbench.limits import ceilings, clock, gpu_limits as gpu
from clusterbench.results.sample import Sample


def sample_warnings(sample: Sample, env: dict) -> list[str]:
    """Warnings for one measurement (the kernel's own first), judged against its host's environment."""
    found = ceilings.ceilings(sample, ceilings.Context(env))
    return [*sample.warnings, *(c.warning for c in found if c.exceeded and c.warning),
            *clock.clock_warnings(sample, env), *gpu.gpu_warnings(sample, env)]


def cross_sample_warnings(samples: Iterable[Sample]) -> dict[int, list[str]]:
    """Checks between samples of one run (a cold read faster than the direct
    read of the same directory, a pageable copy faster than a pinned one).
    Returns {sample id: new warnings}."""
    samples = list(samples)
    ctx = ceilings.Context({}, others=samples)   # only the figures of the run: the host checks ran at store time
    out: dict[int, list[str]] = {}
    for s in samples:
        c = ceilings.device(s, ctx)
        if c and c.exceeded and c.warning and s.id is not None:
            out[s.id] = [c.warning]
    for sid, extra in gpu.pageable_above_pinned(samples).items():
        out.setdefault(sid, []).extend(extra)
    return out
