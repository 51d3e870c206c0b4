"""GNU dd's transfer summaries (coreutils 9.x, 8.x and older): E1's and
E4's disk figures, and what a shell transcript or a `set -x` log says of
the command that printed them.

    $ dd if=/dev/zero of=f bs=1G count=10 conv=fdatasync     (or "+ dd ..." under set -x)
    10+0 records in
    10+0 records out
    10737418240 bytes (11 GB, 10 GiB) copied, 13.9 s, 771 MB/s

Forms read: 9.x's "(SI, IEC)", 8.x's "(SI)" alone (9.x too, from 1000 to
1023 bytes), "1 byte copied" and "bytes copied" where no prefix applies,
and the "%g seconds" that 8.x's source says it used to print; dd printfs in the
user's locale, so `LC_ALL=de_DE.UTF-8` prints "Bytes ... kopiert, 0,0643 s,
2,1 GB/s": the words are not read, and a decimal comma is taken as the
decimal point (locale_lines). status=progress's "\\r"-separated
lines before the summary are not figures of the run's end; SIGUSR1's
status reports after one command are, but for its last.

The sample is bytes over seconds in MiB/s (dd's rate is rounded to two or
three figures: it is kept as `dd_rate` and checked). What the figure means
depends on the command, so it is read where the log shows it: writes
(from /dev/zero or another device) are `fsync` with conv=fdatasync or
conv=fsync, `direct` with oflag=direct, `fsync-each` with oflag=dsync or
sync, else `buffered` (the page cache's speed, warned); reads (of=/dev/null)
are `direct` with iflag=direct, `cold` after a drop_caches line in the log,
`warm` after the log wrote the same file without one, else `unknown`. dd is
not seqio's measurement (it writes zeros, which compressing and
deduplicating storage flatters, and times from after its open), so each
command is a `dd` step in dd's own parameters, in seqio's vocabulary of
phases and modes. Without the command, phase `copy`, mode `unknown`.
"""
from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field

from clusterbench.importers import (ImportedRun, ImportedStep, Unreadable, cut_short, invocations, measurement,
                                   printed_versions, shell_time)
from clusterbench.importers.shell_transcript import PROMPT, command



def locale_lines(text: str) -> list[int]:
    """None of dd's lines holds another locale's figures: dd printfs its
    seconds and rate in the user's locale, and this parser reads them."""
    return []

NUMBER = r"\d+(?:[.,]\d+)?(?:e[+-]?\d+)?"
# \s between the words: French puts a no-break space after the byte count ("134217728\u00a0octets")
SUMMARY = re.compile(rf"^(?P<bytes>\d+)\s\S+(?:\s\((?P<sizes>[^()]*)\))?\s\S+,\s"
                     rf"(?P<seconds>{NUMBER})\s(?:s|seconds?),\s(?P<rate>{NUMBER}|Infinity)\s"
                     rf"(?P<prefix>[kKMGTPEZYRQ]?)B/s\s*$")
