"""The executive summary of a report: sentences generated from the data,
chosen as docs/statistics.md ("The report's summary") describes:

1. the largest significant differences (at most MAX_DIFFERENCES, by the size
   of the change), each with its verdict and its flag when a side is flagged;
2. how many measurements showed no significant difference or could not be
   decided;
3. every flagged figure (a warning or a ceiling it is above);
4. the environment difference that most likely explains the result: the
   first differing key in EXPLAINING_KEYS order for the kind of measurement
   that differed most (storage keys for I/O, network keys for network
   figures, processor and memory keys otherwise).
"""
from __future__ import annotations

import math

from clusterbench.analysis.comparison import Point, Table
from clusterbench.output.counted_text import counted
from clusterbench.report.headline import FlaggedStep, nothing_flagged, point_flag
from clusterbench.output.figure_digits import median
from clusterbench.analysis.stats import Verdict
from clusterbench.output.unit_symbols import unit_shown
from clusterbench.results.sample import condition_shown

MAX_DIFFERENCES = 3

# Environment keys in the order they explain a difference, per kind of figure.
EXPLAINING_KEYS = {
    "io": ("target.fs_type", "target.device", "target.model", "target.rotational", "target.scheduler",
           "target.mount_options", "conditions.memory_limit_bytes", "memory.total_bytes", "kernel.release"),
    "network": ("conditions.link_bits_per_s", "net.", "ib.", "kernel.release", "cpu.model"),
    "compute": ("cpu.model", "cpu.governor", "cpu.turbo", "tuned.profile", "cpu.freq_max_mhz", "memory.total_bytes", "numa.nodes",
                "compiler.", "mpi.", "kernel.release"),
}


def kind(p: Point) -> str:
    """The kind of figure, from the kernel's family in cbk --describe (an
    MPI figure is a network one when it is a bandwidth); a kernel this cbk
    does not have (an imported tool's) counts as compute."""
    from clusterbench.results.params import kernel_of

    k = kernel_of(p.kernel)
    family = k.family if k else None
    if family == "io":
        return "io"
    if family == "network" or (family == "mpi" and p.unit in ("MiB/s", "MB/s")):
        return "network"
    return "compute"


def difference_sentence(table: Table, p: Point, other: str) -> str:
    base = table.names[0]
    c = p.versus(base, other)
    a, b = median(p.summary(base)), median(p.summary(other))
    verb = f"is {c.verdict.value} than" if c.verdict in (Verdict.FASTER, Verdict.SLOWER) else "differs from"
    times = f"{c.ratio:.2f} times {base}'s figure" if c.ratio is not None else f"from {base}'s median of 0"
    text = (f"{other} {verb} {base} in {table.title(p)} ({condition_shown(p.mode) or 'no mode'}): {b} vs {a} "
            f"{unit_shown(p.unit)}, {times} (p = {c.p:.2g}).")
    # a ceiling reads as what the figure is ("disk is page cache"), a warning as why it is flagged
    flags = [f"{n} is {f}" if p.flag(n) != "flagged" else f"{n} is flagged ({f})"
             for n in (base, other) if (f := point_flag(p, n))]
    if flags:
        text += f" But {' and '.join(flags)}: not a like-for-like figure."
    return text


def significant(table: Table) -> list[tuple[Point, str]]:
    """(point, config) pairs with a significant change, largest change first."""
    base = table.names[0]
    found = []
    for p in table.points:
        for n in table.names[1:]:
            c = p.versus(base, n)
            if c.verdict in (Verdict.FASTER, Verdict.SLOWER, Verdict.CHANGED):
                # no ratio: a change from a median of 0, larger than any other
                found.append((abs(c.change) if c.change is not None else math.inf, p, n))
    found.sort(key=lambda t: -t[0])
    return [(p, n) for _, p, n in found]


def explaining_line(table: Table, p: Point | None) -> str | None:
    """The first environment difference, in EXPLAINING_KEYS order for p's kind; its key in
    words ("host name", "kernel release"), as the environment tables under it say it."""
    from clusterbench.environment.key_words import key_words

    if not table.env_diffs:
        return None
    order = EXPLAINING_KEYS[kind(p)] if p is not None else EXPLAINING_KEYS["compute"]
    for prefix in order:
        for d in table.env_diffs:
            for key, a, b in d.lines:
                if (key == prefix or (prefix.endswith(".") and key.startswith(prefix))) and a is not None \
                        and b is not None:
                    return (f"The environments differ in {key_words(key)}: {a} ({d.base}) vs {b} ({d.other}); "
                            "of the differences found, this one most likely explains the result.")
    for d in table.env_diffs:  # none of the usual suspects: the first difference, said as such
        for key, a, b in d.lines:
            if not key.endswith("_error"):
                return (f"The environments of {d.base} and {d.other} differ in {counted(len(d.lines), 'key')}, "
                        f"first {key_words(key)}: {a} vs {b}.")
    return None


def sentences(table: Table) -> list[str]:
    base = table.names[0]
    out = []
    sig = significant(table)
    for p, n in sig[:MAX_DIFFERENCES]:
        out.append(difference_sentence(table, p, n))
    total = len(table.points) * (len(table.names) - 1)
    verdicts = [p.versus(base, n).verdict for p in table.points for n in table.names[1:]]
    same = sum(v == Verdict.SAME for v in verdicts)
    undecided = sum(v == Verdict.UNDECIDABLE for v in verdicts)
    if not sig:
        out.append(f"No measurement differs significantly from {base} (Mann-Whitney U, p < 0.05).")
    rest = []
    if same:
        rest.append(f"{same} of {total} comparisons show no significant difference")
    if undecided:
        rest.append(f"{undecided} cannot be decided with the repetitions made (repeat at least 4 times each)")
    if rest:
        out.append("; ".join(rest).capitalize() + ".")
    flagged = sum(s.figures for s in flagged_by_step(table))
    if flagged:
        out.append(f"{counted(flagged, 'figure')} {'is' if flagged == 1 else 'are'} flagged and "
                   f"{'is not what its mode claims' if flagged == 1 else 'are not what their mode claims'} "
                   "(listed below, once each).")
    else:
        out.append(nothing_flagged())
    line = explaining_line(table, sig[0][0] if sig else None)
    if line:
        out.append(line)
    return out



def flagged_by_step(table: Table) -> list[FlaggedStep]:
    """Each flagged figure once, under its step (said once), with the
    configurations it is flagged in: 'read (cold): page cache (a and b)'."""
    steps: dict[str, list[str]] = {}
    for p in table.points:
        why: dict[str, list[str]] = {}
        for n in table.names:
            if reason := point_flag(p, n):
                why.setdefault(reason, []).append(n)
        if why:
            steps.setdefault(p.step, []).append(
                f"{p.label} ({condition_shown(p.mode) or 'no mode'}): " + ", ".join(f"{f} ({' and '.join(ns)})" for f, ns in why.items()))
    return [FlaggedStep(step, items, len(items)) for step, items in steps.items()]   # an item per figure
