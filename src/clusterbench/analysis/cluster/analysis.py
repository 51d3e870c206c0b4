"""What a stored cluster run found: every per-node figure judged against
the other nodes, the link matrix judged per class, the environment keys
that differ between nodes, the scaling curves, and the summary in
sentences. Reads a loaded run (report.data.load_run: steps with their
Sample objects, and each host's snapshot), so every format can use it."""
from __future__ import annotations

import dataclasses
import statistics
from collections import Counter
from dataclasses import dataclass, field

from clusterbench.analysis.cluster import cbk_fact
from clusterbench.analysis.cluster import gpus as gpu_analysis
from clusterbench.analysis.cluster import outliers
from clusterbench.analysis.cluster.naming import LINKS_ALONE_STEP, LINKS_STEP, SCALING_PREFIX, figure_name, steps_text
from clusterbench.analysis import stats
from clusterbench.analysis.stats import direction
from clusterbench.environment import busy_processes, is_volatile, value_text
from clusterbench.limits.thresholds import RATE_SLACK
from clusterbench.store import run_kinds
from clusterbench.results.step_words import sweep_in_words

LINK_CLASS_KEY = "fabric.switch"   # a snapshot key naming the node's switch, when known (execute.switch_of)


@dataclass
class Figure:
    """One per-node figure over the nodes."""
    name: str                  # "compute (Himeno), jacobi (time)" (naming.figure_name)
    unit: str
    median: float
    nodes: list[outliers.NodeValue]
    lower_is_better: bool = False
    shared_device: str = ""    # the nodes measured one device ("sda on one machine"): not judged per node
    # the nodes that read a device with other nodes of the run, when not all do: host -> "sda on one machine"
    device_sharers: dict[str, str] = field(default_factory=dict)
    shared_machine: bool = False   # the nodes ran at once on one machine: its CPUs shared, not judged per node
    spread: tuple[float, float] | None = None   # lowest and highest repetition over all nodes
    node_spread: dict[str, tuple[float, float]] = field(default_factory=dict)   # the same, per node
    # each node's repetitions summarised as a step's table summarises them (n, median, interval of
    # the median): the per-node table gives them, so a node 8 % low can be told from noise
    node_summaries: dict[str, stats.Summary] = field(default_factory=dict)

    @property
    def flagged(self) -> list[outliers.NodeValue]:
        return [n for n in self.nodes if n.flagged]


@dataclass
class Link:
    src: str
    dst: str
    mib_s: float
    latency_us: float | None
    link_class: str
    reference: float = 0.0
    reference_is: str = ""     # "the class's best link" or "the link's rate"
    flagged: bool = False
    both_ways_at_once: bool = False   # its reverse ran in the same shift round (shift N/2 of N nodes)
    above_rate: float | None = None   # the link's rate (MiB/s) when the figure is above it: not the link's
    # % of its TCP bytes sent again for data lost (split_resends; median of the repetitions); None: not TCP
    retransmit_pct: float | None = None
    lossy: bool = False               # retransmit_pct at or above outliers.LINK_RETRANSMIT_BOUND_PCT
    # % of its TCP data segments the network delivered twice (split_resends; median of the repetitions);
    # None: not counted
    duplicate_pct: float | None = None
    duplicating: bool = False         # duplicate_pct at or above outliers.LINK_DUPLICATE_BOUND_PCT


@dataclass
class EnvDifference:
    key: str
    most: str                  # the value on most nodes
    differ: dict[str, str]     # host -> its value, for the nodes that differ


