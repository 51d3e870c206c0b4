"""Every GPU of a cluster run side by side: the figures of the kernels of
the GPU family (host copies, pinned, at their largest size; device
memory's five kernels; copies to another GPU of the node, each pair by the
GPU it starts from) per node and per GPU, judged with the per-node
rule (analysis/cluster/outliers.py) over all GPUs measured, and each GPU
that is off named with the likely cause read from its node's snapshot: a
link negotiated narrower or slower than the others', a different driver,
firmware, model or memory size."""
from __future__ import annotations

import statistics
from collections import Counter
from dataclasses import dataclass, field

from clusterbench import catalogue
from clusterbench.analysis.cluster import outliers
from clusterbench.analysis.cluster.naming import gpu_figure_name
from clusterbench.limits.gpu_limits import bus_key, gpu_index, is_gpu_copy, is_gpu_memory

# snapshot keys that tell GPUs apart, in the order a cause is named
IDENTITY_KEYS = (("name", "model"), ("driver_version", "driver"), ("vbios_version", "firmware (VBIOS)"),
                 ("memory_mib", "memory (MiB)"))


@dataclass(frozen=True)
class Gpu:
    host: str
    bus_id: str
    index: str | None          # in its node's snapshot

    @property
    def label(self) -> str:
        return f"{self.host} GPU {self.index if self.index is not None else self.bus_id}"


def is_gpu_step(step) -> bool:
    return catalogue.step_family(step) == catalogue.GPU


@dataclass
class GpuFigure:
    name: str                  # "GPU link, host to device (pinned, copy engine)", "GPU memory, triad"
    unit: str
    median: float
    gpus: dict[str, outliers.NodeValue]   # label -> verdict
    kind: str = ""             # HOST_COPY, MEMORY or PEER_COPY (below)
    where: dict[str, Gpu] = field(default_factory=dict)   # label -> the GPU

    @property
    def flagged(self) -> list[outliers.NodeValue]:
        return [v for v in self.gpus.values() if v.flagged]


@dataclass
class GpuFinding:
    gpu: Gpu
    # (figure name, verdict, median of the GPUs, unit) of each flagged figure
    figures: list[tuple[str, outliers.NodeValue, float, str]] = field(default_factory=list)
    causes: list[str] = field(default_factory=list)
    host_copy: bool = False    # a flagged figure is a host copy: the PCIe link is a likely cause
    peer_copy: bool = False    # a flagged figure is a copy to another GPU: the link between them is

    def sentence(self, gpus_measured: int) -> str:
        parts = []
        for name, v, median, unit in self.figures:
            side = "below" if v.ratio < 1 else "above"
            parts.append(f"{name} {abs(v.ratio - 1) * 100:.0f} % {side} the median "
                         f"({v.value:,.1f} vs {median:,.1f} {unit})")
        cause = "; ".join(self.causes) if self.causes else (
            "no difference in its snapshot explains it: look at the link between the two GPUs "
            "(nvidia-smi topo -m, nvidia-smi nvlink --status)" if self.peer_copy else
            "no difference in its snapshot explains it: look at its clocks, temperature and ECC "
            "(nvidia-smi -q -d CLOCK,TEMPERATURE,ECC)")
        # "; " between the figures: a figure's name has commas of its own ("GPU link, host to device (pinned,
        # copy engine)"), and joined by ", " three of them read as one run-on list of nine items
        return (f"{self.gpu.label} ({self.gpu.bus_id}) of {gpus_measured} GPUs: {'; '.join(parts)}; "
                f"likely cause: {cause}")


def is_peer_copy(sample) -> bool:
    """A copy between two GPUs of a node (gpupeer)."""
    return sample.extra("src_gpu_bus_id") is not None and sample.extra("gpus") is not None


# what a figure measures, for the likely cause of a flagged one
HOST_COPY, MEMORY, PEER_COPY = "host copy", "memory", "peer copy"


