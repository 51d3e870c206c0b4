"""The typed view of one measurement record (docs/records.md), and the one
key samples are grouped by.

This module and the store are the only places that read a measurement
record's keys; the runner, the step summaries, compare, the limit checks,
progress and every report format read `Sample` attributes.

Records written before the contract carried qualifiers inside `mode`
("library", "best, 2 threads") and no `sweep_key`: they are read into the
same Sample, so stored runs and new ones group and print alike.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from clusterbench.output.counted_text import counted
from clusterbench.results.sizes import size_text
from clusterbench.results.written_step import twin_resolution

# The cache/durability states `mode` may hold (docs/records.md); "n/a" where none applies.
CACHE_MODES = frozenset({"fsync", "fsync-each", "direct", "buffered", "buffered+sync", "cold", "warm", "unknown"})
NOT_APPLICABLE = "n/a"



def condition_shown(condition: str | None) -> str:
    """A figure's condition (the mode column) as a reader is shown it: ""
    where none applies. The record's "n/a" was printed as it is, in a column
    of words ("null n/a", a mode column of "n/a"); the store, the records and
    the JSON and CSV exports keep it."""
    return "" if condition in (None, NOT_APPLICABLE) else condition


# How a swept value that is not a byte size is shown beside the mode: a noun counted ("1 thread",
# "2 threads": "{} threads" wrote "best, 1 threads" in every table and plot of a thread sweep), or a format.
SWEEP_NOUN = {"threads": "thread"}
SWEEP_TEXT = {"busy_cpus": "{} busy"}


@dataclass(frozen=True)
class SampleKey:
    """What makes two samples of a step the same measurement."""
    phase: str
    condition: str | None   # the mode column: cache state, qualifiers, a non-size sweep value
    unit: str | None
    size_bytes: int | None  # a byte-size sweep value (message size), shown in the label
    # the kernel's words for the phase (cbk --describe's phase_words): how it prints, not what it is
    words: str | None = field(default=None, compare=False)

    @property
    def label(self) -> str:
        """The phase as printed: in words, the kernel's own where it names them (gpucopy's
        `h2d` reads "host to device"), else the name with spaces ("link bandwidth", the
        record's `link_bandwidth`: an identifier in a customer's table), with its size when
        the kernel swept sizes."""
        words = self.words or self.phase.replace("_", " ")
        return words if self.size_bytes is None else f"{words} {size_text(self.size_bytes)}"

    def curve(self) -> SampleKey:
        """The key without its size: the samples of one curve over a size sweep."""
        return replace(self, size_bytes=None)


@dataclass(frozen=True)
class Sample:
    phase: str
    mode: str | None                 # cache/durability state, "n/a" where none applies
    condition: str | None            # as shown in the mode column (see SampleKey)
    unit: str | None
    value: float | None              # the record's rate, in `unit`
    repetition: int = 0
    sweep_key: str | None = None
    sweep_value: object = None
    qualifiers: tuple[tuple[str, object], ...] = ()
    decimal: float | None = None     # MB/s beside MiB/s
    decimal_unit: str | None = None
    seconds: float | None = None
    bytes: int | None = None
    ops: int | None = None
    directory: str | None = None     # the kernel's target directory, when it has one
    data_bytes: int | None = None    # the data a phase touched (all its files, else the bytes moved)
    cold_proven: bool = False        # a read the kernel proved cold (or O_DIRECT)
    link_bits_per_s: float | None = None  # a network figure: its interface's nominal rate, 0 when unknown
    rank_us: tuple[float, float, float] | None = None  # mpi: t_min, t_avg, t_max over ranks (IMB's columns)
    bandwidth_mb_s: float | None = None  # mpi pingpong/bw/bibw: the rate beside the latency, as IMB prints
    condition_names: tuple[str, ...] = ()  # what the condition is made of: "cache", qualifier and sweep names
    warnings: list[str] = field(default_factory=list)
    record: dict = field(default_factory=dict, compare=False)  # the raw record, for export
    id: int | None = None            # the store's sample id, once stored
    phase_words: str | None = field(default=None, compare=False)  # the phase as printed: in_words()

    @classmethod
    def from_record(cls, rec: dict) -> Sample:
        """A measurement record, in the contract's shape or the older one."""
        sweep_key, sweep_value = _sweep(rec)
        if "sweep_key" in rec or "qualifiers" in rec:
            mode = rec.get("mode")
            qualifiers = tuple((q, rec.get(q)) for q in rec.get("qualifiers") or ())
            size = sweep_value if sweep_key and sweep_key.endswith("_bytes") and _number(sweep_value) else None
            condition = _condition(mode, qualifiers, sweep_key, sweep_value, size is not None,
                                   rec.get("smt_siblings_busy"))
        else:
            condition = rec.get("mode")
            mode = condition if condition in CACHE_MODES or condition is None else NOT_APPLICABLE
            qualifiers = () if mode != NOT_APPLICABLE else (("mode_text", condition),)
        decimal = rec.get("rate_decimal")
        rate = rec.get("rate")
        return cls(
            phase=rec.get("phase", "?"), mode=mode, condition=condition, unit=rec.get("rate_unit"),
            value=float(rate) if _number(rate) else None, repetition=int(rec.get("repetition", 0)),
            sweep_key=sweep_key, sweep_value=sweep_value, qualifiers=qualifiers,
            decimal=float(decimal) if _number(decimal) else None,
            decimal_unit=rec.get("rate_decimal_unit") if _number(decimal) else None,
            seconds=rec.get("seconds"), bytes=rec.get("bytes"), ops=rec.get("ops"), directory=rec.get("dir"),
            data_bytes=_data_bytes(rec),
            cold_proven=rec.get("cold_achieved") is True or mode == "direct",
            link_bits_per_s=_link_bits(rec),
            rank_us=tuple(float(rec[k]) for k in ("t_min_us", "t_avg_us", "t_max_us"))
            if all(_number(rec.get(k)) for k in ("t_min_us", "t_avg_us", "t_max_us")) else None,
            bandwidth_mb_s=float(rec["bandwidth_mb_s"]) if _number(rec.get("bandwidth_mb_s")) else None,
            condition_names=_condition_names(rec), warnings=list(rec.get("warnings") or []), record=rec)

    def printed_step(self) -> float | None:
        """The step the figure's tool printed it to, in `unit`, where that is known: an imported
        figure's rate_step (OSU's 4.40 us: 0.01), or its printed MB/s twin's step converted (0.08 MB/s
        stored as 0.0763 MiB/s: 0.0095). The reports print the figure to that, no finer or coarser."""
        if self.decimal is not None and self.value is not None:
            return twin_resolution(self.value, self.decimal)
        step = self.record.get("rate_step")
        return float(step) if type(step) in _NUMBERS and step > 0 else None

    @classmethod
    def from_row(cls, row) -> Sample:
        """A stored sample: its record, with the store's repetition, warnings and id."""
        s = cls.from_record(row.record or {})
        return replace(s, repetition=row.repetition, warnings=list(row.warnings or []), id=row.id,
                       phase=row.phase, condition=row.mode, unit=row.unit,
                       value=float(row.value) if row.value is not None else None, seconds=row.seconds,
                       bytes=row.bytes, ops=row.ops)

    def like(self, rec: dict, sweep_key: str | None) -> Sample:
        """The sample of `rec`, a record of this sample's shape (phase, mode,
        unit, sweep and qualifiers; no field from_record derives more than a
        copy from): this one copied with what varies per row set, as
        from_record would set it. The importers build table rows this way
        (100,000 OSU rows through from_record took most of an import);
        tests/test_import.py checks both ways agree on every fixture."""
        get = rec.get
        rate, decimal, bw = get("rate"), get("rate_decimal"), get("bandwidth_mb_s")
        t_min, t_avg, t_max = get("t_min_us"), get("t_avg_us"), get("t_max_us")
        d = self.__dict__.copy()
        d["value"] = float(rate) if type(rate) in _NUMBERS else None
        d["repetition"] = int(get("repetition", 0))
        d["sweep_value"] = get(sweep_key) if sweep_key else None
        if type(decimal) in _NUMBERS:
            d["decimal"], d["decimal_unit"] = float(decimal), get("rate_decimal_unit")
        else:
            d["decimal"] = d["decimal_unit"] = None
        d["seconds"], d["bytes"], d["ops"] = get("seconds"), get("bytes"), get("ops")
        d["data_bytes"] = d["bytes"]
        d["rank_us"] = (float(t_min), float(t_avg), float(t_max)) if type(t_min) in _NUMBERS \
            and type(t_avg) in _NUMBERS and type(t_max) in _NUMBERS else None
        d["bandwidth_mb_s"] = float(bw) if type(bw) in _NUMBERS else None
        d["warnings"], d["record"] = [], rec
        s = object.__new__(Sample)
        object.__setattr__(s, "__dict__", d)
        return s

    @property
    def size_bytes(self) -> int | None:
        return _size_bytes(self.sweep_key, self.sweep_value)

    @staticmethod
    def key_of_row(row) -> SampleKey:
        """from_row(row).key(), without the Sample: a trend over years of runs
        groups hundreds of thousands of stored samples and needs only this
        (building each Sample, and holding its record, was most of the
        history page's time and memory on a store of 10,000 runs)."""
        return SampleKey(row.phase, row.mode, row.unit, _size_bytes(*_sweep(row.record or {})))

    def key(self) -> SampleKey:
        """The one grouping of samples: summaries, compare, CSV outliers, adaptive repetition."""
        return SampleKey(self.phase, self.condition, self.unit, self.size_bytes, self.phase_words)

    @property
    def label(self) -> str:
        return self.key().label

    def extra(self, name: str, default=None):
        """A kernel-specific field of the record (docs/records.md, "extra
        fields": pario's open_span_s, metadata's items_per_rank), for the
        tool-format outputs that print them."""
        return self.record.get(name, default)

    def export(self) -> dict:
        """The sample as the JSON and CSV exports write it."""
        return {"repetition": self.repetition, "phase": self.phase, "mode": self.condition, "value": self.value,
                "unit": self.unit, "seconds": self.seconds, "bytes": self.bytes, "ops": self.ops,
                "warnings": self.warnings, "record": self.record}


