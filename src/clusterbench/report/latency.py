"""Latency percentiles a step's records carry beside their rate (randio's
lat_us_p50 .. p99_99 and max, tcp rr's latency_us_p50 .. p99_9), as the
median over repetitions: the views show them under the step's table, not
only the JSON export."""
from __future__ import annotations

import re
import statistics
from dataclasses import dataclass
from clusterbench.output.counted_text import counted
from clusterbench.output.unit_symbols import unit_shown
from clusterbench.results.sample import condition_shown

# lat_us_p99_9 -> p99.9; the prefix names the unit (microseconds)
FIELD = re.compile(r"(?:lat|latency)_us_(p\d+(?:_\d+)?|max)")


@dataclass
class Percentiles:
    label: str                          # the row's phase and mode
    repetitions: int
    values_us: list[tuple[str, float]]  # ("p50", 281.6), ("p99.9", ...), in the record's order


def of_step(step: dict) -> list[Percentiles]:
    """One entry per summary row whose samples carry latency percentiles."""
    out = []
    for row in step["summary"]:
        records = [s.record for s in step.get("samples", ()) if s.key() == row.key]
        names = list(dict.fromkeys(m.group(1) for rec in records for k in rec if (m := FIELD.fullmatch(k))))
        values = []
        for name in names:
            found = [v for rec in records for k, v in rec.items()
                     if (m := FIELD.fullmatch(k)) and m.group(1) == name and isinstance(v, (int, float))]
            if found:
                values.append((name.replace("_", "."), statistics.median(found)))
        if values:
            out.append(Percentiles(f"{row.label} {condition_shown(row.mode)}".strip(), len(records), values))
    return out


def line(p: Percentiles) -> str:
    """'randread direct: p50 282, p90 3,957, p99 13,140 us (median of 3 repetitions)'."""
    from clusterbench.output.figure_digits import number

    return (f"latency {p.label}: " + ", ".join(f"{name} {number(v)}" for name, v in p.values_us)
            + f" {unit_shown('us')} (median of {counted(p.repetitions, 'repetition')})")