@dataclass
class ClusterView:
    hosts: list[str]
    figures: list[Figure] = field(default_factory=list)
    links: list[Link] = field(default_factory=list)
    links_alone: list[Link] = field(default_factory=list)   # --links-one-pair: each link measured alone
    env: list[EnvDifference] = field(default_factory=list)
    scaling: dict[str, dict[int, float]] = field(default_factory=dict)   # curve -> nodes -> value
    scaling_unit: str = "us"
    no_snapshot: list[str] = field(default_factory=list)   # nodes whose environment could not be captured
    threshold: float = outliers.NODE_THRESHOLD
    link_threshold: float = outliers.LINK_THRESHOLD
    gpus: list[gpu_analysis.GpuFigure] = field(default_factory=list)        # per GPU, over all GPUs measured
    gpu_findings: list[gpu_analysis.GpuFinding] = field(default_factory=list)
    # the steps that measured nothing usable ("link matrix (...) failed: timed out ..."): a run whose node
    # stopped mid-run said "Nothing flagged" of the links it never measured
    unfinished: list[str] = field(default_factory=list)

    def link(self, src: str, dst: str) -> Link | None:
        return next((lk for lk in self.links if lk.src == src and lk.dst == dst), None)

    def link_alone(self, src: str, dst: str) -> Link | None:
        return next((lk for lk in self.links_alone if lk.src == src and lk.dst == dst), None)

    @property
    def flagged_links(self) -> list[Link]:
        return [lk for lk in self.links if lk.flagged]

    @property
    def lossy_links(self) -> list[Link]:
        return [lk for lk in self.links if lk.lossy]

    @property
    def duplicating_links(self) -> list[Link]:
        return [lk for lk in self.links if lk.duplicating]


def _median_by_key(samples) -> dict:
    by: dict = {}
    for s in samples:
        if s.value is not None:
            by.setdefault(s.key(), []).append(s.value)
    return {k: statistics.median(v) for k, v in by.items()}


def _values_by_key(samples) -> dict:
    by: dict = {}
    for s in samples:
        if s.value is not None:
            by.setdefault(s.key(), []).append(s.value)
    return by


def _device_of(env: dict, directory: str) -> tuple:
    return (env.get(f"target.{directory}.device") or env.get(f"target.{directory}.source"), env.get("system.boot_time"))


def shared_device(envs: dict[str, dict], hosts: list[str], directory: str | None) -> str:
    """'sda on one machine' when every node's target directory sits on the
    same block device of one running kernel (one boot time): the nodes of
    the test cluster, namespaces of one machine, read one disk."""
    if not directory:
        return ""
    seen = {_device_of(envs.get(h, {}), directory) for h in hosts}
    if len(seen) != 1:
        return ""
    device, boot = next(iter(seen))
    return f"{device} on one machine" if device and boot else ""


def device_sharers(envs: dict[str, dict], hosts: list[str], directory: str | None) -> dict[str, str]:
    """{host: 'sda on one machine'} for each node whose target directory sits
    on a block device of one running kernel that another node of the run
    reads too. Their figures are that device's, not the node's: on the test
    cluster, with h04's scratch on a disk of its own, the three nodes left on
    the machine's one disk had h03's cold read flagged 73 % above the median
    (its repetitions clear of h04's, the faulty disk's, and of one other's)."""
    if not directory:
        return {}
    on: dict[tuple, list[str]] = {}
    for h in hosts:
        device, boot = _device_of(envs.get(h, {}), directory)
        if device and boot:
            on.setdefault((device, boot), []).append(h)
    return {h: f"{device} on one machine" for (device, _), hs in on.items() if len(hs) > 1 for h in hs}


def one_machine(envs: dict[str, dict], hosts: list[str]) -> bool:
    """Every node a namespace of one running kernel (one boot time), as the
    test cluster's hosts are: nodes run at once then share its CPUs."""
    boots = {envs.get(h, {}).get("system.boot_time") for h in hosts}
    return len(boots) == 1 and None not in boots