def in_words(samples: list[Sample], phase_words: Mapping[str, str]) -> list[Sample]:
    """The samples of one kernel, each with its phase's words from that
    kernel's phase_words (catalogue.step_phase_words), for the tables and
    plots; the phase itself, and what the exports write, stay as recorded."""
    if not phase_words:
        return samples
    return [replace(s, phase_words=phase_words.get(s.phase)) for s in samples]


def _data_bytes(rec: dict) -> int | None:
    """The data a phase touched: its files, all of them. `file_bytes` is one
    file's size where a kernel wrote several (manyfiles' --files, pario's
    file per rank: `files`), so the page-cache check judged 50 files of
    32 MiB as 32 MiB of data; else the bytes the phase moved."""
    size, files = rec.get("file_bytes"), rec.get("files")
    if _number(size) and size > 0:
        return int(size) * (int(files) if _number(files) and files > 1 else 1)
    return rec.get("bytes")


def _link_bits(rec: dict) -> float | None:
    """A network figure's link rate in bit/s: 0 when the kernel could not
    read it (the record still says it is a network figure), None for others."""
    if "link_gbit_per_s" not in rec:
        return None
    v = rec["link_gbit_per_s"]
    return float(v) * 1e9 if _number(v) and v > 0 else 0.0


def _sweep(rec: dict) -> tuple[str | None, object]:
    """(sweep_key, its value) of a record; a record from before the contract
    names no sweep, only a size_bytes."""
    if "sweep_key" in rec or "qualifiers" in rec:
        sweep_key = rec.get("sweep_key")
        return sweep_key, rec.get(sweep_key) if sweep_key else None
    size = rec.get("size_bytes")
    return ("size_bytes", size) if size is not None else (None, None)


