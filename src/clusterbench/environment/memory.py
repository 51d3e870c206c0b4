"""Memory: size from /proc/meminfo, DIMM layout from `dmidecode -t memory`.

The DIMM layout (which slots hold what) explains memory bandwidth results,
but the SMBIOS tables behind it are readable by root only; without root
the layout is stored as "memory.dimms_error" with the reason.
"""
from __future__ import annotations

import os
import re
from collections import Counter

from clusterbench.environment import memory_cgroup
from clusterbench.environment.sources import Context, find_program

MEMINFO_KEYS = {  # /proc/meminfo field -> key; values are in kB (KiB)
    "MemTotal": "memory.total_bytes",
    "MemAvailable": "memory.available_bytes",
    "MemFree": "memory.free_bytes",
    "SwapTotal": "memory.swap_total_bytes",
    "Hugepagesize": "memory.hugepage_size_bytes",
}
SIZE_UNITS = {"bytes": 1, "kB": 1 << 10, "KB": 1 << 10, "MB": 1 << 20, "GB": 1 << 30, "TB": 1 << 40}


def parse_meminfo(text: str) -> dict[str, int]:
    """{"MemTotal": bytes, "HugePages_Total": count, ...}"""
    out = {}
    for line in text.splitlines():
        name, sep, rest = line.partition(":")
        parts = rest.split()
        if not sep or not parts or not parts[0].isdigit():
            continue
        out[name.strip()] = int(parts[0]) * (1024 if len(parts) > 1 and parts[1] == "kB" else 1)
    return out


def collect(env: dict, ctx: Context) -> None:
    meminfo = ctx.read("/proc/meminfo")
    fields = parse_meminfo(meminfo.text) if meminfo.ok else {}
    for name, key in MEMINFO_KEYS.items():
        if name in fields:
            env[key] = fields[name]
        else:
            env[key + "_error"] = meminfo.error or f"no {name} line in /proc/meminfo"
    if "HugePages_Total" in fields:
        env["memory.hugepages_total"] = fields["HugePages_Total"]
    memory_cgroup.collect_into(env, ctx)
    _dimms(env, ctx)


def _dimms(env: dict, ctx: Context) -> None:
    if ctx.run_commands and ctx.is_real_root and os.geteuid() != 0 and find_program("dmidecode"):
        env["memory.dimms_error"] = "needs root (dmidecode reads the SMBIOS tables, readable by root only)"
        return
    out = ctx.run(["dmidecode", "-t", "memory"])
    if not out.ok:
        env["memory.dimms_error"] = out.error
        return
    slots = parse_dmidecode_memory(out.text)
    if not slots:
        env["memory.dimms_error"] = "dmidecode -t memory listed no memory devices"
        return
    env.update(dimm_keys(slots))


def _size_bytes(text: str) -> int | None:
    m = re.match(r"(\d+)\s*(bytes|[kKMGT]B)\b", text.strip())
    return int(m.group(1)) * SIZE_UNITS[m.group(2)] if m else None


def parse_dmidecode_memory(text: str) -> list[dict[str, str]]:
    """One dict per "Memory Device" section of `dmidecode -t memory`."""
    devices: list[dict[str, str]] = []
    cur: dict[str, str] | None = None
    for line in text.splitlines():
        if not line.strip():
            cur = None
            continue
        if not line.startswith((" ", "\t")):
            cur = {} if line.strip() == "Memory Device" else None
            if cur is not None:
                devices.append(cur)
            continue
        if cur is not None:
            k, sep, v = line.strip().partition(":")
            if sep:
                cur[k.strip()] = v.strip()
    return devices


def _known(v: str | None) -> str | None:
    return None if not v or v in ("Unknown", "Not Specified", "Not Provided", "None") else v


def gib(n: int) -> str:
    return f"{n / 2**30:g} GiB" if n >= 2**30 else f"{n / 2**20:g} MiB"


def _mts(v: str | None) -> str | None:
    # dmidecode >= 3.3 prints "MT/s", older versions "MHz" for the same figure
    return v.replace("MHz", "MT/s") if v else None


def _describe(dev: dict[str, str], size: int) -> str:
    rated = _mts(_known(dev.get("Speed")))
    configured = _mts(_known(dev.get("Configured Memory Speed") or dev.get("Configured Clock Speed"))) or rated
    text = " ".join(p for p in (gib(size), _known(dev.get("Type")), configured) if p)
    if rated and configured != rated:
        text += f" (rated {rated})"  # a DIMM run below its rating is a finding
    extra = " ".join(x for x in (_known(dev.get("Manufacturer")), _known(dev.get("Part Number"))) if x)
    return text + (f", {extra}" if extra else "")


def dimm_keys(devices: list[dict[str, str]]) -> dict[str, object]:
    """memory.dimm_slots, memory.dimms (grouped summary) and one
    memory.dimm.<locator> per slot, "empty" for an empty one. Serial
    numbers and asset tags are left out: they identify, not describe."""
    out: dict[str, object] = {"memory.dimm_slots": len(devices)}
    groups: Counter[str] = Counter()
    seen: Counter[str] = Counter()
    populated = 0
    for dev in devices:
        loc = _known(dev.get("Locator")) or "slot"
        bank = _known(dev.get("Bank Locator"))
        name = f"{bank} {loc}" if bank and bank not in loc else loc
        seen[name] += 1
        if seen[name] > 1:
            name = f"{name} #{seen[name]}"
        size = _size_bytes(dev.get("Size", ""))
        if not size:
            out[f"memory.dimm.{name}"] = "empty"
            continue
        populated += 1
        out[f"memory.dimm.{name}"] = _describe(dev, size)
        groups[_describe(dev, size).split(", ")[0]] += 1
    out["memory.dimms_populated"] = populated
    out["memory.dimms"] = ", ".join(f"{n} x {d}" for d, n in groups.most_common()) or "none populated"
    return out
