"""The straggler rule of `run cluster`'s per-node steps (docs/cluster.md):
a node still running long after the others ended is stopped (SIGSTOPped,
frozen in the kernel or by its hypervisor) and is ended, so the run goes on
without a --step-timeout, which has no default (a bound right for a
laptop-sized suite would end a long one on big nodes).

The bound follows the step: max(floor, factor x the median duration of the
other nodes' launches that ended it well). A factor of 10 lets a node 2-3x
slower than the others (a finding the analysis flags: a slow disk, a capped
CPU) finish with a wide margin, and ends one that does not move at all
within 10 of the others' durations; the floor of 60 s keeps a short step (a
2 s cpufreq, a launch whose start-up is most of it) from ending a node
whose launch was merely slow to start (an ssh or a batch system's step
taking seconds).

All at once, the others are the node's launch group, still ending beside
it. One at a time (--one-at-a-time), each launch is alone: the others are
the launches of the same step that ended well on other nodes earlier in
the run, each one repetition as the node's own. The step's first launch
has none: it is bounded alike by the time the suite declares for it
(declared_time.py: Himeno's --seconds in time mode, cpufreq's --seconds per
count of busy CPUs), and not at all where the suite declares none."""
from __future__ import annotations

import statistics
from dataclasses import dataclass

from clusterbench.output.figure_digits import as_given, two_digits

FLOOR_S = 60.0
FACTOR = 10.0


@dataclass(frozen=True)
class StragglerRule:
    floor_s: float = FLOOR_S
    factor: float = FACTOR

    def bound_s(self, ended_well_s: list[float], group_size: int) -> float | None:
        """All at once: seconds from the group's start after which a node
        still running is stalled; None until at least half the group's
        launches ended well: the first to end are the fastest, and a median
        of the first few would end a node merely slower than they."""
        if not ended_well_s or 2 * len(ended_well_s) < group_size:
            return None
        return self._bound_s(ended_well_s)

    def bound_alone_s(self, earlier_well_s: list[float]) -> float | None:
        """One at a time: seconds from a node's launch's start after which it
        is stalled, from the durations of the step's launches that ended
        well on other nodes before it started; None for the first node of
        the step (nothing to go by). One earlier launch is enough: the
        "half" of a group guards against the bias of the first to end, and
        here every earlier launch ended before this one began, so none was
        counted for being fast; a median of one, x 10 and at least 60 s,
        still lets a node 2-3x slower than that one finish."""
        return self._bound_s(earlier_well_s) if earlier_well_s else None

    def bound_first_s(self, declared_s: float | None) -> float | None:
        """One at a time, the step's first launch: the greater of the floor
        and the factor x the time the suite declares for it (declared_time.py);
        None where it declares none. A factor of 10 over a declared time
        leaves the start-up, a slow node and a time mode's calibration room,
        as it leaves a node 2-3x slower than the others."""
        return self._bound_s([declared_s]) if declared_s else None

    def _bound_s(self, durations_s: list[float]) -> float:
        return max(self.floor_s, self.factor * statistics.median(durations_s))

    def message_first(self, running_s: float, declared_s: float, declared_by: str) -> str:
        """Why the step's first launch, one at a time, was ended (bound_first_s)."""
        return (f"stalled: still running {running_s:.0f} s after its start, the step's first launch one at a time "
                f"(no other node's to go by), which should last {two_digits(declared_s)} s ({declared_by}) (bound: the "
                f"greater of --stall-floor {as_given(self.floor_s)} s and --stall-factor {as_given(self.factor)} x that); the "
                "launcher and every rank were stopped")

    def message(self, running_s: float, ended_well_s: list[float], alone: bool = False) -> str:
        """Why a launch was ended; alone: the durations are earlier launches
        of the step on other nodes, one at a time (bound_alone_s)."""
        median_s = statistics.median(ended_well_s)
        others = (f"the other nodes' {len(ended_well_s)} earlier launch{'es' if len(ended_well_s) > 1 else ''} of "
                  f"this step, one at a time, ended" if alone else "the other nodes ended")
        return (f"stalled: still running {running_s:.0f} s after its start, when {others} in a median "
                f"{two_digits(median_s)} s (bound: the greater of --stall-floor {as_given(self.floor_s)} s and --stall-factor "
                f"{as_given(self.factor)} x that median); the launcher and every rank were stopped")
