"""The one paragraph at the top of a cluster report: what was found, in
sentences ("h03: stream triad 22 % below the median of 4 nodes; ...")."""
from __future__ import annotations

from clusterbench.cluster.analysis import ClusterView
from clusterbench.cluster.gpus import gpu_sentences


def _pct(ratio: float) -> str:
    return f"{abs(ratio - 1) * 100:.0f} %"


def node_sentences(view: ClusterView) -> list[str]:
    out = []
    n = len(view.hosts)
    for f in view.figures:
        for nv in f.flagged:
            side = "below" if nv.ratio < 1 else "above"
            worse = (nv.ratio > 1) == f.lower_is_better
            out.append(f"{nv.host}: {f.name} {_pct(nv.ratio)} {side} the median of {n} nodes "
                       f"({nv.value:.4g} vs {f.median:.4g} {f.unit}{', worse' if worse else ''})")
    return out


def link_sentences(view: ClusterView) -> list[str]:
    flagged = view.flagged_links
    if not flagged:
        return []
    out, named = [], set()
    # a node all of whose links (both ways) are slow: its port or cable, not N links
    for h in view.hosts:
        mine = [lk for lk in view.links if h in (lk.src, lk.dst)]
        if mine and all(lk.flagged for lk in mine) and len(mine) < len(view.links):
            named.add(h)
            worst = max(lk.mib_s / lk.reference for lk in mine)
            out.append(f"every link to and from {h} is slow ({len(mine)} links, at most {worst * 100:.0f} % of "
                       f"the reference link): look at {h}'s port or cable")
    for lk in flagged:
        if lk.src in named or lk.dst in named:
            continue
        out.append(f"link {lk.src}->{lk.dst}: {lk.mib_s * 2**20 * 8 / 1e9:.2f} Gbit/s, "
                   f"{lk.mib_s / lk.reference * 100:.0f} % of the reference link ({lk.link_class})")
    return out


def env_sentences(view: ClusterView) -> list[str]:
    out = []
    for d in view.env:
        if len(d.differ) * 2 >= len(view.hosts):
            continue   # no majority to differ from: listed in the table, not singled out
        who = ", ".join(f"{h} has {v}" for h, v in d.differ.items())
        out.append(f"{d.key}: {who}, the other nodes {d.most}")
    return out


def paragraph(view: ClusterView) -> str:
    n = len(view.hosts)
    found = node_sentences(view) + gpu_sentences(view.gpus, view.gpu_findings) + link_sentences(view) \
        + env_sentences(view)
    if view.no_snapshot:
        found.append(f"no environment snapshot from {', '.join(view.no_snapshot)} (its keys are not compared)")
    def count(k: int, one: str, many: str) -> str:
        return f"{k} {one if k == 1 else many}"

    head = (f"{n} nodes, {count(len(view.figures), 'per-node figure', 'per-node figures')}, "
            f"{count(len(view.links), 'link', 'links')}, "
            f"{count(len(view.env), 'environment key that differs', 'environment keys that differ')}.")
    if not found:
        return head + (f" Nothing flagged: every node within {view.threshold:.0%} of the median (or within the "
                       f"spread of the others), every link within {view.link_threshold:.0%} of its class's reference.")
    return head + " Found: " + "; ".join(found) + "."
