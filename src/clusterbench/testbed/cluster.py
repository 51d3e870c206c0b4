"""A cluster of test hosts on one Linux machine, kept up between commands
(`clusterbench testbed up/status/exec/down`).

A test host is three namespaces: network (its own interface `eth0` and one
address), UTS (its own host name, h01, h02, ...) and IPC (so MPI libraries do
not treat two hosts as one shared-memory node). Each host's `eth0` is one end
of a veth pair whose other end is a port of a Linux bridge in the machine's
own namespace: the switch. The bridge holds the cluster's first address, so
mpiexec run on the machine itself (the login node) reaches every host and
every host reaches it. Links are shaped with `tc` on both ends (a token
bucket, and netem for a delay), so both directions are limited.

Addresses come only from 198.18.0.0/15 (RFC 2544's benchmarking block):
by default the first /24 of 198.19.0.0/16 that no interface of this machine
uses yet, chosen under a lock, so several clusters (other users', other
tests') can be up at once. Every name carries the cluster's id: namespaces
`cbkc-<id>-h01`, interfaces `cbk<id>br` (the bridge) and `cbk<id>h01`.

Everything `up` makes is written to the state file *before* it is made, so
`down` removes exactly that, in reverse order, also after an `up` that was
killed halfway; it never touches anything the state file does not name.

Two switches (`--switches 2 --trunk K`): the first half of the hosts on the
first bridge, the rest on a second bridge `cbk<id>b2` (no address), the two
joined by a trunk of K veth links between two router namespaces
(`cbkc-<id>-ra`, `cbkc-<id>-rb`). This kernel has neither the bonding nor
the team driver, so the trunk is an L3 one: each router holds an equal-cost
multipath route to the other switch's subnet over the K links, hashed on
addresses *and ports* (fib_multipath_hash_policy=1), so different TCP flows
may take different links, and two flows may also collide on one, as with a
real LAG. The subnet is split: its first half for switch 1 (with the
login node's bridge address), a quarter for switch 2, a quarter for the
trunk's /30s. Hosts and the login node route the rest of the subnet through
their switch's router.
"""
from __future__ import annotations

import fcntl
import ipaddress
import json
import os
import re
import secrets
import shlex
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from clusterbench.files.safe_write import write_atomically
from clusterbench.testbed import gluster
from clusterbench.testbed.netns import BENCHMARK_NET, TestBedError, rate_bits_per_s

DEFAULT_DIR = Path("/run/clusterbench/testbed")
STATE_FILE = "state.json"
# what `up` writes in its directory beside STATE_FILE (and gluster.SUBDIR), all removed by `down`
WRITTEN = ("hosts", "hostfile", "hostfile-across", "ssh", "env.sh", "shm", "uts", "ipc")
LOCK_FILE = Path("/run/lock/clusterbench-testbed.lock")
POOL = ipaddress.ip_network("198.19.0.0/16")   # where /24s are allocated from by default
NS_PREFIX = "cbkc-"
_DELAY = re.compile(r"^(\d+(?:\.\d+)?)(us|ms|s)$")
MAX_HOSTS = 99                                  # host names are h01..h99
MAX_TRUNK_LINKS = 16


class BadCluster(ValueError):
    """A request that cannot be carried out as given (the CLI exits 2)."""


def delay_ms(delay: str) -> float:
    """'2ms' -> 2.0, '500us' -> 0.5 (tc's units)."""
    m = _DELAY.match(delay.strip().lower())
    if not m:
        raise BadCluster(f"delay {delay!r} is not a tc time like 500us or 2ms")
    return float(m.group(1)) * {"us": 1e-3, "ms": 1.0, "s": 1e3}[m.group(2)]


def parse_link(spec: str | None) -> tuple[str | None, str | None]:
    """'1gbit' or '1gbit,2ms' -> (rate, delay); None -> (None, None)."""
    if not spec:
        return None, None
    rate, _, delay = spec.partition(",")
    try:
        rate_bits_per_s(rate)
    except ValueError as e:
        raise BadCluster(str(e)) from None
    if delay:
        delay_ms(delay)
    return rate.strip().lower(), (delay.strip().lower() or None)


def netem_available() -> bool:
    """Whether tc can add a netem qdisc here (some kernels lack sch_netem):
    tried on the loopback of a throw-away namespace."""
    probe = f"{NS_PREFIX}probe{os.getpid()}"
    if subprocess.run(["ip", "netns", "add", probe], capture_output=True).returncode:
        return False
    try:
        return subprocess.run(["tc", "-n", probe, "qdisc", "add", "dev", "lo", "root", "netem", "delay", "1ms"],
                              capture_output=True).returncode == 0
    finally:
        subprocess.run(["ip", "netns", "del", probe], capture_output=True)


