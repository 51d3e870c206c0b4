"""How each network interface is tuned, beyond its rate and MTU
(network.py): duplex, the offloads that decide a TCP stream's CPU cost,
ring sizes, interrupt coalescing and which CPUs take the NIC's queue
interrupts (and an InfiniBand HCA's). A node that missed the site's tuning differs here in one
line, as it does in its TCP settings (netstack.py).

Duplex and IRQ affinity come from sysfs and /proc (readable by any user).
Offloads, rings and coalescing come from `ethtool -k/-g/-c`, whose
queries need no root; where ethtool is not installed those keys are
absent, not errors (a snapshot without the tool is not a node that
differs). A query the driver refuses is stored as `<key>_error`: every
node with that driver says the same, and a person sees why.
Keys use ethtool's own names, so the line that differs reads as the
setting to change (`ethtool -K eno1 generic-receive-offload on`).
"""
from __future__ import annotations

from clusterbench.environment.network import IB, NET, hardware_interfaces
from clusterbench.environment.sources import Context, find_program

# The offloads that move per-packet work between the CPU and the NIC
# (ethtool -k prints some 60 features; the rest rarely explain a rate).
OFFLOADS = ("rx-checksumming", "tx-checksumming", "scatter-gather", "tcp-segmentation-offload",
            "generic-segmentation-offload", "generic-receive-offload", "large-receive-offload",
            "rx-gro-hw", "receive-hashing")
COALESCE = ("rx-usecs", "rx-frames", "tx-usecs", "tx-frames")


def parse_offloads(text: str) -> dict[str, str]:
    """`ethtool -k` -> {feature: "on"/"off"} for OFFLOADS ("off [fixed]" -> "off")."""
    out = {}
    for line in text.splitlines():
        if line[:1].isspace():
            continue   # a sub-feature of the one above
        name, sep, value = line.partition(":")
        if sep and name in OFFLOADS and value.split():
            out[name] = value.split()[0]
    return out


def parse_rings(text: str) -> dict[str, int]:
    """`ethtool -g` -> {"ring_rx": current, "ring_tx": ..., "ring_rx_max": ..., "ring_tx_max": ...}."""
    out: dict[str, int] = {}
    suffix = None
    for line in text.splitlines():
        head = line.strip().lower()
        if head.startswith("pre-set maximums"):
            suffix = "_max"
        elif head.startswith("current hardware settings"):
            suffix = ""
        elif suffix is not None:
            name, sep, value = line.partition(":")
            if sep and name.strip() in ("RX", "TX") and value.strip().isdigit():
                out[f"ring_{name.strip().lower()}{suffix}"] = int(value)
    return out


def parse_coalesce(text: str) -> dict[str, object]:
    """`ethtool -c` -> {"adaptive-rx": "on", "adaptive-tx": "off", "rx-usecs": 50, ...};
    parameters the driver does not have ("n/a") are left out."""
    out: dict[str, object] = {}
    for line in text.splitlines():
        if line.startswith("Adaptive RX:"):
            words = line.replace(":", " ").split()   # "Adaptive RX on TX off"
            for side, value in zip(words[1::2], words[2::2]):
                if side in ("RX", "TX") and value != "n/a":
                    out[f"adaptive-{side.lower()}"] = value
            continue
        name, sep, value = line.partition(":")
        if sep and name.strip() in COALESCE and value.strip().isdigit():
            out[name.strip()] = int(value)
    return out


def _ethtool(env: dict, ctx: Context, name: str) -> None:
    for flag, key, parse in (("-k", "offload", parse_offloads), ("-g", "rings", parse_rings),
                             ("-c", "coalesce", parse_coalesce)):
        r = ctx.run(["ethtool", flag, name])
        if not r.ok:
            env[f"net.{name}.{key}_error"] = r.error
            continue
        for k, v in parse(r.text).items():
            env[f"net.{name}.{k}" if key == "rings" else f"net.{name}.{key}.{k}"] = v


def _duplex(env: dict, ctx: Context, name: str) -> None:
    r = ctx.read(f"{NET}/{name}/duplex")
    if r.ok and r.text.strip() in ("full", "half"):   # "unknown", or EINVAL, where the driver cannot tell
        env[f"net.{name}.duplex"] = r.text.strip()


def _irq_affinity(env: dict, ctx: Context, prefix: str, device: str) -> None:
    """The CPUs of each of a device's MSI(-X) interrupts, in IRQ order ("0 1 2 3":
    one queue per CPU; "0 0 0 0": every queue on CPU 0, irqbalance off or pinned
    badly), as `<prefix>.irqs` and `<prefix>.irq_affinity`. IRQ numbers
    themselves differ between identical nodes, so they are not part of the value."""
    irqs = sorted(int(i) for i in ctx.listdir(f"{device}/msi_irqs") if i.isdigit())
    if not irqs:
        return
    env[f"{prefix}.irqs"] = len(irqs)
    cpus = []
    for irq in irqs:
        r = ctx.read(f"/proc/irq/{irq}/smp_affinity_list")
        if not r.ok:
            env[f"{prefix}.irq_affinity_error"] = r.error
            return
        cpus.append(r.text.strip())
    env[f"{prefix}.irq_affinity"] = " ".join(cpus)


def collect(env: dict, ctx: Context) -> None:
    for hca in ctx.listdir(IB):   # an HCA's completion vectors, IPoIB or not
        _irq_affinity(env, ctx, f"ib.{hca}", f"{IB}/{hca}/device")
    if not ctx.exists(NET):
        return   # network.py says so once
    with_ethtool = ctx.run_commands and ctx.is_real_root and find_program("ethtool") is not None
    for name in hardware_interfaces(ctx):
        _duplex(env, ctx, name)
        _irq_affinity(env, ctx, f"net.{name}", f"{NET}/{name}/device")
        if with_ethtool:
            _ethtool(env, ctx, name)
