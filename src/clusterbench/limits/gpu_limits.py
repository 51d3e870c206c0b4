"""The physical limits of the GPU kernels' figures (docs/gpu.md, "Limits"):
a host copy (gpucopy) is bound by the GPU's PCIe link as the environment
snapshot saw it negotiated (gpu.<i>.pcie_gen*/pcie_width*), device memory
(gpumem) by the rate the runtime computes from the memory's clock and bus
width (the record's memory_peak_gb_per_s). `gpu_limit` names the limit of a
figure; `gpu_warnings` says when a figure or its link is doubtful."""
from __future__ import annotations

from clusterbench.catalogue import GPU
from clusterbench.limits.thresholds import PAGEABLE_MARGIN, RATE_SLACK, TRAINED_DOWN_SHARE
from clusterbench.results.sample import Sample

# PCIe rate per lane (GT/s) and line-code efficiency by generation: 8b/10b
# up to Gen2, 128b/130b for Gen3 to Gen5; Gen6's FLIT mode carries 236 of
# every 256 bytes as data (PCIe 6.0 base specification, FLIT layout).
PCIE_GT_PER_S = {1: 2.5, 2: 5.0, 3: 8.0, 4: 16.0, 5: 32.0, 6: 64.0}
PCIE_EFFICIENCY = {1: 0.8, 2: 0.8, 3: 128 / 130, 4: 128 / 130, 5: 128 / 130, 6: 236 / 256}
COPY_PHASES = ("h2d", "d2h", "bidir")
TEST_RUNTIME = "test"   # kernels/gpu/runtime_test.c: the GPU kernels' tests on host memory
MEMORY_PHASES = ("copy", "scale", "add", "triad", "dot")


def link_gb_per_s(gen: int, width: int) -> float:
    """One direction of a PCIe link, decimal GB/s: lanes x rate x code / 8 bits."""
    return PCIE_GT_PER_S[gen] * width * PCIE_EFFICIENCY[gen] / 8


def bus_key(text) -> str | None:
    """One form of a PCI bus id: "00000000:3B:00.0" (nvidia-smi), "0000:3b:00.0" (sysfs,
    cudaDeviceGetPCIBusId) -> "0000:3b:00.0"; None when it is not one."""
    if not isinstance(text, str) or text.count(":") != 2:
        return None
    domain, rest = text.strip().lower().split(":", 1)
    try:
        return f"{int(domain, 16):04x}:{rest}"
    except ValueError:
        return None


def gpu_index(env: dict, bus_id) -> str | None:
    """The snapshot's index of the GPU with this bus id; the only GPU when there is one."""
    want = bus_key(bus_id)
    count = env.get("gpu.count")
    indices = [str(i) for i in range(count)] if isinstance(count, int) else []
    for i in indices:
        if want and bus_key(env.get(f"gpu.{i}.bus_id")) == want:
            return i
    return indices[0] if len(indices) == 1 else None


def _link(env: dict, i: str) -> tuple[int, int, int, int] | None:
    """(gen now, width now, gen max, width max), or None when the snapshot lacks one."""
    values = [env.get(f"gpu.{i}.{k}") for k in ("pcie_gen_current", "pcie_width_current", "pcie_gen", "pcie_width")]
    if not all(isinstance(v, int) and v > 0 for v in values) or values[0] not in PCIE_GT_PER_S \
            or values[2] not in PCIE_GT_PER_S:
        return None
    return tuple(values)  # type: ignore[return-value]


def is_gpu_copy(sample: Sample) -> bool:
    return sample.phase in COPY_PHASES and sample.extra("host_memory") is not None


def is_gpu_memory(sample: Sample) -> bool:
    return sample.phase in MEMORY_PHASES and sample.extra("gpu_bus_id") is not None


def gpu_limit(sample: Sample, env: dict) -> tuple[str, float] | None:
    """(what bounds the figure, its rate in decimal GB/s), for a GPU kernel's sample."""
    if is_gpu_copy(sample):
        i = gpu_index(env, sample.extra("gpu_bus_id"))
        link = _link(env, i) if i is not None else None
        if link is None:
            return None
        _, width, gen_max, _ = link
        # the card's best generation: an idle GPU lowers its generation, so the snapshot's may be an idle one
        rate = link_gb_per_s(gen_max, width) * (2 if sample.phase == "bidir" else 1)
        both = " both directions" if sample.phase == "bidir" else " per direction"
        return f"PCIe Gen{gen_max} x{width}{both}", rate
    if is_gpu_memory(sample):
        peak = sample.extra("memory_peak_gb_per_s")
        if isinstance(peak, (int, float)) and peak > 0:
            return "GPU memory peak", float(peak)   # 2 x memory clock x bus width, as the runtime reports them
    return None


def _figure_gb_per_s(sample: Sample) -> float | None:
    key = "event_gb_per_s" if is_gpu_copy(sample) else "best_mb_per_s"
    v = sample.extra(key)
    if not isinstance(v, (int, float)):
        return None
    return float(v) if key == "event_gb_per_s" else float(v) / 1e3