def host_names(count: int) -> list[str]:
    return [f"h{i:02d}" for i in range(1, count + 1)]


def _run(argv: list[str]) -> str:
    p = subprocess.run(argv, capture_output=True, text=True)
    if p.returncode:
        raise TestBedError(f"{' '.join(argv)}: {p.stderr.strip() or f'exit status {p.returncode}'}")
    return p.stdout


def _used_subnets() -> set[ipaddress.IPv4Network]:
    """The /24s of 198.18.0.0/15 some interface of this namespace holds."""
    out = subprocess.run(["ip", "-4", "-o", "addr", "show"], capture_output=True, text=True).stdout
    used = set()
    for m in re.finditer(r"inet (\d+\.\d+\.\d+\.\d+)/(\d+)", out):
        addr = ipaddress.ip_address(m.group(1))
        if addr in BENCHMARK_NET:
            used.add(ipaddress.ip_network(f"{addr}/24", strict=False))
    return used


def _free_subnet() -> ipaddress.IPv4Network:
    used = _used_subnets()
    for net in POOL.subnets(new_prefix=24):
        if net not in used:
            return net
    raise BadCluster(f"every /24 of {POOL} is in use by other test clusters")


@dataclass
class Host:
    name: str
    ns: str
    address: str
    veth: str       # the switch-side end, in the machine's namespace
    switch: str = "sw1"


class Cluster:
    """A test cluster described by its state file (see the module doc)."""

    def __init__(self, state_dir: Path, state: dict):
        self.dir = state_dir
        self.state = state

    # -- reading

    @classmethod
    def load(cls, state_dir: Path) -> "Cluster":
        path = state_dir / STATE_FILE
        try:
            return cls(state_dir, json.loads(path.read_text()))
        except FileNotFoundError:
            raise BadCluster(f"no test cluster is up in {state_dir} (start one: clusterbench testbed up)") from None

    @property
    def id(self) -> str:
        return self.state["id"]

    @property
    def hosts(self) -> list[Host]:
        return [Host(**h) for h in self.state["hosts"]]

    def host(self, name: str) -> Host:
        for h in self.hosts:
            if name in (h.name, h.address):
                return h
        known = ", ".join(h.name for h in self.hosts) or "none yet"
        raise BadCluster(f"no host {name!r} in this test cluster (hosts: {known})")

    @property
    def hostfile(self) -> Path:
        return self.dir / "hostfile"

    @property
    def ssh(self) -> Path:
        return self.dir / "ssh"

    def env(self) -> dict[str, str]:
        """What MPICH's Hydra and Open MPI's launcher need to start ranks on
        the test hosts, as environment variables, so `clusterbench run
        --hostfile` works unchanged: the ssh stand-in as launcher, the bridge
        as the interface the ranks call back on, TCP only on the cluster's
        subnet, and no core binding (every host would bind its first rank to
        core 0 of the same machine)."""
        subnet = self.state["subnet"]
        return {
            "HYDRA_LAUNCHER": "ssh",
            "HYDRA_LAUNCHER_EXEC": str(self.ssh),
            "HYDRA_IFACE": self.state["bridge"],
            "OMPI_MCA_plm_rsh_agent": str(self.ssh),
            "PRTE_MCA_plm_ssh_agent": str(self.ssh),
            "OMPI_MCA_btl_tcp_if_include": subnet,
            "OMPI_MCA_oob_tcp_if_include": subnet,
            "PRTE_MCA_oob_tcp_if_include": subnet,
            "OMPI_MCA_hwloc_base_binding_policy": "none",
            "PRTE_MCA_hwloc_default_binding_policy": "none",
            "CLUSTERBENCH_TESTBED": str(self.dir),
            "CLUSTERBENCH_TESTBED_TOPOLOGY": self.topology(),
        }

    def command(self, host: str, argv: list[str]) -> list[str]:
        """argv run on a test host: inside its network, UTS and IPC
        namespaces, with a private mount namespace in which the cluster's
        hosts file stands for /etc/hosts (so hosts find each other by name).
        nsenter, unlike `ip netns exec`, leaves /sys (and cgroups) as they are."""
        h = self.host(host)
        return ["nsenter", f"--net=/run/netns/{h.ns}", f"--uts={self.dir / 'uts' / h.name}",
                f"--ipc={self.dir / 'ipc' / h.name}", "--",
                "unshare", "--mount", "--propagation", "slave", "--",
                "sh", "-c", f'mount --bind "$0" /etc/hosts && {_host_mounts(shlex.quote(str(self.dir)), h.name)} '
                '&& exec "$@"', str(self.dir / "hosts"), *argv]

    def status(self) -> dict:
        """The state, with what of it exists now."""
        names = set(_namespaces())
        links = set(_links())
        out = {
            "id": self.id, "dir": str(self.dir), "complete": self.state.get("complete", False),
            "subnet": self.state["subnet"], "bridge": self.state["bridge"],
            "bridge_address": self.state["bridge_address"], "bridge_up": self.state["bridge"] in links,
            "rate": self.state.get("rate"), "delay": self.state.get("delay"),
            "hosts": [{"name": h.name, "address": h.address, "namespace": h.ns, "switch": h.switch,
                       "up": h.ns in names and h.veth in links} for h in self.hosts],
            "switches": self.switches(), "trunk": None,
            "hostfile": str(self.hostfile), "ssh": str(self.ssh),
            "glusterfs": self.state.get("glusterfs"),
        }
        if self.state.get("trunk"):
            out["trunk"] = {**self.state["trunk"], "up": all(r["ns"] in names for r in self.state["trunk"]["routers"])}
            out["hostfile_across"] = str(self.dir / "hostfile-across")
        return out

    def switches(self) -> list[dict]:
        return self.state.get("switches") or [{"name": "sw1", "bridge": self.state["bridge"],
                                               "subnet": self.state["subnet"]}]

    def topology(self) -> str:
        """Which host is on which switch, as `h01:sw1,h02:sw1,...` (exported
        as CLUSTERBENCH_TESTBED_TOPOLOGY: hosts on one switch talk through
        it; hosts on different switches through the trunk)."""
        return ",".join(f"{h.name}:{h.switch}" for h in self.hosts)


