"""A network of hosts and switches on one Linux machine, from network namespaces.

Each host is a network namespace with one interface ``eth0`` holding one
address; each switch is a namespace holding a Linux bridge ``br0``; links
are veth pairs, optionally rate-limited with ``tc`` (a token bucket on the
sending side of each end, so both directions are limited). Addresses come
only from 198.18.0.0/15, the range RFC 2544 reserves for benchmarking, and
live only inside the namespaces: nothing is added to the machine's own
network namespace, so the test bed cannot disturb the host's traffic.

Everything a test bed makes carries its unique name prefix
``cbktb-<pid>-<random>-``; ``close()`` (also run by the context manager, at
interpreter exit, and when the creating process died: see
``remove_stale()``) kills processes left inside its namespaces and deletes
the namespaces, which removes their interfaces, bridges and qdiscs with them.

Needs root (CAP_NET_ADMIN and CAP_SYS_ADMIN) and iproute2 (``ip``, ``tc``);
``available()`` says whether this machine can build one, and why not.

    with TestBed() as bed:
        sw = bed.add_switch("sw")
        a = bed.add_host("a", switch=sw, rate="1gbit")
        b = bed.add_host("b", switch=sw, rate="1gbit")
        server = b.popen(["cbk", "tcp", "--role=server"])
        a.run(["cbk", "tcp", "--role=client", f"--server={b.address}"])
"""
from __future__ import annotations

import ipaddress
import os
import re
import secrets
import shutil
import signal
import subprocess
import time
import weakref
from dataclasses import dataclass, field

BENCHMARK_NET = ipaddress.ip_network("198.18.0.0/15")
PREFIX_ROOT = "cbktb-"
_NAME = re.compile(r"^[a-z][a-z0-9]{0,11}$")
_RATE = re.compile(r"^(\d+(?:\.\d+)?)(bit|kbit|mbit|gbit|tbit)$")
_RATE_BITS = {"bit": 1, "kbit": 10**3, "mbit": 10**6, "gbit": 10**9, "tbit": 10**12}


class TestBedError(RuntimeError):
    """A command that builds or removes the test bed failed."""


# What tbf takes: tc keeps a rate in bytes per second (below 8 bit/s it is 0,
# "the rate parameter is mandatory"), and the bucket given with it (1 ms of
# traffic, _limit and testbed/cluster.py's _shape) in a 32-bit byte count.
LEAST_RATE_BITS_PER_S = 8
MOST_RATE_BITS_PER_S = 34e12


def rate_bits_per_s(rate: str) -> float:
    """'1gbit' -> 1e9 (tc's decimal units)."""
    m = _RATE.match(rate.strip().lower())
    if not m:
        raise ValueError(f"rate {rate!r} is not a tc rate like 100mbit or 1gbit")
    bits = float(m.group(1)) * _RATE_BITS[m.group(2)]
    if not LEAST_RATE_BITS_PER_S <= bits <= MOST_RATE_BITS_PER_S:
        raise ValueError(f"rate {rate!r} is outside what tc's tbf takes (8bit to 34tbit)")
    return bits


def available() -> tuple[bool, str]:
    """(True, "") when this process can build test beds, else (False, why)."""
    if os.geteuid() != 0:
        return False, "network namespaces need root (CAP_NET_ADMIN, CAP_SYS_ADMIN)"
    for tool in ("ip", "tc"):
        if not shutil.which(tool):
            return False, f"`{tool}` not found: install iproute2"
    probe = f"{PREFIX_ROOT}{os.getpid()}-probe"
    p = subprocess.run(["ip", "netns", "add", probe], capture_output=True, text=True)
    if p.returncode:
        return False, f"cannot create a network namespace: {p.stderr.strip()}"
    subprocess.run(["ip", "netns", "del", probe], capture_output=True)
    return True, ""


def _run(argv: list[str]) -> str:
    p = subprocess.run(argv, capture_output=True, text=True)
    if p.returncode:
        raise TestBedError(f"{' '.join(argv)}: {p.stderr.strip() or f'exit status {p.returncode}'}")
    return p.stdout


def _namespaces() -> list[str]:
    out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    return [line.split()[0] for line in out.splitlines() if line.strip()]


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _kill_and_delete(ns: str) -> None:
    """Kills what still runs in a namespace (only ours: the prefix says so),
    then deletes it. A namespace deleted while processes hold it would live
    on, unnamed, with its interfaces."""
    for _ in range(50):
        pids = subprocess.run(["ip", "netns", "pids", ns], capture_output=True, text=True).stdout.split()
        if not pids:
            break
        for pid in pids:
            try:
                os.kill(int(pid), signal.SIGKILL)
            except (ProcessLookupError, ValueError):
                pass
        time.sleep(0.02)
    subprocess.run(["ip", "netns", "del", ns], capture_output=True)


def remove_stale() -> list[str]:
    """Deletes namespaces of test beds whose creating process is gone (it was
    killed before it could clean up). Returns their names."""
    removed = []
    for ns in _namespaces():
        m = re.match(rf"^{PREFIX_ROOT}(\d+)-", ns)
        if m and not _pid_alive(int(m.group(1))):
            _kill_and_delete(ns)
            removed.append(ns)
    return removed


@dataclass
class Node:
    bed: "TestBed" = field(repr=False)
    name: str
    ns: str

    def command(self, argv: list[str]) -> list[str]:
        """argv to run inside this node's namespace."""
        return ["ip", "netns", "exec", self.ns, *argv]

    def run(self, argv: list[str], **kw) -> subprocess.CompletedProcess:
        kw.setdefault("capture_output", True)
        kw.setdefault("text", True)
        return subprocess.run(self.command(argv), **kw)

    def popen(self, argv: list[str], **kw) -> subprocess.Popen:
        return subprocess.Popen(self.command(argv), **kw)


