"""The one paragraph at the top of a cluster report: what was found, in
sentences ("h03: stream triad 22 % below the median of 4 nodes; ...")."""
from __future__ import annotations

import dataclasses

from clusterbench.analysis.cluster.analysis import ClusterView, analyse, thresholds_of
from clusterbench.analysis.cluster.gpus import gpu_sentences, gpus_measured
from clusterbench.analysis.cluster.link_faults import node_faults
from clusterbench.environment.key_words import key_words
from clusterbench.output.figure_digits import number, two_digits
from clusterbench.output.unit_symbols import unit_shown


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
                       f"({number(nv.value)} vs {number(f.median)} {unit_shown(f.unit)}{', worse' if worse else ''})")
        if f.shared_device and f.spread and f.spread[0] > 0 and f.spread[1] / f.spread[0] - 1 >= view.threshold:
            out.append(f"{f.name}: the nodes share one device ({f.shared_device}), {number(f.spread[0])} to "
                       f"{number(f.spread[1])} {unit_shown(f.unit)}: contention for it, not judged per node")
        for device in dict.fromkeys(f.device_sharers.values()):
            hosts = [h for h, d in f.device_sharers.items() if d == device]
            low, high = min(f.node_spread[h][0] for h in hosts), max(f.node_spread[h][1] for h in hosts)
            if low > 0 and high / low - 1 >= view.threshold:
                out.append(f"{f.name}: {', '.join(hosts)} read one device ({device}), {number(low)} to {number(high)} "
                           f"{unit_shown(f.unit)}: the device's spread, not judged per node")
    # one sentence for all of them: each figure's own would crowd out the faults found
    contended = [f.name for f in view.figures if f.shared_machine and f.spread and f.spread[0] > 0
                 and f.spread[1] / f.spread[0] - 1 >= view.threshold]
    if contended:
        # " / " between them: a figure's name has a comma of its own ("memory bandwidth (STREAM), copy (best)")
        out.append(f"the nodes ran at once on one machine: {' / '.join(contended)} differ by contention for its "
                   "CPUs, not judged per node (--one-at-a-time judges them)")
    return out


_SIDE = {"port": "look at {h}'s port or cable (both directions slow)",
         "send": "look at {h}'s send side (its TCP settings, its transmit path)",
         "receive": "look at {h}'s receive side (its TCP settings, its receive path)"}
_WHAT = {"port": "every link to and from {h} is slow", "send": "{h} sends slowly to every node",
         "receive": "{h} receives slowly from every node"}


def above_rate_sentences(view: ClusterView) -> list[str]:
    """Links measured faster than their rate: not figures of the link. All
    of them: the rate known is wrong; some: their timing was."""
    above = [lk for lk in view.links if lk.above_rate]
    if not above:
        return []
    if len(above) == len(view.links) > 1:
        return [f"every link ({len(above)}) is above the link's rate known ({number(above[0].above_rate)} MiB/s): "
                f"give the links' real rate with --link-speed"]
    return [f"link {lk.src}->{lk.dst}: {number(lk.mib_s)} MiB/s is above its link's rate ({number(lk.above_rate)} MiB/s), "
            f"so not a figure of the link (timed wrong, or the rate known is)" for lk in above]


def why_listed(lk) -> str:
    """Why a link is listed under the matrix, in plain text for every format:
    above its rate, below the bound of its class, or lossy."""
    if lk.above_rate:
        return f"above the link's rate ({number(lk.above_rate)} MiB/s): not a figure of the link"
    said = [f"TCP sent {two_digits(lk.retransmit_pct)} % of its bytes again (packet loss)"] if lk.lossy else []
    said += [f"the network delivered {two_digits(lk.duplicate_pct)} % of its segments twice (duplicated packets)"] \
        if lk.duplicating else []
    if lk.flagged:
        said.insert(0, f"{lk.mib_s / lk.reference * 100:.0f} % of {lk.reference_is}")
    return "; ".join(said)


def matrix_cell(lk) -> str:
    """A link's cell in the text matrices (terminal, Markdown): its marks
    (! below its class's bound, ^ above the link's rate, ~ lossy, + duplicating),
    MiB/s and median latency: '!84.2 (31.5)'."""
    marks = f"{'!' if lk.flagged else ''}{'^' if lk.above_rate else ''}{'~' if lk.lossy else ''}" \
        f"{'+' if lk.duplicating else ''}"
    latency = f" ({number(lk.latency_us)})" if lk.latency_us is not None else ""
    return f"{marks}{number(lk.mib_s)}{latency}"


def link_sentences(view: ClusterView) -> list[str]:
    flagged = view.flagged_links
    if not flagged:
        return above_rate_sentences(view)
    out, named = above_rate_sentences(view), set()
    for fault in node_faults(view.links, view.hosts):
        named.add(fault.host)
        mine = [lk for lk in view.links if fault.host in (lk.src, lk.dst)]
        worst = max(lk.mib_s / lk.reference for lk in mine if lk.flagged)
        out.append(f"{_WHAT[fault.side].format(h=fault.host)} ({fault.links} links, at most {worst * 100:.0f} % of "
                   f"{mine[0].reference_is}, {number(mine[0].reference)} MiB/s): {_SIDE[fault.side].format(h=fault.host)}")
    for lk in flagged:
        if lk.src in named or lk.dst in named:
            continue
        out.append(f"link {lk.src}->{lk.dst}: {lk.mib_s * 2**20 * 8 / 1e9:.2f} Gbit/s, "
                   f"{lk.mib_s / lk.reference * 100:.0f} % of {lk.reference_is} ({lk.link_class})")
    return out


