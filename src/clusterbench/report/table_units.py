"""The unit a step's table shows a figure in: the records' unit, or the
next larger one of the same kind where the figures would need six integer
digits or more. A GPU's memory at 3,732,681 MiB/s is read as 3,645 GiB/s;
a figure of the same unit in the same table takes the same unit, so a
column never mixes them. Binary units step to binary (MiB/s to GiB/s, as
the kernels declare their rates: docs/records.md), decimal to decimal, and
the decimal figure beside a binary one (MB/s beside MiB/s) steps with it.
A comparison's row (report/compare_*.py) takes one unit for
every configuration's figure in it, by the same rule.
Only what the terminal, Markdown and HTML print changes: JSON, CSV and the
store keep the records' unit and value."""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

# a unit and the next larger one of its kind, with how many of the first make one of it
LARGER = {"KiB/s": ("MiB/s", 1024), "MiB/s": ("GiB/s", 1024), "GiB/s": ("TiB/s", 1024),
          "kB/s": ("MB/s", 1000), "MB/s": ("GB/s", 1000), "GB/s": ("TB/s", 1000)}
# the largest figure a column shows before its unit steps up: five integer digits (99,999)
MOST_SHOWN = 100_000


@dataclass(frozen=True)
class ShownUnit:
    unit: str | None        # as the records spell it; unit_symbols.unit_shown makes it "µs"
    divisor: float = 1.0    # stored value / divisor = the value shown
    steps: int = 0          # how many units larger than the records'

    def value(self, v: float | None) -> float | None:
        return None if v is None else v / self.divisor

    def summary(self, s):
        """A stats.Summary in this unit (its CV and n unchanged)."""
        if self.divisor == 1.0 or s is None:
            return s
        fields = ("median", "mean", "minimum", "maximum", "std", "ci_low", "ci_high", "resolution")
        return dataclasses.replace(s, **{f: self.value(getattr(s, f)) for f in fields})

    def beside(self, value: float | None, unit: str | None) -> tuple[float | None, str | None]:
        """A decimal figure beside this one (MB/s beside MiB/s), stepped as far as this one."""
        for _ in range(self.steps):
            if unit not in LARGER or value is None:
                break
            unit, per = LARGER[unit]
            value = value / per
        return value, unit


def larger_for(unit: str | None, largest: float) -> ShownUnit:
    """The unit a column whose largest figure is `largest` (in `unit`) is shown in."""
    shown, divisor, steps = unit, 1.0, 0
    while shown in LARGER and abs(largest) / divisor >= MOST_SHOWN:
        shown, per = LARGER[shown]
        divisor *= per
        steps += 1
    return ShownUnit(shown, divisor, steps)


def _largest(s) -> float:
    """The largest of a summary's median, interval end and maximum: what its figures must fit."""
    return max([abs(v) for v in (s.median, s.maximum, s.ci_high) if v is not None] if s is not None else [],
               default=0.0)


def of_rows(rows) -> dict[str | None, ShownUnit]:
    """Per unit of a step's summary rows (analysis/step_summary.Row), the unit its figures are shown in,
    chosen by the largest median, interval end or maximum of that unit's rows."""
    largest: dict[str | None, float] = {}
    for r in rows:
        largest[r.unit] = max(largest.get(r.unit, 0.0), _largest(r.stats))
    return {unit: larger_for(unit, v) for unit, v in largest.items()}


def of_summaries(unit: str | None, summaries) -> ShownUnit:
    """The one unit a group of figures of `unit` is shown in (stats.Summary each): a comparison's row,
    one figure per configuration, so they are read side by side; a sweep's table; a plot's axis."""
    return larger_for(unit, max((_largest(s) for s in summaries), default=0.0))