def _namespaces() -> list[str]:
    out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    return [line.split()[0] for line in out.splitlines() if line.strip()]


def _new_id() -> str:
    """A cluster id no interface or namespace of this machine carries yet
    (called under the lock). Four random hex digits collide now and then
    when test suites side by side bring clusters up at once, and an `up`
    that found its bridge's name taken undid it, removing the other
    cluster's bridge (recorded before it is made, for a killed `up`)."""
    taken = {m.group(1) for name in _links() if (m := re.match(r"cbk([0-9a-f]{4})", name))}
    taken |= {m.group(1) for ns in _namespaces() if (m := re.match(rf"{NS_PREFIX}([0-9a-f]{{4}})-", ns))}
    while (cid := secrets.token_hex(2)) in taken:
        pass
    return cid


def _links() -> list[str]:
    out = subprocess.run(["ip", "-o", "link", "show"], capture_output=True, text=True).stdout
    return [m.group(1) for m in re.finditer(r"^\d+: ([^:@\s]+)", out, re.M)]


def _mounted(path: Path) -> bool:
    """Whether path is a mount point; mountinfo escapes a space as \\040, so compared raw a --dir
    with a space was never mounted: `down` skipped the umount and its unlink failed (EBUSY)."""
    from clusterbench.environment.storage import parse_mountinfo

    return any(m["mount_point"] == str(path) for m in parse_mountinfo(Path("/proc/self/mountinfo").read_text()))


def why_not() -> str | None:
    """None when this process can build a test cluster, else why not."""
    if os.geteuid() != 0:
        return "a test cluster needs root (network, UTS and IPC namespaces, bridges, tc)"
    for tool in ("ip", "tc", "nsenter", "unshare"):
        if not shutil.which(tool):
            return f"`{tool}` not found: install iproute2 and util-linux"
    return None


class _Builder:
    """Builds a cluster, writing each object to the state file before it
    exists (an intent log), so `down` after a crash knows what to remove."""

    def __init__(self, cluster: Cluster):
        self.c = cluster

    def save(self) -> None:
        write_atomically(self.c.dir / STATE_FILE, json.dumps(self.c.state, indent=1))

    def will_make(self, kind: str, name: str) -> None:
        self.c.state["made"].append({"kind": kind, "name": name})
        self.save()

    def file(self, path: Path, text: str, mode: int = 0o644) -> None:
        self.will_make("file", str(path))
        path.write_text(text)
        path.chmod(mode)


