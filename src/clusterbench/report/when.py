"""When a run ran, as a printed report says it: to the second, with its
time zone, and how long it took. The store keeps times in UTC without a
zone; a report that printed them bare ("2026-12-06T19:39:09.790301") left
the reader to guess the zone and showed microseconds no one asked for."""
from __future__ import annotations

from datetime import datetime, timezone

from clusterbench.analysis.run_groups import run_seconds
from clusterbench.output.date_text import second_text


def _parse(text: str | None) -> datetime | None:
    """A stored time as naive UTC: SQLite gives it without a zone, PostgreSQL
    with +00:00 (printed bare, that read "09:30:00+00:00 UTC")."""
    try:
        t = datetime.fromisoformat(text) if text else None
    except ValueError:
        return None
    return t.astimezone(timezone.utc).replace(tzinfo=None) if t is not None and t.tzinfo else t


def duration_text(seconds: float | None) -> str:
    """'42.0 s', '3.5 min', '2.1 h'; '-' for a run with no end (list, the history page, a report)."""
    if seconds is None:
        return "-"
    if seconds < 120:
        return f"{seconds:.1f} s"
    return f"{seconds / 60:.1f} min" if seconds < 7200 else f"{seconds / 3600:.1f} h"


def started_text(run: dict) -> str:
    """'2026-12-06 19:39:09 UTC (took 2.7 min)'; 'start not recorded' when there is none."""
    started = _parse(run.get("started"))
    if started is None:
        return "start not recorded"
    text = f"{second_text(started)} UTC"
    finished = _parse(run.get("finished"))
    seconds = run_seconds(started, finished)
    if seconds is not None:
        text += f" (took {_took(seconds, to_the_second=started.microsecond == finished.microsecond == 0)})"
    return text


def _took(seconds: float, to_the_second: bool) -> str:
    """A run whose start and end were written to the second (IOR's Began and
    Finished, an imported file's dates) took that many whole seconds, give or
    take one: "took 0.0 s" of an IOR run that wrote 2 GiB claimed it took no time."""
    if not to_the_second or seconds >= 120:
        return duration_text(seconds)
    return "under 1 s" if seconds < 1 else f"about {seconds:.0f} s"
