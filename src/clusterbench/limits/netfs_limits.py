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

from clusterbench.limits.facts import bits_text, is_network_mount, mount_link_bits_per_s
from clusterbench.limits.thresholds import DISK_BINDS, LINK_BINDS, RATE_SLACK


def netfs_limit(env: dict, directory: str | None, bytes_per_s: float,
                server_disk_bytes_per_s: float | None = None) -> str | None:
    """The label for a figure of `bytes_per_s` (decimal bytes per second, a
    read or a write) on `directory`, given the client's environment `env`."""
    if not is_network_mount(env, directory):
        return None
    link = mount_link_bits_per_s(env, directory)
    if link is None:
        return "link rate unknown"
    share = bytes_per_s * 8 / link
    if share > RATE_SLACK:
        return "client cache"
    if server_disk_bytes_per_s and server_disk_bytes_per_s * 8 < link \
            and bytes_per_s >= DISK_BINDS * server_disk_bytes_per_s:
        return "server disk"
    if share >= LINK_BINDS:
        return f"link: {share * 100:.0f} % of {bits_text(link)}"
    return f"not the link: {share * 100:.0f} % of {bits_text(link)}"
