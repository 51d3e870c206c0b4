"""The terminal view of two cluster runs compared (`compare A B` when both
are cluster runs): node by node, GPU by GPU, then link by link; flags first."""
from __future__ import annotations

from rich.console import Console
from rich.table import Table

from clusterbench.analysis.cluster.analysis import analyse, thresholds_of
from clusterbench.analysis.cluster.before_after import Change, gpu_changes, link_changes, node_changes, verdict
from clusterbench.output.counted_text import counted
from clusterbench.output.render_text import terminal
from clusterbench.output.figure_digits import number
from clusterbench.output.unit_symbols import unit_shown


def _table(title: str, changes: list[Change], a: int, b: int) -> Table:
    t = Table(title=title, title_justify="left")
    for col in ("", "unit", f"run {a}", f"run {b}", "ratio", "flags"):
        t.add_column(col, justify="right" if col.startswith(("run", "ratio")) else "left")
    for c in sorted(changes, key=lambda c: (verdict(c) == "", c.what)):
        t.add_row(terminal(c.what), terminal(unit_shown(c.unit)), number(c.before), number(c.after), f"{c.ratio:.2f}", verdict(c))
    return t


def print_cluster_comparison(console: Console, run_a: dict, run_b: dict) -> None:
    va, vb = analyse(run_a, **thresholds_of(run_a)), analyse(run_b, **thresholds_of(run_b))
    nodes, gpus, links = node_changes(va, vb), gpu_changes(va, vb), link_changes(va, vb)
    fixed = [c.what for c in nodes + gpus + links if verdict(c) == "fixed"]
    new = [c.what for c in nodes + gpus + links if verdict(c) == "new flag"]
    console.print(f"[bold]Cluster run {run_b['id']} against run {run_a['id']}[/bold]: "
                  f"{counted(len(fixed), 'flag')} gone{': ' + terminal(', '.join(fixed)) if fixed else ''}; "
                  f"{len(new)} new{': ' + terminal(', '.join(new)) if new else ''}.")
    if nodes:
        console.print(_table("Node by node", nodes, run_a["id"], run_b["id"]))
    if gpus:
        console.print(_table("GPU by GPU", gpus, run_a["id"], run_b["id"]))
    if links:
        console.print(_table("Link by link (bandwidth)", links, run_a["id"], run_b["id"]))
