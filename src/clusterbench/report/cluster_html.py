"""The HTML section of a cluster run: the summary paragraph, the per-node
table (flagged figures first, flagged cells marked, each node's interval and n under its median:
cluster_node_cells.py), the per-GPU tables, the link heat map
(matplotlib SVG, flagged links boxed in red and marked !, links above their rate in blue), the environment keys that
differ, and the scaling curves on log axes; and the run's test environment, the same lines once
and then what differs (cluster_environment.py)."""
from __future__ import annotations

from clusterbench.analysis.cluster.analysis import ClusterView, analyse, thresholds_of
from clusterbench.analysis.cluster.findings import why_listed
from clusterbench.environment.key_words import key_words
from clusterbench.output.render_text import html as esc  # the one HTML escape: markup and control characters
from clusterbench.output.render_text import mathtext  # matplotlib's: "$" literal, no control characters in the SVG
from clusterbench.output.figure_digits import number
from clusterbench.report.cluster_before_after import BeforeAfter
from clusterbench.report.cluster_environment import cluster_environment, hosts_text
from clusterbench.report.cluster_gpu_tables import gpu_tables
from clusterbench.report.cluster_node_cells import heading_words, node_cell, shared_spread_words, spread_shown
from clusterbench.output.unit_symbols import unit_shown

CSS = """
.cluster .summary{font-size:1.05em;background:#f8f8f0;border-left:4px solid #b00;padding:.5em 1em}
.cluster td.flag{background:#fde0e0;color:#900;font-weight:bold}
.cluster td.n small{white-space:normal}
.cluster table.gpus td:first-child{white-space:nowrap}
"""


def heat_map(view: ClusterView) -> str:
    """N x N bandwidth, sender down, receiver across; flagged links boxed
    red and marked "!" beside their figure, links measured above their rate
    (not figures of the link) boxed blue. Each box has a white rim: a slow
    link's cell is viridis' dark end, whose grey in a greyscale print is the
    red box's own, and the box vanished there; the "!" says it without colour."""
    from matplotlib import patheffects
    from matplotlib.patches import Rectangle

    from clusterbench.report.plots import _plt, _svg

    plt = _plt()
    n = len(view.hosts)
    grid = [[float("nan")] * n for _ in range(n)]
    for lk in view.links:
        grid[view.hosts.index(lk.src)][view.hosts.index(lk.dst)] = lk.mib_s
    side = min(12.0, 1.2 + 0.7 * n)
    fig, ax = plt.subplots(figsize=(side + 1.5, side))
    im = ax.imshow(grid, cmap="viridis", vmin=0)
    fig.colorbar(im, ax=ax, label="MiB/s")
    ax.set_xticks(range(n), [mathtext(h) for h in view.hosts], rotation=90 if n > 8 else 0, fontsize=8)
    ax.set_yticks(range(n), [mathtext(h) for h in view.hosts], fontsize=8)
    ax.set_xlabel("receiver")
    ax.set_ylabel("sender")
    ax.set_title("link bandwidth (mpiGraph shift pattern); red box and ! = flagged, blue box = above the link's rate",
                 fontsize=10)
    top = max((lk.mib_s for lk in view.links), default=1.0) or 1.0
    rim = [patheffects.withStroke(linewidth=5, foreground="white")]
    for lk in view.links:
        i, j = view.hosts.index(lk.src), view.hosts.index(lk.dst)
        if n <= 16:   # dark text on viridis' bright end, white on its dark end
            ax.text(j, i, number(lk.mib_s) + (" !" if lk.flagged else ""), ha="center", va="center", fontsize=7,
                    color="black" if lk.mib_s > 0.6 * top else "white", fontweight="bold" if lk.flagged else "normal")
        if lk.flagged or lk.above_rate:
            ax.add_patch(Rectangle((j - 0.42, i - 0.42), 0.84, 0.84, fill=False, path_effects=rim,
                                   edgecolor="red" if lk.flagged else "blue", linewidth=2.5))
    return f'<div class="heatmap">{_svg(fig)}</div>'


def _node_cell(cell, said: str) -> str:
    """The node's median and ratio, its interval and n under them (cluster_node_cells.py), less the
    interval's words the heading says (said)."""
    if cell is None:
        return "<td>-</td>"
    flag = (" flag", " !") if cell.flagged else ("", "")
    spread = f"<br><small>{esc(spread_shown(cell, said))}</small>" if cell.spread else ""
    return f'<td class="n{flag[0]}">{esc(cell.figure)}{flag[1]}{spread}</td>'


