"""compare --fail-if: a comparison as a performance-regression gate for CI
pipelines. The condition holds when some point's verdict says so (a
significant difference, docs/statistics.md) and its change is at least
the threshold; `compare` then exits with GATE_EXIT."""
from __future__ import annotations

from clusterbench.analysis.comparison import Table
from clusterbench.analysis.stats import Verdict
from clusterbench.results.sample import condition_shown

GATE_EXIT = 3
CONDITIONS = ("slower", "faster", "different")


def holds(verdict: Verdict, condition: str) -> bool:
    if condition == "slower":
        return verdict == Verdict.SLOWER
    if condition == "faster":
        return verdict == Verdict.FASTER
    return verdict in (Verdict.SLOWER, Verdict.FASTER, Verdict.CHANGED)


def failing(table: Table, condition: str, threshold_pct: float) -> list[str]:
    """One line per point and configuration for which the condition holds."""
    names = table.names
    out = []
    for p in table.points:
        for n in names[1:]:
            c = p.versus(names[0], n)
            # no change ratio: the baseline's median is 0 and this one's is not, past any threshold
            if holds(c.verdict, condition) and (c.change is None or abs(c.change) * 100 >= threshold_pct):
                change = f"{c.change:+.1%}" if c.change is not None else "from a median of 0"
                out.append(f"{n} vs {names[0]}: {f'{table.title(p)} {condition_shown(p.mode)}'.rstrip()}: {p.verdict_text(names[0], n)}, "
                           f"{change}")
    return out