@dataclass
class Layout:
    """Where the addresses of a cluster go: the login node's (bridge)
    address, each host's switch, address and prefix, and with two switches
    the routers and trunk links."""
    bridge_address: str
    bridge_prefixlen: int
    hosts: list[tuple[str, str, str, int]]          # name, switch, address, prefix length
    switch_subnets: list[str]
    routers: list[dict]                             # name, switch, address, prefixlen
    trunk_links: list[tuple[str, str]]              # (router A's, router B's) address, /30


def layout(net: ipaddress.IPv4Network, hosts: int, switches: int = 1, trunk: int = 0) -> Layout:
    """The address plan (see the module doc); BadCluster when it does not fit."""
    names = host_names(hosts)
    if switches == 1:
        addresses = list(net.hosts())
        room = max(0, net.num_addresses - 3)   # network, broadcast and the bridge's address
        if room < hosts:
            raise BadCluster(f"--subnet {net} has room for {room} hosts, not {hosts}")
        return Layout(str(addresses[0]), net.prefixlen,
                      [(n, "sw1", str(addresses[i + 1]), net.prefixlen) for i, n in enumerate(names)],
                      [str(net)], [], [])
    if net.prefixlen > 26:
        raise BadCluster(f"--subnet {net}: two switches need a /26 or larger (half for switch 1, a quarter "
                         "for switch 2, a quarter for the trunk)")
    sw1, rest = net.subnets(prefixlen_diff=1)
    sw2, trunk_net = rest.subnets(prefixlen_diff=1)
    a1, a2 = list(sw1.hosts()), list(sw2.hosts())
    room1, room2 = len(a1) - 2, len(a2) - 1     # sw1: bridge and router; sw2: router
    on1 = (hosts + 1) // 2
    if on1 > room1 or hosts - on1 > room2:
        raise BadCluster(f"--subnet {net} has room for {min(2 * room1, 2 * room2 + 1)} hosts on two switches, "
                         f"not {hosts}")
    links = list(trunk_net.subnets(new_prefix=30))[:trunk]
    if len(links) < trunk:
        raise BadCluster(f"--subnet {net} has room for a trunk of {len(list(trunk_net.subnets(new_prefix=30)))} "
                         f"links, not {trunk}")
    placed = [(n, "sw1", str(a1[1 + i]), sw1.prefixlen) for i, n in enumerate(names[:on1])]
    placed += [(n, "sw2", str(a2[i]), sw2.prefixlen) for i, n in enumerate(names[on1:])]
    routers = [{"name": "ra", "switch": "sw1", "address": str(a1[-1]), "prefixlen": sw1.prefixlen},
               {"name": "rb", "switch": "sw2", "address": str(a2[-1]), "prefixlen": sw2.prefixlen}]
    trunk_links = [tuple(str(a) for a in list(link.hosts())[:2]) for link in links]
    return Layout(str(a1[0]), sw1.prefixlen, placed, [str(sw1), str(sw2)], routers, trunk_links)


def parse_topology(switches: int, trunk: int | None, trunk_rate: str | None) -> tuple[int, str | None]:
    """Checks --switches/--trunk/--trunk-rate; returns (trunk links, rate)."""
    if switches not in (1, 2):
        raise BadCluster(f"--switches {switches}: a test cluster has 1 or 2 switches")
    if switches == 1:
        if trunk is not None or trunk_rate is not None:
            raise BadCluster("--trunk and --trunk-rate join two switches: give --switches 2 as well")
        return 0, None
    trunk = 1 if trunk is None else trunk
    if not 1 <= trunk <= MAX_TRUNK_LINKS:
        raise BadCluster(f"--trunk {trunk}: a trunk has 1 to {MAX_TRUNK_LINKS} links")
    if trunk_rate is not None:
        try:
            rate_bits_per_s(trunk_rate)
        except ValueError as e:
            raise BadCluster(f"--trunk-rate: {e}") from None
        trunk_rate = trunk_rate.strip().lower()
    return trunk, trunk_rate


