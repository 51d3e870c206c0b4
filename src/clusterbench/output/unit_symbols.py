"""A unit as the reports for people print it (terminal, Markdown, HTML, the
summary's sentences, the plots' axes). The records spell microseconds
"us" (ASCII, docs/records.md), and JSON and CSV keep the records' spelling,
which scripts match; a reader is shown the SI symbol, µ (U+00B5, MICRO SIGN,
which a Latin-1 terminal prints too)."""
from __future__ import annotations

SHOWN = {"us": "\u00b5s"}


def unit_shown(unit: str | None) -> str:
    """'µs' for the records' 'us'; any other unit as given; '' for none."""
    return SHOWN.get(unit, unit) if unit else ""
