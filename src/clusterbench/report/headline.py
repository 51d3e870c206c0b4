"""The headline figures of a report: the five to ten numbers a procurement
document quotes (durable write, cold read, random-read IOPS and p99
latency, MPI latency and bandwidth, memory bandwidth, MFLOPS, TCP, and on a
GPU node the GPU's copies, its memory and the copies between its GPUs),
each with its limit and a one-line verdict; then every flagged figure
once, grouped under its step.

Which figure is a headline is data (HEADLINES), matched on the kernel (or,
for the GPU kernels, which Python never names, their family), the phase
and the mode of a summary row, so a new suite that measures the same
things gets the same headline without naming its steps."""
from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import NamedTuple

from clusterbench.catalogue import GPU, family_of, step_family
from clusterbench.output.figure_digits import median_places
from clusterbench.report import table_units
from clusterbench.report.data import step_titles
from clusterbench.results.sample import condition_shown
from clusterbench.results.sizes import parse_size, size_text
from clusterbench.output.unit_symbols import unit_shown


@dataclass(frozen=True)
class Rule:
    name: str                       # as the headline table says it
    kernel: str                     # "" for a rule on a family
    phase: str
    mode: str | None = None         # the row's mode must be this (None: any)
    mode_ends: str | None = None    # or end with this (gpupeer's ", on": any pair, peer access on)
    unit: str | None = None         # the row's unit must be this (None: any)
    pick: str = "first"             # among the matching rows: first, smallest size, largest size, highest or
                                    # lowest median
    percentile: str | None = None   # a latency field of the records (randio's lat_us_p99) instead of the rate
    family: str | None = None       # any kernel of this family (cbk --describe's), when kernel is ""
    # a size parameter of the step the name states ("{size}": randio's block-size), and the size
    # picked first when steps measured several; a name that said "4 KiB" showed 64 KiB IOPS
    size_param: str | None = None
    size_wanted: int | None = None
    # the headline this one stands in for where that one found nothing: an IOR import (pario) has no
    # seqio figure, and its report said "None of the headline figures ... was measured"
    instead_of: str | None = None

    def name_at(self, size: int | None, mode: str | None = None) -> str:
        """The name as the table says it: with the size its figure was measured at, and
        the mode of the row picked ({mode}: which pair of GPUs was the slowest)."""
        return self.name.format(size=size_text(size) if size is not None else "size not known", mode=mode or "")


HEADLINES = (
    Rule("durable write (fsync)", "seqio", "write", mode="fsync"),
    Rule("cold read", "seqio", "read", mode="cold"),
    Rule("parallel write ({mode})", "pario", "write", pick="durable", instead_of="durable write (fsync)"),
    Rule("parallel read (cache: {mode})", "pario", "read", pick="durable", instead_of="cold read"),
    # an IOR line pario does not run (a script, a hints file) is imported as an `ior` step
    Rule("parallel write ({mode})", "ior", "write", pick="durable", instead_of="durable write (fsync)"),
    Rule("parallel read (cache: {mode})", "ior", "read", pick="durable", instead_of="cold read"),
    Rule("random read, {size}", "randio", "randread", unit="IOPS", size_param="block-size", size_wanted=4096),
    Rule("random read p99 latency, {size}", "randio", "randread", unit="IOPS", percentile="lat_us_p99",
         size_param="block-size", size_wanted=4096),
    # a message size stated: "smallest message" left the reader to find which size it was
    Rule("MPI latency, {size} (smallest message)", "mpi", "pingpong", unit="us", pick="smallest"),
    Rule("MPI bandwidth, {size} (largest message)", "mpi", "bw", pick="largest"),
    Rule("memory bandwidth (triad)", "stream", "triad", pick="highest"),
    Rule("compute (Himeno)", "himeno", "jacobi", unit="MFLOPS"),
    Rule("TCP throughput", "tcp", "send"),
    # the GPU's link each way (pinned memory, the copy engine, the largest size) and its memory
    Rule("GPU copy, host to device", "", "h2d", mode="pinned, copy", pick="largest", family=GPU),
    Rule("GPU copy, device to host", "", "d2h", mode="pinned, copy", pick="largest", family=GPU),
    Rule("GPU memory bandwidth (triad)", "", "triad", pick="highest", family=GPU),
    # between a node's GPUs: what every pair reaches at least, one way, peer access on (gpupeer)
    Rule("GPU to GPU copy, one way (slowest pair: {mode})", "", "unidir", mode_ends=", on", pick="lowest",
         family=GPU),
)

