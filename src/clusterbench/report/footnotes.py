"""Values the environment could not read, as a procurement document shows
them: "not available" with the reason as a numbered footnote, never the
collector's raw error text in a table cell."""
from __future__ import annotations

import re

# summary_block's "unavailable: reason" (up to the next ';'), or a bare "unavailable"
UNAVAILABLE = re.compile(r"unavailable(?:: ([^;]+))?")


class Footnotes:
    """Reasons, numbered in first-use order; the same reason keeps its number."""

    def __init__(self) -> None:
        self.reasons: list[str] = []

    def number(self, reason: str) -> int:
        reason = reason.strip()
        if reason not in self.reasons:
            self.reasons.append(reason)
        return self.reasons.index(reason) + 1

    def text(self, value: str, mark) -> str:
        """value with each 'unavailable: reason' as 'not available' + mark(number)."""
        def sub(m: re.Match) -> str:
            return "not available" + (mark(self.number(m.group(1))) if m.group(1) else "")

        return UNAVAILABLE.sub(sub, value)


def env_diff_rows(lines: list[tuple[str, object, object]]) -> list[tuple[str, object, object, str | None, str | None]]:
    """An environment diff with each KEY_error line folded into KEY's row:
    (key, base value, other value, base reason, other reason); a side whose
    value is missing and which has a reason shows "not available" with it."""
    errors = {k[:-len("_error")]: (a, b) for k, a, b in lines if k.endswith("_error")}
    rows: dict[str, list] = {k: [k, a, b, None, None] for k, a, b in lines if not k.endswith("_error")}
    for key, (ea, eb) in errors.items():
        row = rows.setdefault(key, [key, None, None, None, None])
        row[3] = str(ea) if ea is not None and row[1] is None else None
        row[4] = str(eb) if eb is not None and row[2] is None else None
    return [tuple(r) for r in sorted(rows.values(), key=lambda r: r[0])]
