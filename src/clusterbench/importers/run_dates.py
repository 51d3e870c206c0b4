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


def out_of_range(when: dt.datetime) -> str | None:
    """Why a run cannot be dated `when` (UTC if naive), in words; None if it can."""
    when = when if when.tzinfo else when.replace(tzinfo=dt.timezone.utc)
    if when < EARLIEST:
        return "is before 1970-01-01"
    if when > latest():
        return f"is more than a day from now ({latest():%Y-%m-%d %H:%M} UTC)"
    return None
