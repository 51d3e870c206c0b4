"""The dates an imported run may be stored at: from 1970-01-01 (no
benchmark's output is older) to a day from now (a date written in a zone
east of UTC). `import --date 0001-01-01` was stored, and written by an older
row layer as '1-01-01', which made every view of the store a traceback
(store revision 0011 repairs such rows); a file's modification time of 2446
(what ext4 keeps of a far-future mtime) was stored as the run's date too."""
from __future__ import annotations

import datetime as dt

EARLIEST = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)


def latest() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc) + dt.timedelta(days=1)


def from_epoch(seconds: int | float, what: str) -> dt.datetime:
    """A tool's seconds since 1970 (fio's "timestamp", iperf3's "timesecs") as a UTC date; one past
    what a date holds (year 9999) is refused naming `what`, where it was "OverflowError: timestamp out
    of range for platform time_t". A date out of the store's range is said later (out_of_range)."""
    from clusterbench.importers import Unreadable

    try:
        return dt.datetime.fromtimestamp(float(seconds), dt.timezone.utc)
    except (OverflowError, OSError, ValueError):
        raise Unreadable(f"{what} {seconds} is no date (seconds since 1970 past the year 9999)") from None


def out_of_range(when: dt.datetime) -> str | None:
    """Why a run cannot be dated `when` (UTC if naive), in words; None if it can."""
    when = when if when.tzinfo else when.replace(tzinfo=dt.timezone.utc)
    if when < EARLIEST:
        return "is before 1970-01-01"
    if when > latest():
        return f"is more than a day from now ({latest():%Y-%m-%d %H:%M} UTC)"
    return None