def gpu_warnings(sample: Sample, env: dict) -> list[str]:
    """Warnings for a GPU kernel's sample, judged against its host's snapshot."""
    out = []
    if sample.extra("gpu_runtime") == TEST_RUNTIME:
        out.append("measured by a cbk built on the test runtime: host memory stood in for the GPU, so this is no "
                   "GPU's figure")
    if not (is_gpu_copy(sample) or is_gpu_memory(sample)):
        return out
    figure = _figure_gb_per_s(sample)
    limit = gpu_limit(sample, env)
    if limit and figure is not None and figure > RATE_SLACK * limit[1]:
        out.append(f"{figure:,.1f} GB/s is above the {limit[0]} rate of {limit[1]:,.1f} GB/s: the data did not "
                   f"all cross it (a cache, compression, or a snapshot of another GPU)")
    if not is_gpu_copy(sample):
        return out
    i = gpu_index(env, sample.extra("gpu_bus_id"))
    link = _link(env, i) if i is not None else None
    if link is None:
        return out
    gen, width, gen_max, width_max = link
    if width < width_max:
        out.append(f"GPU {i}'s PCIe link is x{width} of its x{width_max}: host copies are capped at "
                   f"{link_gb_per_s(gen_max, width):,.1f} GB/s per direction (reseat the card; check the slot's "
                   f"wiring, riser and bifurcation)")
    full = link_gb_per_s(gen_max, width) * (2 if sample.phase == "bidir" else 1)
    if gen < gen_max and figure is not None and sample.extra("host_memory") == "pinned" \
            and figure < TRAINED_DOWN_SHARE * full:
        out.append(f"GPU {i}'s link was at Gen{gen} of its Gen{gen_max} when the snapshot was taken and this copy "
                   f"reached {figure / full:.0%} of Gen{gen_max}: if it stays at Gen{gen} under load "
                   f"(nvidia-smi -q -d PCIE during a copy), the link trained down (slot, riser, BIOS PCIe setting)")
    return out


def pageable_above_pinned(samples) -> dict[int, list[str]]:
    """A pageable copy faster than the pinned copy of the same size, direction
    and GPU: the pageable one went through a cache or the pinned one was
    disturbed; either figure is doubtful. Returns {sample id: warnings}."""
    def key(s: Sample):
        return s.phase, s.extra("copy_bytes"), s.extra("engine"), bus_key(s.extra("gpu_bus_id"))

    pinned: dict = {}
    copies = [s for s in samples if is_gpu_copy(s) and _figure_gb_per_s(s) is not None]
    for s in copies:
        if s.extra("host_memory") == "pinned":
            pinned[key(s)] = max(pinned.get(key(s), 0.0), _figure_gb_per_s(s))
    out: dict[int, list[str]] = {}
    for s in copies:
        best = pinned.get(key(s))
        figure = _figure_gb_per_s(s)
        if s.extra("host_memory") == "pageable" and best and figure > PAGEABLE_MARGIN * best and s.id is not None:
            # the case as its row is titled (the phase in the kernel's words where the caller gave them,
            # Sample.phase_words, and the size): the report lists warnings under the table, not by row
            out[s.id] = [f"pageable {s.label} copy at {figure:,.1f} GB/s is faster than the pinned one "
                         f"({best:,.1f} GB/s): one of the two is not a link figure"]
    return out


def uses_gpu(family: str | None, params: dict) -> bool:
    """A step whose figures are a GPU's: a kernel of the GPU family (its
    family from cbk --describe), and an MPI kernel with GPU buffers."""
    return family == GPU or (family == "mpi" and str(params.get("buffer", "host")) != "host")


def _ranks_by_device(build: dict | None) -> dict[tuple, list[int]]:
    """(host, device) -> the ranks on it, from cbk's run record (each rank's
    host and the devices it was given, null when every device was visible,
    so each opened device 0); {} for a record without them."""
    hosts, devices = (build or {}).get("hosts") or [], (build or {}).get("gpu_devices") or []
    if len(hosts) != len(devices):
        return {}
    ranks: dict = {}
    for rank, key in enumerate(zip(hosts, devices)):
        ranks.setdefault(key, []).append(rank)
    return ranks


def shared_gpu(build: dict | None) -> str | None:
    """Two ranks of one host on one GPU that nothing bound: each opened
    device 0 while the node's others idled, by accident. Every figure of
    the step is then a share of it, and gets this warning."""
    for (host, device), sharing in _ranks_by_device(build).items():
        if len(sharing) > 1 and device is None:
            return (f"ranks {', '.join(map(str, sharing))} on {host} share one GPU (none bound: each opens device 0): "
                    f"each figure is a share of it (bind one GPU per rank with --gpus-per-rank 1)")
    return None


def shared_gpu_note(build: dict | None) -> str | None:
    """Ranks of one host bound to one GPU: the binding gave them one each
    while there were GPUs to give, so this host had fewer than its ranks
    (a node with one GPU, or --share-gpus over a smaller grant). Said once
    with the step, in plain words, not as a warning on every figure: no
    option gives a node GPUs it does not have."""
    ranks = _ranks_by_device(build)
    notes = []
    for (host, device), sharing in ranks.items():
        if len(sharing) < 2 or device is None:
            continue
        on_host = [d for (h, d) in ranks if h == host]
        ranks_on_host = sum(len(r) for (h, _), r in ranks.items() if h == host)
        which = ("the only GPU they had there" if len(on_host) == 1
                 else f"{len(on_host)} GPUs for {ranks_on_host} ranks there")
        who = " and ".join(map(str, sharing)) if len(sharing) == 2 else ", ".join(map(str, sharing))
        notes.append(f"ranks {who} on {host} share GPU {device}, {which}: each figure is a share of it")
    return "; ".join(notes) or None
