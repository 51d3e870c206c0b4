"""A stored time as the views print it, its year in four digits.

strftime's %Y (and an f-string's {t:%Y}) writes year 1 as '1', not '0001':
a run dated before the year 1000 (an older import --date 0001-01-01, which
store revision 0011 keeps as '0001-01-01 ...') read '1-01-01' in show,
trend, the history page and the reports, a date that sorts and reads
wrong. isoformat always writes four digits, so every view prints through it.
"""
from __future__ import annotations

import datetime as dt


def day_text(when: dt.datetime | dt.date) -> str:
    """'2026-12-07'."""
    return (when.date() if isinstance(when, dt.datetime) else when).isoformat()


def month_text(when: dt.datetime | dt.date) -> str:
    """'2026-12'."""
    return day_text(when)[:7]


def minute_text(when: dt.datetime) -> str:
    """'2026-12-07 08:05' (no zone: the caller says UTC)."""
    return when.isoformat(sep=" ", timespec="minutes")[:16]


def cutoff_text(when: dt.datetime) -> str:
    """A --before or --since as given: '2026-12-07' for a day, '2026-12-07
    12:30' for a time in it. Said as its day alone, 'before 2026-12-07'
    read as keeping that day's runs that a cutoff at 12:30 deletes."""
    return day_text(when) if (when.hour, when.minute, when.second) == (0, 0, 0) else minute_text(when)


def second_text(when: dt.datetime) -> str:
    """'2026-12-07 08:05:09' (no zone: the caller says UTC)."""
    return when.isoformat(sep=" ", timespec="seconds")[:19]
