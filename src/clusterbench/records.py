"""Parsing cbk's JSON-lines output."""
from __future__ import annotations

import json

from clusterbench.catalogue import SCHEMA


def parse_line(line: str) -> dict | None:
    """A record, or None for a line that is not one (a library's chatter)."""
    line = line.strip()
    if not line.startswith("{"):
        return None
    try:
        rec = json.loads(line)
    except json.JSONDecodeError:
        return None
    if not isinstance(rec, dict) or rec.get("schema") != SCHEMA:
        return None
    if rec.get("type") == "measurement" and "sweep_key" in rec:
        rec["mode"] = condition_text(rec)
    return rec


def condition_text(rec: dict) -> str:
    """The text shown and grouped by as a measurement's mode.

    cbk writes the record contract of docs/records.md: `mode` is the cache
    state only ("n/a" where none applies); qualifiers (the MPI algorithm, the
    STREAM statistic) are named fields and the swept field is named by
    `sweep_key`. The summaries group by one text per condition, as before
    the contract: the cache state, or the qualifiers' values, with a thread
    or busy-CPU sweep value beside them ("best, 2 threads", "2 busy").
    """
    parts = [] if rec.get("mode") in (None, "n/a") else [str(rec["mode"])]
    parts += [str(rec.get(q)) for q in rec.get("qualifiers") or []]
    sweep = rec.get("sweep_key")
    if sweep == "threads":
        parts.append(f"{rec.get('threads')} threads")
    elif sweep == "busy_cpus":
        smt = rec.get("smt_siblings_busy") or 0
        parts.append(f"{rec.get('busy_cpus')} busy" + (f" ({smt} SMT)" if smt else ""))
    return ", ".join(parts) or "n/a"


def error_message(stderr: str) -> str | None:
    """The message of the first error record in cbk's stderr."""
    for line in stderr.splitlines():
        rec = parse_line(line)
        if rec and rec.get("type") == "error":
            return rec.get("message")
    return None