def node_figures(steps, threshold: float, envs: dict[str, dict] | None = None,
                 at_once: bool = False) -> list[Figure]:
    """at_once: the nodes' steps ran at the same time (not --one-at-a-time)."""
    per: dict[tuple[str, str], dict[str, list[float]]] = {}
    directory: dict[tuple[str, str], str | None] = {}
    for st in steps:
        host = st.get("host")
        # the GPU kernels are judged per GPU (analysis/cluster/gpus.py): a node may have several
        if host is None or st["status"] != "ok" or gpu_analysis.is_gpu_step(st):
            continue
        dirs = {s.directory for s in st["samples"] if s.directory}
        # a part swept by a list is a step per point, "stream [array-size=1m]": looked up by that whole
        # name, every point fell back to one figure ("stream copy"), each node's last point overwriting the rest
        part, sweep = sweep_in_words(st)
        for key, values in _values_by_key(st["samples"]).items():
            fig = (figure_name(part, st["kernel"], key, sweep), key.unit or "")
            per.setdefault(fig, {})[host] = values
            directory[fig] = next(iter(dirs)) if len(dirs) == 1 else None
    figures = []
    # a figure of one node is kept, judged against nothing (judge_nodes flags from 3 nodes): the other
    # node of two failed its step, and the one that measured it vanished from show, report and compare
    for (name, unit), reps in per.items():
        by_host = {h: statistics.median(v) for h, v in reps.items()}
        lower = direction(unit) < 0   # the one rule compare uses (analysis/stats.py)
        nodes = outliers.judge_nodes(by_host, threshold, reps)
        shared = shared_device(envs or {}, sorted(reps), directory[(name, unit)])
        # some nodes on a device of their own, the rest sharing one: those are judged, these not
        sharers = {} if shared else device_sharers(envs or {}, sorted(reps), directory[(name, unit)])
        # nodes of one machine measured at once time-slice its CPUs (4 nodes' pingpong ranks on 2
        # cores: 0.3 us on two nodes, 4 ms on the others); with no other machine to compare, the
        # differences are contention for it: said once, not per node, as for one device
        machine = at_once and not shared and one_machine(envs or {}, sorted(reps))
        if shared or machine:
            nodes = [dataclasses.replace(n, flagged=False) for n in nodes]
        nodes = [dataclasses.replace(n, flagged=False) if n.host in sharers else n for n in nodes]
        every = [x for v in reps.values() for x in v]
        figures.append(Figure(name, unit, statistics.median(by_host.values()), nodes, lower, shared, sharers,
                              machine, (min(every), max(every)), {h: (min(v), max(v)) for h, v in reps.items()},
                              {h: stats.summarize(v) for h, v in reps.items()}))
    return figures


def link_class(envs: dict[str, dict], src: str, dst: str) -> str:
    """'same switch' / 'across trunk' when the snapshots name each node's
    switch (LINK_CLASS_KEY); one class otherwise."""
    a, b = envs.get(src, {}).get(LINK_CLASS_KEY), envs.get(dst, {}).get(LINK_CLASS_KEY)
    if a is None or b is None:
        return "all links"
    return "same switch" if a == b else "across trunk"


def split_resends(retransmit_pct: float | None, rec: dict) -> tuple[float | None, float | None]:
    """One repetition's link_retransmits record as (% of the bytes sent again for data lost, % of the
    segments the network delivered twice). The receiver reports every segment it got twice with a
    D-SACK (RFC 2883), whether the network copied it or the sender resent what had arrived: a loaded
    node's late ACKs made healthy links resend 0.2 to 1.4 % a repetition, every such resend answered by
    as many D-SACKs (two suites side by side, eight workers on 2 cores, 2026-12-08), while a dropping
    port's resends had none and a duplicating port's copies were resent by no one. So the resends the
    D-SACKs match are spurious, and the D-SACKs the resends match are no network copies; each side is
    what the other leaves over (a link both losing and copying shows the larger, net). None where the
    record has no TCP counts (the library carried the link otherwise) or no D-SACK counts (the kernel)."""
    sent, segments, twice = rec.get("tcp_bytes_sent"), rec.get("tcp_segments_sent"), rec.get("tcp_segments_duplicated")
    doubled = 100.0 * twice / segments if segments and isinstance(twice, int) else None
    resent = retransmit_pct if sent and retransmit_pct is not None else None
    lost = max(0.0, resent - (doubled or 0.0)) if resent is not None else None
    copied = max(0.0, doubled - (resent or 0.0)) if doubled is not None else None
    return lost, copied