# pick="durable": the mode that says most of the storage first, the page cache's last
DURABLE_FIRST = ("fsync", "fsync-each", "direct", "cold", "buffered+sync", "unknown", "buffered", "warm")


def durable_rank(mode: str | None) -> int:
    return DURABLE_FIRST.index(mode) if mode in DURABLE_FIRST else len(DURABLE_FIRST)


def stands_in(rule: Rule, named: set[str]) -> bool:
    """Whether the rule is left out: it stands in for a headline that was found (by its rule's name)."""
    return rule.instead_of is not None and rule.instead_of in named


# A row whose spread is above this reads as "usable, but spread" in its verdict.
WIDE_CV = 0.10


@dataclass
class Figure:
    """One headline of one run: where it came from, its number and what to say about it."""
    rule: Rule
    name: str                  # the rule's name at the size measured
    step: dict
    row: object                # step_summary.Row
    median: float | None
    unit: str
    beside: str                # the decimal rate (MB/s), or the percentile's spread
    limit: str
    verdict: str
    flagged: bool
    places: int | None = None  # decimals its interval allows, as its step's table prints it (output/figure_digits.py)


def _kernel_matches(rule: Rule, kernel: str, family) -> bool:
    """The rule's kernel, or a kernel of its family (family: a callable, asked only then)."""
    return kernel == rule.kernel if rule.kernel else family() == rule.family


def _matches(rule: Rule, step: dict, row) -> bool:
    return (row.phase == rule.phase and _kernel_matches(rule, step["kernel"], lambda: step_family(step))
            and row.median is not None
            and _mode_matches(rule, row.mode) and (rule.unit is None or row.unit == rule.unit))


def _mode_matches(rule: Rule, mode: str | None) -> bool:
    return ((rule.mode is None or mode == rule.mode)
            and (rule.mode_ends is None or (mode or "").endswith(rule.mode_ends)))


def param_size(rule: Rule, kernel: str, params: dict) -> int | None:
    """The step's value of the rule's size parameter in bytes: as stored, else the kernel's default
    (a step run without --block-size ran at it)."""
    if rule.size_param is None:
        return None
    text = params.get(rule.size_param)
    if text is None:
        from clusterbench.results.params import defaults, kernel_of

        k = kernel_of(kernel)
        text = defaults(k).get(rule.size_param) if k else None
    return parse_size(text) if text is not None else None


def figure_size(rule: Rule, kernel: str, params: dict, row_size: int | None) -> int | None:
    """The size a headline's name states: the step's size parameter (randio's
    block size), else the size of the row picked (an MPI message)."""
    return param_size(rule, kernel, params) if rule.size_param else row_size


def _pick(rule: Rule, found: list[tuple[dict, object]]) -> tuple[dict, object] | None:
    if not found:
        return None
    if rule.size_wanted is not None:   # the wanted size first, else the order measured
        found = sorted(found, key=lambda f: param_size(rule, f[0]["kernel"], f[0]["params"]) != rule.size_wanted)
    if rule.pick == "smallest":
        return min(found, key=lambda f: f[1].size_bytes or 0)
    if rule.pick == "largest":
        return max(found, key=lambda f: f[1].size_bytes or 0)
    if rule.pick == "highest":
        return max(found, key=lambda f: f[1].median)
    if rule.pick == "lowest":
        return min(found, key=lambda f: f[1].median)
    if rule.pick == "durable":
        return min(found, key=lambda f: durable_rank(f[1].mode))
    return found[0]


