"""The per-GPU tables of a cluster run (analysis/cluster/gpus.py) as every
format prints them: the headings, the columns, the rows in their order and
each cell's figure and flag. The terminal (cluster_terminal.py), Markdown
(cluster_markdown.py) and HTML (cluster_html.py) sections only lay them
out and mark a flagged cell their own way; before, the Markdown section
had no GPU table at all, because each format rebuilt the rows itself."""
from __future__ import annotations

from dataclasses import dataclass

from clusterbench.analysis.cluster.analysis import ClusterView
from clusterbench.analysis.cluster.gpus import pair_verdict, tables
from clusterbench.output.figure_digits import number
from clusterbench.output.unit_symbols import unit_shown


@dataclass(frozen=True)
class Cell:
    text: str                  # "27.6 (0.50)": the figure and its ratio, without any mark; "-" for none
    figure: bool = False       # a number: right-aligned
    flagged: bool = False


@dataclass(frozen=True)
class GpuTable:
    title: str                 # "Per GPU", "Copies between the GPUs of a node"
    scale: str                 # "GB/s, ratio to the median of the GPUs"
    columns: list[str]
    labels: int                # the leading columns that name the row (left-aligned)
    rows: list[list[Cell]]


def _verdict(v) -> Cell:
    return Cell(f"{number(v.value)} ({v.ratio:.2f})", True, v.flagged) if v is not None else Cell("-")


def _unit(figures) -> str:
    """The figures' unit as shown; they share one (GB/s)."""
    return ", ".join(sorted({unit_shown(f.unit) for f in figures}))


def gpu_tables(view: ClusterView) -> list[GpuTable]:
    """A row per GPU (flagged first) with its host copies and memory figures
    across, the medians first; then the copies between the GPUs of a node a
    row per pair with the nodes across. None without GPU figures."""
    tb = tables(view.gpus)
    out = []
    if tb.columns:
        rows = [[Cell("median"), Cell(""), *(Cell(number(f.median), True) for f in tb.columns)]]
        rows += [[Cell(g.label), Cell(g.bus_id), *(_verdict(f.gpus.get(g.label)) for f in tb.columns)]
                 for g in tb.gpus]
        out.append(GpuTable("Per GPU", f"{_unit(tb.columns)}, ratio to the median of the GPUs",
                            ["GPU", "bus id", *(f.name for f in tb.columns)], 2, rows))
    if tb.pairs:
        rows = [[Cell(f.name), Cell(number(f.median), True), *(_verdict(pair_verdict(f, h)) for h in tb.hosts)]
                for f in tb.pairs]
        out.append(GpuTable("Copies between the GPUs of a node", f"{_unit(tb.pairs)}, ratio to the median of the nodes",
                            ["pair", "median", *tb.hosts], 1, rows))
    return out