@dataclass
class Host(Node):
    address: str = ""
    interface: str = "eth0"
    linked: bool = False


@dataclass
class Switch(Node):
    ports: int = 0


@dataclass
class Link:
    a: Node
    b: Node
    a_interface: str
    b_interface: str
    rate: str | None


class TestBed:
    """Hosts, switches and links in network namespaces; see the module doc."""

    __test__ = False  # not a pytest test class, whatever its name

    def __init__(self, subnet: str = "198.18.0.0/16", burst: str | None = None, queue_ms: float = 20.0):
        net = ipaddress.ip_network(subnet)
        if not (net.version == 4 and net.subnet_of(BENCHMARK_NET)):
            raise ValueError(f"subnet {subnet} is outside 198.18.0.0/15, the range reserved for benchmarking (RFC 2544)")
        self.subnet = net
        self._addresses = net.hosts()
        self.burst = burst
        self.queue_ms = queue_ms
        self.prefix = f"{PREFIX_ROOT}{os.getpid()}-{secrets.token_hex(2)}-"
        self.hosts: dict[str, Host] = {}
        self.switches: dict[str, Switch] = {}
        self.links: list[Link] = []
        self._namespaces: list[str] = []
        self._closed = False
        remove_stale()
        # Runs on close(), when the object is collected, and at interpreter
        # exit (weakref.finalize registers itself with atexit); it holds the
        # list, not the test bed, so it sees every namespace added later.
        self._finalizer = weakref.finalize(self, TestBed._remove, self._namespaces)

    # -- building

    def _new_namespace(self, name: str) -> str:
        if self._closed:
            raise TestBedError("the test bed was closed")
        if not _NAME.match(name):
            raise ValueError(f"node name {name!r}: use 1-12 lower-case letters and digits, starting with a letter")
        if name in self.hosts or name in self.switches:
            raise ValueError(f"node name {name!r} is already used in this test bed")
        ns = self.prefix + name
        _run(["ip", "netns", "add", ns])
        self._namespaces.append(ns)
        _run(["ip", "-n", ns, "link", "set", "lo", "up"])
        return ns

    def add_switch(self, name: str) -> Switch:
        ns = self._new_namespace(name)
        _run(["ip", "-n", ns, "link", "add", "br0", "type", "bridge"])
        _run(["ip", "-n", ns, "link", "set", "br0", "up"])
        sw = Switch(self, name, ns)
        self.switches[name] = sw
        return sw

    def add_host(self, name: str, switch: Switch | None = None, rate: str | None = None,
                 address: str | None = None) -> Host:
        """A host; with `switch`, linked to it at once (rate: tc rate such as '1gbit')."""
        ns = self._new_namespace(name)
        addr = ipaddress.ip_address(address) if address else next(self._addresses)
        if addr not in self.subnet:
            raise ValueError(f"address {addr} is outside the test bed's subnet {self.subnet}")
        host = Host(self, name, ns, address=str(addr))
        self.hosts[name] = host
        if switch is not None:
            self.connect(host, switch, rate=rate)
        return host

    def _end_name(self, node: Node, other: Node) -> str:
        if isinstance(node, Host):
            if node.linked:
                raise ValueError(f"host {node.name} already has its link (one interface per host)")
            return node.interface
        node.ports += 1
        return f"p{node.ports}-{other.name}"[:15]

    def connect(self, a: Node, b: Node, rate: str | None = None) -> Link:
        """A veth link between two nodes (host-switch, switch-switch or
        host-host), limited to `rate` in each direction when given."""
        if rate is not None:
            rate_bits_per_s(rate)
        an, bn = self._end_name(a, b), self._end_name(b, a)
        # created directly inside both namespaces: no name ever appears in
        # the machine's own namespace
        _run(["ip", "link", "add", an, "netns", a.ns, "type", "veth", "peer", "name", bn, "netns", b.ns])
        for node, ifname in ((a, an), (b, bn)):
            if isinstance(node, Switch):
                _run(["ip", "-n", node.ns, "link", "set", ifname, "master", "br0"])
            else:
                _run(["ip", "-n", node.ns, "addr", "add", f"{node.address}/{self.subnet.prefixlen}", "dev", ifname])
                node.linked = True
            if rate:
                self._limit(node.ns, ifname, rate)
            _run(["ip", "-n", node.ns, "link", "set", ifname, "up"])
        link = Link(a, b, an, bn, rate)
        self.links.append(link)
        return link

    def _limit(self, ns: str, ifname: str, rate: str) -> None:
        """A token bucket on the egress of one end. The bucket holds at least
        1 ms of traffic and 64 KiB (a veth sends GSO packets of up to 64 KiB;
        a smaller bucket would have tbf split every one of them); the queue
        holds `queue_ms` of traffic, enough for TCP to keep the link full."""
        bits = rate_bits_per_s(rate)
        burst = self.burst or f"{max(64 * 1024, int(bits / 8 / 1000))}b"
        _run(["tc", "-n", ns, "qdisc", "replace", "dev", ifname, "root", "tbf", "rate", rate, "burst", burst,
              "latency", f"{self.queue_ms}ms"])

    # -- removal

    @staticmethod
    def _remove(namespaces: list[str]) -> None:
        for ns in reversed(namespaces):
            _kill_and_delete(ns)

    def close(self) -> None:
        """Removes everything this test bed made (idempotent)."""
        self._closed = True
        self._finalizer()

    def __enter__(self) -> "TestBed":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def namespaces(self) -> list[str]:
        """Names of this test bed's namespaces that exist now."""
        return [ns for ns in _namespaces() if ns.startswith(self.prefix)]