def link_matrix(steps, envs: dict[str, dict], threshold: float, step_name: str = LINKS_STEP,
                link_bits_per_s: float | None = None) -> list[Link]:
    bw: dict[tuple[str, str], list[float]] = {}
    nominal: dict[tuple[str, str], list[float]] = {}
    lat: dict[tuple[str, str], list[float]] = {}
    retransmits: dict[tuple[str, str], list[float]] = {}
    duplicates: dict[tuple[str, str], list[float]] = {}
    both_ways: set[tuple[str, str]] = set()
    for st in steps:
        if st["name"] != step_name:
            continue
        for s in st["samples"]:
            q = dict(s.qualifiers)
            pair = (str(q.get("src_host")), str(q.get("dst_host")))
            if s.value is None:
                continue
            if s.phase == "link_retransmits":
                lost, doubled = split_resends(s.value, s.record)
                if lost is not None:
                    retransmits.setdefault(pair, []).append(lost)
                if doubled is not None:
                    duplicates.setdefault(pair, []).append(doubled)
                continue
            {"link_bandwidth": bw, "link_latency": lat}.get(s.phase, {}).setdefault(pair, []).append(s.value)
            if s.phase == "link_bandwidth" and s.link_bits_per_s:
                nominal.setdefault(pair, []).append(s.link_bits_per_s)
            shift, nodes = s.record.get("shift"), s.record.get("nodes")
            if s.record.get("pattern") == "shift" and isinstance(shift, int) and shift * 2 == nodes:
                both_ways.add(pair)
    # A link's bandwidth is its best repetition: other work on the nodes
    # only slows a transfer, never lifts it past the link, and a bad port
    # or cable is slow in every repetition. The median of 5 let one loaded
    # stretch of a shared machine put a healthy link at 56 % of its class.
    # Retransmissions: the median, as latency; a loaded stretch of a shared machine overflows a shaper's
    # queue in one repetition, where a lossy cable drops in every one
    links = [Link(src, dst, max(v), statistics.median(lat[(src, dst)]) if (src, dst) in lat else None,
                  link_class(envs, src, dst), both_ways_at_once=(src, dst) in both_ways,
                  retransmit_pct=statistics.median(retransmits[(src, dst)]) if (src, dst) in retransmits else None,
                  duplicate_pct=statistics.median(duplicates[(src, dst)]) if (src, dst) in duplicates else None)
             for (src, dst), v in sorted(bw.items())]
    for lk in links:
        lk.lossy = lk.retransmit_pct is not None and lk.retransmit_pct >= outliers.LINK_RETRANSMIT_BOUND_PCT
        lk.duplicating = lk.duplicate_pct is not None and lk.duplicate_pct >= outliers.LINK_DUPLICATE_BOUND_PCT
    for cls in {lk.link_class for lk in links}:
        members = [lk for lk in links if lk.link_class == cls]
        best = max(lk.mib_s for lk in members)
        rate = physical_rate_bits_per_s(envs, members, nominal, link_bits_per_s, best)
        ref, bound, what = outliers.link_bound([lk.mib_s for lk in members], threshold, rate)
        cap = rate * outliers.MIB_PER_S_PER_BIT_PER_S if rate else None
        for lk in members:
            lk.reference, lk.reference_is = ref, what
            lk.flagged = (len(members) >= 2 or what == "the link's rate") and lk.mib_s < bound
            # no transfer outruns its link: a figure above it was timed wrong, or the rate is
            if cap and lk.mib_s > cap * RATE_SLACK:
                lk.above_rate = cap
    return links


