"""The terminal view of two cluster runs compared (`compare A B` when both
are cluster runs): node by node, GPU by GPU, then link by link; flags first.
What it says (verdict, tables, rows, cells) is cluster_before_after.py's,
which the Markdown and HTML reports of the two runs print too; this is
only its layout."""
from __future__ import annotations

from rich.console import Console
from rich.table import Table

from clusterbench.output.render_text import terminal
from clusterbench.report.cluster_before_after import ChangeTable, before_after


def _table(t: ChangeTable) -> Table:
    out = Table(title=t.title, title_justify="left")
    for col, figure in zip(t.columns, t.figures):
        out.add_column(terminal(col), justify="right" if figure else "left")
    for row in t.rows:
        out.add_row(*(terminal(c) for c in row))
    return out


def print_cluster_comparison(console: Console, run_a: dict, run_b: dict) -> None:
    found = before_after(run_a, run_b)
    console.print(f"[bold]{terminal(found.heading)}[/bold]: {terminal(found.verdict)}")
    for t in found.tables:
        console.print(_table(t))
