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
    return rec


def error_message(stderr: str) -> str | None:
    """The message of the first error record in cbk's stderr."""
    for line in stderr.splitlines():
        rec = parse_line(line)
        if rec and rec.get("type") == "error":
            return rec.get("message")
    return None
