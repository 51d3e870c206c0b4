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


# rtnetlink (linux/rtnetlink.h, linux/if_addr.h): every IPv4 address of every interface, secondary ones
# too; SIOCGIFADDR answers an interface's primary address alone, and a host name on a second address of
# its interface (`ip addr add` beside the first: a cluster address beside a management one) found none
RTM_NEWADDR, RTM_GETADDR, NLMSG_DONE, NLMSG_ERROR = 20, 22, 3, 2
NLM_F_REQUEST, NLM_F_DUMP = 0x1, 0x300
IFA_ADDRESS, IFA_LOCAL = 1, 2


def _interface_holding(address: str) -> str | None:
    """The name of the interface one of whose IPv4 addresses is `address`, asked of the kernel."""
    want = socket.inet_aton(address)
    with socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, socket.NETLINK_ROUTE) as s:
        s.sendall(struct.pack("=IHHII", 16 + 8, RTM_GETADDR, NLM_F_REQUEST | NLM_F_DUMP, 1, 0)
                  + struct.pack("=BBBBI", socket.AF_INET, 0, 0, 0, 0))
        found = None
        while True:
            data = s.recv(65536)
            at = 0
            while at + 16 <= len(data):
                length, kind = struct.unpack_from("=IH", data, at)
                if kind in (NLMSG_DONE, NLMSG_ERROR) or length < 16:
                    return found
                if kind == RTM_NEWADDR and found is None:
                    index = struct.unpack_from("=I", data, at + 16 + 4)[0]
                    attr = at + 16 + 8
                    while attr + 4 <= at + length:
                        attr_len, attr_type = struct.unpack_from("=HH", data, attr)
                        if attr_len < 4:
                            break
                        if attr_type in (IFA_LOCAL, IFA_ADDRESS) and data[attr + 4:attr + attr_len] == want:
                            found = socket.if_indextoname(index)
                            break
                        attr += (attr_len + 3) & ~3
                at += (length + 3) & ~3


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
    try:
        interface = _interface_holding(address)
    except OSError:   # no netlink (a restricted sandbox): the interfaces' primary addresses
        interface = next((n for _, n in socket.if_nameindex() if _ipv4_of(n) == address), None)
    mtu = _ask(interface, SIOCGIFMTU) if interface else None
    if mtu is None:
        env[KEY + "_error"] = f"no interface holds the host name's address {address}"
        return
    env[KEY] = struct.unpack_from("i", mtu, 16)[0]   # struct ifreq: the name (16 bytes), then ifr_mtu
