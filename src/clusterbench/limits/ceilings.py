"""Which limit binds (E2): the ceilings clusterbench can know for an I/O,
network or GPU figure, and how close the figure comes to each.

One function per ceiling, each `(figure: Sample, ctx: Context) -> Ceiling | None`,
listed in CEILINGS; another ceiling (a network mount's server link, say) is one
more function appended there. `binding` picks the one to show in the "limit"
column: a ceiling the figure is above first (it cannot have come through that
component), else the nearest. docs/limits.md gives the method.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Callable

from clusterbench.limits import gpu_limits
from clusterbench.limits.facts import (BYTES_PER_S, NETWORK_FS, NO_DEVICE_FS,
                                       available_memory_bytes, bits_text, fastest_link_bits_per_s,
                                       mount_link_bits_per_s, target_fs_type)
from clusterbench.limits.thresholds import CACHE_MARGIN, RATE_SLACK, STREAM_SHARE
from clusterbench.results.sample import Sample
from clusterbench.results.sizes import rounded_size_text


@dataclass(frozen=True)
class Ceiling:
    name: str                 # "link", "device", "memory", "cache"
    text: str                 # the limit column: "link: 94 % of 1 Gbit/s"
    fraction: float | None    # figure / ceiling, None for a ceiling without a rate
    exceeded: bool = False    # the figure is above it: not through that component alone
    short: str = ""           # what the figure then is, for a verdict: "page cache", "memory (tmpfs)"
    warning: str = ""         # the sentence stored with the sample when it is exceeded (limits/checks.py)


@dataclass
class Context:
    """What a figure is judged against: its host's environment, the other
    figures of its run (or suite), and a link rate the user gave."""
    env: dict
    others: list[Sample] = field(default_factory=list)
    link_bits_per_s: float | None = None   # --link-speed, else the environment's fastest link


def host_env(envs: dict[str, dict], host: str | None, build: dict | None = None) -> dict:
    """The environment of the host that ran the kernel's first rank (the
    step's run record names it; under a host file that is not the host
    clusterbench ran on, whose mount of the same path may reach the server
    another way), else the run's host, else the first."""
    first_rank = ((build or {}).get("hosts") or [None])[0]
    for h in (first_rank, host):
        if h in envs:
            return envs[h]
    return next(iter(envs.values()), {}) if envs else {}


def _bytes_per_s(s: Sample) -> float | None:
    per = BYTES_PER_S.get(s.unit or "")
    return s.value * per if per and s.value is not None else None


def _percent(fraction: float) -> str:
    return f"{fraction:.0%}".replace("%", " %")


# --- the ceilings ------------------------------------------------------------

def no_device(s: Sample, ctx: Context) -> Ceiling | None:
    """tmpfs and its kin: whatever the mode says, any figure of it is memory."""
    fs = target_fs_type(ctx.env, s.directory)
    if fs not in NO_DEVICE_FS or s.value is None:
        return None
    how = f"{s.mode} {s.phase}" if s.mode not in (None, "n/a") else s.phase
    return Ceiling("memory", f"memory: {fs} has no device below", None, True, f"memory ({fs})",
                   f"{fs} has no device below: this {how} measures memory, not storage")


def _data_bytes_per_s(s: Sample) -> float | None:
    """The figure's data rate: its value in a rate unit, or for an IOPS
    figure (randio, fio) its operations times the bytes each moved, so a
    summary row judged at its median (of_median) is the median's rate."""
    rate = _bytes_per_s(s)
    if rate is not None or s.value is None or s.unit != "IOPS" or not s.bytes or not s.ops:
        return rate
    return s.value * s.bytes / s.ops


def link(s: Sample, ctx: Context) -> Ceiling | None:
    """A network figure, or an I/O figure on a network file system (IOPS
    too: its data crosses the same link), against the link's nominal rate."""
    rate = _data_bytes_per_s(s)
    if rate is None:
        return None
    fs = target_fs_type(ctx.env, s.directory)
    over_network = fs in NETWORK_FS
    if not over_network and s.link_bits_per_s is None:
        return None  # neither a network figure nor I/O over a network file system
    given = ctx.link_bits_per_s or ctx.env.get("conditions.link_bits_per_s")  # --link-speed at show or run
    if over_network:
        # the interface the client reaches this mount's server through, else the fastest NIC the host has
        nominal = given or mount_link_bits_per_s(ctx.env, s.directory) or fastest_link_bits_per_s(ctx.env)
    else:
        # a network figure: the kernel named its interface's rate (0: unknown, e.g. loopback);
        # another NIC's speed says nothing about this path
        nominal = given or s.link_bits_per_s
    if not nominal:
        return None
    fraction = rate * 8 / nominal
    if fraction > RATE_SLACK and over_network:
        return Ceiling("link", f"cache: above the {bits_text(nominal)} link", fraction, True, "above the link",
                       f"likely cache effect: {s.phase} over {fs} at {rate * 8 / 1e9:.2f} Gbit/s is faster than "
                       f"the fastest network link ({bits_text(nominal)})")
    if fraction > RATE_SLACK:
        # a transfer cannot outrun its link: the stated rate is wrong (or the path is another); the
        # limit column says so, no stored warning: a virtual NIC's stated speed is no bound
        return Ceiling("link", f"link: above its nominal {bits_text(nominal)}", fraction, True,
                       "above its link's nominal rate")
    return Ceiling("link", f"link: {_percent(fraction)} of {bits_text(nominal)}", fraction)