def node_table(view: ClusterView) -> list[str]:
    head = "".join(f"<th>{esc(h)}</th>" for h in view.hosts)
    said = shared_spread_words([node_cell(f, h) for f in view.figures for h in view.hosts])
    out = [f"<h3>Per node (median, ratio to the median of the nodes; {esc(heading_words(said))})</h3>",
           f"<table><tr><th>figure</th><th>unit</th><th>median of the nodes</th>{head}</tr>"]
    for f in sorted(view.figures, key=lambda f: (not f.flagged, f.name)):
        cells = "".join(_node_cell(node_cell(f, h), said) for h in view.hosts)
        out.append(f"<tr><td>{esc(f.name)}</td><td>{esc(unit_shown(f.unit))}</td><td class=n>{number(f.median)}</td>{cells}</tr>")
    out.append("</table>")
    return out


def _gpu_cell(c) -> str:
    if not c.figure:
        return f"<td>{esc(c.text)}</td>"
    flag = (" flag", " !") if c.flagged else ("", "")
    return f'<td class="n{flag[0]}">{esc(c.text)}{flag[1]}</td>'


def gpu_section(view: ClusterView) -> list[str]:
    """Every GPU side by side (cluster_gpu_tables.py): a row per GPU,
    and the copies between the GPUs of a node a row per pair."""
    out = []
    for t in gpu_tables(view):
        out += [f"<h3>{esc(t.title)} ({esc(t.scale)})</h3>",
                '<table class="gpus"><tr>' + "".join(f"<th>{esc(c)}</th>" for c in t.columns) + "</tr>"]
        out += ["<tr>" + "".join(_gpu_cell(c) for c in row) + "</tr>" for row in t.rows]
        out.append("</table>")
    return out


def link_section(view: ClusterView) -> list[str]:
    """The heat map, then a row for each link to look at: below the bound
    of its class, above its rate, or lossy (which the summary also says)."""
    out = ["<h3>Links: bandwidth MiB/s, best repetition</h3>", heat_map(view)]
    listed = [lk for lk in view.links if lk.flagged or lk.above_rate or lk.lossy or lk.duplicating]
    if listed:
        out.append("<table><tr><th>link</th><th>MiB/s</th><th>why listed</th><th>class</th>"
                   f"<th>latency {unit_shown('us')}</th></tr>")
        for lk in sorted(listed, key=lambda lk: (not lk.flagged, lk.src, lk.dst)):
            out.append(f'<tr><td class="flag">{esc(lk.src)} -&gt; {esc(lk.dst)}</td><td class=n>{number(lk.mib_s)}</td>'
                       f"<td>{esc(why_listed(lk))}</td><td>{esc(lk.link_class)}</td><td class=n>{number(lk.latency_us)}</td></tr>")
        out.append("</table>")
    return out


def alone_table(view: ClusterView) -> list[str]:
    """--links-one-pair: each link in the shift pattern beside the same link alone."""
    head = "".join(f"<th>{esc(h)}</th>" for h in view.hosts)
    out = ["<h3>Links alone (one pair at a time) beside the shift pattern: MiB/s, shift / alone (ratio)</h3>",
           f"<table><tr><th>from \\ to</th>{head}</tr>"]
    for src in view.hosts:
        cells = []
        for dst in view.hosts:
            lk, alone = view.link(src, dst), view.link_alone(src, dst)
            if alone is None:
                cells.append("<td>-</td>")
                continue
            shift = lk.mib_s if lk else None
            ratio = f" ({shift / alone.mib_s:.2f})" if shift and alone.mib_s else ""
            cells.append(f"<td class=n>{number(shift)} / {number(alone.mib_s)}{ratio}</td>")
        out.append(f"<tr><th>{esc(src)}</th>{''.join(cells)}</tr>")
    out.append("</table>")
    return out


def differ_table(heading: str, columns: tuple[str, str, str], differences, value=esc, name=esc) -> list[str]:
    """A table of what differs between hosts (analysis.cluster env_differences):
    the item, its value on most hosts, and the hosts that differ with theirs;
    value(text) is a value's HTML, name(key) the item's."""
    out = [f"<h3>{esc(heading)}</h3>", "<table><tr>" + "".join(f"<th>{esc(c)}</th>" for c in columns) + "</tr>"]
    for d in differences:
        who = "; ".join(f"{esc(h)}: {value(v)}" for h, v in d.differ.items())
        out.append(f'<tr><td>{name(d.key)}</td><td>{value(d.most)}</td><td class="flag">{who}</td></tr>')
    out.append("</table>")
    return out


