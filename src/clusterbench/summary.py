"""Per-step summaries of stored samples: one row per (phase, mode) with
median, min, max and n. (Confidence intervals and outlier rules live in
the statistics module; this is the plain description `show` prints.)"""
from __future__ import annotations

import statistics
from dataclasses import dataclass, field


@dataclass
class Row:
    phase: str
    mode: str | None
    unit: str | None
    values: list[float] = field(default_factory=list)
    decimal: list[float] = field(default_factory=list)   # MB/s beside MiB/s
    decimal_unit: str | None = None
    warnings: list[str] = field(default_factory=list)

    @property
    def n(self) -> int:
        return len(self.values)

    @property
    def median(self) -> float | None:
        return statistics.median(self.values) if self.values else None

    @property
    def minimum(self) -> float | None:
        return min(self.values) if self.values else None

    @property
    def maximum(self) -> float | None:
        return max(self.values) if self.values else None

    @property
    def median_decimal(self) -> float | None:
        return statistics.median(self.decimal) if self.decimal else None


def rows(samples) -> list[Row]:
    """Groups sample rows (with .phase, .mode, .unit, .value, .record, .warnings) in first-seen order."""
    out: dict[tuple, Row] = {}
    for s in samples:
        key = (s.phase, s.mode, s.unit)
        row = out.setdefault(key, Row(s.phase, s.mode, s.unit))
        if s.value is not None:
            row.values.append(float(s.value))
        rec = s.record or {}
        if isinstance(rec.get("rate_decimal"), (int, float)):
            row.decimal.append(float(rec["rate_decimal"]))
            row.decimal_unit = rec.get("rate_decimal_unit")
        for w in s.warnings or []:
            if w not in row.warnings:
                row.warnings.append(w)
    return list(out.values())
