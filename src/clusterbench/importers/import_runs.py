"""`clusterbench import`'s use case: a file read, its format detected from
the content, parsed into runs (clusterbench.importers), and each run stored
in one transaction, so a file that fails leaves nothing behind.

The environment of an imported run is what the file states (its hosts, and
for fio and iperf3 the OS line they print) plus every other topic stored as
unavailable with the reason ("imported from fio 3.33 JSON: not recorded"):
nothing about the machine that ran it is guessed from this one.
"""
from __future__ import annotations

import contextlib
import datetime as dt
import gc
import hashlib
import itertools
import math
import os
import stat
from dataclasses import dataclass, replace
from pathlib import Path

from clusterbench import importers
from clusterbench.environment import COLLECTORS, snapshot_hash
from clusterbench.errors import BadInput
from clusterbench.importers.no_host import NO_HOST
from clusterbench.importers import (ImportedRun, Unreadable, huge_numbers, json_documents, locale_numbers,
                                   plausibility, sibling_params)
from clusterbench.output.date_text import minute_text
from clusterbench.results.sample import Sample
from clusterbench.store import text_limits
from clusterbench.store.storable import check_text, step_name

# The keys the report's environment block and the usual diffs read: each
# stored as "<key>_error" = the reason, as the collectors store what they could not read.
NOT_RECORDED = ("cpu.model", "cpu.governor", "cpu.turbo", "memory.total_bytes", "numa.nodes", "vm.dirty_ratio",
                "net.interfaces", "gpu.count", "mpi.flavour", "compiler.cc", "cbk.version", "tuned.profile")
# The most `import` reads of one file unless --max-bytes says more: the
# largest real outputs (IOR -v -v, fio json+ of many jobs, iperf3 -J over
# hours) are a few MiB; a file bigger than this is a mistake (a core dump,
# /dev/zero behind a link) more often than a benchmark's output.
MAX_FILE_BYTES = 16 * 2**20
CHUNK_BYTES = 1 << 20


@dataclass
class Overrides:
    label: str | None = None
    host: str | None = None            # --host: where the file's runs ran, when the file does not say
    date: dt.datetime | None = None    # --date: when, when the file does not say
    ranks: int | None = None           # --np: the rank count, where the file does not give it (OSU collectives)


def read_bytes(path: str, max_bytes: int = MAX_FILE_BYTES) -> bytes:
    """The file's content, read in chunks and never more than `max_bytes`
    (`--max-bytes`): /dev/zero, a FIFO, a socket or a file still growing
    cannot hold the import. Only a regular file is read: it is opened
    without blocking (a FIFO with no writer would block open()) and checked
    on the descriptor opened, not on the name."""
    if path == "-" and not os.path.lexists(path):   # was 'cannot read: No such file or directory'
        raise BadInput("-: import reads saved output files, not standard input: save the output to a file "
                       "(tool ... > out.txt) and give its name")
    if os.path.isdir(path):   # False, not an OSError, for a name too long
        raise BadInput(f"{path}: is a directory (give its files: clusterbench import {path.rstrip('/')}/*)")
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0))
    except OSError as e:
        raise BadInput(f"{path}: cannot read: {e.strerror}") from None
    try:
        kind = _file_kind(os.fstat(fd).st_mode)
        if kind:
            raise BadInput(f"{path}: {kind}, not a regular file: give the saved output file")
        os.set_blocking(fd, True)
        chunks, total = [], 0
        while True:
            chunk = os.read(fd, min(CHUNK_BYTES, max_bytes + 1 - total))
            if not chunk:
                return b"".join(chunks)
            chunks.append(chunk)
            total += len(chunk)
            if total > max_bytes:
                raise BadInput(f"{path}: larger than the {_mib(max_bytes)} import limit "
                               f"(no benchmark output is that big; give --max-bytes to raise it)")
    except OSError as e:
        raise BadInput(f"{path}: cannot read: {e.strerror}") from None
    finally:
        os.close(fd)


