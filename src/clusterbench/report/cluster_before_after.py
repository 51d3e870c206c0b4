"""Two cluster runs compared (analysis/cluster/before_after.py) as every
format prints them: the heading, the one-line verdict (the flags gone and
the new ones, each named), and the node by node, GPU by GPU and link by
link tables with their columns, rows in order (flagged changes first) and
cells as text. The terminal (`compare A B`, cluster_compare_terminal.py),
Markdown and HTML reports (`report A B`, cluster_markdown.py,
cluster_html.py) only lay them out and escape the text their own way:
the before/after an integrator hands a customer says what the terminal
said, word for word and figure for figure."""
from __future__ import annotations

import math
from dataclasses import dataclass

from clusterbench.analysis.cluster.analysis import analyse, thresholds_of
from clusterbench.analysis.cluster.before_after import (Change, gpu_changes, link_changes, node_changes, nodes_in_one,
                                                         verdict)
from clusterbench.output.counted_text import counted
from clusterbench.output.figure_digits import number
from clusterbench.output.unit_symbols import unit_shown
from clusterbench.store import run_kinds


@dataclass(frozen=True)
class ChangeTable:
    title: str                 # "Node by node"
    columns: list[str]         # the first names what a row is; "run 1", "run 2": the figures
    figures: list[bool]        # per column: a number, right-aligned
    rows: list[list[str]]      # cells as text, not escaped
    flags: list[str]           # per row: its verdict ("fixed", "new flag", "still flagged", "")


@dataclass(frozen=True)
class BeforeAfter:
    heading: str               # "Cluster run 2 (after repair) against run 1 (acceptance)"
    verdict: str               # "3 flags gone: h03: ..., h03->h01; 0 new."
    tables: list[ChangeTable]  # only those with a row, in the order node, GPU, link

    @property
    def opening(self) -> str:
        """The verdict as a summary's first sentence: 'Cluster run 2 (new
        cable) against run 1 (acceptance): 6 flags gone: ...; 0 new.'"""
        return f"{self.heading}: {self.verdict}"


def run_name(run: dict) -> str:
    return f"run {run['id']}" + (f" ({run['label']})" if run.get("label") else "")


def _ratio(c: Change) -> str:
    return f"{c.ratio:.2f}" if math.isfinite(c.ratio) else "-"   # a figure of 0 before: no ratio


def _table(title: str, first_column: str, changes: list[Change], run_a: dict, run_b: dict) -> ChangeTable:
    ordered = sorted(changes, key=lambda c: (verdict(c) == "", c.what))
    return ChangeTable(
        title, [first_column, "unit", f"run {run_a['id']}", f"run {run_b['id']}", "ratio", "flags"],
        [False, False, True, True, True, False],
        [[c.what, unit_shown(c.unit), number(c.before), number(c.after), _ratio(c), verdict(c)] for c in ordered],
        [verdict(c) for c in ordered])


def before_after(run_a: dict, run_b: dict) -> BeforeAfter:
    """Run B (after a repair) against run A (before), each judged by its own thresholds."""
    va, vb = analyse(run_a, **thresholds_of(run_a)), analyse(run_b, **thresholds_of(run_b))
    nodes, gpus, links = node_changes(va, vb), gpu_changes(va, vb), link_changes(va, vb)
    fixed = [c.what for c in nodes + gpus + links if verdict(c) == "fixed"]
    new = [c.what for c in nodes + gpus + links if verdict(c) == "new flag"]
    only_a, only_b = nodes_in_one(va, vb)
    alone = [f"Measured in {run_name(run)} only: {', '.join(hosts)}."
             for run, hosts in ((run_a, only_a), (run_b, only_b)) if hosts]
    # a figure's name has commas of its own ("h03: compute (Himeno), jacobi (time)"): the flags are
    # joined by "; " and each count is a sentence of its own, so no list runs into the next
    said = " ".join([f"{counted(len(fixed), 'flag')} gone{': ' + '; '.join(fixed) if fixed else ''}.",
                     f"{len(new)} new{': ' + '; '.join(new) if new else ''}.", *alone])
    tables = [_table("Node by node", "node: figure", nodes, run_a, run_b),
              _table("GPU by GPU", "GPU: figure", gpus, run_a, run_b),
              _table("Link by link (bandwidth)", "link", links, run_a, run_b)]
    return BeforeAfter(f"Cluster {run_name(run_b)} against {run_name(run_a)}", said, [t for t in tables if t.rows])


def of_report(runs: list[dict]) -> BeforeAfter | None:
    """The before/after of a report of exactly two cluster runs (the second
    against the first, as given), else None."""
    if len(runs) != 2 or any(r.get("kind") != run_kinds.CLUSTER for r in runs):
        return None
    return before_after(runs[0], runs[1])
