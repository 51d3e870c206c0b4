"""Two cluster runs (before and after a repair) node by node, GPU by GPU
and link by link: each node's figure, each GPU's figure and each link's
bandwidth in both, their ratio, and whether it was flagged in each."""
from __future__ import annotations

from dataclasses import dataclass

from clusterbench.analysis.cluster.analysis import ClusterView


@dataclass(frozen=True)
class Change:
    what: str            # "h03: compute (Himeno), jacobi (time)" or "h02->h03"
    unit: str
    before: float
    after: float
    flagged_before: bool
    flagged_after: bool

    @property
    def ratio(self) -> float:
        return self.after / self.before if self.before else float("nan")


def node_changes(a: ClusterView, b: ClusterView) -> list[Change]:
    before = {(f.name, nv.host): (f.unit, nv) for f in a.figures for nv in f.nodes}
    out = []
    for f in b.figures:
        for nv in f.nodes:
            if (f.name, nv.host) in before:
                unit, old = before[(f.name, nv.host)]
                out.append(Change(f"{nv.host}: {f.name}", f.unit, old.value, nv.value, old.flagged, nv.flagged))
    return out


def gpu_changes(a: ClusterView, b: ClusterView) -> list[Change]:
    """Each GPU's figures (a reseated card, a new driver), GPUs matched by
    their label (host and index in its snapshot)."""
    before = {(f.name, label): v for f in a.gpus for label, v in f.gpus.items()}
    out = []
    for f in b.gpus:
        for label, v in f.gpus.items():
            if (old := before.get((f.name, label))) is not None:
                out.append(Change(f"{label}: {f.name}", f.unit, old.value, v.value, old.flagged, v.flagged))
    return out


def link_changes(a: ClusterView, b: ClusterView) -> list[Change]:
    out = []
    for lk in b.links:
        old = a.link(lk.src, lk.dst)
        if old is not None:
            out.append(Change(f"{lk.src}->{lk.dst}", "MiB/s", old.mib_s, lk.mib_s, old.flagged, lk.flagged))
    return out


def measured_nodes(v: ClusterView) -> set[str]:
    """The nodes with a figure, a GPU's figure or a link in the view."""
    return ({nv.host for f in v.figures for nv in f.nodes} | {g.host for f in v.gpus for g in f.where.values()}
            | {lk.src for lk in v.links} | {lk.dst for lk in v.links})


def nodes_in_one(a: ClusterView, b: ClusterView) -> tuple[list[str], list[str]]:
    """(the nodes measured in run A and not in B, those in B and not in A):
    compared only where both have them, a node left out of the host file
    after a repair, or failed in it, was passed over in silence, its flag
    of before neither gone nor kept."""
    ma, mb = measured_nodes(a), measured_nodes(b)
    return sorted(ma - mb), sorted(mb - ma)


def verdict(c: Change) -> str:
    if c.flagged_before and not c.flagged_after:
        return "fixed"
    if c.flagged_after and not c.flagged_before:
        return "new flag"
    if c.flagged_after:
        return "still flagged"
    return ""
