"""Importers: output files of the tools clusterbench replaces (IOR, mdtest,
fio, iperf3, iperf 2, dd, netperf, OSU, IMB, Himeno, STREAM) read into runs of the store.

Each format is one module, registered here by name and imported when used
(as launchers and report formats; the registry line says what it reads,
for --format's help), with:

    detect(text) -> bool   whether the content is this format (cheap; the file name is never used)
    parse(text) -> list[ImportedRun]   one run per file, or per test of a file that holds several

A parser raises Unreadable (one line: what is wrong, where) for a file it
cannot take; what it skipped of a file it could take goes in the run's
`notes`. Samples use the phase/mode/unit vocabulary of the kernel that
measures the same thing (docs/records.md), so an imported run and a
measured one compare key by key. docs/import.md lists what each takes.
"""
from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field

from clusterbench.extensions.registry import Registry
from clusterbench.results.sample import Sample

# name, module, what it reads; detection tries them in this order (the
# JSON formats first: their first character settles it)
IMPORTERS = Registry("format", [
    ("ior-json", "clusterbench.importers.ior_json", "IOR's JSON summary (-O summaryFormat=JSON), damaged ones too"),
    ("fio", "clusterbench.importers.fio",
     "fio --output-format=json or json+ (2.x-3.x, --client too), its normal text or terse (--minimal, v2-5)"),
    ("iperf3", "clusterbench.importers.iperf3", "iperf3 -J (3.0-3.20), its plain text output, or the server's (iperf3 -s)"),
    ("iperf2", "clusterbench.importers.iperf2",
     "iperf 2 (2.0, 2.1) text, the client's or the server's (-P, -u, -i, -e, -r, -d, -R), and its -y C CSV"),
    ("dd", "clusterbench.importers.dd",
     "GNU dd's summaries (coreutils 9.x, 8.x, older; any locale), with the command from a transcript or set -x"),
    ("netperf", "clusterbench.importers.netperf",
     "netperf 2.4-2.7: classic and omni tests, -P 0 rows with their command, -o/-k output selectors"),
    # before "ior": IOR writing CSV to stdout may print its text banner too
    ("ior-csv", "clusterbench.importers.ior_csv", "IOR's CSV results (-O summaryFormat=CSV, IOR 4.0)"),
    ("ior", "clusterbench.importers.ior_text", "IOR 2.10, 3.x and 4.x text output"),
    ("mdtest", "clusterbench.importers.mdtest_text", "mdtest text output (SUMMARY tables; -v's per-iteration lines)"),
    ("osu", "clusterbench.importers.osu", "OSU micro-benchmarks 5.x-7.x text"),
    ("imb", "clusterbench.importers.imb", "Intel MPI Benchmarks 4.1-2021 text (IMB-MPI1, IMB-IO, IMB-NBC)"),
    ("himeno", "clusterbench.importers.himeno", "RIKEN's Himeno text (himenoBMTxpa, himenoBMTxps, the C+MPI versions)"),
    ("stream", "clusterbench.importers.stream", "McCalpin's STREAM text (stream.c 5.x, stream.f)"),
], extra_choices=("auto",))


class Unreadable(ValueError):
    """The file is not one this importer can take; the message is one line."""


@dataclass
class ImportedStep:
    name: str | None
    kernel: str                   # the clusterbench kernel measuring the same thing, else the tool's name
    params: dict[str, str]        # as that kernel names them (text values), so compare matches steps
    ranks: int = 1
    ranks_per_node: int | None = None
    samples: list[Sample] = field(default_factory=list)
    swept: list[str] | None = None  # what tells it from the run's other steps (importers/sibling_params.py)


@dataclass
class ImportedRun:
    tool: str                     # "fio"
    version: str | None           # "3.33", as the file says
    form: str                     # "JSON", "json+", "text"
    command: str | None           # the tool's command line, when the file shows it
    hosts: list[str] = field(default_factory=list)
    started: dt.datetime | None = None    # UTC
    finished: dt.datetime | None = None
    steps: list[ImportedStep] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)   # what of the file could not be taken
    facts: dict[str, object] = field(default_factory=dict)  # environment keys the file states (fio's OS, iperf3's uname)
    # why `version` is None where the tool never prints it in this output (dd, iperf 2's tests): stored as
    # import.tool_version_error, as the collectors store what they could not read
    no_version: str | None = None
    # how long the run took where the file says so but not when it ended (a shell's `time`: its real):
    # the stored run ends that long after it started, as a file's end date makes it
    wall_seconds: float | None = None

    @property
    def source(self) -> str:
        """"fio 3.33 JSON": the tool, its version and the form, as stored and shown."""
        return " ".join(x for x in (self.tool, self.version, self.form) if x)

    @property
    def sample_count(self) -> int:
        return sum(len(s.samples) for s in self.steps)


def number_on_line(text: str, line: int) -> float:
    """A figure a pattern of digits and dots took from the file's line
    `line`, refused in one line naming it where it is no number ("0.0.28",
    a figure garbled in the copy): Python's ValueError was the message."""
    try:
        return float(text)
    except ValueError:
        raise Unreadable(f"line {line}: {text!r} is not a number") from None