RECORDS = re.compile(r"^(\d+)\+(\d+)\s\S")
COMMAND = command("dd", r"(?P<operands>(?: +\w+=\S*)+)")
DROP_CACHES = re.compile(r"drop_caches|vm\.drop_caches")
DD_SAYS = re.compile(r"^dd: (?P<said>.+?)\s*$")
MARK = re.compile(rf"^{PROMPT}(?:\S*/)?dd +(?:if|of|bs)=\S*|^\d+\+\d+ records in$", re.M)
SI = {"": 1, "k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15, "E": 1e18, "Z": 1e21, "Y": 1e24}
# dd's size suffixes (coreutils' xstrtoumax with "bcEGkKMPTwYZ0"): K 1024, KB/kB 1000, KiB 1024, ...
UNIT_SUFFIX = {"c": 1, "w": 2, "b": 512, "kB": 1000, "K": 1024, "k": 1024}
POWERS = "KMGTPEZY"
SOURCES = ("/dev/zero", "/dev/urandom", "/dev/random")
# `dd --version`'s first line ("dd (GNU coreutils) 9.1"; Debian's says "(coreutils)"): no version beside its figures
VERSION = re.compile(r"^dd \((?:GNU )?coreutils\) (\d+\.\d+\S*)\s*$", re.M)
NO_VERSION = "GNU dd prints no version beside its figures (only dd --version, which the file does not hold)"


def detect(text: str) -> bool:
    head = text[:65536]
    lines = head.split("\n")
    for n, line in enumerate(lines):
        last = line.split("\r")[-1]
        if (SUMMARY.match(last)) and n >= 2 and RECORDS.match(lines[n - 1]) \
                and RECORDS.match(lines[n - 2]):
            return True
    return False


@dataclass
class _Invocation:
    line: int                                   # the command's line, else its first summary's
    operands: dict[str, str] | None             # the command's key=value operands, when the log shows it
    summaries: list[tuple[int, re.Match]] = field(default_factory=list)
    said: list[str] = field(default_factory=list)    # dd's own lines ("dd: error writing ...")
    progress: int = 0                           # status=progress lines
    cold: bool = False                          # a drop_caches line came after the last write of its input
    warm: bool = False                          # the log wrote its input before, with no drop since
    shell_time: dict[str, tuple[int, str]] = field(default_factory=dict)  # real/user/sys: line, as printed


def parse(text: str) -> list[ImportedRun]:
    text, cut = cut_short.whole_lines(text)
    versions = printed_versions.lines_of(text, VERSION)
    runs = invocations.each_taken(_invocations(text.split("\n")), lambda inv: _run(inv, versions),
                                  lambda inv: f"the dd at line {inv.line}",
                                  "no dd summary (\"... bytes ... copied, ... s, ... B/s\")")
    if cut:
        runs[-1].notes.append(cut)
    return runs


def _invocations(lines: list[str]) -> list[_Invocation]:
    """Each dd the log shows: from its command line to the next, or, where
    the log shows no command, each summary on its own."""
    commanded = any(COMMAND.match(line) for line in lines)
    out: list[_Invocation] = []
    written: dict[str, bool] = {}    # path -> dropped from the cache since it was written
    dropped_ever = False
    said: list[str] = []              # dd's lines before a summary that no command line opened
    progress = 0
    timed = False   # the lines since a dd's summary are blank or the shell's time of it
    for n, line in enumerate(lines, 1):
        t = shell_time.totals(line)
        if t and timed:
            out[-1].shell_time.update({which: (n, clock) for which, clock in t.items()})
            continue
        # a `time` of any other command (`$ time sync`) is not the dd's: only totals right after its summary
        timed = timed and not line.strip()
        if DROP_CACHES.search(line) and not COMMAND.match(line):
            dropped_ever = True
            written = {path: True for path in written}
            continue
        c = COMMAND.match(line)
        if c:
            operands = _operands(c.group("operands"))
            inv = _Invocation(n, operands)
            source = operands.get("if")
            if source in written:
                inv.cold, inv.warm = written[source], not written[source]
            else:
                inv.cold = dropped_ever
            if operands.get("of") and operands["of"] != "/dev/null":
                written[operands["of"]] = False
            out.append(inv)
            continue
        d = DD_SAYS.match(line)
        if d:
            (out[-1].said if commanded and out else said).append(d.group("said"))
            continue
        if "\r" in line:   # status=progress: each report after a carriage return, none of them the summary
            progress += sum(1 for segment in line.split("\r") if SUMMARY.match(segment.rstrip()))
            if commanded and out:
                out[-1].progress, progress = out[-1].progress + progress, 0
            continue
        summary = SUMMARY.match(line)
        # a summary is dd's when its records lines are just above it (a progress report never has them)
        if not summary or n < 3 or not (RECORDS.match(lines[n - 2]) and RECORDS.match(lines[n - 3])):
            continue
        if not commanded:
            out.append(_Invocation(n, None, said=said, progress=progress))
            said, progress = [], 0
        elif not out:
            continue
        out[-1].summaries.append((n, summary))
        timed = True
    if not commanded and (said or progress):   # a dd killed after the last summary
        out.append(_Invocation(len(lines), None, said=said, progress=progress))
    return out


def _operands(text: str) -> dict[str, str]:
    try:
        words = shlex.split(text)
    except ValueError:
        words = text.split()
    return dict(w.split("=", 1) for w in words if "=" in w)


def size_bytes(text: str | None) -> int | None:
    """dd's N[suffix], and NxM products: 1M is 2^20, 1MB 10^6, 1MiB 2^20, 512b 512 blocks of 512."""
    if not text:
        return None
    total = 1
    for part in text.split("x"):
        m = re.fullmatch(r"(\d+)([A-Za-z]*)", part)
        if not m:
            return None
        n, suffix = int(m.group(1)), m.group(2)
        if suffix in UNIT_SUFFIX:
            n *= UNIT_SUFFIX[suffix]
        elif suffix:
            p = POWERS.find(suffix[0].upper())
            if p < 0 or suffix[1:] not in ("", "B", "iB") or (suffix[0] == "k" and suffix[1:] != "B"):
                return None
            n *= (1000 if suffix[1:] == "B" else 1024) ** (p + 1)
        total *= n
    return total


def _flags(operands: dict[str, str], key: str) -> set[str]:
    return set(filter(None, operands.get(key, "").split(",")))


def _number(text: str) -> float:
    return float(text.replace(",", "."))


def _run(inv: _Invocation, versions: list[tuple[int, str]]) -> ImportedRun:
    if not inv.summaries:
        why = f": dd said \"{inv.said[-1]}\"" if inv.said else \
            f" ({inv.progress} status=progress line(s), then nothing: killed?)" if inv.progress else " (killed?)"
        raise Unreadable(f"no summary{why}")
    errors = [s for s in inv.said if not re.search(r"warn|avertissement|advertencia|partial read", s, re.I)]
    if errors:
        raise Unreadable(f"dd reported an error, so its figures cover only what it did before it: \"{errors[0]}\"")
    operands = inv.operands
    run = ImportedRun("dd", printed_versions.before(versions, inv.line), "text",
                      "dd " + " ".join(f"{k}={v}" for k, v in operands.items()) if operands is not None else None,
                      no_version=NO_VERSION)
    run.notes.extend(f"dd said: \"{s}\"" for s in inv.said)
    if len(inv.summaries) > 1:
        run.notes.append(f"dd printed {len(inv.summaries) - 1} status report(s) (SIGUSR1) before its final summary: "
                         "the final one is taken")
    line, m = inv.summaries[-1]
    data, seconds = int(m.group("bytes")), _number(m.group("seconds"))
    if seconds <= 0 or m.group("rate") == "Infinity":
        raise Unreadable(f"line {line}: dd measured no time (\"{m.group(0).strip()}\")")
    if data == 0:
        raise Unreadable(f"line {line}: dd copied 0 bytes")
    phase, mode, warning = _meaning(inv, run)
    printed_b_per_s = _printed_rate(m)
    fields = {"bytes": data, "seconds": seconds, "rate_decimal": data / seconds / 1e6, "rate_decimal_unit": "MB/s",
              "dd_rate": _printed_text(m)}
    if operands is not None:
        block = size_bytes(operands.get("bs") or operands.get("obs" if phase != "read" else "ibs"))
        fields.update(block_bytes=block, input_path=operands.get("if"), output_path=operands.get("of"))
        _check_count(operands, block, data, run)
    if printed_b_per_s is not None:
        _check_rate(printed_b_per_s, data / seconds, m, line, run)
    fields.update(_shell_time(inv, seconds, run))
    s = measurement(phase, mode, data / seconds / 2**20, "MiB/s", line=line, **fields)
    if warning:
        s.warnings.append(warning)
    params = {k: v for k, v in (operands or {}).items() if k in ("bs", "ibs", "obs", "count", "conv", "iflag",
                                                                 "oflag", "skip", "seek")}
    run.steps.append(ImportedStep(f"dd {phase}", "dd", params, samples=[s]))
    return run


def _shell_time(inv: _Invocation, dd_seconds: float, run: ImportedRun) -> dict[str, float]:
    """The shell's `time` of the command (`time dd ...`): real, user and sys
    as `shell_real_s`/`_user_s`/`_sys_s`, and real as the run's wall time.
    A real shorter than dd's own seconds (beyond its printed digits) is not
    this dd's: noted, not taken."""
    taken = {}
    for which, (line, clock) in inv.shell_time.items():
        taken[which] = (*shell_time.seconds(clock), line)
    if "real" not in taken:
        return {}
    real, decimals, line = taken["real"]
    if real + 10 ** -decimals < dd_seconds:
        run.notes.append(f"line {line}: the shell's time says real {real:g} s, less than dd's own {dd_seconds:g} s: "
                         "not this dd's, not taken")
        return {}
    run.wall_seconds = real
    return {f"shell_{which}_s": value for which, (value, _, _) in taken.items()}


def _meaning(inv: _Invocation, run: ImportedRun) -> tuple[str, str, str | None]:
    """(phase, mode, warning) of what the command did, in seqio's words."""
    operands = inv.operands
    if operands is None:
        run.notes.append("the log holds dd's summary without its command: whether it wrote or read, and with "
                         "which flags, is not known (phase copy, mode unknown)")
        return "copy", "unknown", None
    source, target = operands.get("if"), operands.get("of")
    iflag, oflag, conv = _flags(operands, "iflag"), _flags(operands, "oflag"), _flags(operands, "conv")
    if source in SOURCES and target in ("/dev/null", "/dev/zero"):
        run.notes.append(f"dd copied {source} to {target}: no storage was involved, "
                         "the figure is how fast it copies in memory")
        return "copy", "n/a", None
    if target == "/dev/null":
        if "direct" in iflag:
            return "read", "direct", None
        if inv.cold:
            run.notes.append("read after a drop_caches line in the log: taken as cold")
            return "read", "cold", None
        if inv.warm:
            return "read", "warm", ("dd read the file the log wrote just before, no drop_caches between: "
                                    "from the page cache as far as it held the file")
        return "read", "unknown", ("nothing in the log says the page cache was emptied before this read "
                                   "(no drop_caches, no iflag=direct): it may have come from memory")
    phase = "write" if source is None or source in SOURCES else "copy"
    if "direct" in oflag:
        return phase, "direct", None
    if conv & {"fdatasync", "fsync"}:
        return phase, "fsync", None
    if oflag & {"dsync", "sync"}:
        return phase, "fsync-each", None
    return phase, "buffered", ("written without conv=fdatasync, conv=fsync or oflag=direct/dsync: how fast the page "
                               "cache took the data, not the disk (seqio's buffered write)")


def _printed_rate(m: re.Match) -> float | None:
    if m.group("rate") == "Infinity":
        return None
    return _number(m.group("rate")) * SI[m.group("prefix")]


def _printed_text(m: re.Match) -> str:
    return f"{m.group('rate')} {m.group('prefix')}B/s"


def _check_rate(printed: float, computed: float, m: re.Match, line: int, run: ImportedRun) -> None:
    """dd rounds its rate to the last digit it prints (and computes it from
    its own clock, not the %g seconds): more than half that digit off (and
    a per cent for the seconds' rounding) is not dd's own summary."""
    rate = m.group("rate")
    decimals = len(re.split(r"[.,]", rate)[1]) if re.search(r"[.,]", rate) else 0
    step = 10 ** -decimals * SI[m.group("prefix")]
    if abs(printed - computed) > step / 2 + computed * 0.01:
        run.notes.append(f"line {line}: dd printed {_printed_text(m)}, but its bytes over its seconds are "
                         f"{computed / 1e6:.4g} MB/s: the summary was changed after dd printed it?")


def _check_count(operands: dict[str, str], block: int | None, data: int, run: ImportedRun) -> None:
    count = operands.get("count")
    if not (block and count and count.isdigit()) or "count_bytes" in _flags(operands, "iflag"):
        return
    asked = block * int(count)
    if data < asked:
        run.notes.append(f"dd copied {data} of the {asked} bytes asked (count={count} x bs): it stopped early "
                         "(interrupted, or its input ended)")
