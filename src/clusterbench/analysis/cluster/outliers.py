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

Both measures compare medians, and a median says nothing of how far a
node's own repetitions scatter: a cold read on a shared disk, or an 8-byte
latency, moves by a factor between repetitions of one node. So when the
nodes were measured more than once, the robust measure is a test that two
nodes differ instead of the Z: the node's repetitions must not overlap
those of most other nodes (every repetition of the node below every
repetition of the other node, or above). Two nodes whose repetitions
interleave have not been shown to differ; a node whose repetitions clear
the others' differs however the others' medians scatter (on a loaded
machine they scatter enough for the Z to excuse a CPU-capped node).

A link is flagged when its bandwidth is below (1 - threshold) x its
reference: the best link of its class (the fastest pair shows what the
class can do; a median is dragged down by the faults, and one bad port
slows the 2 (N - 1) links that touch it, half of all links on 4 nodes),
or the physical rate the environment knows (the NIC's speed, the shaped
rate, --link-speed) when that is the higher bound: a class all of whose
links are slow is then still flagged.
"""
from __future__ import annotations

import statistics
from dataclasses import dataclass

from clusterbench.limits.thresholds import RATE_SLACK

Z_BOUND = 3.5          # Iglewicz and Hoaglin's cut-off for the modified Z
Z_SCALE = 0.6745       # the MAD of a normal distribution in standard deviations
NODE_THRESHOLD = 0.10  # default relative bound of a per-node figure
LINK_THRESHOLD = 0.25  # default relative bound of a link below its class reference
# A link is lossy when TCP sent again at least this share of the bytes it sent in the link rounds
# for data lost (linkmatrix's link_retransmits less the resends its D-SACKs prove spurious:
# analysis.split_resends; the median of the repetitions). An absolute bound, not one against
# the other links: a healthy link in the shift pattern carries one stream per port and loses
# nothing. On the test cluster every healthy link's median was 0.0 % (six runs, MPICH and Open MPI,
# at load up to 9.5 on 2 cores; a node's whole count at most 0.05 % of its segments), where a port
# dropping 2 % of its frames each way had TCP resend 1.3 to 3.6 % on each of its links, 3 % 2.1 to
# 3.0 % (a veth hands the bridge whole 64 KiB super-packets, so one drop resends many segments;
# a real NIC's frames are single segments). A port dropping 1 % had TCP resend 0.53 to 1.5 % on each
# of its links (3 hosts, 5 runs of its links): at a bound of 1 % one or two of its four links were
# lossy, the port was never named, and a real NIC's 1 % loss resends about 1 %, half its links
# below such a bound. 0.25 % is five times the most a healthy node resent and half the least a
# 1 % port did; and a fabric that drops 0.25 % of its frames is broken. Counted whole, with two
# suites of four workers side by side (load past 10), healthy links resent 0.2 to 1.4 % a repetition,
# medians to 0.38 %, every such resend answered by a D-SACK: flagged lossy, until they were left out.
LINK_RETRANSMIT_BOUND_PCT = 0.25
# A link duplicates when its receiver got at least this share of the data segments its sender sent
# twice (the D-SACKs the sender received: linkmatrix's link_retransmits record, less those its own
# resends explain: analysis.split_resends; the median of the repetitions). Absolute, as the loss
# bound. A D-SACK also answers a spurious retransmission (one sent again that had arrived), so
# before the resends were taken out a link that resends under load had a few: on the test cluster
# healthy links' medians were 0.0 % (at most 0.028 % on one link, two test suites side by side on
# 2 cores, load 7 to 8.5), and links with a planted fault that resends (h03's shaped port, h02's
# mis-tuned TCP; MPICH and Open MPI) at most 0.17 %. A port duplicating 3 % of its frames each way
# (nftables `dup to`) had 2.2 to 5.1 % on each of its six links (two runs), and once a median of
# 0.41 % on one (the copies, made ahead of a shaper's full queue, dropped with it in bursts: the test
# plants 10 %, 5.3 % a repetition at least). 0.5 % is three times the most a resending link showed.
LINK_DUPLICATE_BOUND_PCT = 0.5


@dataclass(frozen=True)
class NodeValue:
    host: str
    value: float
    ratio: float           # value / median of the nodes
    z: float | None        # modified Z against the other nodes; None when their MAD is 0
    flagged: bool
    apart_from: int | None = None   # how many other nodes its repetitions do not overlap; None: one repetition each


def modified_z(x: float, others: list[float]) -> float | None:
    """Iglewicz and Hoaglin's modified Z of x against `others`."""
    med = statistics.median(others)
    mad = statistics.median(abs(v - med) for v in others)
    return None if mad == 0 else Z_SCALE * (x - med) / mad


def apart(mine: list[float], theirs: list[float], low: bool) -> bool:
    """True when every repetition of `mine` lies below (low) or above every one of `theirs`."""
    return max(mine) < min(theirs) if low else min(mine) > max(theirs)


def apart_count(host: str, low: bool, repetitions: dict[str, list[float]]) -> int | None:
    """How many other nodes `host`'s repetitions do not overlap, in the
    direction it deviates; None when some node was measured only once."""
    if any(len(v) < 2 for v in repetitions.values()):
        return None
    return sum(apart(repetitions[host], v, low) for h, v in repetitions.items() if h != host)


def judge_nodes(by_host: dict[str, float], threshold: float = NODE_THRESHOLD,
                repetitions: dict[str, list[float]] | None = None) -> list[NodeValue]:
    """Every node's value, ratio to the median and verdict (the module's
    rule). `repetitions`: each node's values over its repetitions, when
    the run has them; without them only the medians are judged."""
    hosts = sorted(by_host)
    values = [by_host[h] for h in hosts]
    med = statistics.median(values)
    zs = [modified_z(v, values[:i] + values[i + 1:]) if len(values) >= 3 else None for i, v in enumerate(values)]
    out = []
    for h, v, z in zip(hosts, values, zs):
        ratio = v / med if med else float("nan")
        far = med != 0 and abs(ratio - 1) >= threshold
        n_apart = apart_count(h, ratio < 1, repetitions) if repetitions and set(repetitions) >= set(hosts) else None
        if n_apart is None:   # one value per node: the medians' spread is all there is to judge by
            robust = z is None or abs(z) > Z_BOUND
        else:                 # its repetitions clear those of most other nodes
            robust = n_apart * 2 > len(hosts) - 1
        out.append(NodeValue(h, v, ratio, z, len(values) >= 3 and far and robust, n_apart))
    return out


MIB_PER_S_PER_BIT_PER_S = 1 / (8 * 2**20)


def link_bound(values: list[float], threshold: float = LINK_THRESHOLD,
               rate_bits_per_s: float | None = None) -> tuple[float, float, str]:
    """(reference in MiB/s, bound, what the reference is) of one class of links:
    its best link, or the physical rate when that is higher. A link above
    the rate (beyond RATE_SLACK) is no figure of a link and sets no
    reference: it would put the class's healthy links below the bound. When
    every link is above it, the rate is what is wrong: the best link sets it."""
    best = max(values)
    rate = rate_bits_per_s * MIB_PER_S_PER_BIT_PER_S if rate_bits_per_s else None
    if rate is not None:
        within = [v for v in values if v <= rate * RATE_SLACK]
        if not within:
            return best, best * (1 - threshold), "the class's best link"
        best = max(within)
    if rate is not None and rate > best:
        return rate, rate * (1 - threshold), "the link's rate"
    return best, best * (1 - threshold), "the class's best link"