# digits and dots that are no number ("840.06.7", "1..5"): a figure garbled in the copy (two lines run
# together, a hand edit). No tool prints one; a row holding it was skipped as other output, unsaid
_GARBLED = re.compile(r"[-+]?\d*(?:\.\d*){2,}")


def refuse_garbled(fields: list[str], line: int) -> None:
    """Refuses a row of a table (its fields) holding a garbled figure, naming the line."""
    for f in fields:
        if _GARBLED.fullmatch(f) and any(c.isdigit() for c in f):
            number_on_line(f, line)


def names() -> list[str]:
    return IMPORTERS.names()


def help_text() -> str:
    return "; ".join(f"{n}: {what}" for n, what in IMPORTERS.items())


def get(name: str):
    return IMPORTERS.load(name)


def detect(text: str) -> str | None:
    for name in IMPORTERS.names():
        if get(name).detect(text):
            return name
    return None


def other_tools_in(text: str, found: str | None) -> list[str]:
    """The formats of other tools whose output the file holds besides
    `found`'s: a job's log that ran IOR, then mdtest (each format's MARK,
    where its runs start, searched through the whole text; detection reads
    only the head). IOR's JSON, CSV and text are one tool."""
    tool = {"ior-json": "ior", "ior-csv": "ior"}
    others: list[str] = []
    for name in IMPORTERS.names():
        mark = getattr(get(name), "MARK", None)
        if tool.get(name, name) != tool.get(found, found) and mark is not None and mark.search(text):
            others.append(name)
    return others


def printed_step(token: str) -> float | None:
    """The step a tool printed a figure to, from the text it printed: "4.40" 0.01, "12" 1; None for an
    exponent form. Kept as the record's rate_step: the float 4.4 had lost the trailing zero, and the
    reports printed OSU's 4.40 us as 4.4 beside figures of two decimals."""
    t = token.strip().lstrip("+-")
    if not t or "e" in t.lower():
        return None
    whole, _, places = t.partition(".")
    return 10.0 ** -len(places) if (whole + places).isdigit() else None


def measurement(phase: str, mode: str, value: float | None, unit: str, *, repetition: int = 0,
                sweep: tuple[str, object] | None = None, qualifiers: dict[str, object] | None = None,
                line: int | None = None, member: dict[str, str] | None = None, **fields) -> Sample:
    """One sample in the contract's shape (docs/records.md), from an imported figure.
    `fields` are kept in the record as the file gave them (seconds, bytes, ops, percentiles...).
    `line` (text formats) is the file's line the figure was read from, and
    `member` (JSON formats) the document's key of each checked field
    ({"value": "iops", "seconds": "runtime"}): the plausibility gate names
    them when it refuses the figure, and takes them out of the record."""
    q = qualifiers or _NONE
    sweep_key = sweep[0] if sweep else None
    rec: dict = {"type": "measurement", "imported": True, "phase": phase, "mode": mode, "sweep_key": sweep_key,
                 "qualifiers": list(q), "rate": value, "rate_unit": unit, "repetition": repetition}
    if sweep:
        rec[sweep_key] = sweep[1]
    if q:
        rec.update(q)
    for k, v in fields.items():
        if v is not None:
            rec[k] = v
    if line is not None:
        rec[SOURCE_LINE] = line
    if member:
        rec[SOURCE_MEMBER] = member
    return _sample_of(rec, (phase, mode, unit, sweep_key, tuple(q.items()) if q else ()))


_NONE: dict = {}


# Where a figure came from in its file, for the plausibility gate's message; never stored.
SOURCE_LINE, SOURCE_MEMBER = "_source_line", "_source_member"

# Fields of a record that Sample.from_record derives more than a copy from;
# a record holding one takes the slow path.
_DERIVED_ELSEWHERE = frozenset(("cold_achieved", "link_gbit_per_s", "warnings", "smt_siblings_busy", "dir",
                                "file_bytes"))
_prototypes: dict[tuple, Sample] = {}


def _sample_of(rec: dict, shape: tuple) -> Sample:
    """Sample.from_record(rec), fast for the rows of one table: a file of
    100,000 OSU rows built each through from_record took most of its import
    time. The first record of a shape (phase, mode, unit, sweep, qualifiers)
    goes through from_record; the next ones copy that sample and set what
    varies per row. tests/test_import.py checks both ways agree on every
    fixture's samples."""
    sweep_key = shape[3]
    if (sweep_key is not None and not sweep_key.endswith("_bytes")) or not _DERIVED_ELSEWHERE.isdisjoint(rec):
        return Sample.from_record(rec)
    proto = _prototypes.get(shape)
    if proto is None:
        proto = _prototypes[shape] = Sample.from_record(rec)
        if len(_prototypes) > 4096:   # shapes are few per file; keep the cache bounded across many files
            _prototypes.clear()
        return proto if proto.record is rec else Sample.from_record(rec)
    return proto.like(rec, sweep_key)