def up(state_dir: Path, hosts: int, link: str | None = None, subnet: str | None = None, switches: int = 1,
       trunk: int | None = None, trunk_rate: str | None = None, glusterfs: int | None = None,
       bricks: int | None = None, volume_layout: str = "distributed") -> Cluster:
    """Builds a cluster of `hosts` test hosts, with a GlusterFS volume served
    by the last `glusterfs` of them when asked (testbed/gluster.py); see the module doc."""
    why = why_not()
    if why:
        raise BadCluster(why)
    if glusterfs is not None:
        try:
            bricks = gluster.check(hosts, glusterfs, bricks, volume_layout)
        except gluster.BadVolume as e:
            raise BadCluster(str(e)) from None
    rate, delay = parse_link(link)
    trunk, trunk_rate = parse_topology(switches, trunk, trunk_rate)
    if delay and not netem_available():
        raise BadCluster("this kernel has no netem qdisc (sch_netem), so link delays cannot be emulated: "
                         "give --link a rate only")
    if hosts < 1 or hosts > MAX_HOSTS:
        raise BadCluster(f"--hosts {hosts}: a test cluster has 1 to {MAX_HOSTS} hosts")
    if switches == 2 and hosts < 2:
        raise BadCluster(f"--hosts {hosts}: two switches need at least 2 hosts (one on each)")
    if subnet is not None:
        try:
            net = ipaddress.ip_network(subnet)
        except ValueError:
            raise BadCluster(f"--subnet {subnet!r} is not a network like 198.19.7.0/24") from None
        if not (net.version == 4 and net.subnet_of(BENCHMARK_NET)):
            raise BadCluster(f"--subnet {subnet} is outside 198.18.0.0/15, the block reserved for benchmarking (RFC 2544)")
        layout(net, hosts, switches, trunk)
    if any(ch.isspace() for ch in str(state_dir)):
        # mpiexec hung: Hydra and PRRTE split the launcher's path (the ssh stand-in here) at a space
        raise BadCluster(f"--dir {str(state_dir)!r} holds a space, at which MPI launchers split the path of the "
                         "cluster's ssh stand-in: give a directory without one")
    if (state_dir / STATE_FILE).exists():
        raise BadCluster(f"a test cluster is already up in {state_dir}: clusterbench testbed down first")
    # a user's own hostfile in --dir was overwritten, and then deleted by `down` with the cluster's
    taken = [n for n in (*WRITTEN, gluster.SUBDIR) if os.path.lexists(state_dir / n)]
    if taken:
        raise BadCluster(f"--dir {state_dir} already holds {', '.join(taken)}, not a test cluster's: "
                         "give a new or empty directory")
    LOCK_FILE.parent.mkdir(parents=True, exist_ok=True)
    with open(LOCK_FILE, "a") as lock:
        # the lock makes choosing a free /24 and taking it (the bridge's
        # address) one step for concurrent `up`s
        fcntl.flock(lock, fcntl.LOCK_EX)
        net = ipaddress.ip_network(subnet) if subnet else _free_subnet()
        if net in _used_subnets() or any(net.overlaps(u) for u in _used_subnets()):
            raise BadCluster(f"--subnet {net} is already used by an interface of this machine")
        plan = layout(net, hosts, switches, trunk)
        made_dir = not state_dir.exists()
        state_dir.mkdir(parents=True, exist_ok=True)
        cid = _new_id()
        state = {"id": cid, "subnet": str(net), "bridge": f"cbk{cid}br", "bridge_address": plan.bridge_address,
                 "rate": rate, "delay": delay, "hosts": [], "made": [], "made_dir": made_dir, "complete": False,
                 "pid": os.getpid()}
        if switches == 2:
            state["switches"] = [{"name": "sw1", "bridge": f"cbk{cid}br", "subnet": plan.switch_subnets[0]},
                                 {"name": "sw2", "bridge": f"cbk{cid}b2", "subnet": plan.switch_subnets[1]}]
            state["trunk"] = {"links": trunk, "rate": trunk_rate, "hash_policy": "l4",
                              "routers": [{**r, "ns": f"{NS_PREFIX}{cid}-{r['name']}", "veth": f"cbk{cid}{r['name']}"}
                                          for r in plan.routers],
                              "link_addresses": [list(a) for a in plan.trunk_links]}
        cluster = Cluster(state_dir, state)
        b = _Builder(cluster)
        b.will_make("file", str(state_dir / STATE_FILE))
        try:
            _make_bridge(b, state["bridge"], f"{plan.bridge_address}/{plan.bridge_prefixlen}")
        except BaseException:
            down(state_dir)
            raise
    try:
        gateways = {}
        if switches == 2:
            _make_trunk(b, net)
            gateways = {r["switch"]: r["address"] for r in state["trunk"]["routers"]}
        bridges = {sw["name"]: sw["bridge"] for sw in cluster.switches()}
        _make_shm(b)
        for name, switch, address, prefixlen in plan.hosts:
            _make_host(b, name, address, prefixlen, switch, bridges[switch], net, gateways.get(switch))
        _write_files(b)
        if glusterfs is not None:
            b.will_make("glusterfs", str(gluster.root(state_dir)))
            state["glusterfs"] = gluster.up(cluster, glusterfs, bricks, volume_layout)
    except BaseException:
        down(state_dir)   # nothing half-made
        raise
    state["complete"] = True
    b.save()
    return cluster


