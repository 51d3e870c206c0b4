"""What a stored cluster run found: every per-node figure judged against
the other nodes, the link matrix judged per class, the environment keys
that differ between nodes, the scaling curves, and the summary in
sentences. Reads a loaded run (report.data.load_run: steps with their
Sample objects, and each host's snapshot), so every format can use it."""
from __future__ import annotations

import shlex
import statistics
from collections import Counter
from dataclasses import dataclass, field

from clusterbench.cluster import gpus as gpu_analysis
from clusterbench.cluster import outliers
from clusterbench.cluster.naming import LINKS_ALONE_STEP, LINKS_STEP, SCALING_PREFIX, node_step_host
from clusterbench.environment import is_volatile

LOWER_IS_BETTER_UNITS = {"us", "ms", "s", "ns"}
LINK_CLASS_KEY = "fabric.switch"   # a snapshot key naming the node's switch, when known (execute.switch_of)


@dataclass
class Figure:
    """One per-node figure over the nodes."""
    name: str                  # "stream triad", "himeno", ...
    unit: str
    median: float
    nodes: list[outliers.NodeValue]
    lower_is_better: bool = False

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
    flagged: bool = False


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

    def link(self, src: str, dst: str) -> Link | None:
        return next((lk for lk in self.links if lk.src == src and lk.dst == dst), None)

    def link_alone(self, src: str, dst: str) -> Link | None:
        return next((lk for lk in self.links_alone if lk.src == src and lk.dst == dst), None)

    @property
    def flagged_links(self) -> list[Link]:
        return [lk for lk in self.links if lk.flagged]


def _median_by_key(samples) -> dict:
    by: dict = {}
    for s in samples:
        if s.value is not None:
            by.setdefault(s.key(), []).append(s.value)
    return {k: statistics.median(v) for k, v in by.items()}


def figure_name(kernel: str, key) -> str:
    label = key.label
    cond = f" ({key.condition})" if key.condition and key.condition != "n/a" else ""
    return f"{kernel} {label}{cond}" if label != kernel else f"{kernel}{cond}"


def node_figures(steps, threshold: float) -> list[Figure]:
    per: dict[tuple[str, str], dict[str, float]] = {}
    for st in steps:
        host = node_step_host(st["name"] or "")
        # the GPU kernels are judged per GPU (cluster/gpus.py): a node may have several
        if host is None or st["status"] != "ok" or st["kernel"] in gpu_analysis.GPU_KERNELS:
            continue
        for key, value in _median_by_key(st["samples"]).items():
            per.setdefault((figure_name(st["kernel"], key), key.unit or ""), {})[host] = value
    figures = []
    for (name, unit), by_host in per.items():
        if len(by_host) < 2:
            continue
        lower = unit in LOWER_IS_BETTER_UNITS
        figures.append(Figure(name, unit, statistics.median(by_host.values()),
                              outliers.judge_nodes(by_host, threshold), lower))
    return figures


def link_class(envs: dict[str, dict], src: str, dst: str) -> str:
    """'same switch' / 'across trunk' when the snapshots name each node's
    switch (LINK_CLASS_KEY); one class otherwise."""
    a, b = envs.get(src, {}).get(LINK_CLASS_KEY), envs.get(dst, {}).get(LINK_CLASS_KEY)
    if a is None or b is None:
        return "all links"
    return "same switch" if a == b else "across trunk"


def link_matrix(steps, envs: dict[str, dict], threshold: float, step_name: str = LINKS_STEP) -> list[Link]:
    bw: dict[tuple[str, str], list[float]] = {}
    lat: dict[tuple[str, str], list[float]] = {}
    for st in steps:
        if st["name"] != step_name:
            continue
        for s in st["samples"]:
            q = dict(s.qualifiers)
            pair = (str(q.get("src_host")), str(q.get("dst_host")))
            if s.value is None:
                continue
            (bw if s.phase == "link_bandwidth" else lat).setdefault(pair, []).append(s.value)
    # A link's bandwidth is its best repetition: other work on the nodes
    # only slows a transfer, never lifts it past the link, and a bad port
    # or cable is slow in every repetition. The median of 5 let one loaded
    # stretch of a shared machine put a healthy link at 56 % of its class.
    links = [Link(src, dst, max(v), statistics.median(lat[(src, dst)]) if (src, dst) in lat else None,
                  link_class(envs, src, dst)) for (src, dst), v in sorted(bw.items())]
    for cls in {lk.link_class for lk in links}:
        members = [lk for lk in links if lk.link_class == cls]
        ref, bound = outliers.link_bound([lk.mib_s for lk in members], threshold)
        for lk in members:
            lk.reference, lk.flagged = ref, len(members) >= 2 and lk.mib_s < bound
    return links


def env_differences(envs: dict[str, dict]) -> list[EnvDifference]:
    """Keys whose value differs between nodes: "key | value on most nodes |
    nodes that differ". Volatile keys (free memory, load, the host name) are
    not configuration and are left out, as `env --diff` leaves them out."""
    hosts = sorted(envs)
    keys = sorted({k for e in envs.values() for k in e if not is_volatile(k) and k != "host.name"})
    out = []
    for key in keys:
        values = {h: "(absent)" if key not in envs[h] else str(envs[h][key]) for h in hosts}
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
            link_threshold: float = outliers.LINK_THRESHOLD) -> ClusterView:
    steps, envs = run["steps"], run["environments"]
    view = ClusterView([], threshold=threshold, link_threshold=link_threshold)
    view.figures = node_figures(steps, threshold)
    view.links = link_matrix(steps, envs, link_threshold)
    view.links_alone = link_matrix(steps, envs, link_threshold, LINKS_ALONE_STEP)
    # the nodes measured; the host clusterbench ran on (a login node) has a
    # snapshot too but is a node only when a step ran there
    view.hosts = sorted({h for st in steps if (h := node_step_host(st["name"] or ""))}
                        | {lk.src for lk in view.links} | {lk.dst for lk in view.links}) or sorted(envs)
    view.env = env_differences({h: e for h, e in envs.items() if h in view.hosts}) if len(envs) > 1 else []
    view.no_snapshot = [h for h in view.hosts if h not in envs]
    view.scaling, view.scaling_unit = scaling_curves(steps)
    view.gpus, view.gpu_findings = gpu_analysis.analyse_gpus(steps, envs, threshold)
    return view


def is_cluster_run(run: dict) -> bool:
    return run.get("suite") == "cluster"



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


def thresholds_of(run: dict) -> dict[str, float]:
    """The bounds the run was made with (--threshold, --link-threshold on
    its command line), so its report judges it as its run did."""
    out = {}
    try:
        words = shlex.split(run.get("command") or "")
    except ValueError:
        return out
    for w in words:
        for flag, key in (("--threshold=", "threshold"), ("--link-threshold=", "link_threshold")):
            if w.startswith(flag):
                try:
                    out[key] = parse_fraction(w[len(flag):], flag[2:-1])
                except Exception:
                    pass
    return out
