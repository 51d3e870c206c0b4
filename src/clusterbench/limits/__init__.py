"""Physical-limit checks: warnings for figures that can only have come
from a cache. They are attached to the stored samples and shown with them.
"""
from __future__ import annotations

from typing import Iterable

from clusterbench.limits import gpu as limits_gpu
from clusterbench.limits.ceilings import NETWORK_FS, NO_DEVICE_FS, fastest_link_bits_per_s, target_fs_type  # noqa: F401
from clusterbench.sample import Sample


def sample_warnings(sample: Sample, env: dict) -> list[str]:
    """Warnings for one measurement (the kernel's own first), judged against its host's environment."""
    out = list(sample.warnings)
    fs = target_fs_type(env, sample.directory)
    if fs in NO_DEVICE_FS and sample.value is not None:
        how = f"{sample.mode} {sample.phase}" if sample.mode not in (None, "n/a") else sample.phase
        out.append(f"{fs} has no device below: this {how} measures memory, not storage")
    size = sample.data_bytes
    available = env.get("memory.available_bytes")
    limit = env.get("conditions.memory_limit_bytes")  # --memory-limit: the cache cannot outgrow the cgroup
    if isinstance(limit, int) and isinstance(available, (int, float)):
        available = min(available, limit)
    if sample.phase == "read" and not sample.cold_proven and size and isinstance(available, (int, float)) \
            and size < available:
        out.append(f"likely cache effect: the data read ({size / 2**20:.0f} MiB) fits in free memory "
                   f"({available / 2**30:.1f} GiB) and the read was not proven cold")
    link = env.get("conditions.link_bits_per_s") or fastest_link_bits_per_s(env)  # --link-speed first
    rate = sample.value
    if (sample.phase == "read" and fs in NETWORK_FS and link and sample.unit == "MiB/s"
            and rate is not None and rate * 2**20 * 8 > link):
        out.append(f"likely cache effect: read over {fs} at {rate * 2**20 * 8 / 1e9:.2f} Gbit/s is faster than "
                   f"the fastest network link ({link / 1e9:.0f} Gbit/s)")
    out += clock_warnings(sample, env)
    out.extend(limits_gpu.gpu_warnings(sample, env))
    return out


# A measured clock this far from the nominal one says more about the
# machine than about the CPU: a turbo bin reaches 1.3-1.5x a base clock, a
# deep power cap or thermal throttling halves it.
CLOCK_FAR_RATIO = 1.5


def nominal_clock_mhz(env: dict) -> tuple[float, str] | None:
    """The clock a CPU claims, with where it was read: cpufreq's maximum,
    else the model name's "@ 2.60GHz", else /proc/cpuinfo's "cpu MHz"
    (on a VM, whatever the hypervisor reports)."""
    import re

    if isinstance(env.get("cpu.freq_max_mhz"), (int, float)) and env["cpu.freq_max_mhz"] > 0:
        return float(env["cpu.freq_max_mhz"]), "cpufreq's maximum"
    m = re.search(r"@\s*([\d.]+)\s*GHz", str(env.get("cpu.model") or ""))
    if m:
        return float(m.group(1)) * 1000, "the model name"
    if isinstance(env.get("cpu.freq_cur_mhz"), (int, float)) and env["cpu.freq_cur_mhz"] > 0:
        return float(env["cpu.freq_cur_mhz"]), "/proc/cpuinfo's cpu MHz"
    return None


def clock_warnings(sample: Sample, env: dict) -> list[str]:
    """A measured clock far from the nominal one: a warning, not a verdict
    (a VM's reported clock is no bound)."""
    nominal = nominal_clock_mhz(env)
    if sample.unit != "MHz" or sample.value is None or not nominal:
        return []
    mhz, source = nominal
    ratio = sample.value / mhz
    if 1 / CLOCK_FAR_RATIO <= ratio <= CLOCK_FAR_RATIO:
        return []
    vm = " on a virtual machine, whose reported clock is the hypervisor's word, not a bound" \
        if env.get("cpu.hypervisor") else ""
    why = "above it" + (vm or ": a clock source or turbo state this check does not know") if ratio > 1 \
        else "below it: throttled, power-capped, or CPUs shared with other work"
    return [f"clock {sample.value:,.0f} MHz is {ratio:.2f}x the nominal {mhz:,.0f} MHz ({source}); {why}"]


def cross_sample_warnings(samples: Iterable[Sample]) -> dict[int, list[str]]:
    """Checks between samples of one run: a cold read faster than the direct
    read of the same directory cannot have come from the device alone.
    Returns {sample id: new warnings}."""
    samples = list(samples)
    direct: dict[str, list[float]] = {}
    cold: list[tuple[int, str, float]] = []
    for s in samples:
        if s.phase != "read" or s.unit != "MiB/s" or not s.directory or s.value is None:
            continue
        if s.mode == "direct":
            direct.setdefault(s.directory, []).append(s.value)
        elif s.mode == "cold":
            cold.append((s.id, s.directory, s.value))
    out: dict[int, list[str]] = {}
    for sid, d, rate in cold:
        if d in direct:
            best = max(direct[d])
            # 20 % margin: readahead legitimately helps a buffered read
            if rate > 1.2 * best:
                out[sid] = [f"cold read {rate:,.0f} MiB/s faster than the O_DIRECT read of the same directory "
                            f"({best:,.0f} MiB/s): readahead or a cache below the page cache (RAID controller, "
                            f"hypervisor, server) helped; not a device figure"]
    for sid, extra in limits_gpu.pageable_above_pinned(samples).items():
        out.setdefault(sid, []).extend(extra)
    return out
