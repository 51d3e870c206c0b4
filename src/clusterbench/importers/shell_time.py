"""The totals a shell's or GNU's `time` prints after a command, as a log keeps them:

    real	0m0.053s            bash's `time` (a line each: real, user, sys)
    real 0.05                 POSIX `time -p`, bash's or /usr/bin/time's
    dd ...  0.00s user 0.05s system 92% cpu 0.061 total      zsh (TIMEFMT "%J  %U user %S system %P cpu %*E total")
    0.00user 0.05system 0:00.06elapsed 92%CPU (0avgtext+...  GNU time's default format

The elapsed time may hold minutes and hours (bash "1m2.5s"; zsh "1:02.345" and
"1:01:02.345"; GNU "1:02.34" and, from an hour, "1:01:02"); a locale with a
decimal comma prints "0,05"."""
from __future__ import annotations

import re

_SECONDS = r"\d+(?:[.,]\d+)?"
_CLOCK = rf"(?:\d+:){{0,2}}{_SECONDS}"
_ONE = re.compile(rf"^(?P<which>real|user|sys)[ \t]+(?P<clock>(?:\d+m)?{_SECONDS})s?\s*$")
_ZSH = re.compile(rf"^(?:.*\s)?(?P<user>{_SECONDS})s user (?P<sys>{_SECONDS})s system \S+% cpu "
                  rf"(?P<real>{_CLOCK}) total\s*$")
# "?%CPU" where the elapsed time was 0
_GNU = re.compile(rf"^(?P<user>{_SECONDS})user (?P<sys>{_SECONDS})system (?P<real>{_CLOCK})elapsed \S+%CPU\b")


def totals(line: str) -> dict[str, str]:
    """The totals (`real`, `user`, `sys`) the line prints, each as printed; {} for any other line."""
    one = _ONE.match(line)
    if one:
        return {one["which"]: one["clock"]}
    all_three = _ZSH.match(line) or _GNU.match(line)
    return {which: all_three[which] for which in ("real", "user", "sys")} if all_three else {}


def seconds(clock: str) -> tuple[float, int]:
    """A printed total in seconds, and the decimals it was printed to (its precision)."""
    *larger, last = re.split(r"[:m]", clock.rstrip("s"))
    whole = 0
    for part in larger:   # hours, then minutes
        whole = whole * 60 + int(part)
    return whole * 60 + float(last.replace(",", ".")), len(re.split(r"[.,]", last + ".")[1])