def device(s: Sample, ctx: Context) -> Ceiling | None:
    """A buffered or cold figure against the O_DIRECT figure of the same
    directory, phase and unit measured in the same run or suite."""
    if s.mode in ("direct", None, "n/a") or not s.directory or s.value is None:
        return None
    direct = [o.value for o in ctx.others if o.mode == "direct" and o.directory == s.directory
              and o.phase == s.phase and o.unit == s.unit and o.value is not None]
    best = max(direct, default=None)
    if not best:
        return None
    fraction = s.value / best
    if fraction > CACHE_MARGIN:
        # a buffered figure above the direct one is the cache doing its job; a cold one claims to be
        # the device, so only it is warned
        warning = (f"cold {s.phase} {s.value:,.0f} {s.unit} faster than the O_DIRECT {s.phase} of the same "
                   f"directory ({best:,.0f} {s.unit}): readahead or a cache below the page cache (RAID "
                   f"controller, hypervisor, server) helped; not a device figure") if s.mode == "cold" else ""
        return Ceiling("device", "cache: above the device's direct rate", fraction, True, "page cache", warning)
    return Ceiling("device", f"device: {_percent(fraction)} of its direct rate", fraction)


def memory_bandwidth(s: Sample, ctx: Context) -> Ceiling | None:
    """An I/O figure against a stream figure of the same run: how close it comes to a memory copy."""
    rate = _bytes_per_s(s)
    stream = [b for o in ctx.others if o.phase.lower() in ("copy", "triad") and o.directory is None
              and (b := _bytes_per_s(o)) is not None]
    if not stream or rate is None or not s.directory:
        return None
    fraction = rate / max(stream)
    if fraction <= STREAM_SHARE:
        return None
    return Ceiling("memory", f"memory: {_percent(fraction)} of stream's copy rate", fraction,
                   not s.cold_proven, "page cache")


def page_cache(s: Sample, ctx: Context) -> Ceiling | None:
    """A read whose data fits in free memory and was not proven cold may be the page cache."""
    available = available_memory_bytes(ctx.env)
    size = s.data_bytes
    if s.phase != "read" or not s.directory or s.cold_proven or not size or available is None \
            or size >= available:
        return None
    # each in the unit it reaches: a 256 KiB file in a 32 MiB --memory-limit read "(0 MiB) ... (0.0 GiB)"
    return Ceiling("memory", "cache: the file fits in the page cache", None, True, "page cache",
                   f"likely cache effect: the data read ({rounded_size_text(size)}) fits in free memory "
                   f"({rounded_size_text(available)}) and the read was not proven cold")


def gpu(s: Sample, ctx: Context) -> Ceiling | None:
    """A GPU kernel's figure against what bounds it (limits/gpu_limits.py):
    a host copy its PCIe link as negotiated, device memory its rate. The
    figure judged is the one the row shows; the warning stored when the
    GPU's own (event-timed) figure is above the rate is gpu_warnings'."""
    limit = gpu_limits.gpu_limit(s, ctx.env)
    rate = _bytes_per_s(s)
    if limit is None or rate is None:
        return None
    name, gb_per_s = limit
    fraction = rate / (gb_per_s * 1e9)
    if fraction > RATE_SLACK:
        return Ceiling("gpu", f"{name}: above its {gb_per_s:,.1f} GB/s", fraction, True, f"above its {name} rate")
    return Ceiling("gpu", f"{name}: {_percent(fraction)} of {gb_per_s:,.1f} GB/s", fraction)


# in the order `binding` prefers among ceilings a figure is above
CEILINGS: list[Callable[[Sample, Context], Ceiling | None]] = [no_device, link, device, memory_bandwidth, page_cache,
                                                                gpu]


def ceilings(s: Sample, ctx: Context) -> list[Ceiling]:
    return [c for check in CEILINGS if (c := check(s, ctx)) is not None]


def binding(s: Sample, ctx: Context) -> Ceiling | None:
    """The ceiling to show: the first one the figure is above, else the nearest."""
    found = ceilings(s, ctx)
    above = [c for c in found if c.exceeded]
    if above:
        return above[0]
    rated = [c for c in found if c.fraction is not None]
    return max(rated, key=lambda c: c.fraction) if rated else (found[0] if found else None)


def of_median(s: Sample, median: float | None, ctx: Context) -> Ceiling | None:
    """The binding ceiling of a group of samples (a summary row), judged at its median."""
    return binding(replace(s, value=median), ctx) if median is not None else None
