"""Per-step summaries of stored samples: one row per (phase, mode, unit),
in the order first seen, described by the statistics module."""
from __future__ import annotations

import statistics
from dataclasses import dataclass, field

from clusterbench import stats, warning_fold


def size_text(n: int) -> str:
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift and n % (1 << shift) == 0:
            return f"{n >> shift} {unit}"
    return f"{n} B"


# The cache/durability states a record's `mode` may name (docs/records.md).
CACHE_STATES = ("fsync", "fsync-each", "direct", "buffered", "buffered+sync", "cached", "cold", "warm")


def condition_names(mode: str | None, record: dict) -> tuple[str, ...]:
    """What the mode column holds for this measurement, named: 'cache' for a
    cache/durability state, then the fields the record declares as its
    qualifiers and sweep key (docs/records.md: algorithm, busy_cpus, ...); an
    older record's other mode text (an algorithm, '2 busy') is only 'mode'."""
    names = ["cache"] if mode in CACHE_STATES else []
    names += [q for q in record.get("qualifiers") or [] if isinstance(q, str)]
    sweep = record.get("sweep_key")
    if isinstance(sweep, str) and sweep != "size_bytes":  # a byte size shows in the phase label
        names.append(sweep)
    if not names and mode not in (None, "", "n/a", "none"):
        names.append("mode")
    return tuple(names)


@dataclass
class Row:
    phase: str
    mode: str | None
    unit: str | None
    size_bytes: int | None = None  # message/transfer size when a kernel sweeps it in one launch
    values: list[float] = field(default_factory=list)
    decimal: list[float] = field(default_factory=list)   # MB/s beside MiB/s
    decimal_unit: str | None = None
    sample_warnings: list[list[str]] = field(default_factory=list)  # per sample, as stored
    condition: tuple[str, ...] = ()  # what the mode column holds: condition_names()

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

    @property
    def warnings(self) -> list[str]:
        """The samples' warnings, each once: repeated ones folded with their count and range."""
        return warning_fold.fold(self.sample_warnings, self.n)

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
        row = out.setdefault(key, Row(s.phase, s.mode, s.unit, size, condition=condition_names(s.mode, s.record or {})))
        if s.value is not None:
            row.values.append(float(s.value))
        rec = s.record or {}
        if isinstance(rec.get("rate_decimal"), (int, float)):
            row.decimal.append(float(rec["rate_decimal"]))
            row.decimal_unit = rec.get("rate_decimal_unit")
        row.sample_warnings.append(list(s.warnings or []))
    return list(out.values())
