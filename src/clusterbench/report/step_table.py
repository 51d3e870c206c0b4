"""A step's summary table as the printed reports give it: one model of its columns and cells, as
a reader sees them (unescaped), which the Markdown and the HTML renderer only lay out and escape.
Each built its own, and the Markdown table lacked the HTML's CV, rank times and pair rate columns
(and said its MB/s otherwise): the same table carried less in one format than in the other.
`show` keeps its own (report/terminal.py), which gives way column by column to the terminal's width."""
from __future__ import annotations

from dataclasses import dataclass

from clusterbench.output.figure_digits import at, derived_places, median_places, number, places
from clusterbench.output.unit_symbols import unit_shown
from clusterbench.report import table_units
from clusterbench.report.terminal import (PAIR_RATE, RANK_TIMES, ci_words, condition_header, limit_text,
                                          shared_interval_words)
from clusterbench.report.units_text import beside
from clusterbench.results.sample import condition_shown

# what a column holds, which sets how a renderer aligns and marks it up
TEXT, FIGURE, INTERVAL, UNIT, LIMIT = "text", "figure", "interval", "unit", "limit"


@dataclass(frozen=True)
class Column:
    heading: str
    kind: str


@dataclass(frozen=True)
class Cell:
    text: str
    note: str = ""          # words after the figure: an interval's coverage, the MB/s beside a MiB/s unit
    flagged: bool = False   # the median a warning or a limit flags ("!")


@dataclass(frozen=True)
class StepTable:
    columns: list[Column]
    rows: list[list[Cell]]


def of_step(st: dict) -> StepTable:
    """The table of a step's summary rows (st["summary"], step_summary.Row each)."""
    summary = st["summary"]
    condition = condition_header(summary, st["kernel"])   # none where no figure has one (null, himeno)
    said = shared_interval_words(summary)                  # once in the heading, not in every cell
    ranks = st["ranks"] > 1 and any(r.rank_medians for r in summary)   # IMB's t_min/t_avg/t_max
    bandwidth = any(r.median_bandwidth_mb_s is not None for r in summary)
    limits = any(r.limit for r in summary)
    columns = ([Column("phase", TEXT)] + ([Column(condition, TEXT)] if condition else [])
               + [Column("n", FIGURE), Column("median", FIGURE),
                  Column("interval of the median" + (f" {said}" if said else ""), INTERVAL),
                  Column("min", FIGURE), Column("max", FIGURE), Column("CV", FIGURE), Column("unit", UNIT)]
               + ([Column(f"{RANK_TIMES} ({unit_shown('us')})", FIGURE)] if ranks else [])
               + ([Column(PAIR_RATE, FIGURE)] if bandwidth else []) + ([Column("limit", LIMIT)] if limits else []))
    shown = table_units.of_rows(summary)   # 3,645 GiB/s, not 3,732,681 MiB/s
    rows = []
    for r in summary:
        u = shown[r.unit]
        s = u.summary(r.stats)
        d, dm = places(s), median_places(s)   # interval, min and max to its place; the median 3 digits at least
        span, _, words = ci_words(s).partition(" ")
        cells = ([Cell(r.label)] + ([Cell(condition_shown(r.mode))] if condition else [])
                 + [Cell(str(r.n)), Cell(at(s.median, dm), flagged=bool(r.warnings or r.limit_exceeded)),
                    Cell(span, "" if said and words == said else words),
                    Cell(at(s.minimum, d)), Cell(at(s.maximum, d)), Cell(f"{s.cv:.1%}" if s.cv is not None else "-"),
                    Cell(unit_shown(u.unit), beside(s.median, u.unit, decimals=dm))]
                 + ([Cell(" / ".join(number(t) for t in r.rank_medians or ()))] if ranks else [])
                 + ([Cell(at(r.median_bandwidth_mb_s, derived_places(r.median_bandwidth_mb_s, s)))]
                    if bandwidth else [])
                 + ([Cell(limit_text(r))] if limits else []))
        rows.append(cells)
    return StepTable(columns, rows)
