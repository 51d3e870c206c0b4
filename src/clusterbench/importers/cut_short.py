"""A text output cut mid-line: a run killed while printing (the job's time
limit, an MPI abort on another rank) leaves its last line without a
newline, and that line's last figure cut short: OSU's "512  121.04" read
as "512  121.0", IMB's t_avg "1.13" as "1.1". Every tool whose text we
read ends each line it prints with a newline, so a last line without one
is not taken; the run's note says so (docs/import.md, "Damaged files").
JSON formats do not need this: a cut document does not parse, and
lenient_json drops its incomplete last value itself."""
from __future__ import annotations


def whole_lines(text: str) -> tuple[str, str | None]:
    """(the text up to and including its last newline, a note naming the
    line left out); the note is None when nothing was left out."""
    end = text.rfind("\n") + 1
    rest = text[end:]
    if not rest.strip():
        return text, None
    line = text.count("\n", 0, end) + 1
    shown = rest.strip()
    shown = shown if len(shown) <= 40 else shown[:37] + "..."
    return text[:end], (f"the file ends mid-line (cut short?): its last line, line {line} "
                        f"({shown!r}), has no newline and was not read")
