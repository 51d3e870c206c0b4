"""The MTU of the interface that holds the node's own address (the one its
host name resolves to), whatever kind of interface it is.

network.py lists hardware interfaces and bonds only (veths and bridges
come and go with containers), so a node whose address sits on another
kind of interface (a VLAN, a macvlan, the test cluster's veths) had no
MTU in its snapshot: on the test cluster h04's eth0 set to 1280 (and to
9000) ran every link at the others' rate and the run said "Nothing
flagged", no key differing (probed 2026-12-07). On a real cluster a node
whose MTU differs from the fabric's is misconfigured: at 1500 among jumbo
frames it moves its bytes in six times the packets, at 9000 behind a
1500 switch its large frames are dropped.
"""
from __future__ import annotations

import fcntl
import ipaddress
import socket
import struct

from clusterbench.environment.sources import Context

KEY = "host_address.mtu"
# an interface's (primary) IPv4 address and its MTU, linux/sockios.h. Asked of the kernel through a
# socket, not read from /sys/class/net: sysfs shows the network namespace of whoever mounted it, and
# a process entered into a namespace (the test cluster's hosts, a container's nsenter) keeps the
# machine's /sys, where eth0 is the machine's (MTU 1400) and not its own (1280)
SIOCGIFADDR, SIOCGIFMTU = 0x8915, 0x8921


def _ask(name: str, request: int) -> bytes | None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:
            return fcntl.ioctl(s.fileno(), request, struct.pack("256s", name.encode()[:15]))
        except OSError:   # no IPv4 address on it
            return None


def _ipv4_of(name: str) -> str | None:
    answer = _ask(name, SIOCGIFADDR)
    return socket.inet_ntoa(answer[20:24]) if answer else None


def collect(env: dict, ctx: Context) -> None:
    if not ctx.is_real_root:
        return   # addresses are the live machine's, not a fixture tree's
    name = socket.gethostname()
    try:
        address = socket.getaddrinfo(name, None, socket.AF_INET)[0][4][0]
    except (OSError, IndexError) as e:
        env[KEY + "_error"] = f"the host name {name} does not resolve to an IPv4 address ({e})"
        return
    if ipaddress.ip_address(address).is_loopback:
        env[KEY + "_error"] = f"the host name resolves to a loopback address ({address})"
        return
    interface = next((n for _, n in socket.if_nameindex() if _ipv4_of(n) == address), None)
    mtu = _ask(interface, SIOCGIFMTU) if interface else None
    if mtu is None:
        env[KEY + "_error"] = f"no interface holds the host name's address {address}"
        return
    env[KEY] = struct.unpack_from("i", mtu, 16)[0]   # struct ifreq: the name (16 bytes), then ifr_mtu
