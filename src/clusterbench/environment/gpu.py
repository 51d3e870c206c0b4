"""GPUs: NVIDIA ones through nvidia-smi, AMD ones through rocm-smi; the PCIe
link and NUMA node of each from sysfs under its bus id (what a host-device
copy's bandwidth depends on); otherwise the display and 3D controllers of
GPU vendors on the PCI bus, counted but not named."""
from __future__ import annotations

import json

from clusterbench.environment.sources import Context

QUERY = ("index", "name", "driver_version", "memory.total", "pcie.link.gen.max", "pcie.link.width.max",
         "pci.bus_id", "pcie.link.gen.current", "pcie.link.width.current", "vbios_version")
# nvidia-smi --format=csv,noheader,nounits: memory.total is in MiB
KEYS = ("name", "driver_version", "memory_mib", "pcie_gen", "pcie_width", "bus_id", "pcie_gen_current",
        "pcie_width_current", "vbios_version")
ROCM_SMI = ("rocm-smi", "--showproductname", "--showdriverversion", "--showmeminfo", "vram", "--showbus", "--json")
GPU_VENDORS = {"0x10de": "NVIDIA", "0x1002": "AMD"}
# PCIe transfer rate per lane (sysfs *_link_speed "16.0 GT/s PCIe") -> generation
GTS_TO_GEN = {"2.5": 1, "5.0": 2, "8.0": 3, "16.0": 4, "32.0": 5, "64.0": 6}


def parse_nvidia_smi(text: str) -> list[dict[str, str]]:
    gpus = []
    for line in text.splitlines():
        fields = [f.strip() for f in line.split(",")]
        if len(fields) == len(QUERY) and fields[0].isdigit():
            gpus.append(dict(zip(("index", *KEYS), fields)))
    return gpus


def sysfs_bus_id(bus_id: str) -> str:
    """nvidia-smi's "00000000:3B:00.0" -> sysfs's "0000:3b:00.0"."""
    domain, rest = bus_id.strip().lower().split(":", 1)
    return f"{int(domain, 16):04x}:{rest}"


def nvidia_keys(gpus: list[dict[str, str]]) -> dict[str, object]:
    out: dict[str, object] = {"gpu.count": len(gpus), "gpu.source": "nvidia-smi"}
    for g in gpus:
        for k in KEYS:
            if k not in g:
                continue
            value = g[k]
            if k == "bus_id":
                value = sysfs_bus_id(value)
            if value.startswith("[") or value == "N/A":  # "[N/A]", "[Not Supported]"
                out[f"gpu.{g['index']}.{k}_error"] = f"nvidia-smi reports {value} for {k}"
            else:
                out[f"gpu.{g['index']}.{k}"] = int(value) if value.isdigit() else value
    return out


def rocm_keys(text: str) -> dict[str, object]:
    """rocm-smi --json of --showproductname --showdriverversion
    --showmeminfo vram --showbus: {"card0": {...}, "system": {...}}."""
    data = json.loads(text)
    cards = sorted((k for k in data if k.startswith("card") and k[4:].isdigit()), key=lambda k: int(k[4:]))
    driver = data.get("system", {}).get("Driver version")
    out: dict[str, object] = {"gpu.count": len(cards), "gpu.source": "rocm-smi"}
    for card in cards:
        c, i = data[card], card[4:]
        name = c.get("Card Series") or c.get("Card series") or c.get("Card model")
        for key, value in (("name", name), ("driver_version", driver), ("bus_id", c.get("PCI Bus"))):
            if value:
                out[f"gpu.{i}.{key}"] = value.lower() if key == "bus_id" else value
            else:
                out[f"gpu.{i}.{key}_error"] = f"not in rocm-smi --json ({card})"
        vram = c.get("VRAM Total Memory (B)")
        if vram and str(vram).isdigit():
            out[f"gpu.{i}.memory_mib"] = int(vram) >> 20
        else:
            out[f"gpu.{i}.memory_mib_error"] = f"not in rocm-smi --json ({card})"
    return out


def link_gen(text: str) -> int:
    rate = text.split()[0]
    if rate not in GTS_TO_GEN:
        raise ValueError(text)
    return GTS_TO_GEN[rate]