_LOSS = {"port": "every link to and from {h} resends", "send": "every link {h} sends on resends",
         "receive": "every link into {h} resends"}
_LOSS_WHERE = {"port": "look at {h}'s port or cable (packet loss both ways)",
               "send": "look at {h}'s transmit path (packet loss)", "receive": "look at {h}'s receive path (packet loss)"}


def _span(shares: list[float]) -> str:
    lo, hi = two_digits(min(shares)), two_digits(max(shares))
    return lo if lo == hi else f"{lo} to {hi}"


def _said_by_node(view: ClusterView, marked: list, mark, sides: dict, wheres: dict, shares, link_line,
                  skip: frozenset = frozenset(), alone=lambda lk: True) -> list[str]:
    """The marked links explained by a node where every link it sends on, receives on, or both is
    marked (link_faults.py), "SIDE (N links: SHARES): WHERE"; the others one line each (link_line)
    where `alone` keeps them and neither end is named. Hosts in `skip` are not named again."""
    as_flags = [dataclasses.replace(lk, flagged=mark(lk)) for lk in view.links]
    out, named = [], set(skip)
    for fault in node_faults(as_flags, view.hosts):
        if fault.host in skip:
            continue
        named.add(fault.host)
        touching = [lk for lk in marked if fault.host in (lk.src, lk.dst)]
        out.append(f"{sides[fault.side].format(h=fault.host)} ({len(touching)} links: {shares(touching)}): "
                   f"{wheres[fault.side].format(h=fault.host)}")
    return out + [link_line(lk) for lk in marked if alone(lk) and lk.src not in named and lk.dst not in named]


def loss_sentences(view: ClusterView) -> list[str]:
    """Links on which TCP sent again at least LINK_RETRANSMIT_BOUND_PCT of its bytes: packet loss,
    which the bandwidth (the best repetition) and the latency (the median) can hide. Explained by a
    node as slow links are (link_faults.py): every link a node sends on, or receives on, lossy.
    A slow link drops what overflows the queue before it (a shaper's, a switch's buffer before a
    slow port: h03's port shaped to a quarter on the test cluster had TCP resend 4 to 11 % into
    it), so a node or link already said to be slow is not said again as lossy."""
    if not view.lossy_links:
        return []

    def resent(touching: list) -> str:
        mine = [lk.retransmit_pct for lk in touching if not lk.flagged] or [lk.retransmit_pct for lk in touching]
        return f"TCP sent {_span(mine)} % of their bytes again"

    return _said_by_node(view, view.lossy_links, lambda lk: lk.lossy, _LOSS, _LOSS_WHERE, resent,
                         lambda lk: f"link {lk.src}->{lk.dst}: TCP sent {two_digits(lk.retransmit_pct)} % of its bytes again "
                                    "(packet loss)",
                         skip=frozenset(f.host for f in node_faults(view.links, view.hosts)),
                         alone=lambda lk: not lk.flagged)


_TWICE = {"port": "every link to and from {h} delivers segments twice", "send": "every link {h} sends on delivers "
          "segments twice", "receive": "every link into {h} delivers segments twice"}
_TWICE_WHERE = {"port": "look at {h}'s port or its switch", "send": "look at {h}'s transmit path or its switch port",
                "receive": "look at the switch port towards {h}"}


def duplicate_sentences(view: ClusterView) -> list[str]:
    """Links whose receiver got at least LINK_DUPLICATE_BOUND_PCT of the data segments twice (the
    D-SACKs their sender received): a port or switch that duplicates frames, which slows nothing
    and has TCP resend nothing. Explained by a node as slow and lossy links are (link_faults.py)."""
    if not view.duplicating_links:
        return []
    return _said_by_node(
        view, view.duplicating_links, lambda lk: lk.duplicating, _TWICE, _TWICE_WHERE,
        lambda touching: f"the network delivered {_span([lk.duplicate_pct for lk in touching])} % of their "
                         "segments twice",
        lambda lk: f"link {lk.src}->{lk.dst}: the network delivered {two_digits(lk.duplicate_pct)} % of its segments twice: "
                   f"look at the ports of {lk.src} and {lk.dst} or the switch between them")


# a target directory's mount: where its file system is another, every key of the device under it
# differs with it
_MOUNT_FACTS = {"fs_type": "{}", "source": "from {}", "mount_point": "mounted at {}"}


def _target_fact(key: str) -> tuple[str, str] | None:
    """("/scratch", "fs_type") of "target./scratch.fs_type" (a fact's name has no dot, a directory may)."""
    if not key.startswith("target."):
        return None
    directory, _, fact = key[len("target."):].rpartition(".")
    return (directory, fact) if directory else None


