"""What the physical-limit rules read from a host's environment snapshot
(environment/): the file system under a directory, the links a transfer
may cross, the memory a cache may hold. One reader per fact, so every
rule reads it the same way."""
from __future__ import annotations

# Units of a data rate a ceiling applies to, in bytes per second each.
BYTES_PER_S = {"MiB/s": 2**20, "MB/s": 1e6, "GiB/s": 2**30, "GB/s": 1e9, "Gbit/s": 1e9 / 8, "Mbit/s": 1e6 / 8}
IOPS_UNITS = {"IOPS"}

# File systems whose pages are the storage: nothing slower lies below them.
NO_DEVICE_FS = ("tmpfs", "ramfs", "devtmpfs", "hugetlbfs")

# Network file systems: a figure there is also bounded by the link to the server.
NETWORK_FS = ("nfs", "nfs4", "cifs", "smb3", "fuse.glusterfs", "glusterfs", "lustre", "beegfs", "gpfs",
              "fuse.sshfs", "ceph", "fuse.ceph", "9p", "virtiofs")


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


def mount_link_bits_per_s(env: dict, directory: str | None) -> float | None:
    """The rate of the interface the client reaches a network mount's server
    through (its tc-shaped rate when shaped: environment/netfs.py)."""
    v = env.get(f"target.{directory}.netfs.link_rate_mbps") if directory else None
    return float(v) * 1e6 if isinstance(v, (int, float)) and v > 0 else None


def is_network_mount(env: dict, directory: str | None) -> bool:
    """The netfs collector described the mount (its server, its link)."""
    return bool(directory) and isinstance(env.get(f"target.{directory}.netfs.kind"), str)


def available_memory_bytes(env: dict) -> float | None:
    """The memory a page cache may grow into: free memory, capped by the
    run's cgroup (--memory-limit: the cache cannot outgrow it)."""
    available = env.get("memory.available_bytes")
    limit = env.get("conditions.memory_limit_bytes")
    if not isinstance(available, (int, float)) or isinstance(available, bool):
        return None
    return min(available, limit) if isinstance(limit, int) else available


def bits_text(bits_per_s: float) -> str:
    """1 Gbit/s, 2.5 Gbit/s, 400 Gbit/s, 100 Mbit/s."""
    value, unit = (bits_per_s / 1e9, "Gbit/s") if bits_per_s >= 1e9 else (bits_per_s / 1e6, "Mbit/s")
    return (f"{value:,.0f}" if value >= 100 else f"{value:.3g}") + f" {unit}"