def _size_bytes(sweep_key: str | None, sweep_value) -> int | None:
    return int(sweep_value) if sweep_key and sweep_key.endswith("_bytes") and _number(sweep_value) else None


def _number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


_NUMBERS = (int, float)   # Sample.like tests type() itself: a bool is not a number, as _number says


def _condition(mode, qualifiers, sweep_key, sweep_value, size_swept: bool, smt_busy) -> str | None:
    parts = [] if mode in (NOT_APPLICABLE, None) else [str(mode)]
    parts += [str(v) for _, v in qualifiers if v is not None]
    if sweep_key and not size_swept and sweep_value is not None:
        if sweep_key in SWEEP_NOUN and _number(sweep_value) and sweep_value == int(sweep_value):
            text = counted(int(sweep_value), SWEEP_NOUN[sweep_key])
        else:
            text = SWEEP_TEXT.get(sweep_key, sweep_key + "={}").format(sweep_value)
        if sweep_key == "busy_cpus" and smt_busy:
            text += f" ({smt_busy} SMT)"  # cpufreq: busy CPUs that share a core, as it wrote before the contract
        parts.append(text)
    return ", ".join(parts) or mode


def _condition_names(rec: dict) -> tuple[str, ...]:
    """What the condition text holds, named (for the mode column's heading):
    "cache" for a cache/durability state, then the declared qualifiers and a
    sweep key that is not a byte size; an older record's other mode text
    (an algorithm, "2 busy") is only "mode"."""
    mode = rec.get("mode")
    names = ["cache"] if mode in CACHE_MODES else []
    names += [q for q in rec.get("qualifiers") or [] if isinstance(q, str)]
    sweep = rec.get("sweep_key")
    if isinstance(sweep, str) and not sweep.endswith("_bytes"):
        names.append(sweep)
    if not names and mode not in (None, "", NOT_APPLICABLE, "none"):
        names.append("mode")
    return tuple(names)
