"""Which limit binds a read or write on a network file system (E2): a
short label for one figure, judged against the client's link to the server
(environment keys target.<dir>.netfs.*, environment/netfs.py) and, when the
same suite measured it, the server's local disk rate.

    "client cache"          the figure beats the link: it cannot have crossed it
    "link: 95 % of 1 Gbit/s"  within LINK_BINDS of the link's rate
    "server disk"           the server's disk is slower than the link and the
                            figure reaches it
    "not the link: 41 % of 10 Gbit/s"   something else binds (CPU, protocol, disk not measured)
    "link rate unknown"     no nominal or shaped rate for the client's interface

None for a directory that is not on a network file system.
"""
from __future__ import annotations

from clusterbench.limits.ceilings import bits_text

# A figure at >= 70 % of the link's nominal rate is taken as link-bound:
# TCP/IP and the file protocol's headers and round trips cost 5-20 % of a
# Gigabit link (GlusterFS over a 1 Gbit/s test-bed link: 107-119 MB/s, 86-95 %).
LINK_BINDS = 0.70
# A figure above the link by more than this cannot have crossed it (a token
# bucket lets one burst through at once; timer granularity).
LINK_SLACK = 1.05
DISK_BINDS = 0.80


def link_rate_bits_per_s(env: dict, directory: str) -> float | None:
    v = env.get(f"target.{directory}.netfs.link_rate_mbps")
    return float(v) * 1e6 if isinstance(v, (int, float)) and v > 0 else None


def is_network_mount(env: dict, directory: str | None) -> bool:
    return bool(directory) and isinstance(env.get(f"target.{directory}.netfs.kind"), str)


def netfs_limit(env: dict, directory: str | None, bytes_per_s: float,
                server_disk_bytes_per_s: float | None = None) -> str | None:
    """The label for a figure of `bytes_per_s` (decimal bytes per second, a
    read or a write) on `directory`, given the client's environment `env`."""
    if not is_network_mount(env, directory):
        return None
    link = link_rate_bits_per_s(env, directory)
    if link is None:
        return "link rate unknown"
    share = bytes_per_s * 8 / link
    if share > LINK_SLACK:
        return "client cache"
    if server_disk_bytes_per_s and server_disk_bytes_per_s * 8 < link \
            and bytes_per_s >= DISK_BINDS * server_disk_bytes_per_s:
        return "server disk"
    if share >= LINK_BINDS:
        return f"link: {share * 100:.0f} % of {bits_text(link)}"
    return f"not the link: {share * 100:.0f} % of {bits_text(link)}"
