"""Standard output and error in an encoding that cannot spell every
character printed (PYTHONIOENCODING=ascii, or a C locale with Python's
UTF-8 mode turned off): Python raised UnicodeEncodeError at the first µs
of a table, a traceback in place of the results. Each character the
encoding lacks is written as ASCII instead: µ as u (µs as us, the records'
own spelling), any other as its \\x, \\u escape, so nothing is lost."""
from __future__ import annotations

import codecs
import sys

ERRORS = "clusterbench-ascii"
SPELLED = {"\u00b5": "u", "\u2026": "...", "\u2013": "-", "\u2014": "-", "\u00d7": "x", "\u00b1": "+-"}


def _spelled(e: UnicodeEncodeError) -> tuple[str, int]:
    text = e.object[e.start:e.end]
    return "".join(SPELLED.get(c) or c.encode("ascii", "backslashreplace").decode() for c in text), e.end


def spell_what_the_encoding_lacks() -> None:
    """For sys.stdout and sys.stderr where their encoding lacks µ."""
    codecs.register_error(ERRORS, _spelled)
    for stream in (sys.stdout, sys.stderr):
        encoding = getattr(stream, "encoding", None)
        if stream is None or not encoding or not hasattr(stream, "reconfigure"):
            continue
        try:
            "\u00b5".encode(encoding)
        except UnicodeEncodeError:
            stream.reconfigure(errors=ERRORS)
        except LookupError:
            pass