def _make_trunk(b: _Builder, net: ipaddress.IPv4Network) -> None:
    """Switch 2's bridge, a router on each switch, K shaped links between
    the routers with a multipath route over them each way, and the login
    node's route to switch 2 (through router A)."""
    s = b.c.state
    sw2, trunk = s["switches"][1], s["trunk"]
    _make_bridge(b, sw2["bridge"], None)
    bridges = {"sw1": s["bridge"], "sw2": sw2["bridge"]}
    ra, rb = trunk["routers"]
    for r in (ra, rb):
        b.will_make("netns", r["ns"])
        _run(["ip", "netns", "add", r["ns"]])
        b.will_make("link", r["veth"])
        _run(["ip", "link", "add", r["veth"], "type", "veth", "peer", "name", "sw", "netns", r["ns"]])
        _run(["ip", "link", "set", r["veth"], "master", bridges[r["switch"]]])
        _run(["ip", "link", "set", r["veth"], "up"])
        _run(["ip", "-n", r["ns"], "link", "set", "lo", "up"])
        _run(["ip", "-n", r["ns"], "addr", "add", f"{r['address']}/{r['prefixlen']}", "dev", "sw"])
        _run(["ip", "-n", r["ns"], "link", "set", "sw", "up"])
        # forwarding; the multipath hash on addresses and ports (policy 1),
        # so flows between the same two hosts can take different links; no
        # reverse-path filter (a reply may come back over another link)
        # (written to /proc/sys: sysctl(8) is not on every minimal system)
        settings = {"ip_forward": 1, "fib_multipath_hash_policy": 1, "conf/all/rp_filter": 0,
                    "conf/default/rp_filter": 0}
        _run(["ip", "netns", "exec", r["ns"], "sh", "-c",
              " && ".join(f"echo {v} > /proc/sys/net/ipv4/{k}" for k, v in settings.items())])
    # the trunk's links live only inside the two routers' namespaces: they
    # go with them at `down`
    for k, (a_addr, b_addr) in enumerate(trunk["link_addresses"], start=1):
        ifname = f"t{k}"
        _run(["ip", "link", "add", ifname, "netns", ra["ns"], "type", "veth", "peer", "name", ifname, "netns", rb["ns"]])
        for r, addr in ((ra, a_addr), (rb, b_addr)):
            _run(["ip", "-n", r["ns"], "addr", "add", f"{addr}/30", "dev", ifname])
            _shape(r["ns"], ifname, trunk["rate"], None)
            _run(["ip", "-n", r["ns"], "link", "set", ifname, "up"])
    for r, far, other in ((ra, sw2["subnet"], 1), (rb, s["switches"][0]["subnet"], 0)):
        hops = []
        for k, pair in enumerate(trunk["link_addresses"], start=1):
            hops += ["nexthop", "via", pair[other], "dev", f"t{k}", "weight", "1"]
        _run(["ip", "-n", r["ns"], "route", "add", far, *hops])
    route = f"{sw2['subnet']} via {ra['address']} dev {s['bridge']}"
    b.will_make("route", route)
    _run(["ip", "route", "add", *route.split()])


def _shape(ns: str | None, ifname: str, rate: str | None, delay: str | None) -> None:
    """Egress shaping of one end: netem for the delay (one way), under it a
    token bucket of at least 64 KiB (a veth sends GSO packets of up to
    64 KiB) and 1 ms of traffic, queueing up to 20 ms."""
    if not rate and not delay:
        return
    tc = ["tc"] + (["-n", ns] if ns else [])
    parent = ["root"]
    if delay:
        _run(tc + ["qdisc", "add", "dev", ifname, "root", "handle", "1:", "netem", "delay", delay, "limit", "100000"])
        parent = ["parent", "1:"]
    if rate:
        burst = f"{max(64 * 1024, int(rate_bits_per_s(rate) / 8 / 1000))}b"
        _run(tc + ["qdisc", "add", "dev", ifname, *parent, "handle", "2:", "tbf", "rate", rate, "burst", burst,
                   "latency", "20ms"])


def _make_bridge(b: _Builder, bridge: str, address: str | None) -> None:
    b.will_make("link", bridge)
    _run(["ip", "link", "add", "name", bridge, "type", "bridge"])
    if address:
        _run(["ip", "addr", "add", address, "dev", bridge])
    _run(["ip", "link", "set", bridge, "up"])