def _figures_of(step) -> dict[tuple[str, str, str], dict[str, list[float]]]:
    """{(figure name, unit, what it measures): {bus id: values}} of one node's GPU
    step. A copy between GPUs counts for the GPU it starts from; its name
    says the pair ("GPU to GPU, one way 0>1, peer on"), so identical nodes'
    same pairs are judged together."""
    samples = [s for s in step["samples"] if s.value is not None]
    # each phase in the kernel's words (its run record's, else cbk --describe's)
    words = catalogue.step_phase_words(step["kernel"], step.get("build"))
    largest: dict = {}
    for s in samples:
        if is_gpu_copy(s) and s.extra("host_memory") == "pinned":
            k = (s.phase, s.extra("engine"), bus_key(s.extra("gpu_bus_id")))
            largest[k] = max(largest.get(k, 0), s.extra("copy_bytes") or 0)
    out: dict = {}
    for s in samples:
        if is_peer_copy(s):
            bus = bus_key(s.extra("src_gpu_bus_id"))
            value = s.extra("event_gb_per_s")
            if bus is not None and isinstance(value, (int, float)) and value > 0:
                name = gpu_figure_name(step["kernel"], words.get(s.phase, s.phase),
                                       f" {s.extra('gpus')}, peer {s.extra('peer')}")
                out.setdefault((name, "GB/s", PEER_COPY), {}).setdefault(bus, []).append(float(value))
            continue
        bus = bus_key(s.extra("gpu_bus_id"))
        if bus is None:
            continue
        if is_gpu_copy(s) and s.extra("host_memory") == "pinned" \
                and s.extra("copy_bytes") == largest.get((s.phase, s.extra("engine"), bus)):
            engine = "copy engine" if s.extra("engine") == "copy" else "copy kernel"
            name = gpu_figure_name(step["kernel"], words.get(s.phase, s.phase), f" (pinned, {engine})")
            value = s.extra("event_gb_per_s")
        elif is_gpu_memory(s):
            name = gpu_figure_name(step["kernel"], words.get(s.phase, s.phase))
            value = (s.extra("best_mb_per_s") or 0) / 1e3
        else:
            continue
        if isinstance(value, (int, float)) and value > 0:
            kind = HOST_COPY if is_gpu_copy(s) else MEMORY
            out.setdefault((name, "GB/s", kind), {}).setdefault(bus, []).append(float(value))
    return out


def _most(values: list) -> object:
    return Counter(values).most_common(1)[0][0] if values else None


def likely_causes(gpu: Gpu, all_gpus: list[Gpu], envs: dict[str, dict], copy_figure: bool) -> list[str]:
    """What sets this GPU apart in the snapshots, most telling first."""
    def value(g: Gpu, key: str):
        return envs.get(g.host, {}).get(f"gpu.{g.index}.{key}") if g.index is not None else None

    others = [g for g in all_gpus if g != gpu]
    out = []
    if copy_figure:
        width, width_max = value(gpu, "pcie_width_current"), value(gpu, "pcie_width")
        usual = _most([value(g, "pcie_width_current") for g in others if value(g, "pcie_width_current")])
        if isinstance(width, int) and isinstance(usual, int) and width < usual:
            out.append(f"its PCIe link is negotiated at x{width} while the others run at x{usual}")
        elif isinstance(width, int) and isinstance(width_max, int) and width < width_max:
            out.append(f"its PCIe link is negotiated at x{width} of its x{width_max}")
        gen = value(gpu, "pcie_gen_current")
        usual_gen = _most([value(g, "pcie_gen_current") for g in others if value(g, "pcie_gen_current")])
        if isinstance(gen, int) and isinstance(usual_gen, int) and gen < usual_gen:
            out.append(f"its link was at Gen{gen} while the others were at Gen{usual_gen} "
                       f"(an idle GPU lowers its generation: confirm under load)")
    for key, what in IDENTITY_KEYS:
        mine = value(gpu, key)
        usual = _most([value(g, key) for g in others if value(g, key) is not None])
        if mine is not None and usual is not None and mine != usual:
            out.append(f"its {what} is {mine} while the others have {usual}")
    return out