def pci_keys(ctx: Context, index: str, bus_id: str, have: dict) -> dict[str, object]:
    """NUMA node, near CPUs and (when the tool did not say) the PCIe link of
    the device at bus_id, from /sys/bus/pci/devices/<bus_id>."""
    out: dict[str, object] = {}
    dev = f"/sys/bus/pci/devices/{bus_id}"
    if not ctx.exists(dev):
        out[f"gpu.{index}.numa_node_error"] = f"no such file {dev}"
        return out
    node = ctx.read(f"{dev}/numa_node")
    if node.ok and node.text.strip().lstrip("-").isdigit():
        n = int(node.text)
        if n >= 0:
            out[f"gpu.{index}.numa_node"] = n
        else:
            out[f"gpu.{index}.numa_node_error"] = f"the platform states no NUMA node ({dev}/numa_node is {n})"
    else:
        out[f"gpu.{index}.numa_node_error"] = node.error or f"unexpected value in {dev}/numa_node"
    cpus = ctx.read(f"{dev}/local_cpulist")
    if cpus.ok and cpus.text.strip():
        out[f"gpu.{index}.local_cpus"] = cpus.text.strip()
    for key, attr, convert in (("pcie_gen", "max_link_speed", link_gen), ("pcie_width", "max_link_width", int),
                               ("pcie_gen_current", "current_link_speed", link_gen),
                               ("pcie_width_current", "current_link_width", int)):
        if f"gpu.{index}.{key}" in have:
            continue
        r = ctx.read(f"{dev}/{attr}")
        if not r.ok:
            out[f"gpu.{index}.{key}_error"] = r.error
            continue
        try:
            out[f"gpu.{index}.{key}"] = convert(r.text.strip())
        except (ValueError, IndexError):
            out[f"gpu.{index}.{key}_error"] = f"unexpected value {r.text.strip()!r} in {dev}/{attr}"
    return out


def add_pci_keys(env: dict, ctx: Context) -> None:
    for i in range(int(env.get("gpu.count", 0))):
        bus = env.get(f"gpu.{i}.bus_id")
        if isinstance(bus, str):
            env.update(pci_keys(ctx, str(i), bus, env))


def grant_keys(environ) -> dict[str, object]:
    """The GPUs the batch system granted this job (what --gpus-per-rank splits)."""
    from clusterbench.errors import BadInput
    from clusterbench.environment.gpu_grant import granted

    try:
        grant = granted(environ)
    except BadInput as e:
        return {"gpu.granted_error": e.message}
    if grant is None:
        # what a default binding then splits instead: the node's own GPUs (launch/gpubind.py)
        return {"gpu.granted_error": "no grant in the environment (SGE_HGR_gpu, SLURM_STEP_GPUS, SLURM_JOB_GPUS, "
                                     "CUDA_VISIBLE_DEVICES, ROCR_VISIBLE_DEVICES, ZE_AFFINITY_MASK unset): a GPU "
                                     "step's ranks get the node's own GPUs, one each"}
    return {"gpu.granted": " ".join(grant.devices), "gpu.granted_source": grant.source}


def collect(env: dict, ctx: Context) -> None:
    if ctx.is_real_root:
        import os

        env.update(grant_keys(os.environ))
    env["gpu.nvidia_device_files"] = sum(1 for n in ctx.listdir("/dev") if n.startswith("nvidia") and n[6:].isdigit())
    smi = ctx.run(["nvidia-smi", f"--query-gpu={','.join(QUERY)}", "--format=csv,noheader,nounits"])
    gpus = parse_nvidia_smi(smi.text) if smi.ok else []
    if gpus:
        env.update(nvidia_keys(gpus))
        add_pci_keys(env, ctx)
        return
    env["gpu.query_error"] = smi.error or "nvidia-smi listed no GPUs"
    rocm = ctx.run(list(ROCM_SMI))
    if rocm.ok:
        try:
            keys = rocm_keys(rocm.text)
        except (ValueError, AttributeError) as e:
            env["gpu.rocm_query_error"] = f"rocm-smi --json printed no card list: {e}"
        else:
            if keys["gpu.count"]:
                env.update(keys)
                add_pci_keys(env, ctx)
                return
            env["gpu.rocm_query_error"] = "rocm-smi listed no GPUs"
    else:
        env["gpu.rocm_query_error"] = rocm.error
    # without either tool, count GPU-vendor display/3D controllers (PCI class 0x03xxxx)
    found = pci_gpus(ctx)
    if found is None:
        env["gpu.count_error"] = "no such file /sys/bus/pci/devices (no PCI bus visible)"
        return
    env.update({f"gpu.pci.{dev}": vendor for dev, vendor in found.items()})
    env["gpu.count"] = len(found)
    env["gpu.source"] = "pci"


def pci_gpus(ctx: Context | None = None) -> dict[str, str] | None:
    """The GPU-vendor display/3D controllers on the PCI bus (bus id ->
    vendor), with no GPU tool or driver; None when no PCI bus is visible."""
    ctx = ctx or Context()
    if not ctx.exists("/sys/bus/pci/devices"):
        return None
    out = {}
    for dev in ctx.listdir("/sys/bus/pci/devices"):
        cls = ctx.read(f"/sys/bus/pci/devices/{dev}/class")
        vendor = ctx.read(f"/sys/bus/pci/devices/{dev}/vendor")
        if cls.ok and vendor.ok and cls.text.strip().startswith("0x03") and vendor.text.strip() in GPU_VENDORS:
            out[dev] = GPU_VENDORS[vendor.text.strip()]
    return out
