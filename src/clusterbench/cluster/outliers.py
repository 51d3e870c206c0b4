"""The outlier rules of a cluster run (docs/cluster.md, "Method").

A node's figure is flagged when it is far from the median of the nodes by
both of two measures: the relative one (|value / median - 1| at least the
threshold, default 10 %: a difference worth a ticket) and the robust one
(Iglewicz and Hoaglin's modified Z, |0.6745 (x - median) / MAD| > 3.5: far
from the spread the other nodes show). The relative bound alone flags every
node of a noisy figure; the Z bound alone flags a node 2 % off when the
others agree to 0.1 %. Each node's Z is taken against the median and MAD
of the *other* nodes (leave one out): on few nodes the suspect's own
deviation would otherwise widen the MAD that judges it (on 4 nodes, one
slow node and one noisy one give a MAD that excuses both). When the
others' MAD is 0 (they agree exactly) any node past the relative bound is
flagged.

A link is flagged when its bandwidth is below (1 - threshold) x the
reference of its class. The reference is the upper quartile of the class,
not its median: one bad port slows the 2 (N - 1) links that touch it, half
of all links on 4 nodes, and would drag a median down with it.
"""
from __future__ import annotations

import statistics
from dataclasses import dataclass

Z_BOUND = 3.5          # Iglewicz and Hoaglin's cut-off for the modified Z
Z_SCALE = 0.6745       # the MAD of a normal distribution in standard deviations
NODE_THRESHOLD = 0.10  # default relative bound of a per-node figure
LINK_THRESHOLD = 0.25  # default relative bound of a link below its class reference


@dataclass(frozen=True)
class NodeValue:
    host: str
    value: float
    ratio: float           # value / median of the nodes
    z: float | None        # modified Z against the other nodes; None when their MAD is 0
    flagged: bool


def modified_z(x: float, others: list[float]) -> float | None:
    """Iglewicz and Hoaglin's modified Z of x against `others`."""
    med = statistics.median(others)
    mad = statistics.median(abs(v - med) for v in others)
    return None if mad == 0 else Z_SCALE * (x - med) / mad


def judge_nodes(by_host: dict[str, float], threshold: float = NODE_THRESHOLD) -> list[NodeValue]:
    """Every node's value, ratio to the median and verdict (the module's rule)."""
    hosts = sorted(by_host)
    values = [by_host[h] for h in hosts]
    med = statistics.median(values)
    zs = [modified_z(v, values[:i] + values[i + 1:]) if len(values) >= 3 else None for i, v in enumerate(values)]
    out = []
    for h, v, z in zip(hosts, values, zs):
        ratio = v / med if med else float("nan")
        far = med != 0 and abs(ratio - 1) >= threshold
        robust = z is None or abs(z) > Z_BOUND
        out.append(NodeValue(h, v, ratio, z, len(values) >= 3 and far and robust))
    return out


def upper_quartile(values: list[float]) -> float:
    if len(values) < 2:
        return values[0]
    return statistics.quantiles(values, n=4, method="inclusive")[2]


def link_bound(values: list[float], threshold: float = LINK_THRESHOLD) -> tuple[float, float]:
    """(reference, bound) of one class of links."""
    ref = upper_quartile(values)
    return ref, ref * (1 - threshold)
