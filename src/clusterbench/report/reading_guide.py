"""The report's closing "How to read the figures": what each statistic and
mark in its tables means, in the words of docs/statistics.md and
docs/limits.md, for a reader who has neither. A procurement reviewer sent
the report back for CV, p99 and the E-codes left unexplained; one text for
the HTML and the Markdown report, each listing only the terms its pages
use."""
from __future__ import annotations

import re

from clusterbench.analysis.stats import outlier_bound

# (term, what it means, patterns of the report's text that show it is used: none, every report)
TERMS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("median", "the centre of a figure's repetitions, the value reported everywhere: a slow first "
     "repetition does not move it", ()),
    ("n", "the repetitions with a finite value", ()),
    ("interval of the median (95 % CI)", "distribution-free, from order statistics: the narrowest range "
     "of the repetitions that holds the true median with at least 95 % probability. Below 6 repetitions "
     "no range reaches 95 %: then the range from min to max is given with its real coverage (75 % at "
     "n = 3, 94 % at n = 5)", ()),
    ("CV", "coefficient of variation, the repetitions' standard deviation over their mean: their "
     "spread, not the figure's accuracy", (r"\bCV\b",)),
    ("p50, p90, p99, p99.9, p99.99", "latency percentiles: half, 90 %, 99 %, 99.9 % and 99.99 % of one "
     "repetition's operations took at most this long (max: the longest); the median of the repetitions' "
     "values is shown", (r"\bp99",)),
    ("outlier by modified Z-score > b at n = k", "a repetition further from the others than chance "
     "would put it: its distance from the median over the repetitions' median absolute deviation "
     "(times 0.6745) is above b, the bound that k repetitions of pure noise pass in 1 % of steps (so "
     f"large at n = 3, {outlier_bound(3):.1f}, because three values say little about their spread); it is named under "
     "the table and kept in every figure", (r"\boutliers? by modified Z-score\b",)),
    ("fastest / mean / slowest rank", "one iteration's time on the fastest rank, averaged over the ranks, "
     "and on the slowest rank (IMB's minimum, average and maximum time), each the median over the repetitions: a "
     "wide gap says ranks waited for each other", (r"fastest / mean / slowest rank",)),
    ("MB/s per pair", "one pair of ranks' bytes of one iteration over its mean time, the figure IMB "
     "PingPong and osu_bw print; beside a latency, the message size over that latency. The median "
     "in the unit column is the rate of all pairs together", (r"MB/s per pair",)),
    ("limit", "the physical ceiling the figure was checked against (a disk's, a link's, memory's rate, "
     "from the machine's description); a figure above it, marked !, cannot have come through that "
     "component alone", (r"\blimit\b",)),
    ("flagged, !, a hatched bar", "a warning or a physical limit says the figure is not what its mode "
     "claims (a read from the page cache where a cold read was asked for, a write timed before it was "
     "durable): not a like-for-like figure", (r"(?i)\bflagged\b", r"\bhatched\b")),
    ("ratio and verdict", "the other configuration's median over the baseline's. Faster or slower only "
     "where the two-sided Mann-Whitney U test gives p < 0.05 and the change is 2 % or more; \"no "
     "significant difference\" is no proof of equality (compare the intervals); \"undecidable\" where "
     "the repetitions are too few for any test to reach p < 0.05 (3 against 3 cannot)", (r"\bverdict \(p\)",)),
    ("E1 .. E11", "the measurements people make by hand when they characterise a cluster (dd and sync, "
     "drop_caches, iperf, fio, IOR, MPI benchmarks, Himeno): a step named with one measures what that "
     "experiment measures: E1 a local disk against the page cache, E2 a network file system, E3 a "
     "distributed one with IOR, E4 many files over iSCSI, E5 random IOPS and tuning profiles, E6 link "
     "aggregation, E7 MPI communication, E8 MPI-IO strategies, E9 compute and the clock under load, E10 "
     "the environment, E11 jobs on a scheduler, GPUs and containers", (r"\bE(?:[1-9]|1[01])\b",)),
)


def used(text: str) -> list[tuple[str, str]]:
    """The (term, meaning) pairs of the terms `text` uses; those without a
    mark (median, n, the interval) are in every report."""
    return [(term, meaning) for term, meaning, marks in TERMS if not marks or any(re.search(m, text) for m in marks)]


def html_section(body_text: str) -> str:
    from clusterbench.output.render_text import html as esc

    # each term and its meaning in one <div> the print CSS keeps whole: "CV" stood at the foot of a page, its meaning on the next
    items = "".join(f"<div><dt>{esc(term)}</dt><dd>{esc(meaning)}.</dd></div>" for term, meaning in used(body_text))
    return f'<h2>How to read the figures</h2><dl class="guide">{items}</dl>'


def markdown_lines(body_text: str) -> list[str]:
    from clusterbench.output.render_text import markdown as md

    return ["", "## How to read the figures", "",
            *[f"- **{md(term)}**: {md(meaning)}." for term, meaning in used(body_text)]]
