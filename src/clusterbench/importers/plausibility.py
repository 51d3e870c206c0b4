"""The one gate every imported figure passes before anything is stored: a
figure its tool cannot have printed is refused with the file's line and
the value, whatever the format.

What no tool prints (docs/import.md, "Figures no tool prints"):
- a negative rate, latency, time, byte or operation count;
- data moved in zero time (a positive rate, or bytes, over 0 seconds);
- a rate beyond any link or memory ever built: 10 TB/s per rank for a
  data rate (above one GPU's HBM3e, about 8 TB/s), 10 Tbit/s for a network
  test (above eight 800G ports), 10^9 operations or items per second per
  job or rank (one per nanosecond: no system call is that fast), 100
  TFLOPS per rank for a floating-point rate (Himeno's MFLOPS: above one
  GPU's FP32 peak, 67 TFLOPS on an H100, the most a rank computes with);
- a byte or operation count beyond 64 bits, or a rank count beyond a C int;
- an OSU message size that is not a power of two: OSU doubles the size from
  1 (or from the -m minimum, which the table's first row then shows);
- latencies (OSU, IMB: time per operation, in us) that add up to more than
  a year: a step's rows run one after the other, each at least once (its
  iterations or repetitions times, where the file prints them), so their
  sum is a time the run lasted.

Each check reads the sample (its unit, value, seconds, bytes, record) and
the step's rank count, not the format's own names, so a new importer is
covered by building its samples with importers.measurement; the one rule
about a tool is OSU's size series, which only OSU promises.
"""
from __future__ import annotations

import re

from clusterbench.importers import SOURCE_LINE, SOURCE_MEMBER, ImportedRun
from clusterbench.launch import MAX_RANKS

BYTES_PER_S = {"MiB/s": 2**20, "MB/s": 1e6, "GiB/s": 2**30, "GB/s": 1e9}
MAX_BYTES_PER_S_PER_RANK = 1e13      # 10 TB/s
MAX_NETWORK_GBIT_PER_S = 1e4         # 10 Tbit/s
MAX_OPS_PER_S_PER_RANK = 1e9         # IOPS, items/s
FLOPS = {"MFLOPS": 1e6, "GFLOPS": 1e9}
MAX_FLOPS_PER_RANK = 1e14            # 100 TFLOPS
# The longest a run of a benchmark lasts: a year, beyond any batch system's
# time limit (sites grant days to weeks) and a node's uptime between kernel
# updates. A real slow system is far below it: a 10 s alltoall per call, 1,000
# iterations, on 25 sizes, is 3 days.
MAX_RUN_SECONDS = 366 * 86400
# A byte or operation count the store's 64-bit columns hold (8 EiB: beyond any
# storage ever built), and a rank count an MPI rank, a C int, can number (also
# PostgreSQL's integer column: launch.MAX_RANKS); beyond them the insert failed
# with a traceback.
MAX_COUNT = 2**63 - 1
# Record fields that hold a time, a size, a rate or a count: never negative.
NEVER_NEGATIVE = re.compile(r"(^|_)(seconds|s|us|usec|ms|bytes|kib|per_s|mb_s|iops|ops|iterations|repetitions|"
                            r"retransmits|packets|rate_decimal|mean|max|min)$|^(t_\w+_us|clat_\w+|slat_\w+|lat_\w+)$")


class Implausible(Exception):
    """A figure the tool cannot have printed. Not a ValueError: the parsers
    skip rows that raise ValueError as lines of other output, and this one
    must stop the import."""

    def __init__(self, where: str, what: str):
        super().__init__(f"{where}: {what}")
        self.where, self.what = where, what


