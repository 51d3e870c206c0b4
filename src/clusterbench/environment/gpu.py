"""GPUs: NVIDIA ones through nvidia-smi; otherwise the display and 3D
controllers of GPU vendors on the PCI bus, counted but not named."""
from __future__ import annotations

from clusterbench.environment.sources import Context

QUERY = ("index", "name", "driver_version", "memory.total", "pcie.link.gen.max", "pcie.link.width.max")
# nvidia-smi --format=csv,noheader,nounits: memory.total is in MiB
KEYS = ("name", "driver_version", "memory_mib", "pcie_gen", "pcie_width")
GPU_VENDORS = {"0x10de": "NVIDIA", "0x1002": "AMD"}


def parse_nvidia_smi(text: str) -> list[dict[str, str]]:
    gpus = []
    for line in text.splitlines():
        fields = [f.strip() for f in line.split(",")]
        if len(fields) == len(QUERY) and fields[0].isdigit():
            gpus.append(dict(zip(("index", *KEYS), fields)))
    return gpus


def nvidia_keys(gpus: list[dict[str, str]]) -> dict[str, object]:
    out: dict[str, object] = {"gpu.count": len(gpus), "gpu.source": "nvidia-smi"}
    for g in gpus:
        for k in KEYS:
            out[f"gpu.{g['index']}.{k}"] = int(g[k]) if g[k].isdigit() else g[k]
    return out


def collect(env: dict, ctx: Context) -> None:
    env["gpu.nvidia_device_files"] = sum(1 for n in ctx.listdir("/dev") if n.startswith("nvidia") and n[6:].isdigit())
    smi = ctx.run(["nvidia-smi", f"--query-gpu={','.join(QUERY)}", "--format=csv,noheader,nounits"])
    gpus = parse_nvidia_smi(smi.text) if smi.ok else []
    if gpus:
        env.update(nvidia_keys(gpus))
        return
    env["gpu.query_error"] = smi.error or "nvidia-smi listed no GPUs"
    # without nvidia-smi, count GPU-vendor display/3D controllers (PCI class 0x03xxxx)
    if not ctx.exists("/sys/bus/pci/devices"):
        env["gpu.count_error"] = "no such file /sys/bus/pci/devices (no PCI bus visible)"
        return
    count = 0
    for dev in ctx.listdir("/sys/bus/pci/devices"):
        cls = ctx.read(f"/sys/bus/pci/devices/{dev}/class")
        vendor = ctx.read(f"/sys/bus/pci/devices/{dev}/vendor")
        if cls.ok and vendor.ok and cls.text.strip().startswith("0x03") and vendor.text.strip() in GPU_VENDORS:
            count += 1
            env[f"gpu.pci.{dev}"] = GPU_VENDORS[vendor.text.strip()]
    env["gpu.count"] = count
    env["gpu.source"] = "pci"
