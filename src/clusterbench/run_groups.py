"""The run history summed up as a site's job report does it (E11: Galaxy's
report server lists jobs per month, per user and per tool): how many runs,
how many failed or were cut short, and how long they took, per group."""
from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Any, Callable, Iterable

GROUPS: dict[str, Callable[[Any], str]] = {
    "month": lambda r: r.started.strftime("%Y-%m"),
    "user": lambda r: r.user or "-",
    "host": lambda r: r.host or "-",
    "label": lambda r: r.label or "-",
    "suite": lambda r: r.suite or "-",
    "batch-system": lambda r: r.batch_job.split()[0] if r.batch_job else "none",
}
CUT_SHORT = ("interrupted", "killed")


@dataclass
class Group:
    key: str
    runs: int = 0
    ok: int = 0
    failed: int = 0
    cut_short: int = 0     # interrupted by a signal, or killed
    running: int = 0
    durations_s: list[float] | None = None

    @property
    def total_s(self) -> float:
        return sum(self.durations_s or [])

    @property
    def median_s(self) -> float | None:
        return statistics.median(self.durations_s) if self.durations_s else None


def summarise(rows: Iterable[Any], by: str) -> list[Group]:
    """Groups in key order (months oldest first); durations only of finished runs."""
    key_of = GROUPS[by]
    groups: dict[str, Group] = {}
    for r in rows:
        g = groups.setdefault(key_of(r), Group(key_of(r), durations_s=[]))
        g.runs += 1
        if r.status == "ok":
            g.ok += 1
        elif r.status == "failed":
            g.failed += 1
        elif r.status in CUT_SHORT:
            g.cut_short += 1
        else:
            g.running += 1
        if r.finished:
            g.durations_s.append((r.finished - r.started).total_seconds())
    return [groups[k] for k in sorted(groups)]
