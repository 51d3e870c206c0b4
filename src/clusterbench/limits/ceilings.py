"""Which limit binds (E2): the ceilings clusterbench can know for an I/O or
network figure, and how close the figure comes to each.

One function per ceiling, each `(figure: Sample, ctx: Context) -> Ceiling | None`,
listed in CEILINGS; another ceiling (a network mount's server link, say) is one
more function appended there. `binding` picks the one to show in the "limit"
column: a ceiling the figure is above first (it cannot have come through that
component), else the nearest. docs/limits.md gives the method.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Callable

from clusterbench.sample import Sample

# Units of a data rate a ceiling applies to, in bytes per second each.
BYTES_PER_S = {"MiB/s": 2**20, "MB/s": 1e6, "GiB/s": 2**30, "GB/s": 1e9, "Gbit/s": 1e9 / 8, "Mbit/s": 1e6 / 8}
IOPS_UNITS = {"IOPS"}

# File systems whose pages are the storage: nothing slower lies below them.
NO_DEVICE_FS = ("tmpfs", "ramfs", "devtmpfs", "hugetlbfs")

# Network file systems: a read there is also bounded by the fastest link.
NETWORK_FS = ("nfs", "nfs4", "cifs", "smb3", "fuse.glusterfs", "glusterfs", "lustre", "beegfs", "gpfs",
              "fuse.sshfs", "ceph", "fuse.ceph", "9p", "virtiofs")

# A buffered figure may beat the device's O_DIRECT one by readahead and write
# merging; above this factor it came from a cache.
CACHE_MARGIN = 1.2


@dataclass(frozen=True)
class Ceiling:
    name: str                 # "link", "device", "memory", "cache"
    text: str                 # the limit column: "link: 94 % of 1 Gbit/s"
    fraction: float | None    # figure / ceiling, None for a ceiling without a rate
    exceeded: bool = False    # the figure is above it: not through that component alone
    short: str = ""           # what the figure then is, for a verdict: "page cache", "memory (tmpfs)"


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


def target_fs_type(env: dict, directory: str | None) -> str | None:
    if not directory:
        return None
    v = env.get(f"target.{directory}.fs_type")
    return v if isinstance(v, str) else None


def fastest_link_bits_per_s(env: dict) -> float | None:
    """The fastest NIC or InfiniBand port speed the environment knows, in bit/s."""
    best = None
    for k, v in env.items():
        if not isinstance(v, (int, float)) or isinstance(v, bool) or v <= 0:
            continue
        if k.startswith("net.") and k.endswith(".speed_mbps"):
            best = max(best or 0, v * 1e6)
        if k.startswith("ib.") and k.endswith(".rate_gbps"):
            best = max(best or 0, v * 1e9)
    return best


def bits_text(bits_per_s: float) -> str:
    """1 Gbit/s, 2.5 Gbit/s, 400 Gbit/s, 100 Mbit/s."""
    value, unit = (bits_per_s / 1e9, "Gbit/s") if bits_per_s >= 1e9 else (bits_per_s / 1e6, "Mbit/s")
    return (f"{value:,.0f}" if value >= 100 else f"{value:.3g}") + f" {unit}"


def _bytes_per_s(s: Sample) -> float | None:
    per = BYTES_PER_S.get(s.unit or "")
    return s.value * per if per and s.value is not None else None


def _percent(fraction: float) -> str:
    return f"{fraction:.0%}".replace("%", " %")


# --- the ceilings ------------------------------------------------------------

def no_device(s: Sample, ctx: Context) -> Ceiling | None:
    """tmpfs and its kin: whatever the mode says, the figure is memory."""
    fs = target_fs_type(ctx.env, s.directory)
    if fs in NO_DEVICE_FS and (s.unit in BYTES_PER_S or s.unit in IOPS_UNITS or s.unit == "files/s"):
        return Ceiling("memory", f"memory: {fs} has no device below", None, True, f"memory ({fs})")
    return None


def link(s: Sample, ctx: Context) -> Ceiling | None:
    """A network figure, or an I/O figure on a network file system, against the link's nominal rate."""
    rate = _bytes_per_s(s)
    if rate is None:
        return None
    over_network = target_fs_type(ctx.env, s.directory) in NETWORK_FS
    if not over_network and s.link_bits_per_s is None:
        return None  # neither a network figure nor I/O over a network file system
    given = ctx.link_bits_per_s or ctx.env.get("conditions.link_bits_per_s")  # --link-speed at show or run
    if over_network:
        # the interface the client reaches this mount's server through (its tc-shaped rate
        # when shaped: limits/netfs.py), else the fastest NIC the host has
        from clusterbench.limits.netfs import link_rate_bits_per_s

        nominal = given or link_rate_bits_per_s(ctx.env, s.directory) or fastest_link_bits_per_s(ctx.env)
    else:
        # a network figure: the kernel named its interface's rate (0: unknown, e.g. loopback);
        # another NIC's speed says nothing about this path
        nominal = given or s.link_bits_per_s
    if not nominal:
        return None
    fraction = rate * 8 / nominal
    if fraction > 1.0 and over_network:
        return Ceiling("link", f"cache: above the {bits_text(nominal)} link", fraction, True, "above the link")
    if fraction > 1.0:  # a transfer cannot outrun its link: the stated rate is wrong (or the path is another)
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
    if not direct:
        return None
    best = max(direct)
    fraction = s.value / best if best else None
    if fraction is None:
        return None
    if fraction > CACHE_MARGIN:
        return Ceiling("device", "cache: above the device's direct rate", fraction, True, "page cache")
    return Ceiling("device", f"device: {_percent(fraction)} of its direct rate", fraction)


def memory(s: Sample, ctx: Context) -> Ceiling | None:
    """A read whose file fits in free memory and was not proven cold may be
    the page cache; with a stream figure in the same run, how close it is."""
    if s.unit not in BYTES_PER_S or s.value is None:
        return None
    stream = [o for o in ctx.others if o.phase.lower() in ("copy", "triad") and o.unit in BYTES_PER_S
              and o.value is not None and o.directory is None]
    rate = _bytes_per_s(s)
    if stream and rate is not None and s.directory:
        best = max(_bytes_per_s(o) for o in stream)
        fraction = rate / best
        if fraction > 0.5:
            return Ceiling("memory", f"memory: {_percent(fraction)} of stream's copy rate", fraction,
                           fraction > 0.5 and not s.cold_proven, "page cache")
    available = ctx.env.get("memory.available_bytes")
    limit = ctx.env.get("conditions.memory_limit_bytes")
    if isinstance(limit, int) and isinstance(available, (int, float)):
        available = min(available, limit)
    if s.phase == "read" and s.directory and not s.cold_proven and s.data_bytes \
            and isinstance(available, (int, float)) and s.data_bytes < available:
        return Ceiling("memory", "cache: the file fits in the page cache", None, True, "page cache")
    return None


CEILINGS: list[Callable[[Sample, Context], Ceiling | None]] = [no_device, link, device, memory]


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
