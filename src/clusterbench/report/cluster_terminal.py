"""The terminal view of a cluster run (`show` of a run of suite
"cluster"): the summary (a finding a line), the per-node table (flagged figures
first), the per-GPU tables, the link matrix, the environment keys that
differ, the scaling."""
from __future__ import annotations

from rich.console import Console
from rich.table import Table

from clusterbench.analysis.cluster.analysis import ClusterView, analyse, thresholds_of, unfinished
from clusterbench.analysis.cluster.findings import matrix_cell, summary
from clusterbench.analysis.cluster.outliers import LINK_DUPLICATE_BOUND_PCT, LINK_RETRANSMIT_BOUND_PCT
from clusterbench.environment.key_words import key_words
from clusterbench.output.render_text import terminal
from clusterbench.output.figure_digits import number
from clusterbench.report.cluster_gpu_tables import gpu_tables as gpu_tables_of
from clusterbench.report.cluster_node_cells import node_cell
from clusterbench.report.when import started_text
from clusterbench.output.unit_symbols import unit_shown


def _node(cell) -> str:
    """The node's median and ratio, and under them its interval and n: a node 8 % low told from noise."""
    if cell is None:
        return "-"
    return f"{'!' if cell.flagged else ''}{cell.figure}" + (f"\n{cell.spread_short}" if cell.spread_short else "")


def node_table(view: ClusterView) -> Table:
    t = Table(title="Per node: median (ratio to the median of the nodes), under it the interval of the median "
                    "and n = repetitions; ! = flagged", title_justify="left")
    for col in ("figure", "unit", "median", *view.hosts):
        t.add_column(terminal(col), justify="left" if col in ("figure", "unit") else "right")
    for f in sorted(view.figures, key=lambda f: (not f.flagged, f.name)):
        t.add_row(terminal(f.name), terminal(unit_shown(f.unit)), number(f.median),
                  *(_node(node_cell(f, h)) for h in view.hosts))
    return t


def gpu_tables(view: ClusterView) -> list[Table]:
    """Every GPU side by side (cluster_gpu_tables.py): a row per GPU,
    and the copies between the GPUs of a node a row per pair."""
    out = []
    for g in gpu_tables_of(view):
        t = Table(title=f"{g.title}: {g.scale}; ! = flagged", title_justify="left")
        for i, col in enumerate(g.columns):
            t.add_column(terminal(col), justify="left" if i < g.labels else "right")
        for row in g.rows:
            t.add_row(*(terminal(f"{'!' if c.flagged else ''}{c.text}") for c in row))
        out.append(t)
    return out


def link_table(view: ClusterView) -> Table:
    lossy = f"; ~ = TCP resent {LINK_RETRANSMIT_BOUND_PCT:g} % or more of its bytes (packet loss)" if view.lossy_links else ""
    lossy += (f"; + = the network delivered {LINK_DUPLICATE_BOUND_PCT:g} % or more of its segments twice "
              "(duplicated packets)") if view.duplicating_links else ""
    t = Table(title=f"Links: bandwidth MiB/s (best repetition), row sends to column (median latency {unit_shown('us')}); "
                    f"! = below the bound of its class, ^ = above the link's rate{lossy}",
              title_justify="left")
    t.add_column("from \\ to")
    for h in view.hosts:
        t.add_column(terminal(h), justify="right")
    for src in view.hosts:
        row = []
        for dst in view.hosts:
            lk = view.link(src, dst)
            if lk is None:
                row.append("-")
                continue
            row.append(matrix_cell(lk))
        t.add_row(terminal(src), *row)
    return t


def alone_table(view: ClusterView) -> Table:
    """--links-one-pair: each link in the shift pattern beside the same link alone."""
    t = Table(title="Links, shift pattern / one pair at a time: bandwidth MiB/s (shift / alone)",
              title_justify="left")
    t.add_column("from \\ to")
    for h in view.hosts:
        t.add_column(terminal(h), justify="right")
    for src in view.hosts:
        row = []
        for dst in view.hosts:
            lk, alone = view.link(src, dst), view.link_alone(src, dst)
            if alone is None:
                row.append("-")
                continue
            shift = lk.mib_s if lk else None
            ratio = f" ({shift / alone.mib_s:.2f})" if shift and alone.mib_s else ""
            row.append(f"{number(shift)} / {number(alone.mib_s)}{ratio}")
        t.add_row(terminal(src), *row)
    return t


def env_table(view: ClusterView) -> Table:
    t = Table(title="Environment keys that differ between nodes", title_justify="left")
    for col in ("key", "value on most nodes", "nodes that differ"):
        t.add_column(col)
    for d in view.env:
        t.add_row(terminal(key_words(d.key)), terminal(d.most), terminal(", ".join(f"{h}: {v}" for h, v in d.differ.items())))
    return t


def scaling_table(view: ClusterView) -> Table:
    counts = sorted({n for c in view.scaling.values() for n in c})
    t = Table(title=f"Scaling over nodes ({unit_shown(view.scaling_unit)} per call)", title_justify="left")
    t.add_column("collective, size")
    for n in counts:
        t.add_column(f"{n} nodes", justify="right")
    for curve, by_n in sorted(view.scaling.items()):
        t.add_row(terminal(curve), *(number(by_n.get(n)) for n in counts))
    return t


def print_cluster(console: Console, run: dict, threshold: float | None = None,
                  link_threshold: float | None = None, link_bits_per_s: float | None = None) -> ClusterView:
    kw = thresholds_of(run)
    kw.update({k: v for k, v in (("threshold", threshold), ("link_threshold", link_threshold),
                                 ("link_bits_per_s", link_bits_per_s)) if v is not None})
    view = analyse(run, **kw)
    console.print(f"[bold]Cluster run {run['id']}[/bold]{' (' + terminal(run['label']) + ')' if run['label'] else ''}: "
                  f"{terminal(run['status'])}, {started_text(run)}"   # when, in UTC, and how long: as every report says it
                  + (f": {terminal(run['message'])}" if run.get("message") else ""))   # "part of the suite skipped: ..."
    said = summary(view)
    if said.found:   # a finding a line, as the reports list them, a long one wrapped under its own start
        console.print(terminal(f"{said.head} Found:"))
        found = Table.grid(padding=(0, 1))
        found.add_column(no_wrap=True)
        found.add_column()
        for f in said.found:
            found.add_row("  -", terminal(f))
        console.print(found)
    else:
        console.print(terminal(f"{said.head} {said.nothing}"))
    if view.figures:
        console.print(node_table(view))
    for t in gpu_tables(view):
        console.print(t)
    if view.links:
        console.print(link_table(view))
    if view.links_alone:
        console.print(alone_table(view))
    if view.env:
        console.print(env_table(view))
    if view.scaling:
        console.print(scaling_table(view))
    failed = [st for st in run["steps"] if st["status"] not in ("ok", "skipped")]
    for st in failed:
        console.print(f"[yellow]{terminal(unfinished(st))}[/yellow]")   # its node named, as the summary names it
    return view