def check(runs: list[ImportedRun], text: str) -> None:
    """Raises Implausible for the first figure of `runs` no tool prints;
    `text` is the file's content (to find a JSON figure's line). Then takes
    the figures' places out of the records: they are not stored."""
    for run in runs:
        for step in run.steps:
            if step.ranks > MAX_RANKS:
                raise Implausible(step.name or step.kernel, f"{step.ranks:,} ranks: MPI numbers ranks with a C int "
                                                            f"(at most {MAX_RANKS:,})")
            ranks = max(step.ranks or 1, 1)
            for s in step.samples:
                problem = _figure(s, ranks)
                if problem:
                    field, reason = problem
                    raise Implausible(_where(s.record, field, text), reason)
            _run_time(step, text)
            if run.tool == "OSU":
                _osu_sizes(step, text)
    for run in runs:
        for step in run.steps:
            for s in step.samples:
                s.record.pop(SOURCE_LINE, None)
                s.record.pop(SOURCE_MEMBER, None)


def _figure(s, ranks: int) -> tuple[str, str] | None:
    """(the field at fault, why) for a sample no tool prints, else None."""
    v, unit = s.value, s.unit
    if v is not None and v < 0:
        return "value", f"{_what(s)} is negative: no tool prints a negative {_kind(unit)}"
    rec = s.record
    for key in _never_negative_keys(rec):
        x = rec[key]
        if type(x) in _NUMBERS:
            if x < 0:
                return key, f"{s.label}: {key} {_fmt(x)} is negative: no tool prints that"
        elif type(x) is list:   # iperf3's per-interval rates
            low = min((v for v in x if type(v) in _NUMBERS), default=0)
            if low < 0:
                return key, f"{s.label}: {key} holds {_fmt(low)}, negative: no tool prints that"
    for key, count, what in (("bytes", s.bytes, "8 EiB"), ("ops", s.ops, f"{MAX_COUNT:,} operations")):
        if count is not None and count > MAX_COUNT:
            return key, f"{s.label} {key} {_fmt(count)} is more than {what}: no tool counts that far"
    moved = (s.bytes or 0) > 0 or (v is not None and v > 0 and unit in MOVES_DATA)
    if s.seconds is not None and s.seconds == 0 and moved:
        return "seconds", f"{_what(s)} in 0 seconds: data moved in no time"
    if v is None:
        return None
    if unit in BYTES_PER_S and v * BYTES_PER_S[unit] / ranks > MAX_BYTES_PER_S_PER_RANK:
        return "value", (f"{_what(s)} is beyond any link or memory ever built "
                         f"({MAX_BYTES_PER_S_PER_RANK / 1e12:g} TB/s per rank, {ranks} rank(s))")
    if unit == "Gbit/s" and v > MAX_NETWORK_GBIT_PER_S:
        return "value", f"{_what(s)} is beyond any link ever built ({MAX_NETWORK_GBIT_PER_S / 1e3:g} Tbit/s)"
    if unit in FLOPS and v * FLOPS[unit] / ranks > MAX_FLOPS_PER_RANK:
        return "value", (f"{_what(s)} is beyond any processor ever built ({MAX_FLOPS_PER_RANK / 1e12:g} TFLOPS per "
                         f"rank, {ranks} rank(s))")
    if unit in ("IOPS", "items/s", "transactions/s"):   # netperf's TCP_RR, a kernel's rr
        jobs = s.record.get("jobs")
        jobs = jobs if type(jobs) is int and jobs > 0 else ranks
        if v / jobs > MAX_OPS_PER_S_PER_RANK:
            return "value", f"{_what(s)} is beyond any system ({MAX_OPS_PER_S_PER_RANK:g} per second per job or rank)"
    return None


# Units whose positive figure says data moved. Not items/s: mdtest prints its
# times to 3 decimals, so a fast phase's mean time reads 0.000 beside its rate.
_NUMBERS = (int, float)
MOVES_DATA = frozenset((*BYTES_PER_S, "Gbit/s", "IOPS", "transactions/s"))
_NEVER_NEGATIVE: dict[tuple[str, ...], tuple[str, ...]] = {}


def _never_negative_keys(rec: dict) -> tuple[str, ...]:
    """The keys of rec that name a time, size, rate or count, looked up once
    per set of keys: the rows of one table share theirs (100,000 OSU rows
    each walked every key of its record)."""
    keys = tuple(rec)
    known = _NEVER_NEGATIVE.get(keys)
    if known is None:
        known = _NEVER_NEGATIVE[keys] = tuple(k for k in keys if NEVER_NEGATIVE.search(k))
    return known