def env_table(view: ClusterView) -> list[str]:
    return differ_table("Environment keys that differ between nodes", ("key", "value on most nodes", "nodes that differ"),
                        view.env, name=lambda key: esc(key_words(key)))


def scaling(view: ClusterView) -> list[str]:
    """Each collective's time over the node counts, on log axes (nodes by powers of 2,
    times in numbers read off the axis: plots.log_value_axis). The
    legend stands right of the axes: inside them (matplotlib's "best") it
    covered the curves, up to 12 of them for the suite's collectives. The
    saved figure grows by the legend's width (bbox_inches="tight"): about
    8 in with the suite's 12 curves, within the report's text width
    (plots.WIDTH_IN), so the SVG is not shrunk to fit it."""
    from clusterbench.report.plots import _plt, _svg, legend_outside, log_value_axis

    plt = _plt()
    fig, ax = plt.subplots(figsize=(7, 4))
    for name, by_n in sorted(view.scaling.items()):
        pts = sorted((n, v) for n, v in by_n.items() if v and v > 0)
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=mathtext(name))
    ax.set_xscale("log", base=2)
    log_value_axis(ax, [v for by_n in view.scaling.values() for v in by_n.values() if v])
    counts = sorted({n for by_n in view.scaling.values() for n in by_n})
    ax.set_xticks(counts, [str(n) for n in counts])
    ax.set_xlabel("nodes")
    ax.set_ylabel(mathtext(f"{unit_shown(view.scaling_unit)} per call"))
    ax.set_title("collectives over nodes (log axes)", fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    legend_outside(ax, fontsize=7)   # a single curve too: its name says which collective and size
    return ["<h3>Collective scaling over nodes</h3>", _svg(fig)]


def section(run: dict) -> list[str]:
    view = analyse(run, **thresholds_of(run))
    out = [f"<style>{CSS}</style>", '<div class="cluster">',
           f"<h2>Cluster run {run['id']}: {len(view.hosts)} nodes</h2>"]   # its paragraph opens the report
    if view.figures:
        out += node_table(view)
    out += gpu_section(view)
    if view.links:
        out += link_section(view)
    if view.links_alone:
        out += alone_table(view)
    if view.env:
        out += env_table(view)
    if view.scaling:
        out += scaling(view)
    out.append("</div>")
    return out


def before_after_section(found: BeforeAfter) -> list[str]:
    """Two cluster runs compared, as `compare A B` prints them
    (cluster_before_after.py); a flagged change's row marked."""
    out = [f"<style>{CSS}</style>", '<div class="cluster">', f"<h2>{esc(found.heading)}</h2>",
           f'<p class="summary">{esc(found.verdict)}</p>']
    for t in found.tables:
        out += [f"<h3>{esc(t.title)}</h3>", "<table><tr>" + "".join(f"<th>{esc(c)}</th>" for c in t.columns) + "</tr>"]
        for row, flag in zip(t.rows, t.flags):
            cells = "".join(f"<td class=n>{esc(c)}</td>" if figure else f"<td>{esc(c)}</td>"
                            for c, figure in zip(row, t.figures))
            out.append(f'<tr class="flagged">{cells}</tr>' if flag else f"<tr>{cells}</tr>")
        out.append("</table>")
    return out + ["</div>"]


def environment_section(run: dict, notes) -> list[str]:
    """The run's test environment: what is the same on every host once, then
    only what differs (cluster_environment.py), not a table per host. An
    unreadable value is "not available" with its reason a footnote, as in
    every environment table of the report (footnotes.py)."""
    from clusterbench.report.html import mark

    c = cluster_environment(run)
    rows = "".join(f"<tr><td>{esc(k)}</td><td>{notes.text(esc(v), mark)}</td></tr>" for k, v in c.same)
    out = ["<h3>Test environment: the same on every host</h3>", f"<p>Hosts: {esc(hosts_text(c))}.</p>",
           f'<table class="env">{rows}</table>']
    if not c.differ:
        return out + [f"<p>Nothing else differs between the {len(c.hosts)} hosts (their names aside).</p>"]
    return out + differ_table("Test environment: what differs between the hosts",
                              ("item", "on most hosts", "hosts that differ"), c.differ,
                              lambda v: notes.text(esc(v), mark))