def percentile_us(step: dict, row, field: str) -> float | None:
    """The median over repetitions of a latency percentile the records carry."""
    values = [s.record.get(field) for s in step.get("samples", ()) if s.key() == row.key]
    values = [v for v in values if isinstance(v, (int, float))]
    return statistics.median(values) if values else None


def short_warning(text: str, said: str = "") -> str:
    """A warning as one clause: without its repetition count, up to its
    first colon ("likely cache effect", "oversubscribed"). A warning whose
    part before the colon only names the figure it is on (`said`: its phase
    and mode) gives its reason instead, up to its first comma: the buffered
    write of seqio is flagged "timed until the data reached the page cache",
    not "buffered write", and pario's "buffered" not "buffered"."""
    _, sep, rest = text.partition(" repetitions: ")
    text = rest if sep else text
    topic, colon, why = text.partition(": ")
    # "imported from IOR: IOR does not empty the page cache" names the source, not the reason
    if colon and why and (set(topic.lower().split()) <= set(said.lower().split()) or topic.startswith("imported from ")):
        return why.split(", ")[0]
    return topic


def point_flag(point, config: str) -> str | None:
    """Why a compared figure (comparison.Point) is flagged, in a few words: its
    ceiling ("page cache"), else its first warning's reason. Point.flag says
    "flagged" for any warning (the JSON contract); a report that printed that
    said "write (buffered): flagged (quickB)" and never why."""
    flag = point.flag(config)
    warnings = point.warnings(config) if flag == "flagged" else []
    return short_warning(warnings[0], f"{point.label} {condition_shown(point.mode)}") if warnings else flag


def verdict(row) -> tuple[str, bool]:
    """One line on a figure, and whether it is flagged."""
    if row.limit_exceeded:
        return "flagged: faster than the component measured can be (see its limit)", True
    if row.warnings:
        return f"flagged: {short_warning(row.warnings[0], row.label + ' ' + condition_shown(row.mode))}", True
    if row.n < 2:   # an imported file's one figure read "ok" beside figures of 5 repetitions
        return ("within its limit; " if row.limit else "") + "one repetition only: its spread is unknown", False
    cv = row.stats.cv
    if cv is not None and cv > WIDE_CV:
        # the CV to the step table's precision (45.6%), not rounded apart from it (46 %)
        return f"usable, wide spread (CV {cv:.1%} over {row.n} repetitions)".replace("%", " %"), False
    if row.limit:
        return "ok: within its limit", False
    return "ok: no warning (no limit known)", False


def none_text(run: dict) -> str:
    """The summary's sentence where no headline matched, saying why: which kernels the run measured
    that no headline is chosen from, or that no step stored a figure."""
    kernels = list(dict.fromkeys(st["kernel"] for st in run["steps"] if st["summary"]))
    why = (f"no headline is chosen from {', '.join(kernels)}: every figure is in its step's table below"
           if kernels else "no step stored a figure")
    return ("None of the headline figures (disk, parallel I/O, random read, MPI, memory, compute, TCP, GPU) "
            f"was measured: {why}.")


def figures(run: dict) -> list[Figure]:
    """The run's headline figures, in HEADLINES order; a rule nothing matched is left out."""
    from clusterbench.output.figure_digits import number
    from clusterbench.report.units_text import beside

    out = []
    for rule in HEADLINES:
        if stands_in(rule, {f.rule.name for f in out}):
            continue
        found = _pick(rule, [(st, r) for st in run["steps"] for r in st["summary"] if _matches(rule, st, r)])
        if found is None:
            continue
        st, row = found
        name = rule.name_at(figure_size(rule, st["kernel"], st["params"], row.size_bytes), row.mode)
        text, flagged = verdict(row)
        if rule.percentile:
            text = text if flagged else "ok: no warning on its repetitions"
            value = percentile_us(st, row, rule.percentile)
            if value is None:
                continue
            p50 = percentile_us(st, row, "lat_us_p50")
            out.append(Figure(rule, name, st, row, value, "us", f"p50 {number(p50)} {unit_shown('us')}" if p50 else "", "", text,
                              flagged))
            continue
        # in the unit its step's table shows: "91,697 MiB/s" headed a table that read 90 GiB/s
        shown = table_units.of_rows(st["summary"])[row.unit]
        s = shown.summary(row.stats)
        out.append(Figure(rule, name, st, row, s.median, shown.unit or "", beside(s.median, shown.unit or "", decimals=median_places(s)),
                          row.limit or "", text, flagged, median_places(s)))
    return out


