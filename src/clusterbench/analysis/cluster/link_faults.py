"""Which node explains the flagged links (docs/cluster.md, "Method").

A fault at a node slows every link that touches it on one side: a bad
port or cable both directions (every link to and from it), a mis-tuned
TCP stack or a bad transmit path the links it sends on. A node is a
suspect when every link it sends on, or every link it receives on, is
flagged. A suspect is then told port from one side by its links to the
nodes that are not suspects (a link between two suspects shows both
faults at once): its sends against its receives, each taken as a
geometric mean. Links whose reverse ran in the same shift round (shift
N/2 of N nodes: the pair exchanges both ways at once) are left out of
that comparison when others remain: each direction then carries the
other's acknowledgements, and the pair runs alike whichever side is at
fault (h02<->h04 on the loaded test cluster: 3.33 and 3.37 MiB/s, where
h02 sent 4.16 to h01 and received 6.67 from it). When one side runs
below SIDE_RATIO of the other, that side is named; otherwise both
directions are slow and the port is. A
shaped port gives both sides alike (h03 on the test cluster: 0.98); a
mis-tuned TCP stack slows the receives too, but less (h02 with 16 KiB
buffers and reno: its sends at 0.63 of its receives on the test cluster,
0.62 with the one-way links of a loaded run, 0.37 in the issue #40
matrix). The ratio is fixed, not --link-threshold:
that bound says how slow a link must be, not how unlike two sides are.
The links that touch a named node are explained by it and not listed
again."""
from __future__ import annotations

import math
from dataclasses import dataclass

SIDE_RATIO = 0.75   # one side named when below this fraction of the other


@dataclass(frozen=True)
class NodeFault:
    host: str
    side: str                  # "port" (both directions), "send" or "receive"
    links: int                 # the links it explains: its flagged ones (a send side's receives may be fine)
    send_mib_s: float | None   # geometric mean of its sends to healthy nodes (or to all when none)
    receive_mib_s: float | None


def _geomean(values: list[float]) -> float | None:
    values = [v for v in values if v > 0]
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None


def node_faults(links, hosts: list[str]) -> list[NodeFault]:
    """`links`: objects with src, dst, mib_s, flagged, both_ways_at_once (analysis.Link)."""
    sends = {h: [lk for lk in links if lk.src == h] for h in hosts}
    receives = {h: [lk for lk in links if lk.dst == h] for h in hosts}
    suspects = [h for h in hosts if len(links) > len(sends[h]) + len(receives[h])
                and ((sends[h] and all(lk.flagged for lk in sends[h]))
                     or (receives[h] and all(lk.flagged for lk in receives[h])))]
    out = []
    for h in suspects:
        healthy = [lk for lk in sends[h] + receives[h] if ({lk.src, lk.dst} - {h}).isdisjoint(suspects)] \
            or sends[h] + receives[h]
        one_way = [lk for lk in healthy if not lk.both_ways_at_once]
        if any(lk.src == h for lk in one_way) and any(lk.dst == h for lk in one_way):
            healthy = one_way
        send = _geomean([lk.mib_s for lk in healthy if lk.src == h])
        receive = _geomean([lk.mib_s for lk in healthy if lk.dst == h])
        all_sends = all(lk.flagged for lk in sends[h])
        all_receives = all(lk.flagged for lk in receives[h])
        if send is not None and receive is not None and all_sends and send < receive * SIDE_RATIO:
            side = "send"
        elif send is not None and receive is not None and all_receives and receive < send * SIDE_RATIO:
            side = "receive"
        elif all_sends and all_receives:
            side = "port"
        else:
            side = "send" if all_sends else "receive"
        # the flagged links only: a port shaped one way left h03's receives at the wire's rate, and
        # "h03 sends slowly to every node (4 links" counted them with its 2 slow sends
        out.append(NodeFault(h, side, sum(lk.flagged for lk in sends[h] + receives[h]), send, receive))
    return out
