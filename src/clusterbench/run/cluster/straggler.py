"""The straggler rule of `run cluster`'s per-node steps on every node at once
(docs/cluster.md): a node still running long after the others ended is
stopped (SIGSTOPped, frozen in the kernel or by its hypervisor) and is
ended, so the run goes on without a --step-timeout, which has no default
(a bound right for a laptop-sized suite would end a long one on big nodes).

The bound follows the step: max(floor, factor x the median duration of the
nodes that ended it well). A factor of 10 lets a node 2-3x slower than the
others (a finding the analysis flags: a slow disk, a capped CPU) finish with
a wide margin, and ends one that does not move at all within 10 of the
others' durations; the floor of 60 s keeps a short step (a 2 s cpufreq, a
launch whose start-up is most of it) from ending a node whose launch was
merely slow to start (an ssh or a batch system's step taking seconds)."""
from __future__ import annotations

import statistics
from dataclasses import dataclass

FLOOR_S = 60.0
FACTOR = 10.0


@dataclass(frozen=True)
class StragglerRule:
    floor_s: float = FLOOR_S
    factor: float = FACTOR

    def bound_s(self, ended_well_s: list[float], group_size: int) -> float | None:
        """Seconds from the group's start after which a node still running
        is stalled; None until at least half the group's launches ended
        well (a median of fewer says little, and a group of one, one node at
        a time, has no others to go by)."""
        if not ended_well_s or 2 * len(ended_well_s) < group_size:
            return None
        return max(self.floor_s, self.factor * statistics.median(ended_well_s))

    def message(self, running_s: float, ended_well_s: list[float]) -> str:
        median_s = statistics.median(ended_well_s)
        return (f"stalled: still running {running_s:.0f} s after its start, when the other nodes ended in a median "
                f"{median_s:.2g} s (bound: the greater of --stall-floor {self.floor_s:g} s and --stall-factor "
                f"{self.factor:g} x that median); the launcher and every rank were stopped")