class FlaggedStep(NamedTuple):
    """A step's flagged figures as the summary lists them: its title, one
    item per reason ('clock 1 busy, clock 2 busy: why'), and how many
    figures those items name: the summary's "Flagged (n)" counts figures,
    not items (two figures sharing a reason read as 4 where 6 were named)."""
    title: str
    reasons: list[str]
    figures: int


def flagged_by_step(run: dict) -> list[FlaggedStep]:
    """Each flagged figure once, under its step's title (said once); figures
    flagged for the same reason share one item: 'clock 1 busy, clock 2 busy: why'."""
    out = []
    titles = step_titles(run["steps"])
    for st in run["steps"]:
        reasons: dict[str, list] = {}
        for r in st["summary"]:
            why = r.limit if r.limit_exceeded else short_warning(r.warnings[0], f"{r.label} {condition_shown(r.mode)}") \
                if r.warnings else None
            if why:
                reasons.setdefault(why, []).append(r)
        if reasons:
            out.append(FlaggedStep(titles[st["id"]], [f"{_figures_text(rows, st['summary'])}: {why}"
                                                      for why, rows in reasons.items()],
                                   sum(len(rows) for rows in reasons.values())))
    return out


# A curve (one phase and mode over sizes) with this many flagged sizes or more is said as
# its size range: one GPU's link out of range at 12 sizes was 12 names in one line
SIZE_RANGE_FROM = 3


def _figures_text(rows: list, step_rows: list) -> str:
    """The figures one reason flags: "every figure (156)" where it flags all
    of a step's (a GPU step on the test runtime listed 156 names in one
    line); else their names, joined by "; " where a name has commas of its
    own ("host to device 8 B pinned, copy"): by ", ", two read as four. A
    curve flagged at SIZE_RANGE_FROM sizes or more reads as its range, as an
    integrator pastes it: "host to device pinned, copy at 8 B .. 64 KiB (12
    figures)"; where the curve has sizes in that range that are not flagged,
    "at 5 of its sizes from 8 B to 64 KiB": a range read as every size in it."""
    if len(rows) == len(step_rows) > 2:
        return f"every figure ({len(step_rows)})"
    from clusterbench.results.sample import size_text

    curves: dict = {}
    for r in rows:
        curves.setdefault(r.key.curve(), []).append(r)
    names = []
    for curve, members in curves.items():
        sizes = sorted({r.size_bytes for r in members if r.size_bytes is not None})
        if len(sizes) >= SIZE_RANGE_FROM:
            name = f"{curve.label} {condition_shown(curve.condition)}".strip()
            between = {r.size_bytes for r in step_rows if r.key.curve() == curve and r.size_bytes is not None
                       and sizes[0] <= r.size_bytes <= sizes[-1]}
            names.append(f"{name} at {size_text(sizes[0])} .. {size_text(sizes[-1])} ({len(members)} figures)"
                         if len(between) == len(sizes) else
                         f"{name} at {len(sizes)} of its sizes from {size_text(sizes[0])} to {size_text(sizes[-1])} "
                         f"({len(members)} figures)")
        else:
            names += [f"{r.label} {condition_shown(r.mode)}".strip() for r in members]
    names = list(dict.fromkeys(names))
    return ("; " if any(", " in n for n in names) else ", ").join(names)


