"""The TCP/IP stack's settings that integrators tune and that, left
untuned or mis-tuned on one node, slow every link to and from it (E10):
socket buffer sizes and limits, the TCP congestion control, MTU probing,
the receive backlog. Read from /proc/sys, which is per network namespace:
each node (or test host) reports its own. Keys are the sysctl names under
`sysctl.`, as `sysctl -a` prints them, so the line that differs reads as
the setting to fix."""
from __future__ import annotations

from clusterbench.environment.sources import Context, put_file

SETTINGS = (
    "net.core.rmem_default", "net.core.rmem_max", "net.core.wmem_default", "net.core.wmem_max",
    "net.core.netdev_max_backlog", "net.core.somaxconn",
    "net.ipv4.tcp_rmem", "net.ipv4.tcp_wmem", "net.ipv4.tcp_mem",
    "net.ipv4.tcp_congestion_control", "net.ipv4.tcp_mtu_probing", "net.ipv4.tcp_window_scaling",
    "net.ipv4.tcp_timestamps", "net.ipv4.tcp_sack", "net.ipv4.tcp_slow_start_after_idle",
    "net.ipv4.tcp_no_metrics_save",
)


def _value(text: str) -> str:
    """"4096\\t131072\\t6291456\\n" -> "4096 131072 6291456"."""
    return " ".join(text.split())


def collect(env: dict, ctx: Context) -> None:
    for name in SETTINGS:
        put_file(env, f"sysctl.{name}", ctx, "/proc/sys/" + name.replace(".", "/"), _value)
