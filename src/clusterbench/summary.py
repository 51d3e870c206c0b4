"""Per-step summaries of stored samples: one row per (phase, mode, unit),
in the order first seen, described by the statistics module."""
from __future__ import annotations

import statistics
from dataclasses import dataclass, field

from clusterbench import stats


def size_text(n: int) -> str:
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift and n % (1 << shift) == 0:
            return f"{n >> shift} {unit}"
    return f"{n} B"


@dataclass
class Row:
    phase: str
    mode: str | None
    unit: str | None
    size_bytes: int | None = None  # message/transfer size when a kernel sweeps it in one launch
    values: list[float] = field(default_factory=list)
    decimal: list[float] = field(default_factory=list)   # MB/s beside MiB/s
    decimal_unit: str | None = None
    warnings: list[str] = field(default_factory=list)

    @property
    def stats(self) -> stats.Summary:
        return stats.summarize(self.values)

    @property
    def n(self) -> int:
        return len(self.values)

    @property
    def median(self) -> float | None:
        return self.stats.median

    @property
    def minimum(self) -> float | None:
        return self.stats.minimum

    @property
    def maximum(self) -> float | None:
        return self.stats.maximum

    @property
    def outlier_values(self) -> list[float]:
        return [self.values[i] for i in self.stats.outliers]

    @property
    def label(self) -> str:
        """The phase as printed: with its size when the kernel swept sizes."""
        return self.phase if self.size_bytes is None else f"{self.phase} {size_text(self.size_bytes)}"

    def all_warnings(self) -> list[str]:
        """The samples' warnings, plus one naming the outliers (flagged, never dropped)."""
        out = list(self.warnings)
        if self.outlier_values:
            vals = ", ".join(f"{v:,.0f}" if abs(v) >= 100 else f"{v:.4g}" for v in self.outlier_values)
            out.append(f"outlier(s) by modified Z-score > {stats.OUTLIER_Z} ({self.label} {self.mode or ''}): "
                       f"{vals} {self.unit or ''}; kept in median, min and max")
        return out

    @property
    def median_decimal(self) -> float | None:
        return statistics.median(self.decimal) if self.decimal else None


def rows(samples) -> list[Row]:
    """Groups sample rows (with .phase, .mode, .unit, .value, .record, .warnings) in first-seen order."""
    out: dict[tuple, Row] = {}
    for s in samples:
        size = (s.record or {}).get("size_bytes")
        key = (s.phase, s.mode, s.unit, size)
        row = out.setdefault(key, Row(s.phase, s.mode, s.unit, size))
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