def physical_rate_bits_per_s(envs: dict[str, dict], members: list[Link], nominal: dict,
                             given: float | None, best_mib_s: float) -> float | None:
    """The rate a class's links can reach, as the environment knows it:
    --link-speed (at show, or the run's own), else the slower end's NIC
    speed over the class. A NIC speed far above every link (a veth's
    nominal 10 Gbit/s behind a 1 Gbit/s shaper) says nothing about the
    path and is not used; a rate the user gave always is."""
    given = given or next((e["conditions.link_bits_per_s"] for e in envs.values()
                           if e.get("conditions.link_bits_per_s")), None)
    if given:
        return float(given)
    from clusterbench.limits.facts import fastest_link_bits_per_s

    ends = []
    for lk in members:
        rates = nominal.get((lk.src, lk.dst)) or [r for h in (lk.src, lk.dst)
                                                   if (r := fastest_link_bits_per_s(envs.get(h, {})))]
        if rates:
            ends.append(min(rates))
    if not ends:
        return None
    rate = min(ends)
    return rate if best_mib_s >= rate * outliers.MIB_PER_S_PER_BIT_PER_S / 2 else None


# Volatile keys that are still compared between the nodes of one run: its snapshots are taken at
# one moment, so a node whose processes were busy while the others' were not has a neighbour of its
# own (environment/busy_processes.py), not a moment of the machine's load.
AT_ONE_MOMENT_KEYS = frozenset({busy_processes.KEY, busy_processes.KEY + "_error"})


def env_differences(envs: dict[str, dict]) -> list[EnvDifference]:
    """Keys whose value differs between nodes: "key | value on most nodes |
    nodes that differ". Volatile keys (free memory, load, the host name) are
    not configuration and are left out, as `env --diff` leaves them out, but
    for those a node differs in at one moment (AT_ONE_MOMENT_KEYS)."""
    hosts = sorted(envs)
    keys = sorted({k for e in envs.values() for k in e
                   if (not is_volatile(k) or k in AT_ONE_MOMENT_KEYS) and k != "host.name"})
    out = []
    for key in keys:
        # as a person reads it ("1 GiB", not 1073741824), as `env --diff` shows it
        values = {h: "(absent)" if key not in envs[h] else value_text(key, envs[h][key]) or str(envs[h][key])
                  for h in hosts}
        counts = Counter(values.values())
        if len(counts) < 2:
            continue
        most = counts.most_common(1)[0][0]
        out.append(EnvDifference(key, most, {h: v for h, v in values.items() if v != most}))
    # the keys that single out few nodes first: the line that differs
    return sorted(out, key=lambda d: (len(d.differ), d.key))


def scaling_curves(steps) -> tuple[dict[str, dict[int, float]], str]:
    curves: dict[str, dict[int, float]] = {}
    unit = "us"
    for st in steps:
        if not (st["name"] or "").startswith(SCALING_PREFIX) or st["status"] != "ok" or not st["build"]:
            continue
        nodes = int(st["build"].get("nodes") or 0)
        placement = "1 rank/node" if st["ranks_per_node"] == 1 else "all cores/node"
        for key, value in _median_by_key(st["samples"]).items():
            unit = key.unit or unit
            curves.setdefault(f"{key.label} ({placement})", {})[nodes] = value
    return curves, unit


def analyse(run: dict, threshold: float = outliers.NODE_THRESHOLD,
            link_threshold: float = outliers.LINK_THRESHOLD, link_bits_per_s: float | None = None) -> ClusterView:
    steps, envs = run["steps"], run["environments"]
    view = ClusterView([], threshold=threshold, link_threshold=link_threshold)
    view.figures = node_figures(steps, threshold, envs, at_once=ran_at_once(run))
    view.links = link_matrix(steps, envs, link_threshold, LINKS_STEP, link_bits_per_s)
    view.links_alone = link_matrix(steps, envs, link_threshold, LINKS_ALONE_STEP, link_bits_per_s)
    view.hosts = nodes(run, view.links)
    # a node's cbk is one fact: a node without it differed in 16 cbk.* keys, each listed as a finding
    view.env = env_differences(cbk_fact.folded({h: e for h, e in envs.items() if h in view.hosts})) \
        if len(envs) > 1 else []
    view.no_snapshot = [h for h in view.hosts if h not in envs]
    view.scaling, view.scaling_unit = scaling_curves(steps)
    view.gpus, view.gpu_findings = gpu_analysis.analyse_gpus(steps, envs, threshold)
    # every step that did not end well: a run killed with -9 (its steps killed) said "Nothing flagged"
    # of steps it never ended, and a link matrix skipped for a node cbk cannot run on went unsaid
    view.unfinished = unfinished_lines([st for st in steps if st["status"] != "ok"])
    if not steps and run.get("status") not in (None, "ok", "running"):
        # cut short while the snapshots were taken: "Nothing flagged: every node within 10 %" of no node
        why = " ".join((run.get("message") or run["status"]).split())
        view.unfinished.append(f"any part: the run ended before its first step ({why})")
    return view


