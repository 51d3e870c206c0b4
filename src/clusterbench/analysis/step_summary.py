"""Per-step summaries of stored samples: one row per sample key (phase,
condition, unit, size), in the order first seen, described by the
statistics module."""
from __future__ import annotations

import statistics
from dataclasses import dataclass, field

from clusterbench.analysis import stats
from clusterbench.results import warning_fold
from clusterbench.results.sample import Sample, SampleKey, condition_shown


# Point-to-point phases whose latency IMB prints with its MB/s beside it.
BANDWIDTH_BESIDE = ("pingpong", "bw", "bibw")


@dataclass
class Row:
    phase: str
    mode: str | None        # the sample key's condition: cache state and qualifiers
    unit: str | None
    size_bytes: int | None = None  # message/transfer size when a kernel sweeps it in one launch
    values: list[float] = field(default_factory=list)
    decimal: list[float] = field(default_factory=list)   # MB/s beside MiB/s
    decimal_unit: str | None = None
    written: list[float] = field(default_factory=list)   # per sample: the step its tool printed it to (imports)
    sample_warnings: list[list[str]] = field(default_factory=list)  # per sample, as stored
    sample_repetitions: list[int | None] = field(default_factory=list)  # per sample: its repetition
    condition: tuple[str, ...] = ()  # what the mode column holds: Sample.condition_names
    rank_us: list[tuple[float, float, float]] = field(default_factory=list)  # mpi: per sample t_min/avg/max
    bandwidth_mb_s: list[float] = field(default_factory=list)  # mpi pingpong/bw: per sample MB/s
    limit: str | None = None         # the binding ceiling at the median (limits/ceilings.py), when one is known
    limit_exceeded: bool = False     # the median is above that ceiling: not through that component alone
    phase_words: str | None = None   # the phase as printed (SampleKey.words)

    @classmethod
    def of(cls, sample: Sample) -> Row:
        key = sample.key()
        return cls(key.phase, key.condition, key.unit, key.size_bytes, condition=sample.condition_names,
                   phase_words=key.words)

    @property
    def key(self) -> SampleKey:
        return SampleKey(self.phase, self.mode, self.unit, self.size_bytes, self.phase_words)

    @property
    def stats(self) -> stats.Summary:
        return stats.summarize(self.values, written=min(self.written, default=None))

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
        return self.key.label

    @property
    def warnings(self) -> list[str]:
        """The samples' warnings, each once: repeated ones folded with their count and range,
        counted in repetitions: a kernel with several samples of one row in a repetition
        (linkmatrix's links) said '4 of 4 repetitions' of 2."""
        reps = self.sample_repetitions
        if len(reps) != len(self.sample_warnings) or None in reps or len(set(reps)) == len(reps):
            return warning_fold.fold(self.sample_warnings, self.n)
        per_repetition: dict[int, list[str]] = {}
        for rep, warnings in zip(reps, self.sample_warnings):
            per_repetition.setdefault(rep, []).extend(warnings)
        return warning_fold.fold(list(per_repetition.values()), len(per_repetition))

    def all_warnings(self) -> list[str]:
        """The samples' warnings, plus one naming the outliers (flagged, never dropped)."""
        out = list(self.warnings)
        if self.outlier_values:
            from clusterbench.output.counted_text import agreeing
            from clusterbench.output.figure_digits import number
            from clusterbench.output.unit_symbols import unit_shown

            vals = ", ".join(number(v) for v in self.outlier_values)
            # in the unit the table beside it shows: "717 us" stood under a column of µs
            out.append(f"{agreeing(len(self.outlier_values), 'outlier')} by {stats.outlier_rule(self.stats.n)} ({f'{self.label} {condition_shown(self.mode)}'.rstrip()}): "
                       f"{f'{vals} {unit_shown(self.unit)}'.rstrip()}; kept in median, min and max")
        return out

    @property
    def rank_medians(self) -> tuple[float, float, float] | None:
        """Medians over repetitions of t_min, t_avg and t_max over ranks (mpi)."""
        if not self.rank_us:
            return None
        return tuple(statistics.median(t[i] for t in self.rank_us) for i in range(3))

    @property
    def median_bandwidth_mb_s(self) -> float | None:
        """The rate beside the row's median. Beside a median latency (pingpong)
        it is the rate at that latency, size / median: with an even count the
        median of the rates is another figure (2.4 % off for two samples)."""
        if not self.bandwidth_mb_s:
            return None
        if stats.direction(self.unit) < 0 and all(b > 0 for b in self.bandwidth_mb_s):
            return 1 / statistics.median(1 / b for b in self.bandwidth_mb_s)
        return statistics.median(self.bandwidth_mb_s)

    @property
    def median_decimal(self) -> float | None:
        return statistics.median(self.decimal) if self.decimal else None


def rows(samples: list[Sample], ceiling_context=None) -> list[Row]:
    """Groups samples by Sample.key(), in first-seen order; with a
    ceilings.Context, each row names the limit that binds at its median."""
    out: dict[SampleKey, Row] = {}
    first: dict[SampleKey, Sample] = {}
    for s in samples:
        row = out.get(s.key())
        if row is None:
            row = out[s.key()] = Row.of(s)
            first[s.key()] = s
        if s.value is not None:
            row.values.append(s.value)
        if s.decimal is not None:
            row.decimal.append(s.decimal)
            row.decimal_unit = s.decimal_unit
        if (step := s.printed_step()) is not None:   # OSU's MB/s converted, or its latency's printed places
            row.written.append(step)
        row.sample_warnings.append(list(s.warnings))
        row.sample_repetitions.append(s.repetition)
        if s.rank_us is not None:
            row.rank_us.append(s.rank_us)
        if s.bandwidth_mb_s is not None and s.phase in BANDWIDTH_BESIDE:
            row.bandwidth_mb_s.append(s.bandwidth_mb_s)
    if ceiling_context is not None:
        from clusterbench.limits import ceilings

        for key, row in out.items():
            c = ceilings.of_median(first[key], row.median, ceiling_context)
            if c is not None:
                row.limit, row.limit_exceeded = c.text, c.exceeded
    return list(out.values())
