"""The run history summed up as a site's job report does it (E11: Galaxy's
report server lists jobs per month, per user and per tool): how many runs,
how many failed or were cut short, and how long they took, per group.
`list --by` and the history page both count with `summarise`, over the
store's `list_runs` rows, so their groups agree (docs/team.md)."""
from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Any, Callable, Iterable

from clusterbench.output.date_text import month_text

# the groups a run falls in, from its row and its steps' kernels: one group
# each, except by kernel, where a run counts once under each kernel it ran
GROUPS: dict[str, Callable[[Any, list[str]], list[str]]] = {
    "month": lambda r, _: [month_text(r.started)],
    "user": lambda r, _: [r.user or "-"],
    "host": lambda r, _: [r.host or "-"],
    "label": lambda r, _: [r.label or "-"],
    "suite": lambda r, _: [r.suite or "-"],
    "kernel": lambda _, kernels: kernels or ["-"],
    "batch-system": lambda r, _: [r.batch_job.split()[0] if r.batch_job else "none"],
}
CUT_SHORT = ("interrupted", "killed")


def run_seconds(started, finished) -> float | None:
    """How long a run took; None with no end, or an end before its start (the
    clock stepped back while it ran, an imported file's dates): list said
    "-3600.0 s" of such a run, and its group's time used and median run
    went down by an hour. show already said no time for it (report/when.py)."""
    if started is None or finished is None or finished < started:
        return None
    return (finished - started).total_seconds()


@dataclass
class Group:
    key: str
    runs: int = 0
    ok: int = 0
    failed: int = 0
    cut_short: int = 0     # interrupted by a signal, or killed
    running: int = 0
    durations_s: list[float] | None = None
    bytes_written: int = 0  # by write and create phases, when the caller gave them

    @property
    def total_s(self) -> float | None:
        """The time the group's finished runs took; None where none has an end
        (an imported run whose file gives none): unknown, not 0 s."""
        return sum(self.durations_s) if self.durations_s else None

    @property
    def median_s(self) -> float | None:
        return statistics.median(self.durations_s) if self.durations_s else None


def summarise(rows: Iterable[Any], by: str, details: dict[str, dict[int, Any]] | None = None) -> list[Group]:
    """Groups of store.list_runs rows in key order (months oldest first);
    durations only of finished runs. details: store.run_details(), needed
    by kernel and for bytes written."""
    keys_of = GROUPS[by]
    kernels, written = (details or {}).get("kernels", {}), (details or {}).get("bytes_written", {})
    groups: dict[str, Group] = {}
    for r in rows:
        for key in keys_of(r, kernels.get(r.id, [])):
            _count(groups.setdefault(key, Group(key, durations_s=[])), r, written.get(r.id, 0))
    return [groups[k] for k in sorted(groups)]


def _count(g: Group, r: Any, bytes_written: int) -> None:
    g.runs += 1
    g.bytes_written += bytes_written
    if r.status == "ok":
        g.ok += 1
    elif r.status == "failed":
        g.failed += 1
    elif r.status in CUT_SHORT:
        g.cut_short += 1
    else:
        g.running += 1
    seconds = run_seconds(r.started, r.finished)
    if seconds is not None:
        g.durations_s.append(seconds)
