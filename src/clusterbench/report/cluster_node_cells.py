"""A node's cell of the per-node table (the nodes side by side), as the
Markdown (cluster_markdown.py) and HTML (cluster_html.py) sections and
show (cluster_terminal.py, in the terminal's shorter words) print it: the
node's median over its repetitions, its ratio to the median of the nodes,
and its spread as a step's table gives it (the interval of the median
named by its coverage, and n). With the median alone a reader
could not tell a node 8 % low from a node whose repetitions scatter 8 %."""
from __future__ import annotations

from dataclasses import dataclass

from clusterbench.analysis.cluster.analysis import Figure
from clusterbench.output import figure_digits
from clusterbench.report.terminal import ci_text, ci_words


@dataclass(frozen=True)
class NodeCell:
    figure: str      # "601 (1.00)": the median at its interval's places, and the ratio
    flagged: bool
    spread: str      # "600..602 ([min, max], n = 3, coverage 75 %)", "598..604 (95 % CI), n = 8", "n = 1"
    # the same as show's step tables give it (terminal.ci_text) and n, short enough for a node's column:
    # "600..602 (75%), n = 3"
    spread_short: str = ""


def spread_words(s) -> str:
    """The interval as the step tables word it (terminal.ci_words), and n:
    ci_words names n only where the interval is [min, max]."""
    if s.n < 2:
        return f"n = {s.n}"   # one repetition: no interval to give
    words = ci_words(s)
    return words if f"n = {s.n}" in words else f"{words}, n = {s.n}"


def spread_short(s) -> str:
    """The interval as show's step tables give it, and n."""
    return f"n = {s.n}" if s.n < 2 else f"{ci_text(s)}, n = {s.n}"


def node_cell(figure: Figure, host: str) -> NodeCell | None:
    """None where the node has no value of the figure."""
    v = next((nv for nv in figure.nodes if nv.host == host), None)
    if v is None:
        return None
    s = figure.node_summaries.get(host)
    if s is None or s.n == 0:
        return NodeCell(f"{figure_digits.number(v.value)} ({v.ratio:.2f})", v.flagged, "")
    return NodeCell(f"{figure_digits.median(s)} ({v.ratio:.2f})", v.flagged, spread_words(s), spread_short(s))


def _words_after_span(spread: str) -> str | None:
    """"([min, max], n = 3, coverage 75 %)" of "600..602 ([min, max], n = 3, coverage 75 %)"; None for "n = 1"."""
    span, _, words = spread.partition(" ")
    return words if ".." in span and words else None


def shared_spread_words(cells: list[NodeCell | None]) -> str:
    """The words every node cell's interval has, to be said once in the table's heading; "" where
    they differ (5 repetitions on one node, 3 on another) or a cell has none. Every cell of a cluster
    run said "([min, max], n = 3, coverage 75 %)": two of its four lines on A4."""
    found = {_words_after_span(c.spread) for c in cells if c is not None and c.spread}
    return found.pop() if len(found) == 1 and None not in found else ""


def spread_shown(cell: NodeCell, said: str) -> str:
    """The cell's interval, less the words the heading says (shared_spread_words)."""
    return cell.spread[:-len(said) - 1] if said and cell.spread.endswith(" " + said) else cell.spread


def heading_words(said: str) -> str:
    """What the per-node table's heading says of the cells' second line."""
    return f"interval of the median {said}" if said else "interval of the median, n = repetitions"
