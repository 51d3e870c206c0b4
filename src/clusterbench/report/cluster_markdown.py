"""The Markdown section of a cluster run, the HTML section's (cluster_html.py)
in tables a wiki or a procurement document takes (its paragraph opens the
report's summary, summary_markdown.py): the per-node table (flagged figures first; each node's median,
interval and n, cluster_node_cells.py), the per-GPU tables (cluster_gpu_tables.py), the link matrix and the links
to look at, the environment keys that differ, the scaling; and the run's
test environment, the same lines once and then what differs
(cluster_environment.py). Before it the
Markdown report of a cluster run gave only its steps, one node at a time:
the nodes side by side and what was found were in show and HTML alone."""
from __future__ import annotations

from clusterbench.analysis.cluster.analysis import ClusterView, analyse, thresholds_of
from clusterbench.analysis.cluster.findings import matrix_cell, why_listed
from clusterbench.analysis.cluster.outliers import LINK_DUPLICATE_BOUND_PCT, LINK_RETRANSMIT_BOUND_PCT
from clusterbench.environment.key_words import key_words
from clusterbench.output.figure_digits import number
from clusterbench.output.render_text import markdown as md
from clusterbench.report.cluster_before_after import BeforeAfter
from clusterbench.report.cluster_environment import cluster_environment, hosts_text
from clusterbench.report.cluster_gpu_tables import gpu_tables as gpu_tables_of
from clusterbench.report.cluster_node_cells import heading_words, node_cell, shared_spread_words, spread_shown
from clusterbench.report.compare_markdown import table_row
from clusterbench.output.unit_symbols import unit_shown


def _node(cell, said: str) -> str:
    if cell is None:
        return "-"
    return f"{cell.figure}{' !' if cell.flagged else ''}" + (f"; {spread_shown(cell, said)}" if cell.spread else "")


def node_table(view: ClusterView) -> list[str]:
    said = shared_spread_words([node_cell(f, h) for f in view.figures for h in view.hosts])
    out = [f"### Per node: median (ratio to the median of the nodes); {md(heading_words(said))}; "
           "! = flagged", "",
           table_row(["figure", "unit", "median of the nodes", *(md(h) for h in view.hosts)]),
           "|---|---|" + "---:|" * (1 + len(view.hosts))]
    for f in sorted(view.figures, key=lambda f: (not f.flagged, f.name)):
        out.append(table_row([md(f.name), md(unit_shown(f.unit)), number(f.median),
                              *(md(_node(node_cell(f, h), said)) for h in view.hosts)]))
    return out + [""]


def _gpu_cell(c) -> str:
    return md(f"{c.text}{' !' if c.flagged else ''}")


def gpu_tables(view: ClusterView) -> list[str]:
    """Every GPU side by side, as the HTML section has them (cluster_gpu_tables.py)."""
    out = []
    for t in gpu_tables_of(view):
        out += [f"### {md(t.title)}: {md(t.scale)}; ! = flagged", "",
                table_row([md(c) for c in t.columns]), "|" + "---|" * t.labels + "---:|" * (len(t.columns) - t.labels)]
        out += [table_row([_gpu_cell(c) for c in row]) for row in t.rows]
        out.append("")
    return out


def link_tables(view: ClusterView) -> list[str]:
    """The matrix (row sends to column), then each link to look at and why."""
    lossy = f", ~ = TCP resent {LINK_RETRANSMIT_BOUND_PCT:g} % or more of its bytes (packet loss)" if view.lossy_links else ""
    lossy += (f", + = the network delivered {LINK_DUPLICATE_BOUND_PCT:g} % or more of its segments twice "
              "(duplicated packets)") if view.duplicating_links else ""
    out = [f"### Links: bandwidth MiB/s (best repetition), row sends to column (median latency {unit_shown('us')}); "
           f"! = below the bound of its class, ^ = above the link's rate{lossy}", "",
           table_row(["from \\\\ to", *(md(h) for h in view.hosts)]), "|---|" + "---:|" * len(view.hosts)]
    for src in view.hosts:
        cells = []
        for dst in view.hosts:
            lk = view.link(src, dst)
            if lk is None:
                cells.append("-")
                continue
            cells.append(md(matrix_cell(lk)))
        out.append(table_row([md(src), *cells]))
    listed = [lk for lk in view.links if lk.flagged or lk.above_rate or lk.lossy or lk.duplicating]
    if listed:
        out += ["", table_row(["link", "MiB/s", "why listed", "class"]), "|---|---:|---|---|"]
        out += [table_row([md(f"{lk.src} -> {lk.dst}"), number(lk.mib_s), md(why_listed(lk)), md(lk.link_class)])
                for lk in sorted(listed, key=lambda lk: (not lk.flagged, lk.src, lk.dst))]
    return out + [""]


def env_table(view: ClusterView) -> list[str]:
    out = ["### Environment keys that differ between nodes", "",
           table_row(["key", "value on most nodes", "nodes that differ"]), "|---|---|---|"]
    out += [table_row([md(key_words(d.key)), md(d.most), md("; ".join(f"{h}: {v}" for h, v in d.differ.items()))])
            for d in view.env]
    return out + [""]


def scaling_table(view: ClusterView) -> list[str]:
    counts = sorted({n for c in view.scaling.values() for n in c})
    out = [f"### Scaling over nodes ({md(unit_shown(view.scaling_unit))} per call)", "",
           table_row(["collective, size", *(f"{n} nodes" for n in counts)]), "|---|" + "---:|" * len(counts)]
    out += [table_row([md(curve), *(number(by_n.get(n)) for n in counts)]) for curve, by_n in sorted(view.scaling.items())]
    return out + [""]


def section(run: dict) -> list[str]:
    view = analyse(run, **thresholds_of(run))
    out = [f"## Cluster run {run['id']}: {len(view.hosts)} nodes", ""]   # its paragraph opens the report
    if view.figures:
        out += node_table(view)
    out += gpu_tables(view)
    if view.links:
        out += link_tables(view)
    if view.env:
        out += env_table(view)
    if view.scaling:
        out += scaling_table(view)
    return out


def before_after_lines(found: BeforeAfter) -> list[str]:
    """Two cluster runs compared, as `compare A B` prints them (cluster_before_after.py)."""
    out = [f"## {md(found.heading)}", "", md(found.verdict), ""]
    for t in found.tables:
        out += [f"### {md(t.title)}", "", table_row([md(c) for c in t.columns]),
                "|" + "".join("---:|" if figure else "---|" for figure in t.figures)]
        out += [table_row([md(c) for c in row]) for row in t.rows] + [""]
    return out


def environment_lines(run: dict, notes) -> list[str]:
    """The run's test environment: what is the same on every host once, then
    only what differs (cluster_environment.py), not a block per host; a value
    not read is "not available" with its number in `notes` (footnotes.py), as the HTML's."""
    from clusterbench.report.compare_markdown import note_mark

    c = cluster_environment(run)
    out = ["### Test environment: the same on every host", "", f"Hosts: {md(hosts_text(c))}.", ""]
    out += [f"- **{md(k)}**: {md(notes.text(v, note_mark))}" for k, v in c.same] + [""]
    if not c.differ:
        return out + [f"Nothing else differs between the {len(c.hosts)} hosts (their names aside).", ""]
    out += ["### Test environment: what differs between the hosts", "",
            table_row(["item", "on most hosts", "hosts that differ"]), "|---|---|---|"]
    out += [table_row([md(d.key), md(notes.text(d.most, note_mark)),
                       md(notes.text("; ".join(f"{h}: {v}" for h, v in d.differ.items()), note_mark))])
            for d in c.differ]
    return out + [""]