def _mount_sentences(singled_out: list) -> tuple[dict[str, str], dict[str, set[str]]]:
    """For each target directory some nodes have on another mount (file system, source or mount
    point), one sentence, and those nodes: h03's --scratch on tmpfs where the others have ext4
    differed in 13 keys (its device, disks, model, read-ahead, scheduler, ...; a tmpfs has none),
    and the summary listed each, the one fact lost among them."""
    facts: dict[str, dict[str, object]] = {}
    for d in singled_out:
        where = _target_fact(d.key)
        if where and where[1] in _MOUNT_FACTS:
            facts.setdefault(where[0], {})[where[1]] = d
    sentences, hosts = {}, {}
    for directory, diffs in facts.items():
        ordered = [(fact, diffs[fact]) for fact in _MOUNT_FACTS if fact in diffs]
        moved = sorted({h for _, d in ordered for h in d.differ})

        def mount_text(host: str | None) -> str:
            return " ".join(_MOUNT_FACTS[fact].format(d.differ.get(host, d.most) if host else d.most)
                            for fact, d in ordered)
        who = ", ".join(f"{h} has {mount_text(h)}" for h in moved)
        follow = sum(1 for d in singled_out if (w := _target_fact(d.key)) and w[0] == directory
                     and w[1] not in _MOUNT_FACTS and set(d.differ) <= set(moved))
        sentences[directory] = (f"file system of {directory}: {who}, the other nodes {mount_text(None)}"
                                + (f" ({follow} more keys of {directory} differ with it, in the table)" if follow else ""))
        hosts[directory] = set(moved)
    return sentences, hosts


def env_sentences(view: ClusterView) -> list[str]:
    # no majority to differ from: listed in the table, not singled out
    singled_out = [d for d in view.env if len(d.differ) * 2 < len(view.hosts)]
    mounts, moved = _mount_sentences(singled_out)
    out, said = [], set()
    for d in singled_out:
        where = _target_fact(d.key)
        # said once, as its mount; a key of it that differs on other nodes too is its own finding
        if where and where[0] in mounts and (where[1] in _MOUNT_FACTS or set(d.differ) <= moved[where[0]]):
            if where[0] not in said:
                said.add(where[0])
                out.append(mounts[where[0]])
            continue
        who = ", ".join(f"{h} has {v}" for h, v in d.differ.items())
        out.append(f"{key_words(d.key)}: {who}, the other nodes {d.most}")
    return out


@dataclasses.dataclass(frozen=True)
class Summary:
    """What a cluster run found, for a summary: `head` counts what was
    measured; `found` holds one sentence a finding (no full stop), or where
    none, `nothing` says what was within its bound."""
    head: str
    found: tuple[str, ...]
    nothing: str


def summary(view: ClusterView) -> Summary:
    n = len(view.hosts)
    found = node_sentences(view) + gpu_sentences(view.gpus, view.gpu_findings) + link_sentences(view) \
        + loss_sentences(view) + duplicate_sentences(view) + env_sentences(view)
    found += [f"not measured: {what}" for what in view.unfinished]
    if view.no_snapshot:
        found.append(f"no environment snapshot from {', '.join(view.no_snapshot)} (its keys are not compared)")

    def count(k: int, one: str, many: str) -> str:
        return f"{k} {one if k == 1 else many}"

    # what was measured, the GPUs only where there were any: a GPU-only run said "0 per-node figures, 0 links"
    gpus = gpus_measured(view.gpus)
    measured = [f"{n} nodes"] + ([count(len(view.figures), 'per-node figure', 'per-node figures')]
                                 if view.figures or not gpus else []) \
        + ([count(gpus, 'GPU', 'GPUs')] if gpus else []) \
        + ([count(len(view.links), 'link', 'links')] if view.links or not gpus else [])
    head = (", ".join(measured) + ", "
            f"{count(len(view.env), 'environment key that differs', 'environment keys that differ')}.")
    within = [f"every node within {view.threshold:.0%} of the median (or within the spread of the others)"] \
        if view.figures or not gpus else []
    if gpus:
        within.append(f"every GPU within {view.threshold:.0%} of the median of the GPUs")
    if view.links or not gpus:
        within.append(f"every link within {view.link_threshold:.0%} of its reference (its class's best link, "
                      "or the link's rate)")
    return Summary(head, tuple(found), "Nothing flagged: " + ", ".join(within) + ".")


def paragraph(view: ClusterView) -> str:
    """The summary in one paragraph, the findings joined by semicolons (the terminal's)."""
    s = summary(view)
    return f"{s.head} Found: {'; '.join(s.found)}." if s.found else f"{s.head} {s.nothing}"


def run_summary(run: dict) -> Summary:
    """The summary of a stored cluster run, judged with the thresholds it was run with: what a
    report's summary opens with, a finding a line (one node's figures as the headline would hide
    the node that differs; the findings as one paragraph ran to ten lines of semicolons)."""
    return summary(analyse(run, **thresholds_of(run)))
