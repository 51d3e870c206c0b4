"""A CPU's measured clock against the one it claims (the compute kernels'
MHz figures): a warning, not a verdict, since a VM's reported clock is no
bound."""
from __future__ import annotations

import re

from clusterbench.limits.thresholds import CLOCK_FAR_RATIO
from clusterbench.results.sample import Sample


def nominal_clock_mhz(env: dict) -> tuple[float, str] | None:
    """The clock a CPU claims, with where it was read: cpufreq's maximum,
    else the model name's "@ 2.60GHz", else /proc/cpuinfo's "cpu MHz"
    (on a VM, whatever the hypervisor reports)."""
    if isinstance(env.get("cpu.freq_max_mhz"), (int, float)) and env["cpu.freq_max_mhz"] > 0:
        return float(env["cpu.freq_max_mhz"]), "cpufreq's maximum"
    m = re.search(r"@\s*([\d.]+)\s*GHz", str(env.get("cpu.model") or ""))
    if m:
        return float(m.group(1)) * 1000, "the model name"
    if isinstance(env.get("cpu.freq_cur_mhz"), (int, float)) and env["cpu.freq_cur_mhz"] > 0:
        return float(env["cpu.freq_cur_mhz"]), "/proc/cpuinfo's cpu MHz"
    return None


def clock_warnings(sample: Sample, env: dict) -> list[str]:
    """A measured clock far from the nominal one."""
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