def _make_shm(b: _Builder) -> None:
    """A tmpfs in the cluster's directory whose folder per host is that
    host's /dev/shm (_host_mounts); what MPI leaves there goes with it at
    `down`."""
    d = b.c.dir / "shm"
    if not d.exists():
        b.will_make("dir", str(d))
        d.mkdir()
    b.will_make("mount", str(d))
    _run(["mount", "-t", "tmpfs", "-o", "mode=755", f"cbk{b.c.id}shm", str(d)])


def _make_host(b: _Builder, name: str, address: str, prefixlen: int, switch: str, bridge: str,
               net: ipaddress.IPv4Network, gateway: str | None) -> None:
    c, s = b.c, b.c.state
    ns, veth = f"{NS_PREFIX}{c.id}-{name}", f"cbk{c.id}{name}"
    s["hosts"].append({"name": name, "ns": ns, "address": address, "veth": veth, "switch": switch})
    b.will_make("netns", ns)
    _run(["ip", "netns", "add", ns])
    b.will_make("link", veth)
    _run(["ip", "link", "add", veth, "type", "veth", "peer", "name", "eth0", "netns", ns])
    _run(["ip", "link", "set", veth, "master", bridge])
    _shape(None, veth, s["rate"], s["delay"])
    _run(["ip", "link", "set", veth, "up"])
    _run(["ip", "-n", ns, "link", "set", "lo", "up"])
    _run(["ip", "-n", ns, "addr", "add", f"{address}/{prefixlen}", "dev", "eth0"])
    _shape(ns, "eth0", s["rate"], s["delay"])
    _run(["ip", "-n", ns, "link", "set", "eth0", "up"])
    if gateway:   # the rest of the cluster's subnet is behind this switch's router
        _run(["ip", "-n", ns, "route", "add", str(net), "via", gateway])
    # a persistent UTS namespace (the host name) and IPC namespace, held by
    # bind mounts on two files of the state directory
    for kind in ("uts", "ipc"):
        d = c.dir / kind
        if not d.exists():
            b.will_make("dir", str(d))
            d.mkdir()
        b.file(d / name, "")
        b.will_make("mount", str(d / name))
    _run(["unshare", f"--uts={c.dir / 'uts' / name}", f"--ipc={c.dir / 'ipc' / name}", "hostname", name])
    shm = c.dir / "shm" / name   # in the cluster's tmpfs: goes with it
    shm.mkdir()
    shm.chmod(0o1777)   # as /dev/shm


def _host_mounts(d: str, h: str) -> str:
    """Shell: what a host has of its own in its mount namespace: its own
    /dev/shm (its folder of the cluster's tmpfs: MPI's shared-memory
    segments of h01 are h01's, never another cluster's h01's, as on real
    nodes), and its own mount of the test cluster's GlusterFS volume at the
    volume's one path (testbed/gluster.py). d and h are shell words for the
    cluster directory and the host name; a cluster made before either
    existed goes without it."""
    own = f"{d}/glusterfs/clients/{h}"
    return (f"{{ ! mountpoint -q {d}/shm || mount --bind {d}/shm/{h} /dev/shm; }} && "
            f"{{ ! mountpoint -q {own} || mount --bind {own} {d}/glusterfs/volume; }}")


def _write_files(b: _Builder) -> None:
    c = b.c
    hosts = c.hosts
    lines = ["127.0.0.1 localhost", f"{c.state['bridge_address']} login-{c.id}"]
    lines += [f"{h.address} {h.name}" for h in hosts]
    b.file(c.dir / "hosts", "\n".join(lines) + "\n")
    b.file(c.hostfile, "".join(f"{h.name}\n" for h in hosts))
    if c.state.get("trunk"):
        # E6's host file: server on switch 1, client on switch 2, server, ...
        # (tcp --role=pairs --pairing=adjacent): every pair crosses the trunk
        one, two = ([h.name for h in hosts if h.switch == sw] for sw in ("sw1", "sw2"))
        b.file(c.dir / "hostfile-across", "".join(f"{a}\n{z}\n" for a, z in zip(one, two)))
    cases = "".join(f"  {h.name}|{h.address}) ns={h.ns}; h={h.name} ;;\n" for h in hosts)
    d = shlex.quote(str(c.dir))
    # the inner sh -c gets the cluster directory and host as $2 and $3: spliced into its text, a
    # directory with a space was split there ("mountpoint: bad usage")
    own_mounts = _host_mounts('"$2"', '"$3"')
    # sh's redirections name descriptors 0-9 only; Python closes them all (close_range)
    close_fds = shlex.quote("import os, sys; os.closerange(3, os.sysconf('SC_OPEN_MAX')); "
                            "os.execvp(sys.argv[1], sys.argv[1:])")
    python = shlex.quote(sys.executable)
    b.file(c.ssh, f"""#!/bin/sh
# ssh stand-in for test cluster {c.id} (made by clusterbench testbed up):
# `ssh [options] HOST COMMAND...` runs COMMAND with sh on that test host.
while [ $# -gt 0 ]; do
  case "$1" in
    -[bcDEeFIiJLlmOoPpQRSWw]) shift 2 ;;
    -*) shift ;;
    *) break ;;
  esac
done
case "$1" in
{cases}  *) echo "testbed ssh: no host '$1' in test cluster {c.id}" >&2; exit 255 ;;
esac
shift
d={d}
# as ssh does, the command gets stdin, stdout and stderr and no other descriptor
# of the caller's: Hydra's proxies holding mpiexec's listening socket outlived it
exec {python} -I -S -c {close_fds} \\
  nsenter "--net=/run/netns/$ns" "--uts=$d/uts/$h" "--ipc=$d/ipc/$h" -- \\
  unshare --mount --propagation slave -- \\
  sh -c 'mount --bind "$0" /etc/hosts && {own_mounts} && exec sh -c "$1"' "$d/hosts" "$*" "$d" "$h"
""", 0o755)
    env = "".join(f"export {k}={shlex.quote(v)}\n" for k, v in c.env().items())
    b.file(c.dir / "env.sh", env)