def analyse_gpus(steps, envs: dict[str, dict], threshold: float) -> tuple[list[GpuFigure], list[GpuFinding]]:
    per: dict[tuple[str, str, str], dict[Gpu, float]] = {}
    for st in steps:
        host = st.get("host")
        if host is None or st["status"] != "ok" or not is_gpu_step(st):
            continue
        for key, by_bus in _figures_of(st).items():
            for bus, values in by_bus.items():
                gpu = Gpu(host, bus, gpu_index(envs.get(host, {}), bus))
                per.setdefault(key, {})[gpu] = statistics.median(values)
    figures, findings = [], {}
    all_gpus = sorted({g for by_gpu in per.values() for g in by_gpu}, key=lambda g: (g.host, g.bus_id))
    for (name, unit, kind), by_gpu in sorted(per.items()):
        if len(by_gpu) < 2:
            continue
        labels = {g.label: g for g in by_gpu}
        verdicts = outliers.judge_nodes({g.label: v for g, v in by_gpu.items()}, threshold)
        median = statistics.median(by_gpu.values())
        figures.append(GpuFigure(name, unit, median, {v.host: v for v in verdicts}, kind, labels))
        for v in verdicts:
            if v.flagged:
                gpu = labels[v.host]
                f = findings.setdefault(gpu, GpuFinding(gpu))
                f.figures.append((name, v, median, unit))
                f.host_copy = f.host_copy or kind == HOST_COPY
                f.peer_copy = f.peer_copy or kind == PEER_COPY
    for gpu, f in findings.items():
        f.causes = likely_causes(gpu, all_gpus, envs, f.host_copy)
    return figures, [findings[g] for g in sorted(findings, key=lambda g: (g.host, g.bus_id))]


@dataclass
class GpuTables:
    """The figures as the reports lay them out: one row per GPU with its
    host-copy and memory figures across; the copies between GPUs (one
    figure per pair, so many on an 8-GPU node) one row per pair with the
    nodes across, as the per-node table has them."""
    gpus: list[Gpu]                # flagged first
    columns: list[GpuFigure]       # host copies, then device memory
    pairs: list[GpuFigure]         # flagged first
    hosts: list[str]               # the nodes that measured a pair


def tables(figures: list[GpuFigure]) -> GpuTables:
    columns = sorted((f for f in figures if f.kind != PEER_COPY), key=lambda f: (f.kind != HOST_COPY, f.name))
    pairs = sorted((f for f in figures if f.kind == PEER_COPY), key=lambda f: (not f.flagged, f.name))
    flagged = {label for f in columns for label, v in f.gpus.items() if v.flagged}
    # flagged GPUs first (a row each: 128 on 16 nodes of 8), then by node and index
    gpus = sorted({g for f in columns for g in f.where.values()},
                  key=lambda g: (g.label not in flagged, g.host, int(g.index) if (g.index or "").isdigit() else 0,
                                 g.bus_id))
    hosts = sorted({g.host for f in pairs for g in f.where.values()})
    return GpuTables(gpus, columns, pairs, hosts)


def pair_verdict(figure: GpuFigure, host: str) -> outliers.NodeValue | None:
    """The verdict of a pair's figure on one node (one GPU per node starts that pair)."""
    return next((figure.gpus[label] for label, g in figure.where.items() if g.host == host), None)


def gpus_measured(figures: list[GpuFigure]) -> int:
    return len({label for f in figures for label in f.gpus})


def gpu_sentences(figures: list[GpuFigure], findings: list[GpuFinding]) -> list[str]:
    measured = gpus_measured(figures)
    return [f.sentence(measured) for f in findings]