def _file_kind(mode: int) -> str | None:
    """What a file that is not a regular one is, in words; None for a regular file."""
    for test, words in ((stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISCHR, "a character device"),
                        (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"), (stat.S_ISDIR, "a directory")):
        if test(mode):
            return words
    return None if stat.S_ISREG(mode) else "not a file"


def _mib(n: int) -> str:
    return f"{n / 2**20:g} MiB" if n >= 2**20 else f"{n} bytes"


@dataclass
class GivenFile:
    """A file given to `import`, read and parsed."""
    path: str
    sha256: str               # of the bytes read (runs.imported_sha256): a file is known by its content, not its name
    runs: list[ImportedRun]


def read_files(paths, fmt: str = "auto", max_bytes: int = MAX_FILE_BYTES, *, again: bool = False) -> list[GivenFile]:
    """Every file read and parsed before any is stored. A file given twice
    (or its bytes under a second name) is refused unless `again`: its
    samples would be pooled twice by compare and trend."""
    out: list[GivenFile] = []
    first_named: dict[str, str] = {}   # sha256 -> the name that gave those bytes first
    for path in paths:
        data = read_bytes(path, max_bytes)
        sha256 = hashlib.sha256(data).hexdigest()
        if sha256 in first_named and not again:
            first = first_named[sha256]
            said = "given twice" if first == path else f"the same bytes as {first}, given before it"
            raise BadInput(f"{path}: {said} in this command; --again imports it again")
        first_named.setdefault(sha256, path)
        out.append(GivenFile(path, sha256, parse_bytes(path, data, fmt)))
    return out


def held_text(runs: list) -> str:
    """The runs imported from a file's bytes, oldest first, in words."""
    ids = [str(r.id) for r in runs]
    shown = f"run {ids[0]}" if len(ids) == 1 else "runs " + ", ".join(ids[:5]) + (", ..." if len(ids) > 5 else "")
    when = runs[0].imported_at
    if when is not None and when.tzinfo is not None:   # PostgreSQL gives it in the session's zone; SQLite in UTC
        when = when.astimezone(dt.timezone.utc)
    return f"already imported as {shown} (same bytes" + (f", imported {minute_text(when)} UTC)" if when else ")")


def parse_file(path: str, fmt: str = "auto", max_bytes: int = MAX_FILE_BYTES) -> list[ImportedRun]:
    """The runs a file holds, or BadInput (one line naming the file)."""
    return parse_bytes(path, read_bytes(path, max_bytes), fmt)


def parse_bytes(path: str, data: bytes, fmt: str = "auto") -> list[ImportedRun]:
    """The runs in `data`, the content of the file `path`."""
    text = _decoded(data)
    if text is None:
        raise BadInput(f"{path}: a binary file, not any known format (formats: {', '.join(importers.names())})")
    if fmt == "auto":
        found = importers.detect(text)
        # detection reads the head (IOR's 8 KiB, OSU's 4 KiB): a job log whose script echoed more than that
        # before the tool's output was no known format; where the tool's output starts is searched for too
        formats = [found, *importers.other_tools_in(text, found)] if found else importers.other_tools_in(text, None)
        skipped = 0
        if not formats:
            text, skipped, found = _json_after_other_output(text)
            formats = [found] if found else []
        if not formats:
            raise BadInput(f"{path}: not any known format (formats: {', '.join(importers.names())})")
        with without_cycle_collection():
            runs = _each_tools_runs(path, text, formats)
        if skipped:
            runs[0].notes.append(f"{skipped} line(s) of other output before the JSON (a job script's, the "
                                 "scheduler's) were skipped")
        return runs
    module = importers.get(fmt)
    with without_cycle_collection():
        return _parsed(path, text, fmt, module)


def _json_after_other_output(text: str) -> tuple[str, int, str | None]:
    """(the text, the lines before its JSON blanked; how many had text; the
    JSON's format) for a tool's JSON printed to a job's log after pages of
    other output (IOR -O summaryFormat=JSON and iperf3 -J print to stdout):
    detection reads the first 4 KiB, which held none of it. The lines are
    blanked, not cut, so every line keeps its number in the messages."""
    for m in itertools.islice(json_documents.OPENING.finditer(text), 8):
        before = text[:m.start()]
        blanked = "\n" * before.count("\n") + text[m.start():]
        found = importers.detect(blanked)
        if found:
            return blanked, sum(1 for line in before.split("\n") if line.strip()), found
    return text, 0, None


def _each_tools_runs(path: str, text: str, formats: list[str]) -> list[ImportedRun]:
    """The runs of every tool whose output the file holds: a job's log that
    ran IOR, then mdtest, stored IOR's runs alone, mdtest's left out with
    nothing said. A tool's part that cannot be taken is named in the note of
    the runs taken; a file where no tool's part can be taken is refused with
    the first tool's reason."""
    runs: list[ImportedRun] = []
    refused: list[BadInput] = []
    for fmt in formats:
        try:
            runs += _parsed(path, text, fmt, importers.get(fmt))
        except BadInput as e:
            refused.append(e)
    if not runs:
        raise refused[0]
    if len(formats) > 1:
        tools = list(dict.fromkeys(r.tool for r in runs))
        if len(tools) > 1:
            runs[0].notes.append(f"the file holds the output of {', '.join(tools)}: each tool's runs taken")
        for e in refused:
            runs[0].notes.append(f"also in the file, not taken: {e.message.removeprefix(path + ': ')}")
    return runs


def _decoded(data: bytes) -> str | None:
    """The file's text; None for a binary file. A log saved on Windows is
    UTF-16 (PowerShell's `>` writes it, with a byte-order mark), and was
    refused as binary for its NUL bytes; a UTF-8 byte-order mark hid the
    banner from ^-anchored detection. CRLF line ends become LF: a tool's
    lines, as the parsers read them."""
    for bom, codec in ((b"\xef\xbb\xbf", "utf-8"), (b"\xff\xfe", "utf-16-le"), (b"\xfe\xff", "utf-16-be")):
        if data.startswith(bom):
            return data[len(bom):].decode(codec, errors="replace").replace("\r\n", "\n")
    head = data[:4096]
    if len(head) >= 2 and head[1::2].count(0) > 0.9 * (len(head) // 2) and head[0::2].count(0) == 0:
        return data.decode("utf-16-le", errors="replace").replace("\r\n", "\n")   # no mark: ASCII in UTF-16LE
    if b"\0" in data[:65536]:
        return None
    return data.decode("utf-8", errors="replace").replace("\r\n", "\n")


def _parsed(path: str, text: str, fmt: str, module) -> list[ImportedRun]:
    # an importer whose tool prints decimal commas of its own (dd in the user's locale, netperf's "-r 64,1024")
    # says which of its lines are another locale's
    localized = getattr(module, "locale_lines", locale_numbers.lines_of)(text)
    huge = huge_numbers.refusal(text)
    if huge:
        raise BadInput(f"{path}: {fmt}: {huge}")
    try:
        runs = module.parse(text)
    except Unreadable as e:
        raise BadInput(f"{path}: {fmt}: {e}" + (f" ({locale_numbers.note(localized)})" if localized else "")) from None
    except plausibility.Implausible as e:
        raise BadInput(f"{path}: {fmt}: {e}") from None
    except (ValueError, KeyError, TypeError, IndexError, AttributeError, ArithmeticError, RecursionError) as e:
        # a parser defect on input it did not foresee: still one line, never a half-stored run
        raise BadInput(f"{path}: {fmt}: cannot read this file ({type(e).__name__}: {e})") from None
    from clusterbench.results.params import canonical_for

    for r in runs:
        for st in r.steps:
            # a tool's parameters as the plan writes a native run's (shown so by --dry-run), so the two compare
            st.params = canonical_for(st.kernel, st.params)
            finite = [s for s in st.samples if s.value is None or math.isfinite(s.value)]
            if len(finite) < len(st.samples):
                r.notes.append(f"{st.name}: {len(st.samples) - len(finite)} figure(s) not finite (nan, inf): not taken")
                st.samples = finite
            nulled = 0
            for i, s in enumerate(st.samples):
                n = _null_non_finite(s.record)
                if n:
                    nulled += n
                    st.samples[i] = replace(Sample.from_record(s.record), warnings=s.warnings)
            if nulled:
                r.notes.append(f"{st.name}: {nulled} field(s) of the records not finite (nan, inf): stored as null")
    if localized:
        runs[0].notes.append(locale_numbers.note(localized))
    taken = [r for r in runs if r.sample_count]
    if not taken:
        # the parser's notes say why (a job fio reported an error for, figures not finite): the one line names it
        why = next((n for r in runs for n in r.notes if "not taken" in n or "another locale" in n), None)
        raise BadInput(f"{path}: {fmt}: no measurement in this file" + (f" ({why})" if why else ""))
    runs = _each_run_once(taken)
    _storable(runs, f"{path}: {fmt}: ")
    try:
        plausibility.check(runs, text)
    except plausibility.Implausible as e:
        raise BadInput(f"{path}: {fmt}: {e}") from None
    return runs


def _each_run_once(runs: list[ImportedRun]) -> list[ImportedRun]:
    """The file's runs, a run it holds twice taken once. A log appended to
    itself (`cat a.log a.log > all.log`, `tee -a log >> log`) holds one run
    of the tool twice: the same start, to the second, and the same figures,
    which two runs never print. Stored twice, its samples were pooled twice
    by compare and trend, the harm the same file given twice is refused for.
    A run the file does not date (OSU's output) is never taken for another:
    osu_barrier's one figure can come out the same in two runs."""
    kept: list[ImportedRun] = []
    for number, run in enumerate(runs, 1):
        twin = next((k for k in kept if run.started is not None and (k.started, k.finished, k.hosts, k.command,
                     k.steps) == (run.started, run.finished, run.hosts, run.command, run.steps)), None)
        if twin is None:
            kept.append(run)
        else:
            twin.notes.append(f"the file holds this run twice (its run {number} has the same date and figures, "
                              f"a log appended to itself): taken once")
    return kept


def _storable(runs: list[ImportedRun], where: str) -> None:
    """The file's names as the store holds them on every backend, as `run`
    checks its own (store/storable.py): a step name too long for its column
    is cut, as `clusterbench ior` cuts one; a NUL character, or a host name
    longer than any (DNS allows 253), is refused. SQLite stored them and
    PostgreSQL refused them."""
    for r in runs:
        for h in r.hosts:
            check_text(f"{where}the host name", h, text_limits.HOST)
        check_text(f"{where}the command line", r.command)
        for st in r.steps:
            if st.name:
                st.name = step_name(st.name)
            check_text(f"{where}the step name {st.name!r}", st.name)


def _null_non_finite(value) -> int:
    """Sets every nan and inf inside a record (dict or list, nested) to None
    and says how many: a record field the file gave as nan or inf (a fio
    percentile, an IMB t_max) was stored as such, and the JSON export, which
    writes strict JSON, then failed on the run; PostgreSQL refuses such JSON.
    cbk writes null for a value that is not finite (docs/records.md)."""
    n = 0
    for k, v in value.items() if type(value) is dict else enumerate(value):
        kind = type(v)   # type tests, not isinstance: a 100,000-row file walks every field
        if kind is float:
            if v - v != 0:   # nan or inf
                value[k] = None
                n += 1
        elif kind is dict or kind is list:
            n += _null_non_finite(v)
    return n


@contextlib.contextmanager
def without_cycle_collection():
    """Parsing and storing a file of 100,000 rows makes millions of objects,
    none of them in a reference cycle, and the cycle collector walked them
    all, again and again as they grew: a fifth of the import's CPU time
    (bench/import_speed). Plain reference counting frees them as before."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def environment(run: ImportedRun, host: str, path: str) -> dict:
    from clusterbench.importers.unrecorded import reason

    why = reason(run.source)
    env: dict = {"capture.schema": 1, "host.name": host, "import.source": run.source, "import.file": path}
    if run.version:
        env["import.tool_version"] = run.version
    else:
        env["import.tool_version_error"] = run.no_version or f"{run.source} states no version of {run.tool}"
    env.update(run.facts)
    for topic in COLLECTORS:
        env.setdefault(f"{topic}.collector_error", why)
    for key in NOT_RECORDED:
        if key not in env:
            env[f"{key}_error"] = why
    return dict(sorted(env.items()))


def finish(run: ImportedRun, path: str, over: Overrides) -> tuple[str, dt.datetime]:
    """Where and when the run ran: the file's word, else --host/--date, else
    "unknown" and the file's modification time (said in the run's notes)."""
    host = (run.hosts[0] if run.hosts else None) or over.host
    if host is None:
        host = NO_HOST
        run.notes.append("the file names no host (give --host)")
    started = run.started or over.date
    if started is None:
        started = modified(path)
        run.notes.append("the file gives no date: stored at the file's modification time (give --date)")
    return host, started


def modified(path: str) -> dt.datetime:
    """A file's modification time (UTC): an undated run's date."""
    return dt.datetime.fromtimestamp(Path(path).stat().st_mtime, dt.timezone.utc)


def check_file_dates(files: list[GivenFile], over: Overrides) -> None:
    """Before anything is stored: a run dated out of run_dates' range is
    refused. A run the file gives no date of, without --date, is dated by
    the file's modification time (a copy that kept no time, a clock far
    off). A date the file gives (iperf3's and fio's Unix times, IOR's
    'Began') out of range was stored as it was (year 5138 of a clock far
    off): refused too, or replaced by --date where one is given."""
    from clusterbench.importers.run_dates import out_of_range

    for f in files:
        for run in f.runs:
            if run.started is not None and (why := out_of_range(run.started)):
                if over.date is None:
                    raise BadInput(f"{f.path}: the file dates its run {minute_text(run.started)} UTC, which {why}; "
                                   "give --date to store it at the date it ran")
                run.notes.append(f"the file dates it {minute_text(run.started)} UTC: stored at --date")
                run.started, run.finished = over.date, None   # its end is as far off
        if over.date is None and any(run.started is None for run in f.runs) \
                and (why := out_of_range(when := modified(f.path))):
            raise BadInput(f"{f.path}: the file gives no date, and its modification time ({minute_text(when)} UTC) "
                           f"{why}; give --date")


def store_runs(store, runs: list[ImportedRun], path: str, over: Overrides, sha256: str | None = None, *,
               again: bool = False) -> list[int]:
    """The ids of a file's runs, stored in one transaction; sha256: of the
    file's bytes (GivenFile.sha256), kept so a later import of them is
    refused, and looked up in that transaction unless again (a store that
    holds them raises store.imported_run.AlreadyImported, storing nothing)."""
    rows = [_run_rows(run, path, over) for run in runs]
    with without_cycle_collection():
        return store.add_imported_file(rows, imported_sha256=sha256, again=again)


def given_ranks(run: ImportedRun, ranks: int | None) -> None:
    """--np for the steps whose file gives no rank count (OSU's collectives),
    and no note asking for it; --dry-run shows it as it would be stored."""
    if ranks and any(st.ranks == 0 for st in run.steps):
        for st in run.steps:
            st.ranks = st.ranks or ranks
        run.notes = [n for n in run.notes if "(give --np)" not in n]


def _run_rows(run: ImportedRun, path: str, over: Overrides) -> dict:
    """What the store writes of one run (imported_run.write_run's arguments)."""
    host, started = finish(run, path, over)
    given_ranks(run, over.ranks)
    for step, told in zip(run.steps, sibling_params.swept(run.steps)):   # after --np: a rank count may differ
        step.swept = told
    hosts = list(dict.fromkeys([host, *run.hosts[1:]]))
    snapshots = {}
    for h in hosts:
        env = environment(run, h, path)
        snapshots[h] = (snapshot_hash(env), env)
    finished = run.finished if run.finished and run.finished >= started else None
    if finished is None and run.wall_seconds is not None:
        finished = started + dt.timedelta(seconds=run.wall_seconds)
    return dict(label=over.label, command=run.command, host=host, started=started, finished=finished,
                imported_from=f"{run.source}, file {path}" + (f" ({'; '.join(run.notes)})" if run.notes else ""),
                imported_steps=run.steps, snapshots=snapshots)
