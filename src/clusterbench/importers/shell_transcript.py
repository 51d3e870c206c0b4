"""A command as a log shows it: typed at a prompt and copied with its
output (`$ dd ...`, `[root@n01 ~]# netperf ...`), or echoed by `set -x`
(`+ dd ...`, `++` in a subshell), perhaps after `sudo`, `time` or
`LC_ALL=... ` and before what the shell does with its output
(`2>&1 | tee log`, `; sync`). dd and netperf print no command line of
their own, and what their figures mean depends on it (conv=fdatasync,
-t TCP_MAERTS, -P 0's rows), so their importers read it from here."""
from __future__ import annotations

import re

PROMPT = r"(?:.*?[$#>%] +|\++ +)?"
# `time -p` and /usr/bin/time -p too: a `time -p dd ...` line was no command, and its dd's summary was taken
# as a status report of the dd before it
BEFORE = r"(?:(?:sudo|(?:\S*/)?time(?: +-p)?|command|nice|ionice|\w+=\S*)\s+)*"
AFTER = r"(?:\s+\d*[<>|;&].*)?\s*$"


def command(program: str, arguments: str) -> re.Pattern:
    """The line of `program` run with arguments matching `arguments` (a
    pattern with a group named as the caller wants): ^prompt, program, args, tail$."""
    return re.compile(rf"^{PROMPT}{BEFORE}(?:\S*/)?{program}{arguments}{AFTER}")
