"""Numbers past any a tool prints: more than a double holds (1.8e308: 309
digits or more, or an exponent past 308), as a garbled or hand-made file
may hold. No tool writes one (their figures are doubles or 64-bit counts),
and each parser met it deep inside: "OverflowError: int too large to
convert to float" or "cannot convert float infinity to integer" was the
one line. Found here, before any parser, and named with its line."""
from __future__ import annotations

import math
import re

# where one may be: a long run of digits, or an exponent of three digits or more (cheap: most files hold neither)
_CANDIDATE = re.compile(r"\d{309}|\d[eE]\+?\d{3}")
# a number standing alone: not the "1e400" inside an address such as 0x55d1e400a2b0
_NUMBER = re.compile(r"(?<![\w.])[-+]?\d+(?:\.\d*)?(?:[eE][-+]?\d+)?(?![\w.])")


def refusal(text: str) -> str | None:
    """Why the file is refused (its first such number, with its line), or None. Only the lines
    holding a candidate are read number by number: a 16 MiB file of e+003 exponents stays one scan."""
    checked = -1
    for c in _CANDIDATE.finditer(text):
        start = text.rfind("\n", 0, c.start()) + 1
        if start <= checked:
            continue
        end = text.find("\n", c.end())
        end = len(text) if end < 0 else end
        checked = start
        for m in _NUMBER.finditer(text, start, end):
            token = m.group(0)
            if (len(token) > 308 or "e" in token.lower()) and math.isinf(float(token)):
                line = text.count("\n", 0, start) + 1
                shown = token if len(token) <= 24 else f"{token[:20]}... ({len(token)} characters)"
                return f"line {line}: {shown} is past the largest number a tool prints (a double's 1.8e308)"
    return None