def _what(s) -> str:
    """The figure as the file printed it: OSU's and IMB's MB/s, not the MiB/s stored."""
    if s.decimal is not None and s.decimal_unit:
        return f"{s.label} {_fmt(s.decimal)} {s.decimal_unit}"
    return f"{s.label} {_fmt(s.value)} {s.unit}"


def _osu_sizes(step, text: str) -> None:
    """OSU prints sizes 1, 2, 4, ... (0 first for latency), or from -m's
    minimum doubled: a size outside that series was not printed by OSU."""
    sizes = [(s.sweep_value, s) for s in step.samples if s.sweep_key == "size_bytes" and type(s.sweep_value) is int]
    if not sizes:
        return
    doubling = all(b == 2 * a or (a == 0 and b == 1) for (a, _), (b, _) in zip(sizes, sizes[1:]))
    if doubling and sizes[0][0] >= 0:
        return
    for size, s in sizes:
        if size < 0 or (size & (size - 1)) != 0:
            raise Implausible(_where(s.record, "size_bytes", text),
                              f"OSU size {size} bytes is not a power of two: OSU prints only those")


def _run_time(step, text: str) -> None:
    """A step's latencies say how long it ran at least: each row's time per
    operation (its highest: the slowest rank's, where printed) times its
    iterations (1 where the file does not say), summed over the rows, which
    run one after another. More than MAX_RUN_SECONDS: no run lasted that."""
    total_us, worst = 0.0, None
    for s in step.samples:
        if s.unit != "us" or s.value is None:
            continue
        t_max = s.record.get("t_max_us")
        per_op_us = max(s.value, t_max if type(t_max) in _NUMBERS else 0)
        iterations = s.record.get("iterations")
        cost = per_op_us * (iterations if type(iterations) is int and iterations > 0 else 1)
        total_us += cost
        if worst is None or cost > worst[0]:
            worst = (cost, s)
    if total_us > MAX_RUN_SECONDS * 1e6:
        s = worst[1]
        raise Implausible(_where(s.record, "value", text),
                          f"{_what(s)}: the step's latencies add up to {_duration(total_us / 1e6)}, longer than "
                          f"any run lasts ({MAX_RUN_SECONDS // 86400} days)")


def _duration(seconds: float) -> str:
    years = seconds / (365.25 * 86400)
    return f"{years:,.3g} years" if years < 1e6 else f"{years:.3g} years"


def _kind(unit: str | None) -> str:
    return "latency" if unit == "us" else "rate"


def _fmt(x) -> str:
    if type(x) is int:
        return f"{x:,}"   # whole: "{:,.6g}" wrote 2**64 bytes as 1.84467e+19
    return f"{x:,.6g}" if isinstance(x, float) else str(x)


def _where(rec: dict, field: str, text: str) -> str:
    """"line N" of the figure: the text formats record it; for JSON the
    member named by the importer is looked up in the text (only now, for
    the one figure refused)."""
    if isinstance(rec.get(SOURCE_LINE), int):
        return f"line {rec[SOURCE_LINE]}"
    member = (rec.get(SOURCE_MEMBER) or {}).get(field) or (rec.get(SOURCE_MEMBER) or {}).get("value")
    if not member:
        return "figure"
    want_negative = field != "seconds"
    best = None
    for m in re.finditer(rf'"{re.escape(member)}"\s*:\s*"?(-?[\d.]+(?:[eE][-+]?\d+)?)', text):
        try:
            x = float(m.group(1))
        except ValueError:
            continue
        line = text.count("\n", 0, m.start()) + 1
        if field == "seconds" and x == 0:
            return f"line {line} (\"{member}\")"
        if want_negative and x < 0:
            return f"line {line} (\"{member}\")"
        if best is None or x > best[0]:
            best = (x, line)
    return f"line {best[1]} (\"{member}\")" if best else f"member \"{member}\""