def nodes(run: dict, links: list[Link] = ()) -> list[str]:
    """The nodes measured; the host clusterbench ran on (a login node) has a
    snapshot too but is a node only when a step ran there. With no step
    (every part skipped) the nodes are those snapshots but the launching
    host's, as a login node it most often is."""
    envs = run["environments"]
    snapshots = sorted(h for h in envs if h != run.get("host")) or sorted(envs)
    return sorted({st["host"] for st in run["steps"] if st.get("host")}
                  | {lk.src for lk in links} | {lk.dst for lk in links}) or snapshots


def unfinished_lines(steps: list[dict]) -> list[str]:
    """What each step that did not end well left unmeasured, one line per
    reason: the cluster-wide steps skipped for one node said the same long
    reason nine times over ("link matrix (...) skipped: cbk cannot run on
    every node (h03: ...)", then each scaling step); now once, "link matrix
    (mpiGraph shift pattern) and 8 scaling steps skipped: ..."."""
    alike: dict[tuple[str, str], list[dict]] = {}
    for st in steps:
        key = (st["status"], " ".join((st.get("message") or "").split())) if not st.get("host") else (str(id(st)), "")
        alike.setdefault(key, []).append(st)
    out = []
    for group in alike.values():
        line = unfinished(group[0])
        if len(group) > 1:
            line = steps_text([st["name"] for st in group]) + line[len(group[0]["name"]):]
        out.append(line)
    return out


def unfinished(step: dict) -> str:
    """'node h03: himeno failed: timed out ...' (a per-node step's message starts with its node: said once)."""
    host = step.get("host")
    why = " ".join((step.get("message") or "").split())
    if host and why.startswith(f"{host}: "):
        why = why[len(host) + 2:]
    return f"{'node ' + host + ': ' if host else ''}{step['name']} {step['status']}{': ' + why if why else ''}"


def is_cluster_run(run: dict) -> bool:
    return run.get("kind") == run_kinds.CLUSTER



def parse_fraction(text: str, flag: str) -> float:
    """'10%', '10 %' or '0.1' -> 0.1; one clear line otherwise."""
    from clusterbench.errors import BadInput

    t = text.strip().replace(" ", "")
    try:
        v = float(t[:-1]) / 100 if t.endswith("%") else float(t)
    except ValueError:
        raise BadInput(f"--{flag} {text}: give a fraction (0.1) or a percentage (10%)") from None
    if not 0 < v < 1:
        raise BadInput(f"--{flag} {text}: must be above 0 and below 100 %")
    return v


def ran_at_once(run: dict) -> bool:
    """Whether the per-node steps ran on every node at once: the default, unless
    the run's command line said --one-at-a-time (read as the run read it)."""
    from clusterbench.store.command_options import stored_options

    return stored_options(run.get("command")).get("one-at-a-time", "false") != "true"


def thresholds_of(run: dict) -> dict[str, float]:
    """The bounds the run was made with (--threshold, --link-threshold on
    its command line, `--threshold 20%` or `--threshold=20%`), so its
    report judges it as its run did."""
    from clusterbench.errors import BadInput
    from clusterbench.store.command_options import stored_options

    options = stored_options(run.get("command"))
    out = {}
    for flag, key in (("threshold", "threshold"), ("link-threshold", "link_threshold")):
        if flag in options:
            try:
                out[key] = parse_fraction(options[flag], flag)
            except BadInput:
                pass   # checked before the run; a hand-edited store is judged by the defaults
    return out