def nothing_flagged(cluster: bool = False) -> str:
    """The sentence for a report in which no figure is flagged; a cluster
    run's says it of its steps' figures, beside what was found across the
    nodes (which read as contradicted by a plain "No figure is flagged")."""
    if cluster:
        return ("No step's figure is flagged by a warning or a physical limit; "
                "what differs between the nodes is said above.")
    return "No figure is flagged by a warning or a physical limit."


@dataclass
class Compared:
    """One headline across configurations: per configuration its median (and flag), and the verdicts."""
    rule: Rule
    name: str                           # the rule's name at the size measured
    unit: str
    medians: dict[str, float | None]
    flags: dict[str, str | None]
    ratio: dict[str, float | None]      # other config -> its median / the baseline's
    verdict: dict[str, str]             # other config -> verdict text
    places: dict[str, int | None] = field(default_factory=dict)  # config -> decimals its interval allows
    reasons: dict[str, str] = field(default_factory=dict)  # other config -> the reason its verdict text ends with


def _point_matches(rule: Rule, p) -> bool:
    """As _matches, for a comparison's point (compare.Point)."""
    return (p.key.phase == rule.phase and _kernel_matches(rule, p.kernel, lambda: family_of(p.kernel))
            and _mode_matches(rule, p.mode) and (rule.unit is None or p.unit == rule.unit))


def compared(table, runs: list[dict]) -> list[Compared]:
    """The headlines of a comparison (compare.Table), baseline first; a
    percentile (not a compared sample) is the median over its configuration's runs."""
    names = table.names
    out = []
    for rule in HEADLINES:
        if rule.percentile:
            medians, named = {}, {}
            for c in table.configs:
                found = [f for r in runs if r["id"] in c.run_ids for f in figures(r) if f.rule == rule]
                medians[c.name] = statistics.median(f.median for f in found) if found else None
                named.update((f.name, None) for f in found)
            # one size in every configuration, or none compared: p99s of 4 KiB and 64 KiB are not one figure
            if any(v is None for v in medians.values()) or len(named) != 1:
                continue
            base = medians[names[0]]
            out.append(Compared(rule, next(iter(named)), "us", medians, dict.fromkeys(names),
                                {n: medians[n] / base if base else None for n in names[1:]},
                                {n: "no test: one percentile per repetition" for n in names[1:]}))
            continue
        found = [p for p in table.points if _point_matches(rule, p)]
        if not found or stands_in(rule, {c.rule.name for c in out}):
            continue
        if rule.size_wanted is not None:
            found.sort(key=lambda q: param_size(rule, q.kernel, q.params) != rule.size_wanted)
        if rule.pick == "smallest":
            p = min(found, key=lambda q: q.key.size_bytes or 0)
        elif rule.pick == "largest":
            p = max(found, key=lambda q: q.key.size_bytes or 0)
        elif rule.pick == "highest":
            p = max(found, key=lambda q: q.summary(names[0]).median or 0)
        elif rule.pick == "lowest":
            p = min(found, key=lambda q: q.summary(names[0]).median or float("inf"))
        elif rule.pick == "durable":
            p = min(found, key=lambda q: durable_rank(q.mode))
        else:
            p = found[0]
        from clusterbench.report.compare_data import row_units, unit_key

        shown = row_units(table)[unit_key(p)]   # in the unit the comparison's row shows
        out.append(Compared(rule, rule.name_at(figure_size(rule, p.kernel, p.params, p.key.size_bytes), p.mode),
                            shown.unit or "",
                            {n: shown.summary(p.summary(n)).median for n in names}, {n: point_flag(p, n) for n in names},
                            {n: p.versus(names[0], n).ratio for n in names[1:]},
                            {n: p.verdict_text(names[0], n) for n in names[1:]},
                            {n: median_places(shown.summary(p.summary(n))) for n in names},
                            {n: p.versus(names[0], n).reason for n in names[1:]}))
    return out
