"""One place that turns a user's string (a label, a step name, a parameter
value, a directory, a host name) into text safe for each output format.

Stored text is kept as the user gave it; it is rendered here, at output:

- terminal: rich markup escaped ("[/]" and "[link=...]" print as written)
  and control characters shown as escapes (a tab as \t, a newline as \n,
  ESC as \x1b, a C1 control as \x9b, a bidirectional override as \u202e),
  so a label cannot move the cursor, retitle the window, make a hyperlink
  or reorder a line, and no character of it is silently lost ("\x1b[31m"
  prints as those eight characters); bytes that are not UTF-8 (surrogate
  escapes) show as U+FFFD.
- csv: as for the terminal (control characters as escapes, one line), and
  a cell a spreadsheet would read as a formula (= + - @, tab or CR first)
  gets a leading apostrophe (OWASP's CSV-injection guard).
- markdown: Markdown and inline HTML metacharacters backslash-escaped, a
  newline (shown as \n) and a pipe cannot split a heading or a table row.
- html: html.escape, control characters as escapes.
- mathtext: matplotlib text with "$" escaped (a "$" pair is mathtext).
"""
from __future__ import annotations

import html as _html
import re

# C0, DEL and C1 control characters (an escape sequence is harmless once
# its ESC shows as \x1b), and Unicode's bidirectional embedding, override and isolate controls,
# which reorder what follows them on the line ("Trojan Source", CVE-2021-42574):
# a label could make a table row or a CSV line read otherwise than it is.
# Right-to-left text needs none of them to show right to left.
# U+2028 and U+2029 end a line in editors, JavaScript and some Markdown readers as a newline does.
_CONTROLS = re.compile(r"[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\u2028\u2029]")
_SURROGATES = re.compile(r"[\udc80-\udcff]")
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
# inline text never starts a line here (headings, list items and table
# cells put their own markup first), so these are the ones that act mid-line
# ("_" inside a word, as in vm.dirty_ratio, is no emphasis in CommonMark)
# (">" mid-line is no blockquote; "&" only starts an entity before a letter or #)
_MARKDOWN_SPECIAL = re.compile(r"([\\`*\[\]<|~]|&(?=[A-Za-z#])|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9]))")


_NAMED_ESCAPES = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}


def _escaped(control: re.Match) -> str:
    c = control.group()
    if c in _NAMED_ESCAPES:
        return _NAMED_ESCAPES[c]
    return f"\\x{ord(c):02x}" if ord(c) <= 0xff else f"\\u{ord(c):04x}"


_CONTROL_NAMES = {"\t": "a tab", "\n": "a newline", "\r": "a carriage return", "\x1b": "ESC",
                  "\x7f": "DEL", "\u2028": "a line separator", "\u2029": "a paragraph separator"}


def first_control(text: str) -> str | None:
    """Where text holds the first character plain() would show as an escape,
    in words ("character 2 is a tab (U+0009)"), or None: a name given to be
    stored (a label, a host) is refused with it, so what is stored shows as given."""
    m = _CONTROLS.search(text)
    if m is None:
        return None
    c = m.group()
    name = _CONTROL_NAMES.get(c, "a bidirectional control" if c >= "\u202a" else "a control character")
    return f"character {m.start() + 1} is {name} (U+{ord(c):04X})"


def plain(text: object) -> str:
    """The text on one line with each control character shown as its escape
    (\\t, \\n, \\x1b, \\u202e: seen, never acted on, never dropped),
    non-UTF-8 bytes as U+FFFD."""
    s = "" if text is None else str(text)
    s = _SURROGATES.sub("\ufffd", s)
    return _CONTROLS.sub(_escaped, s)


def stored(value):
    """A value as the store keeps it: text that is not UTF-8 (a file name's
    bytes, which Python holds as surrogate escapes) gets each such byte as
    the four characters \\xNN, so it can be stored, hashed and shown;
    lists and dicts are converted throughout."""
    if isinstance(value, str):
        if not _SURROGATES.search(value):
            return value
        return value.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    if isinstance(value, list):
        return [stored(v) for v in value]
    if isinstance(value, dict):
        return {stored(k): stored(v) for k, v in value.items()}
    return value


def utf8_problem(text: str) -> str | None:
    """Why text given on the command line is not UTF-8, or None."""
    m = _SURROGATES.search(text)
    if m is None:
        return None
    return f"byte 0x{ord(m.group()) - 0xdc00:02x} at character {m.start() + 1} is not UTF-8"


def terminal(text: object) -> str:
    """For rich: printed as written, never as markup or escape codes."""
    from rich.markup import escape   # here: most users of this module never print to a terminal

    return escape(plain(text))


def csv_cell(text: object) -> str:
    """A text cell a spreadsheet shows as text, never evaluates; on one line
    and without escape codes (a CSV is also read with cat; JSON is the
    export that keeps every character)."""
    s = plain(text)
    return "'" + s if s.startswith(_FORMULA_START) else s


def markdown(text: object) -> str:
    """Inline Markdown: every metacharacter escaped, on one line."""
    return _MARKDOWN_SPECIAL.sub(r"\\\1", plain(text))


def markdown_code(text: object) -> str:
    """A Markdown code span holding the text as written: its fence is one
    backtick longer than the longest run of backticks inside (CommonMark)."""
    s = plain(text)
    fence = "`" * (max((len(m) for m in re.findall(r"`+", s)), default=0) + 1)
    pad = " " if s.startswith("`") or s.endswith("`") else ""
    return f"{fence}{pad}{s}{pad}{fence}"


def html(text: object) -> str:
    return _html.escape(plain(text))


def mathtext(text: object) -> str:
    """For matplotlib titles, labels and legends: "$" is a literal dollar,
    and a leading "_" (which hides a legend entry) is kept visible."""
    s = plain(text).replace("$", r"\$")
    return "\u200b" + s if s.startswith("_") else s