TERM_GRACE_S = 1.0   # what runs on the hosts at `down` has this long to end on SIGTERM


def _pids_in(ns: str) -> list[str]:
    return subprocess.run(["ip", "netns", "pids", ns], capture_output=True, text=True).stdout.split()


def _signal_all(pids: list[str], sig: int) -> None:
    for pid in pids:
        try:
            os.kill(int(pid), sig)
        except (ProcessLookupError, ValueError):
            pass


def _stop_in(namespaces: list[str]) -> None:
    """SIGTERM to what still runs on the hosts, all at once, so it ends as it
    would on a node being shut down: MPI's proxies and daemons remove their
    temporary files (Hydra's /tmp/hydra_hwloc_xmlfile_*, which SIGKILL left
    behind). What is left after TERM_GRACE_S gets SIGKILL (_kill_in)."""
    deadline = time.monotonic() + TERM_GRACE_S
    sent: set[str] = set()
    while time.monotonic() < deadline:
        pids = [p for ns in namespaces for p in _pids_in(ns)]
        if not pids:
            return
        _signal_all([p for p in pids if p not in sent], signal.SIGTERM)
        sent.update(pids)
        time.sleep(0.05)


def _kill_in(ns: str) -> None:
    for _ in range(50):
        pids = _pids_in(ns)
        if not pids:
            return
        _signal_all(pids, signal.SIGKILL)
        time.sleep(0.05)


def down(state_dir: Path) -> list[str]:
    """Removes what the state file names, newest first; returns what it
    removed. Idempotent: what is already gone is skipped."""
    if why_not():
        raise BadCluster(why_not())
    c = Cluster.load(state_dir)
    removed = []
    namespaces, links = set(_namespaces()), set(_links())
    _stop_in([item["name"] for item in c.state["made"] if item["kind"] == "netns" and item["name"] in namespaces])
    for item in reversed(c.state["made"]):
        kind, name = item["kind"], item["name"]
        if kind == "netns" and name in namespaces:
            _kill_in(name)
            subprocess.run(["ip", "netns", "del", name], capture_output=True)
        elif kind == "link" and name in links:
            subprocess.run(["ip", "link", "del", name], capture_output=True)
        elif kind == "route":
            if subprocess.run(["ip", "route", "del", *name.split()], capture_output=True).returncode:
                continue   # gone with its bridge, or never made
        elif kind == "mount":
            while _mounted(Path(name)):
                if subprocess.run(["umount", name], capture_output=True).returncode:
                    subprocess.run(["umount", "-l", name], capture_output=True)
                    break
        elif kind == "glusterfs":
            removed += gluster.down(state_dir)
            continue
        elif kind == "file" and Path(name).exists():
            Path(name).unlink()
        elif kind == "dir" and Path(name).is_dir():
            Path(name).rmdir()
        else:
            continue
        removed.append(f"{kind} {name}")
    for leftover in state_dir.glob(f".{STATE_FILE}.*.tmp"):   # an `up` killed while saving
        leftover.unlink()
    if c.state.get("made_dir") and state_dir.is_dir() and not any(state_dir.iterdir()):
        state_dir.rmdir()
    return removed
