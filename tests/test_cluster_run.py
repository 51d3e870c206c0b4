"""`clusterbench run cluster` on a 4-host test cluster (links shaped to
200 Mbit/s) with faults the test plants, each of which must be flagged, and
only it; with none planted nothing may be flagged.

Faults, all in one run (each cluster run costs a minute of CI): h03's link
(both ends) shaped to a quarter of the others' (its port); h03's
kernel.shmmni (an IPC-namespace sysctl) changed; h03's processes capped at
15 % of one CPU by a cgroup its ssh stand-in joins them to (5 % made the
link matrix, whose every round waits on h03's ranks, take 190 s of CI; at
30 %, about 90 % off h03's Himeno on an idle machine, a run beside two
busy loops and other work, load 10 on 2 cores, gave every Himeno about
0.2 of a CPU and h03 none less: a cap above a process's share is no
fault); in 10 ms periods, so h03's ranks wait 8.5 ms at most, not 85;
h02's TCP stack mis-tuned as in issue #40 (16 KiB buffers, reno): its keys
and its slow send side; and two the suite was not tuned for (odd_h04):
h04's profile exporting OMP_NUM_THREADS=1 and h04's jobs in a 1 GiB memory
cgroup, each one environment key of h04's. The link faults again with the
Open MPI build, links only. Not yet: the faults with the per-node figures all at once.

A third probe of faults it was not tuned for (2026-12-07) found two
missed and one kept: a busy loop beside h03's commands (processes.busy),
h04's MTU at 1280 (host_address.mtu) and h02's port shaped one way (its
receive side), in one links-only run.

The four test hosts share this machine's two cores, so the per-node
figures run --one-at-a-time (all at once, each host's Himeno would time
the others' start and end: 60 % spread seen with no fault). The machine is
shared with other work: one node's median of 5 one-second Himeno runs was
seen 40 % off the others with no fault. A node is flagged only when its 5
repetitions clear those of most other nodes (analysis/cluster/outliers.py), not by
the Z of its median: under load the others' medians scatter and their Z
excused h03; the repetitions of a healthy node interleave the others'.
So the tests judge nodes with --threshold=25% (it was 50 % before the
spread test, and a loaded run put capped h03 at 52 % of the median).

Links are judged at --link-threshold=50% (the default, 25 %, is for real
nodes, each its own hardware): on this machine the pair of the shift's
middle round, which exchanges both ways at once through the test
cluster's shapers, runs at 0.57 to 0.78 of the best link with no fault
(fresh-clone CI runs and runs beside two busy loops), and at 40 % it was
flagged. A port shaped to a third (8 MiB/s) ran at 0.45 of a loaded best
link (16 MiB/s), too near that bound; a quarter (6 MiB/s) is at most
0.37. See docs/cluster.md, "Method"."""
from __future__ import annotations

import contextlib
import os
import re
import secrets
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from conftest import find_cbk, run_bounded, store_rows
from testbed_hooks import before_each_command, bind_over_cbk
from clusterbench.testbed import cluster as tc

pytestmark = [pytest.mark.skipif(tc.why_not() is not None, reason=f"no test cluster: {tc.why_not()}"),
              pytest.mark.long_module]

HOSTS = ["h01", "h02", "h03", "h04"]
RATE, SLOW_RATE = "200mbit", "50mbit"
# nodes at 25 %, not 50 %: a healthy node's median 40 % off the others is excused by the spread test
# (its repetitions interleave theirs), not by a wide relative bound; under load the capped h03
# was seen at 52 % of the median (its repetitions below those of h02 and h04, one overlapping h01's)
BOUNDS = ["--threshold=25%", "--link-threshold=50%"]
# small enough for CI: a link moves 4 MiB per round (4 windows of 4 x 256 KiB); Himeno 0.3 s a
# repetition (h03's cap is a share of each 10 ms period, so its slowness does not need a long run;
# 0.5 s cost the module 11 s and 11 CPU-s more)
QUICK = ["--only=himeno,links", "--one-at-a-time", "--repeat", "5", "--himeno.seconds=0.3", "--himeno.threads=1", "--links.size=256k", "--links.window=4",
         "--links.iterations=4", "--links.latency-iterations=20", *BOUNDS, "--quiet"]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    c = tc.up(tmp_path_factory.mktemp("testbed") / "tb", len(HOSTS), link=RATE)
    yield c
    tc.down(c.dir)


def configuration(view) -> list:
    """The environment differences but the machine-wide vm.* sysctls, which
    other work on this shared machine may change between two hosts'
    snapshots (the test hosts share the machine's kernel, and the suite runs beside them)."""
    return [d for d in view.env if not d.key.startswith("vm.")]


OPENMPI_CBK = Path(__file__).resolve().parent.parent / ".venv-openmpi" / "bin" / "cbk"


def cli(cluster, store: str, *args: str, timeout: float = 400, cbk: str | None = None,
        extra_env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, **cluster.env(), "CLUSTERBENCH_CBK": cbk or find_cbk(), "CLUSTERBENCH_DB": store,
           "COLUMNS": "200", **(extra_env or {})}
    return run_bounded([sys.executable, "-m", "clusterbench", *args], timeout=timeout, env=env)


def view_of(store: str, label: str):
    from clusterbench.analysis.cluster.analysis import analyse, thresholds_of
    from clusterbench.report.data import load_run
    from clusterbench.store import Store

    s = Store(store)
    run = load_run(s, s.resolve(label)[0])
    return analyse(run, **thresholds_of(run))


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> str:
    """One store for the module: the healthy and the faulty run, then their comparison."""
    return f"sqlite:///{tmp_path_factory.mktemp('store') / 'r.db'}"


# -- the planted faults ---------------------------------------------------

def shape(cluster, host: str, rate: str) -> None:
    h = cluster.host(host)
    tbf = ["root", "handle", "2:", "tbf", "rate", rate, "burst", "64kb", "latency", "20ms"]
    subprocess.run(["tc", "qdisc", "change", "dev", h.veth, *tbf], check=True)
    subprocess.run(["tc", "-n", h.ns, "qdisc", "change", "dev", "eth0", *tbf], check=True)


def set_shmmni(cluster, host: str, value: int) -> None:
    subprocess.run(["nsenter", f"--ipc={cluster.dir / 'ipc' / host}", "sh", "-c",
                    f"echo {value} > /proc/sys/kernel/shmmni"], check=True)


def capped_cgroup(name: str, controller: str, v2: dict[str, str], v1: dict[str, str],
                  v1_controller: str | None = None) -> Path:
    """A cgroup of `controller` with the limit files written: v2's (`v2`) where the
    unified hierarchy has the controller, else v1's (`v1`, in the order given, in the
    v1 hierarchy named v1_controller: v2's io is v1's blkio)."""
    root = Path("/sys/fs/cgroup")
    controllers = root / "cgroup.controllers"
    if controllers.exists() and controller in controllers.read_text().split():
        (root / "cgroup.subtree_control").write_text(f"+{controller}")
        base, files = root, v2
    else:
        base, files = root / (v1_controller or controller), v1
        if not all((base / f).exists() for f in v1):
            pytest.skip(f"no {controller} controller (cgroup v2 {', '.join(v2)} or v1 {', '.join(v1)}) "
                        "to confine a host with")
    d = base / name
    d.mkdir()
    for f, value in files.items():
        (d / f).write_text(value)
    return d


def cpu_cgroup(name: str, cpu_fraction: float) -> Path:
    """A cgroup capped at cpu_fraction of one CPU in 10 ms periods (v2 cpu.max, else v1 CFS quota)."""
    quota = str(int(cpu_fraction * 10000))
    return capped_cgroup(name, "cpu", {"cpu.max": f"{quota} 10000"},
                         {"cpu.cfs_period_us": "10000", "cpu.cfs_quota_us": quota})


@pytest.fixture
def slow_h03(cluster):
    """h03's processes (everything its ssh stand-in starts) in a CPU-capped cgroup."""
    group = cpu_cgroup(f"cbk-test-slow-{cluster.id}-{secrets.token_hex(2)}", 0.15)
    original = cluster.ssh.read_text()
    assert original.count("\nexec ") == 1   # the stand-in's one exec: spliced in before it, or nothing is capped
    cluster.ssh.write_text(original.replace(
        "\nexec ", f'\n[ "$h" = h03 ] && echo $$ > {group / "cgroup.procs"}\nexec ', 1))
    yield
    cluster.ssh.write_text(original)
    remove_cgroup(group)


def memory_cgroup(name: str, limit_bytes: int) -> Path:
    """A cgroup whose memory is capped at limit_bytes (v2 memory.max, else v1 memory.limit_in_bytes)."""
    return capped_cgroup(name, "memory", {"memory.max": str(limit_bytes)}, {"memory.limit_in_bytes": str(limit_bytes)})


def remove_cgroup(group: Path) -> None:
    for _ in range(50):   # the run's processes have ended; the cgroup empties as they are reaped
        try:
            group.rmdir()
            return
        except OSError:
            time.sleep(0.1)


H04_MEMORY_LIMIT = 1 << 30
H04_LOCKED_KIB = 64   # ulimit -l: RDMA registers no more than this; the other hosts keep the machine's


@pytest.fixture
def odd_h04(cluster, slow_h03):
    """Faults the suite was not tuned for, each of the environment: h04's
    login profile exports OMP_NUM_THREADS=1 (every user's OpenMP program
    runs on one core there; cbk sets its own thread count, so no figure
    shows it), h04's jobs land in a 1 GiB memory cgroup (a stale
    cgroup.conf: what fits on the others is killed there), and h04's jobs
    may lock 64 KiB of memory (a limits.conf line missing: InfiniBand
    registers no more; over TCP nothing shows it). Spliced into
    the ssh stand-in after slow_h03's splice, undone before it."""
    group = memory_cgroup(f"cbk-test-mem-{cluster.id}-{secrets.token_hex(2)}", H04_MEMORY_LIMIT)
    before = cluster.ssh.read_text()
    assert before.count("\nexec ") == 1
    cluster.ssh.write_text(before.replace("\nexec ", f'\n[ "$h" = h04 ] && export OMP_NUM_THREADS=1 && '
                                          f'ulimit -l {H04_LOCKED_KIB} && echo $$ > {group / "cgroup.procs"}\nexec ', 1))
    yield
    cluster.ssh.write_text(before)
    remove_cgroup(group)


@contextlib.contextmanager
def dropping_port(cluster, host: str, percent: int):
    """host's port drops `percent` % of the frames each way, at random: nftables on the test
    cluster's bridge, the switch side of host's cable (this kernel has no netem to lose packets
    with). In the host's own namespace an egress drop is no loss: TCP is told its send failed and
    retries without counting a retransmission."""
    if not shutil.which("nft"):
        pytest.skip("no nft (Debian package nftables, scripts/apt-packages-test.txt) to drop a port's packets with")
    veth, table = cluster.host(host).veth, f"cbkloss{cluster.id}{host}"
    rules = (f"table bridge {table} {{\n chain forward {{\n type filter hook forward priority 0;\n"
             f"  iifname {veth} numgen random mod 100 < {percent} drop\n"
             f"  oifname {veth} numgen random mod 100 < {percent} drop\n }}\n}}\n")
    subprocess.run(["nft", "-f", "-"], input=rules, text=True, check=True)
    try:
        yield
    finally:
        subprocess.run(["nft", "delete", "table", "bridge", table], check=True)


def _nft(ns: str | None, *args: str, rules: str | None = None) -> subprocess.CompletedProcess:
    """nft in the machine's network namespace, or in host namespace `ns` (a netdev table is its namespace's)."""
    where = ["nsenter", f"--net=/run/netns/{ns}"] if ns else []
    return subprocess.run([*where, "nft", *args], input=rules, text=True, capture_output=True)


@contextlib.contextmanager
def duplicating_port(cluster, host: str, percent: int):
    """host's port sends `percent` % of the frames each way twice, at random: an nftables `dup to`
    on the egress of each end of host's cable (the bridge's port towards it, its eth0 towards the
    bridge). This kernel's nftables has `dup` in the netdev family only (the bridge family's
    forward hook, where dropping_port drops, refuses it), so the duplicate leaves the device it
    is a copy of. Both tables go when it ends."""
    if not shutil.which("nft") or not shutil.which("nsenter"):
        pytest.skip("no nft (Debian package nftables) or nsenter to duplicate a port's packets with")
    h = cluster.host(host)
    table = f"cbkdup{cluster.id}{host}"
    ends = [(None, h.veth), (h.ns, "eth0")]

    def rules(device: str) -> str:
        return (f"table netdev {table} {{\n chain egress {{\n type filter hook egress device {device} priority 0;\n"
                f"  numgen random mod 100 < {percent} dup to {device}\n }}\n}}\n")
    check = _nft(None, "--check", "-f", "-", rules=rules(h.veth))
    if check.returncode:
        pytest.skip(f"this kernel's nftables cannot duplicate on a device's egress (netdev egress hook, "
                    f"Linux 5.16, and `dup to`): {check.stderr.strip()}")
    made = []
    try:
        for ns, device in ends:
            p = _nft(ns, "-f", "-", rules=rules(device))
            assert p.returncode == 0, p.stderr
            made.append(ns)
        yield
    finally:
        for ns in made:
            p = _nft(ns, "delete", "table", "netdev", table)
            assert p.returncode == 0, p.stderr


@contextlib.contextmanager
def slow_disk(cluster, host: str, scratch: Path, bytes_per_s: int):
    """host's `scratch` on a disk of its own that reads and writes bytes_per_s: an ext4 loop
    device, mounted over scratch in the mount namespace of each command the ssh stand-in starts
    on host (the other hosts keep the machine's disk there), host's processes in a blkio (v1) or
    io (v2) cgroup throttling that device. Everything goes with the commands' namespaces, the
    cgroup and the loop device when it ends."""
    if not (shutil.which("losetup") and shutil.which("mkfs.ext4")):
        pytest.skip("no losetup or mkfs.ext4 (util-linux, e2fsprogs) to give a host a disk of its own")
    image = scratch.parent / f"{host}-disk.img"
    with open(image, "wb") as f:
        f.truncate(64 << 20)
    loop = subprocess.run(["losetup", "-f", "--show", str(image)], check=True, capture_output=True,
                          text=True).stdout.strip()
    group, before = None, cluster.ssh.read_text()
    try:
        subprocess.run(["mkfs.ext4", "-q", "-F", loop], check=True)
        dev = os.stat(loop).st_rdev
        device = f"{os.major(dev)}:{os.minor(dev)}"
        group = capped_cgroup(f"cbk-test-disk-{cluster.id}-{secrets.token_hex(2)}", "io",
                              {"io.max": f"{device} rbps={bytes_per_s} wbps={bytes_per_s}"},
                              {"blkio.throttle.read_bps_device": f"{device} {bytes_per_s}",
                               "blkio.throttle.write_bps_device": f"{device} {bytes_per_s}"}, "blkio")
        assert before.count("\nexec ") == 1
        # the command (the stand-in's "$*") runs after the mount, in the namespace unshare made for it
        cluster.ssh.write_text(before.replace(
            "\nexec ", f'\n[ "$h" = {host} ] && echo $$ > {group / "cgroup.procs"} && '
                       f'set -- "mount {loop} {scratch} || exit 1; $*"\nexec ', 1))
        yield
    finally:
        cluster.ssh.write_text(before)
        if group:
            remove_cgroup(group)
        subprocess.run(["losetup", "-d", loop], check=True)
        image.unlink()


@contextlib.contextmanager
def confined_cpus(cluster, host: str):
    """host's processes in a cpuset cgroup of one CPU, the machine's last (a stale
    cgroup.conf giving a node's jobs fewer CPUs than it has); yields that CPU."""
    online = Path("/sys/devices/system/cpu/online").read_text().strip()
    if online in ("0", ""):
        pytest.skip("one CPU online: no fewer to give a host")
    cpu = online.replace("-", ",").split(",")[-1]
    v1_mems = Path("/sys/fs/cgroup/cpuset/cpuset.mems")
    group = capped_cgroup(f"cbk-test-cpus-{cluster.id}-{secrets.token_hex(2)}", "cpuset", {"cpuset.cpus": cpu},
                          {"cpuset.cpus": cpu, "cpuset.mems": v1_mems.read_text().strip() if v1_mems.exists() else "0"})
    before = cluster.ssh.read_text()
    assert before.count("\nexec ") == 1
    cluster.ssh.write_text(before.replace("\nexec ", f'\n[ "$h" = {host} ] && echo $$ > {group / "cgroup.procs"}\nexec ', 1))
    try:
        yield cpu
    finally:
        cluster.ssh.write_text(before)
        remove_cgroup(group)


@contextlib.contextmanager
def busy_neighbour(cluster, host: str, pids: Path):
    """A busy loop on host for as long as each command the ssh stand-in starts there runs (a
    runaway process, a job left on the node): in host's namespaces, beside the command, ended with
    it. Its pids are kept in `pids`; one left running (its command killed) is ended at the end."""
    before = cluster.ssh.read_text()
    assert before.count("\nexec ") == 1
    cluster.ssh.write_text(before.replace("\nexec ", f'\n[ "$h" = {host} ] && set -- "(while :; do :; done) & '
                                          f'echo \\$! >> {pids}; busy=\\$!; $*; rc=\\$?; kill \\$busy; exit \\$rc"\nexec ', 1))
    try:
        yield
    finally:
        cluster.ssh.write_text(before)
        for pid in (pids.read_text().split() if pids.exists() else []):
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(pid), signal.SIGKILL)


def shape_one_way(cluster, host: str, rate: str) -> None:
    """host's port shaped in what it receives only: the egress of its cable's switch end."""
    tbf = ["root", "handle", "2:", "tbf", "rate", rate, "burst", "64kb", "latency", "20ms"]
    subprocess.run(["tc", "qdisc", "change", "dev", cluster.host(host).veth, *tbf], check=True)


def set_mtu(cluster, host: str, mtu: int) -> None:
    subprocess.run(["ip", "-n", cluster.host(host).ns, "link", "set", "eth0", "mtu", str(mtu)], check=True)


TCP_MISTUNED = {"net.ipv4.tcp_rmem": "4096 8192 16384", "net.ipv4.tcp_wmem": "4096 8192 16384",
                "net.ipv4.tcp_congestion_control": "reno"}


def netns_sysctl(cluster, host: str, name: str, value: str | None = None) -> str:
    ns = cluster.host(host).ns
    if value is not None:
        subprocess.run(["ip", "netns", "exec", ns, "sysctl", "-q", "-w", f"{name}={value}"], check=True)
    return " ".join(subprocess.run(["ip", "netns", "exec", ns, "sysctl", "-n", name], check=True,
                                   capture_output=True, text=True).stdout.split())


def h02_said_as_its_send_side(view, said: str) -> None:
    """h02's 16 KiB TCP buffers limit its sends only as far as the RTT lets them (a window per
    round trip): on one machine a veth's RTT is tens of microseconds, stretched by the machine's
    load, and this kernel has no netem to give the test cluster a fixed one. Beside two busy loops
    at load 10 its sends ran at 0.19 to 0.32 of the best link, at load 5 at 0.47 and 0.53, one of
    them unflagged at 50 %. So: when every link h02 sends on is flagged the summary names its send
    side; a flagged link of h02's is otherwise listed alone; h02 is never called its port or its
    receive side, and no link that does not touch h02 is listed alone (h03's are h03's port)."""
    if all(lk.flagged for lk in view.links if lk.src == "h02"):
        assert "h02 sends slowly to every node" in said and "look at h02's send side" in said, said
    assert not re.search(r"h02's (port|receive)|link h0[134]->h0[134]\b", said), said


# -- the tests -----------------------------------------------------------

@pytest.mark.timeout(300)
def test_a_receiver_that_starts_its_clock_late_does_not_make_its_link_faster_than_the_wire(cluster, tmp_path):
    """A receiver descheduled on a loaded node starts a round's clock late;
    if its sender had already been streaming into the socket buffers, the
    link read faster than the wire (two suites side by side: 29.4 MiB/s on
    a 200 Mbit/s link, 23.8 MiB/s). cbk's test hook holds rank 1 (h02)
    300 ms before each round's clock: every link must stay at or below the
    shaped rate."""
    store = f"sqlite:///{tmp_path / 'late.db'}"
    # Hydra passes the environment on to every rank
    p = cli(cluster, store, "run", "cluster", "--only=links", "--repeat", "1", "--links.size=256k", "--links.window=4",
            "--links.iterations=4", "--links.latency=false", *BOUNDS, "--label", "late", "--quiet",
            extra_env={"CBK_TEST_LATE_RECEIVER_MS": "300"})
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    links = view_of(store, "late").links
    assert len(links) == 12
    assert all(lk.mib_s < 200e6 / 8 / 2**20 * 1.1 for lk in links), [(lk.src, lk.dst, lk.mib_s) for lk in links]


@pytest.mark.timeout(600)
def test_no_fault_flags_nothing(cluster, store, tmp_path):
    p = cli(cluster, store, "run", "cluster", *QUICK, "--label", "healthy", "--report-dir", str(tmp_path))
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    view = view_of(store, "healthy")
    assert view.hosts == HOSTS
    assert len(view.links) == 12 and all(lk.mib_s > 0 for lk in view.links)
    # every link near the shaped rate (200 Mbit/s = 23.8 MiB/s), none above it
    assert all(lk.mib_s < 200e6 / 8 / 2**20 * 1.1 for lk in view.links), [lk.mib_s for lk in view.links]
    assert [f.name for f in view.figures] == ["compute (Himeno), jacobi (time)"]
    assert not [f.flagged for f in view.figures if f.flagged]
    assert not view.flagged_links and configuration(view) == []
    # TCP resent nothing worth a word on a healthy link (the median of its repetitions: 0.0 in every probe)
    assert not view.lossy_links, [(lk.src, lk.dst, lk.retransmit_pct) for lk in view.links]
    assert all(lk.retransmit_pct is not None for lk in view.links), "no link_retransmits records: MPICH over TCP has them"
    # --one-at-a-time visits every node once a round, in an order drawn each round (a fixed order let a
    # load with the rounds' period fall on one node every round): 5 rounds in one order by chance: 24^-4
    first = store_rows(store, "select st.host, sa.repetition, min(sa.id) from samples sa join steps st "
                              "on sa.step_id = st.id join runs r on st.run_id = r.id "
                              "where r.label = 'healthy' and st.kernel = 'himeno' group by st.host, sa.repetition")
    rounds = {rep: [h for h, r, _ in sorted(first, key=lambda row: row[2]) if r == rep] for _, rep, _ in first}
    assert len(rounds) == 5 and all(sorted(hosts) == HOSTS for hosts in rounds.values()), rounds
    assert len({tuple(hosts) for hosts in rounds.values()}) > 1, rounds
    show = " ".join(cli(cluster, store, "show", "healthy").stdout.split())
    assert "Nothing flagged" in show or view.env, show
    assert not re.search(r"the median of 4 nodes|is slow|of the reference link", show), show


@pytest.mark.timeout(600)
def test_planted_faults_are_flagged_and_only_they(cluster, store, tmp_path, slow_h03, odd_h04):
    shape(cluster, "h03", SLOW_RATE)
    set_shmmni(cluster, "h03", 8192)
    tcp_before = {k: netns_sysctl(cluster, "h02", k) for k in TCP_MISTUNED}
    try:
        for k, v in TCP_MISTUNED.items():
            netns_sysctl(cluster, "h02", k, v)
        p = cli(cluster, store, "run", "cluster", *QUICK, "--label", "faulty", "--report", str(tmp_path / "report.html"))
    finally:
        shape(cluster, "h03", RATE)
        set_shmmni(cluster, "h03", 4096)
        for k, v in tcp_before.items():
            netns_sysctl(cluster, "h02", k, v)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    view = view_of(store, "faulty")
    # the slow node: h03, and only it
    (himeno,) = view.figures
    assert [nv.host for nv in himeno.flagged] == ["h03"], himeno.nodes
    # slower, past the 25 % threshold: under load 9.5 (two suites and a helper's cluster runs) the
    # 15 % cap came to 0.603 of the others' median, whose own share of the CPUs was small too
    assert himeno.flagged[0].ratio < 0.75, himeno.nodes
    # judged by its repetitions, each below every repetition of most other nodes: a load on the
    # machine that scatters the others' medians (and excused h03 by their Z) does not hide it
    assert himeno.flagged[0].apart_from >= 2, himeno.nodes
    # the slow port: the six links to and from h03; h02's as far as its RTT lets its buffers show;
    # nothing that touches neither
    links = {(lk.src, lk.dst): round(lk.mib_s, 2) for lk in view.links}
    flagged = {(lk.src, lk.dst) for lk in view.flagged_links}
    assert {(a, b) for a in HOSTS for b in HOSTS if a != b and "h03" in (a, b)} <= flagged, links
    assert all({"h02", "h03"} & {a, b} for a, b in flagged), links
    # the odd configuration: h03's shmmni, h02's TCP keys, h04's OpenMP variable and memory cgroup,
    # each on its one node
    differ = {d.key: (d.most, d.differ) for d in configuration(view)}
    assert set(differ) == {"kernel.shmmni", *(f"sysctl.{k}" for k in TCP_MISTUNED), "threads.env.OMP_NUM_THREADS",
                           "memory.cgroup_limit_bytes", "cpu.cgroup_quota_cpus", "limits.locked_memory_bytes"}, differ
    assert differ["limits.locked_memory_bytes"][1] == {"h04": "64 KiB"}, differ
    # h03's CPU cap named as the cause of its slow Himeno, not only seen in it
    assert differ["cpu.cgroup_quota_cpus"] == ("none", {"h03": "0.15"}), differ
    assert differ["kernel.shmmni"] == ("4096", {"h03": "8192"}), differ
    assert differ["threads.env.OMP_NUM_THREADS"] == ("(absent)", {"h04": "1"}), differ
    assert differ["memory.cgroup_limit_bytes"][1] == {"h04": "1 GiB"}, differ   # H04_MEMORY_LIMIT, as a person reads it
    assert all(set(differ[f"sysctl.{k}"][1]) == {"h02"} for k in TCP_MISTUNED), differ
    assert differ["sysctl.net.ipv4.tcp_congestion_control"][1]["h02"] == "reno", differ
    # said in sentences, in show and in the report: h03's port, h02's send side and keys, nothing else
    show = " ".join(cli(cluster, store, "show", "faulty").stdout.split())   # rich wraps the paragraph
    assert re.search(r"h03: compute \(Himeno\), jacobi \(time\) \d+ % below the median of 4 nodes", show), show
    assert "every link to and from h03 is slow (6 links" in show and "look at h03's port or cable" in show, show
    # each key in words (environment/key_words.py)
    assert "shared memory segments, maximum (kernel.shmmni): h03 has 8192, the other nodes 4096" in show
    assert "sysctl net.ipv4.tcp_congestion_control: h02 has reno" in show, show
    assert "sysctl net.ipv4.tcp_wmem: h02 has 4096 8192 16384" in show, show
    assert "threads environment variable OMP_NUM_THREADS: h04 has 1, the other nodes (absent)" in show, show
    assert "memory limit of the cgroup: h04 has 1 GiB" in show, show
    assert "locked memory limit (ulimit -l): h04 has 64 KiB" in show, show
    assert "CPU time the cgroup allows, in CPUs (its CPU quota): h03 has 0.15, the other nodes none" in show, show
    # env --diff between two hosts of the run: h02's network keys, with both values (#40)
    diff = cli(cluster, store, "env", "--diff", "faulty@h01", "faulty@h02")
    assert diff.returncode == 0, diff.stderr
    diff_lines = [" ".join(line.split()) for line in diff.stdout.splitlines()]
    for k, v in TCP_MISTUNED.items():   # the key in words beside its values, the stored key on the line below
        assert any(f"sysctl {k}" in line and v in line for line in diff_lines), (k, diff.stdout)
        assert any(f"sysctl.{k}" in line for line in diff_lines), (k, diff.stdout)
    assert not any("kernel.shmmni" in line for line in diff_lines), diff.stdout   # h03's, not h02's
    from clusterbench.analysis.cluster.findings import paragraph

    said = paragraph(view)   # what show says above its tables
    # no sentence about h01 or h04 (a link h02->h04 listed alone is h02's: h02_said_as_its_send_side)
    assert not re.search(r"(Found: |; )h0[14]: |h0[14]'s|h0[14] (sends|receives)", said), said
    h02_said_as_its_send_side(view, said)
    # h03's shaper drops what overflows its queue (TCP resent 4 to 11 % into it in a probe): that is its
    # slow port, said once, not a second fault of packet loss
    assert "resends" not in said, said
    html = (tmp_path / "report.html").read_text()
    assert 'class="heatmap"' in html and html.count('stroke: #ff0000') + html.count('stroke:#ff0000') >= 6
    assert "kernel.shmmni" in html and "look at h03&#x27;s port or cable" in html

    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium:
        shot = tmp_path / "report.png"
        r = subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                            f"--user-data-dir={tmp_path / 'profile'}", "--window-size=1200,2400",
                            f"--screenshot={shot}", (tmp_path / "report.html").as_uri()],
                           capture_output=True, text=True, timeout=120)
        assert r.returncode == 0 and shot.stat().st_size > 20000, r.stderr[-2000:]
        if os.environ.get("CLUSTERBENCH_KEEP_SHOT"):
            shutil.copy(shot, os.environ["CLUSTERBENCH_KEEP_SHOT"])


def test_compare_of_the_faulty_and_the_healthy_run_shows_what_a_repair_fixed(cluster, store):
    from clusterbench.store import Store

    labels = {r.label for r in Store(store).list_runs()}
    if labels != {"healthy", "faulty"}:
        pytest.skip("needs the two runs of the tests above (run the module)")
    out = " ".join(cli(cluster, store, "compare", "faulty", "healthy").stdout.split())
    # before = the faulty run: the slow node and every flagged link are fixed, nothing new
    gone = 1 + len(view_of(store, "faulty").flagged_links)
    assert re.search(rf"{gone} flags? gone: [^;]*h03: compute \(Himeno\), jacobi \(time\)", out), out
    assert "0 new." in out and "h02->h03" in out and "fixed" in out


@pytest.mark.timeout(600)
def test_with_open_mpi_the_link_faults_are_named_alike(cluster, tmp_path):
    # the link faults again, measured by the Open MPI build (its TCP transport, not MPICH's): the
    # same sentences, and no per-node figure to slow the run (--only=links)
    if not os.access(OPENMPI_CBK, os.X_OK):
        pytest.skip(f"no Open MPI cbk at {OPENMPI_CBK} (scripts/setup.sh --test builds it)")
    store = f"sqlite:///{tmp_path / 'ompi.db'}"
    shape(cluster, "h03", SLOW_RATE)
    tcp_before = {k: netns_sysctl(cluster, "h02", k) for k in TCP_MISTUNED}
    try:
        for k, v in TCP_MISTUNED.items():
            netns_sysctl(cluster, "h02", k, v)
        p = cli(cluster, store, "run", "cluster", *[a for a in QUICK if a != "--only=himeno,links"], "--only=links",
                "--label", "ompi", cbk=str(OPENMPI_CBK))
    finally:
        shape(cluster, "h03", RATE)
        for k, v in tcp_before.items():
            netns_sysctl(cluster, "h02", k, v)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    view = view_of(store, "ompi")
    differ = {d.key: d.differ for d in configuration(view)}
    assert differ == {f"sysctl.{k}": {"h02": v} for k, v in TCP_MISTUNED.items()}, differ
    from clusterbench.analysis.cluster.findings import link_sentences

    said = link_sentences(view)
    assert any(x.startswith("every link to and from h03 is slow") and "h03's port" in x for x in said), said
    # Open MPI's TCP transport: its sockets are counted as MPICH's are (link_retransmits)
    assert all(lk.retransmit_pct is not None for lk in view.links), [(lk.src, lk.dst) for lk in view.links]
    h02_said_as_its_send_side(view, "; ".join(said))


@pytest.mark.timeout(300)
def test_a_port_that_drops_packets_is_named_by_what_tcp_resent(cluster, tmp_path):
    """A fault the suite was not tuned for: h04's cable losing 3 % of its frames each way. TCP
    recovers a lost segment within a microsecond round trip, so every link still ran at 22.2 to 22.9
    MiB/s of the 23.8 MiB/s shaper (the best of 5 repetitions) and its median latency among the
    others': before linkmatrix counted TCP's retransmissions (link_retransmits), the run said
    "Nothing flagged". Now every link that touches h04 had TCP send its bytes again (1.3 to 3.6 % with
    2 % loss, 0.0 on every healthy link in every probe; the bound is 1 %), and the summary names h04's
    port. Under load a lossy link also runs slow (TCP's rate falls with loss times the round trip),
    and the summary then names the same port as slow: either way, h04's port and nothing else."""
    store = f"sqlite:///{tmp_path / 'lossy.db'}"
    with dropping_port(cluster, "h04", 3):
        p = cli(cluster, store, "run", "cluster", *[a for a in QUICK if a != "--only=himeno,links"], "--only=links",
                "--label", "lossy")
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    view = view_of(store, "lossy")
    retransmits = {(lk.src, lk.dst): lk.retransmit_pct for lk in view.links}
    h04s = {(a, b) for a in HOSTS for b in HOSTS if a != b and "h04" in (a, b)}
    assert {(lk.src, lk.dst) for lk in view.links if lk.lossy or lk.flagged} == h04s, retransmits
    from clusterbench.analysis.cluster.findings import paragraph

    said = paragraph(view)
    assert re.search(r"every link to and from h04 (resends|is slow) \(6 links", said), said
    assert "look at h04's port or cable" in said, said
    assert not re.search(r"h0[123]'s|h0[123] (sends|receives)|link h0[123]->h0[123]\b", said), said
    show = " ".join(cli(cluster, store, "show", "lossy").stdout.split())
    assert "h04's port or cable" in show, show
    if view.lossy_links:   # the link table marks them
        assert "~ = TCP resent 0.25 % or more of its bytes" in show, show


@pytest.mark.timeout(300)
def test_a_port_that_duplicates_packets_is_named_by_the_segments_delivered_twice(cluster, tmp_path):
    """A fault the suite was not tuned for: h04's cable sending 10 % of its frames twice each way.
    The receiver drops the second copy, so every link ran at full rate, TCP resent nothing, and the
    run said "Nothing flagged". The receiver tells the sender of each copy with a D-SACK, which
    linkmatrix counts (link_retransmits' tcp_segments_duplicated): every link that touches h04 had
    5.3 to 23 % of its segments delivered twice a repetition (three runs; the bound is 0.5 %, healthy
    links 0.0, at most 0.03 % under load), and the summary names h04's port. At 3 % (2.2 to 5.1 %
    a link) the copies made at the egress hook, ahead of the shaper's full queue, were dropped in
    bursts: a link from h04 came to 0.03 to 7.5 % a repetition, a median of 0.41 % (a CI run)."""
    store = f"sqlite:///{tmp_path / 'duplicating.db'}"
    with duplicating_port(cluster, "h04", 10):
        p = cli(cluster, store, "run", "cluster", *[a for a in QUICK if a != "--only=himeno,links"], "--only=links",
                "--label", "duplicating")
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    view = view_of(store, "duplicating")
    twice = {(lk.src, lk.dst): (lk.duplicate_pct, lk.retransmit_pct, lk.mib_s) for lk in view.links}
    h04s = {(a, b) for a in HOSTS for b in HOSTS if a != b and "h04" in (a, b)}
    assert {(lk.src, lk.dst) for lk in view.links if lk.duplicating} == h04s, twice
    from clusterbench.analysis.cluster.findings import paragraph

    said = paragraph(view)
    assert re.search(r"every link to and from h04 delivers segments twice \(6 links: the network delivered "
                     r"[0-9.]+( to [0-9.]+)? % of their segments twice\): look at h04's port or its switch", said), said
    assert not re.search(r"h0[123]'s|h0[123] (sends|receives)|link h0[123]->h0[123]\b", said), said
    show = " ".join(cli(cluster, store, "show", "duplicating").stdout.split())
    assert "look at h04's port or its switch" in show, show
    assert "+ = the network delivered 0.5 % or more of its segments twice" in show, show
    report = tmp_path / "duplicating.md"
    assert cli(cluster, store, "report", "duplicating", "-o", str(report)).returncode == 0
    text = " ".join(report.read_text().split())
    assert "every link to and from h04 delivers segments twice" in text and "look at h04's port or its switch" in text
    assert "of its segments twice (duplicated packets)" in text, text   # each link listed under the matrix


@pytest.mark.timeout(300)
def test_a_busy_neighbour_a_one_way_port_and_an_odd_mtu_are_each_named_on_their_node(cluster, tmp_path):
    """Faults the suite was not tuned for, one on each of three nodes (probed 2026-12-07). A busy
    loop on h03 beside its commands: on this machine's two shared cores it slowed nothing the run
    could single out (Himeno 0.94 of the median) and nothing was said; the snapshot now names the
    processes runnable through its window (processes.busy). h04's eth0 at MTU 1280: every link at
    the others' rate, and no key held it (network.py lists hardware interfaces, and the machine's
    /sys is not h04's); now host_address.mtu. h02's port shaped in what it receives only: found
    before, as one direction (3 links at 0.25 of the best), and kept so."""
    store = f"sqlite:///{tmp_path / 'neighbour.db'}"
    try:
        with busy_neighbour(cluster, "h03", tmp_path / "busy.pids"):
            set_mtu(cluster, "h04", 1280)
            shape_one_way(cluster, "h02", SLOW_RATE)
            p = cli(cluster, store, "run", "cluster", *[a for a in QUICK if a != "--only=himeno,links"], "--only=links",
                    "--label", "neighbour")
    finally:
        shape_one_way(cluster, "h02", RATE)
        set_mtu(cluster, "h04", 1500)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    view = view_of(store, "neighbour")
    differ = {d.key: (d.most, d.differ) for d in configuration(view)}
    assert set(differ) == {"processes.busy", "host_address.mtu"}, differ
    most, busy = differ["processes.busy"]
    assert most == "none" and set(busy) == {"h03"} and re.fullmatch(r"sh \(pid \d+, \d+ % of a CPU\)", busy["h03"]), busy
    assert differ["host_address.mtu"] == ("1500", {"h04": "1280"}), differ
    # h02's receive side: the three links into it, said as one direction
    assert {(lk.src, lk.dst) for lk in view.flagged_links} == {(a, "h02") for a in HOSTS if a != "h02"}, \
        [(lk.src, lk.dst, round(lk.mib_s, 2)) for lk in view.links]
    show = " ".join(cli(cluster, store, "show", "neighbour").stdout.split())
    assert "h02 receives slowly from every node (3 links" in show and "look at h02's receive side" in show, show
    assert "h02's port" not in show, show
    assert "processes keeping a CPU busy beside the job (runnable through the snapshot): h03 has sh (pid" in show, show
    assert "MTU of the interface holding the node's address (its host name's): h04 has 1280, the other nodes 1500" in show, show


@pytest.mark.timeout(300)
@pytest.mark.parametrize("family", ["mpich", "openmpi"])
def test_ranks_waiting_on_a_slow_link_sleep_instead_of_spinning(cluster, tmp_path, family):
    # linkmatrix's waits (kernels/core/patient_wait.c): two ranks that move 64 MiB each way over a
    # 200 Mbit/s link wait on it about 3 s; a spinning wait costs 2 CPU-s a second on two cores (1 or
    # more under load, which can only lower it), a patient one little beyond MPI's start-up
    import resource

    cbk = str(OPENMPI_CBK) if family == "openmpi" else find_cbk()
    if not os.access(cbk, os.X_OK):
        pytest.skip(f"no Open MPI cbk at {OPENMPI_CBK} (scripts/setup.sh --test builds it)")
    hostfile = tmp_path / "hosts"
    hostfile.write_text("h01\nh04\n")
    launcher = (["mpiexec", "--hostfile", str(hostfile), "-n", "2", "--map-by", "node"] if family == "openmpi"
                else ["mpiexec", "-f", str(hostfile), "-n", "2", "-ppn", "1"])
    if family == "openmpi":
        launcher[0] = str(OPENMPI_CBK.parent / "mpiexec")
        launcher += ["--allow-run-as-root"] if os.geteuid() == 0 else []

    def timed(*args: str) -> tuple[float, float]:
        """(wall s, CPU-s of the launch and its ranks)"""
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.monotonic()
        p = subprocess.run([*launcher, cbk, "linkmatrix", *args], capture_output=True, text=True, timeout=240,
                           env={**os.environ, **cluster.env()})
        wall = time.monotonic() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        assert p.returncode == 0, p.stderr[-3000:]
        return wall, after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime

    # the same launch moving almost nothing: what starting MPI and the ranks costs, which the wait's
    # CPU is judged without. Spinning ranks cost 2 CPU-s a second waited; patient ones, with MPICH on a
    # quiet VM, 0.45 to 0.55 (their polls and Hydra's proxies, 2026-12-06: 1.4 to 1.6 CPU-s in 3.0 s),
    # which failed the bound of half the wall it had: one CPU of the two is the line between them
    start_wall, start_cpu = timed("--size=1k", "--window=1", "--iterations=1", "--latency-iterations=1")
    wall, cpu = timed("--size=1m", "--window=4", "--iterations=16", "--latency-iterations=10")
    waited, spent = wall - start_wall, cpu - start_cpu
    assert waited > 2.0, f"the link did not bind ({wall:.1f} s, {start_wall:.1f} s to start): nothing was waited for"
    assert spent < 1.0 * waited, f"{spent:.1f} CPU-s beyond start-up in {waited:.1f} s of waiting: the ranks spun"


@pytest.mark.timeout(120)
def test_a_host_listed_by_its_alias_and_its_address_is_refused_as_one_node(cluster, tmp_path):
    """A host file naming h01 and its address 198.19.0.2 had the link matrix put two ranks on h01:
    their exchange in its own memory (119 MiB/s) became the class's best link, every real link was
    judged against it, and the run named h02's and h03's ports as slow. The snapshots say which
    entries are one node (the host name each gives itself): refused there, with both names, before
    any step runs."""
    store = f"sqlite:///{tmp_path / 'alias.db'}"
    hostfile = tmp_path / "hosts"
    hostfile.write_text(f"h01\nh02\nh03\n{cluster.host('h01').address}\n")
    p = cli(cluster, store, "run", "cluster", "--hostfile", str(hostfile), "--only=links", "--repeat", "1",
            "--label", "alias", "--quiet", timeout=100)
    assert p.returncode == 2, p.stdout[-3000:] + p.stderr[-3000:]
    said = " ".join(p.stderr.split())
    assert f"h01 and {cluster.host('h01').address} are one node (each says its host name is h01)" in said, said
    # the run is kept as failed with that reason, and no step was begun
    assert store_rows(store, "select status from runs") == [("failed",)]
    assert store_rows(store, "select count(*) from steps") == [(0,)]


@pytest.mark.timeout(300)
def test_a_slow_disk_of_its_own_singles_out_its_node(cluster, tmp_path):
    """Faults the suite was not tuned for. h02's jobs confined to one CPU (a cpuset cgroup): the
    CPUs online are the machine's, so only the CPUs its cpuset gives jobs (cpu.cgroup_cpus) show it.
    h04's scratch on a disk of its own, throttled to 4 MiB/s
    (a loop device under a blkio cgroup, docs/cluster.md). Its write and cold read are flagged on
    h04, worse. The other three read the machine's one disk, and their spread is that disk's: before
    a node was judged unless every node shared one device, h03's cold read was flagged 73 % above the
    median (its repetitions clear of h04's and of one other node's)."""
    store = f"sqlite:///{tmp_path / 'disk.db'}"
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    with slow_disk(cluster, "h04", scratch, 4 << 20), confined_cpus(cluster, "h02") as cpu:
        p = cli(cluster, store, "run", "cluster", "--only=seqio", "--one-at-a-time", "--repeat", "3",
                "--seqio.file-size=4m", f"--scratch={scratch}", *BOUNDS, "--label", "disk", "--quiet")
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    view = view_of(store, "disk")
    figures = {f.name: f for f in view.figures}
    assert set(figures) == {"disk in the scratch directory (seqio), write (fsync)",
                            "disk in the scratch directory (seqio), read (cold)"}, figures
    for f in figures.values():
        assert [(nv.host, nv.ratio < 0.5) for nv in f.flagged] == [("h04", True)], f.nodes
        assert not f.shared_device and set(f.device_sharers) == {"h01", "h02", "h03"}, f
    differ = {d.key: d.differ for d in configuration(view)}
    # the node given one CPU (seqio's figures are its disk's, shared with h01 and h03: not judged)
    assert differ["cpu.cgroup_cpus"] == {"h02": cpu}, differ
    assert differ[f"target.{scratch}.device"] == {"h04": os.path.basename(
        differ[f"target.{scratch}.source"]["h04"])}, differ
    from clusterbench.analysis.cluster.findings import paragraph

    said = paragraph(view)
    assert re.search(r"h04: disk in the scratch directory \(seqio\), read \(cold\) \d+ % below the median of 4 nodes \([^)]*, worse\)", said), said
    assert not re.search(r"h0[123]: seqio", said), said


@pytest.fixture(scope="module")
def run_without_cbk_on_h03(cluster, tmp_path_factory):
    """The store of a run whose h03 has no cbk that runs
    (a library missing: the loader's exit 127), the link matrix and the
    scaling steps asked for: each is skipped, as a job over every node waits
    on h03's rank forever."""
    folder = tmp_path_factory.mktemp("no-cbk")
    broken = folder / "cbk"
    broken.write_text("#!/bin/sh\necho 'cbk: error while loading shared libraries: libmpi.so.12: cannot open shared "
                      "object file: No such file or directory' >&2\nexit 127\n")
    broken.chmod(0o755)
    store = f"sqlite:///{folder / 'r.db'}"
    cbk = find_cbk()
    with before_each_command(cluster, bind_over_cbk("h03", broken, cbk)):
        p = cli(cluster, store, "run", "cluster", "--only=links,scaling", "--links.size=64k", "--repeat", "1",
                "--label", "no-cbk", "--quiet", timeout=150, cbk=cbk)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    return store


def test_a_node_without_cbk_is_one_finding_not_sixteen_keys(cluster, run_without_cbk_on_h03):
    """h03's snapshot states each of cbk's fields as unreadable (`cbk.mpi_error`, ...) where the
    others state a value: the summary listed 16 `cbk.*` keys that differ, and the one fact, h03
    has no cbk, was lost among them. A node's cbk is now one key."""
    store = run_without_cbk_on_h03
    view = view_of(store, "no-cbk")
    cbk_keys = [d for d in view.env if d.key.startswith("cbk")]
    assert [d.key for d in cbk_keys] == ["cbk"], [d.key for d in cbk_keys]
    assert list(cbk_keys[0].differ) == ["h03"] and re.fullmatch(
        r"none \(.* exited with status 127: cbk: error while loading shared libraries: libmpi\.so\.12: .*\)",
        cbk_keys[0].differ["h03"]), cbk_keys[0].differ
    assert re.match(r"\S+, MPI MPICH ", cbk_keys[0].most), cbk_keys[0].most   # the others' version and MPI
    from clusterbench.analysis.cluster.findings import paragraph

    text = paragraph(view)
    assert text.count("cbk build (version, MPI, compiler): h03 has none (") == 1 and "cbk.version" not in text and "cbk.mpi" not in text, text


def test_a_run_whose_link_matrix_was_skipped_says_so_in_show_list_and_the_report(cluster, run_without_cbk_on_h03,
                                                                                 tmp_path):
    """The link matrix and every scaling step skipped for h03, the run was
    stored "ok" with no word of it: `list` said ok, and `show` and the
    report opened "ok". The run is still ok (each node measured what it
    was asked to), with a warning that says what was skipped and why."""
    store = run_without_cbk_on_h03
    (status, message), = store_rows(store, "select status, message from runs")
    assert status == "ok" and re.fullmatch(
        r"part of the suite skipped: link matrix \(mpiGraph shift pattern\) and \d+ scaling steps: "
        r"cbk cannot run on every node \(h03: .*exited with status 127: .*libmpi\.so\.12.*\)", message), message
    flat = " ".join(message.split())
    shown = cli(cluster, store, "show", "no-cbk")
    assert shown.returncode == 0 and " ".join(shown.stdout.split()).startswith(
        f"Cluster run 1 (no-cbk): ok, "), shown.stdout[:500]
    assert f"): {flat[:60]}" in " ".join(shown.stdout.split()), shown.stdout[:800]
    # the summary says it once, not once per step: "link matrix (...) and 8 scaling steps skipped: ..."
    assert re.search(r"not measured: link matrix \(mpiGraph shift pattern\) and \d+ scaling steps skipped: cbk cannot "
                     r"run on every node \(h03", " ".join(shown.stdout.split())), shown.stdout[:1500]
    listed = cli(cluster, store, "list", extra_env={"COLUMNS": "400"})
    assert re.search(r"│ ok \(warning\) +│", listed.stdout), listed.stdout
    assert "warning: part of the suite skipped: link matrix" in listed.stdout, listed.stdout
    report = tmp_path / "r.md"
    assert cli(cluster, store, "report", "no-cbk", "-o", str(report)).returncode == 0
    text = report.read_text()
    assert "## Run 1 (no-cbk): ok\n\npart of the suite skipped: link matrix (mpiGraph shift pattern) and " in text, text


def bytes_moved(ns: str) -> int:
    """What a test host's eth0 has sent and received, in bytes."""
    import json

    out = subprocess.run(["ip", "-n", ns, "-j", "-s", "link", "show", "dev", "eth0"], capture_output=True, text=True)
    stats = json.loads(out.stdout)[0]["stats64"]
    return int(stats["rx"]["bytes"]) + int(stats["tx"]["bytes"])


def stop_links_while_h03_moves(cluster, store: str, moved_bytes: int, *args: str, cbk: str | None = None,
                               only: str = "links"):
    """`run cluster --only=ONLY ARGS` with CBK_WAIT_NOTE_S=2 while every process on h03 is
    SIGSTOPped once its namespace has moved moved_bytes (MPI_Init and the set-up's host names
    move KiBs), as a node hung in the kernel or frozen by its hypervisor: the CLI's result, and
    whether h03 was stopped. h03 resumes at the end; its stopped processes are the fault's own,
    and end on their own once resumed (their launcher's socket is closed)."""
    ns, stopped = cluster.host("h03").ns, []
    before = bytes_moved(ns)

    def stop_h03_once_it_moved() -> None:
        for _ in range(1200):
            if bytes_moved(ns) - before > moved_bytes:
                for p in subprocess.run(["ip", "netns", "pids", ns], capture_output=True, text=True).stdout.split():
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(int(p), signal.SIGSTOP)
                        stopped.append(int(p))
                return
            time.sleep(0.05)

    stopper = threading.Thread(target=stop_h03_once_it_moved, daemon=True)
    stopper.start()
    try:
        p = cli(cluster, store, "run", "cluster", f"--only={only}", "--repeat", "1", *args, *BOUNDS, "--quiet",
                timeout=150, cbk=cbk, extra_env={"CBK_WAIT_NOTE_S": "2"})
    finally:
        stopper.join(timeout=70)
        for pid in stopped:   # the node resumes
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGCONT)
    for _ in range(100):   # resumed, h03's proxy and rank see their launcher gone and end
        if not subprocess.run(["ip", "netns", "pids", ns], capture_output=True, text=True).stdout.split():
            break
        time.sleep(0.1)
    return p, bool(stopped)


@pytest.mark.timeout(200)
def test_a_node_that_stops_mid_run_ends_the_run_in_its_step_timeout_and_the_summary_says_what_was_not_measured(
        cluster, tmp_path):
    """A fault the suite was not tuned for: h03 stops answering in the middle of the link matrix (every
    process there SIGSTOPped once its rank moves the rounds' bytes). Every other rank waits on h03's
    for ever: without --step-timeout the run hangs (there is no default), with it the step is ended
    whole at the bound and the run ends failed. Its summary said "Nothing flagged" of the links it
    never measured; it now says the link matrix was not measured and why, naming the rank and node
    the others waited on (their patient waits say so past CBK_WAIT_NOTE_S; before, a timed-out link
    matrix named no node). What the launcher started here is gone."""
    store = f"sqlite:///{tmp_path / 'stopped.db'}"
    # the rounds move MiBs over h03's link: stopped past 2 MiB, its rank is in a round, where the
    # other ranks' waits are the patient ones
    p, stopped = stop_links_while_h03_moves(cluster, store, 2 << 20, "--links.size=1m", "--links.iterations=20",
                                            "--step-timeout", "10", "--label", "stopped")
    assert stopped, "h03's rank was never seen streaming"
    assert p.returncode == 1, p.stdout[-3000:] + p.stderr[-3000:]
    from clusterbench.analysis.cluster.findings import paragraph

    said = paragraph(view_of(store, "stopped"))
    assert "Nothing flagged" not in said, said
    assert re.search(r"not measured: link matrix \(mpiGraph shift pattern\) failed: timed out", said), said
    assert re.search(r"rank \d \(h0[124]\) waited \d+ s on rank 2 \(h03\)", said), said
    assert store_rows(store, "select status from runs") == [("failed",)]
    assert not subprocess.run(["ip", "netns", "pids", cluster.host("h03").ns], capture_output=True,
                              text=True).stdout.split()


@pytest.mark.timeout(200)
def test_a_node_stopped_in_the_timed_latency_exchanges_is_named_by_the_ranks_that_wait_on_it(cluster, tmp_path):
    """h03 stopped in the link matrix's latency part: rounds of one 4 KiB message, then a million
    8-byte exchanges a shift (minutes), so past 256 KiB moved its rank is in the first shift's timed
    MPI_Sendrecv loop. Those exchanges are timed one by one and stay plain MPI_Sendrecv, so the
    ranks held there said nothing, and the step ended by --step-timeout named no node. The stall
    watch (kernels/core/patient_wait.h), a thread that sees the loop's times stop changing, now has
    the ranks that exchange with h03 say so, naming it.

    The step's 12 s must hold the way to the loop, the loop until h03 is stopped, and the watch's
    note, which comes 2 to 4 s (one to two CBK_WAIT_NOTE_S) after the loop stops. h03's link moves
    under 50 KiB before the loop (environment capture, MPI_Init, host names, the rounds), so 256 KiB
    is past it by 4 times and is reached early in the loop: about 200 KiB of the loop's 8-byte
    exchanges, at most 2.6 s after the step started in 10 runs beside two busy loops and a second
    pytest. The 1 MiB it waited for before took up to 10.4 s there (the exchanges crawl when their
    ranks share two busy cores), and with the note that was past 12 s: 2 of those 10 steps timed
    out naming no node."""
    store = f"sqlite:///{tmp_path / 'stopped-latency.db'}"
    p, stopped = stop_links_while_h03_moves(cluster, store, 256 << 10, "--links.size=4k", "--links.window=1",
                                            "--links.iterations=1", "--links.latency-iterations=1000000",
                                            "--step-timeout", "12", "--label", "stopped-latency")
    assert stopped, "h03's rank was never seen exchanging"
    assert p.returncode == 1, p.stdout[-3000:] + p.stderr[-3000:]
    (message,) = [m for name, m in store_rows(store, "select name, message from steps") if name.startswith("link")]
    assert "timed out" in message, message
    assert re.search(r"rank \d \(h0[124]\) waited \d+ s in the timed latency exchanges of shift 1, "
                     r"receiving from rank 2 \(h03\)", message), message
    assert not subprocess.run(["ip", "netns", "pids", cluster.host("h03").ns], capture_output=True,
                              text=True).stdout.split()


@pytest.mark.timeout(200)
def test_a_node_stopped_in_a_timed_collective_is_named_by_the_lines_its_ranks_leave_out(cluster, tmp_path):
    """h03 stopped in the scaling step's timed allreduce (a million of 64 KiB, stopped once 2 MiB
    has crossed its link; h01 and h03 only, so one step of two nodes). No rank can know which rank
    of a collective has not arrived (the stall watch may not ask MPI: kernels/core/patient_wait.h),
    so h01's note said only "a rank that does not say so holds it", and the step ended by
    --step-timeout named no node. The notes now say whom the collective is of, and the step's
    message names the rank that said nothing and h03, none of whose ranks did."""
    store = f"sqlite:///{tmp_path / 'stopped-collective.db'}"
    hostfile = tmp_path / "hosts"
    hostfile.write_text("h01\nh03\n")
    p, stopped = stop_links_while_h03_moves(cluster, store, 2 << 20, "--hostfile", str(hostfile),
                                            "--scaling.op=allreduce", "--scaling.sizes=64k",
                                            "--scaling.iterations=1000000", "--scaling.min-iterations=1000000",
                                            "--scaling.warmup=2", "--step-timeout", "12", "--label",
                                            "stopped-collective", only="scaling")
    assert stopped, "h03's rank was never seen in the allreduce"
    assert p.returncode == 1, p.stdout[-3000:] + p.stderr[-3000:]
    messages = [m for name, m in store_rows(store, "select name, message from steps") if name.startswith("scaling")]
    assert any(m.startswith("timed out") and "; rank 1 said nothing, nor any rank on h03: the likely holder of the "
               "others' waits; rank 0 (h01) waited" in m for m in messages), messages
    assert not subprocess.run(["ip", "netns", "pids", cluster.host("h03").ns], capture_output=True,
                              text=True).stdout.split()


def stopped_state(pid: str) -> bool:
    """Whether the process stops (state T in /proc/PID/stat; a SIGSTOP takes a moment), not
    ended or a zombie."""
    for _ in range(50):
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            return False
        if state in ("T", "t"):
            return True
        if state in ("Z", "X"):
            return False
        time.sleep(0.02)
    return False


def processes_of_store(store: str) -> list:
    """The processes whose environment names this run's store: the CLI's launchers, their
    ssh stand-ins and proxies, and every rank (the launcher passes its environment on)."""
    import psutil

    out = []
    for p in psutil.process_iter():
        with contextlib.suppress(psutil.Error):
            if p.environ().get("CLUSTERBENCH_DB") == store and p.status() != psutil.STATUS_ZOMBIE:
                out.append(p)
    return out


def _cmdline(pid: str) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def himeno_runs_on(cluster, host: str) -> dict[str, str]:
    """The processes of the host's namespace (pid: comm) while its cbk runs Himeno, else {}:
    Himeno's rank, not a cbk the node's environment snapshot runs (stopped there, the snapshot's
    launch was the one ended as stalled, and Himeno then ran well: a CI run)."""
    pids = subprocess.run(["ip", "netns", "pids", cluster.host(host).ns], capture_output=True, text=True).stdout.split()
    comms = {p: Path(f"/proc/{p}/comm").read_text().strip() for p in pids if Path(f"/proc/{p}/comm").exists()}
    return comms if any(c == "cbk" and b"himeno" in _cmdline(p) for p, c in comms.items()) else {}


def stop_all(comms: dict[str, str], stopped: list[int], ranks: list[str]) -> None:
    """SIGSTOPs every process of comms (pid: comm), noting them in stopped, and in ranks the cbk
    seen stopped (not one that had ended as it was found)."""
    for p in comms:
        with contextlib.suppress(ProcessLookupError):
            os.kill(int(p), signal.SIGSTOP)
            stopped.append(int(p))
    ranks.extend(p for p, comm in comms.items() if comm == "cbk" and stopped_state(p))


def run_cluster_while(cluster, store: str, stopper, stopped: list[int], *args: str, timeout: float):
    """`run cluster ARGS` while stopper (in a thread) stops a node's processes, noting them in
    stopped: the CLI's result, and the run's processes still there once it exited. Should the run
    have hung, the stopped processes resume at the end."""
    thread = threading.Thread(target=stopper, daemon=True)
    thread.start()
    try:
        p = cli(cluster, store, "run", "cluster", *args, timeout=timeout)
        for _ in range(100):   # the launchers' last processes are reaped as the CLI exits
            if not (left := processes_of_store(store)):
                break
            time.sleep(0.1)
    finally:
        thread.join(timeout=70)
        for pid in stopped:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGCONT)
    return p, left


@pytest.mark.timeout(200)
def test_a_node_stopped_in_a_per_node_step_is_ended_as_stalled_and_the_run_goes_on(cluster, tmp_path):
    """Every process on h03 SIGSTOPped once its Himeno runs, all nodes at once, no --step-timeout:
    the run waited on h03 for ever. The straggler rule (run/cluster/straggler.py) ends h03's launch
    once it has run the greater of the floor and the factor x the median of the other nodes'
    durations; its step is stored failed, named stalled; the other nodes' Himeno and every node's
    later steps are measured (h03 ended cpufreq well, so the link matrix runs over it too), and
    nothing of the run is left. Scaled down: one repetition, a floor of 30 s and a factor of 4 (the
    defaults, 60 s and 10, are for real suites). The floor is the healthy nodes' room: the test
    hosts share two cores with the suite and whatever runs beside it, so their 2 s Himeno launches
    do not end together. Beside a second pytest and a busy loop (load 4 to 9) they took 1.9 to
    10.8 s from the group's start, 4.9 x apart in one run (1.9, 9.2 and 9.3 s); the bound is made
    of the first half to end (here two of four), and with a floor of 10 s a run in CI ended healthy
    h02 as stalled at 10 s, after h01 and h04 ended in about 2.5 s. 30 s is 2.8 x the slowest
    healthy launch measured. Himeno runs 2 s: at 0.3 s the stopper, polling on that loaded
    machine, once found h03's cbk as it exited, and stopped nothing that still ran."""
    store = f"sqlite:///{tmp_path / 'stalled.db'}"
    ns, stopped, ranks = cluster.host("h03").ns, [], []

    def stop_h03_once_its_rank_runs() -> None:
        for _ in range(600):
            if comms := himeno_runs_on(cluster, "h03"):
                return stop_all(comms, stopped, ranks)
            time.sleep(0.05)

    p, left = run_cluster_while(cluster, store, stop_h03_once_its_rank_runs, stopped, "--only=himeno,cpufreq,links",
                                "--repeat", "1", "--himeno.seconds=2", "--himeno.threads=1", "--cpufreq.seconds=0.2",
                                "--links.size=256k", "--links.iterations=4", "--links.latency-iterations=20",
                                "--stall-floor", "30", "--stall-factor", "4", *BOUNDS, "--label", "stalled", "--quiet",
                                timeout=120)
    assert stopped and ranks, "h03's rank was never seen running, or had ended when it was stopped"
    assert p.returncode == 1, p.stdout[-3000:] + p.stderr[-3000:]
    steps = store_rows(store, "select name, host, status, message from steps order by id")
    himeno = {host: (status, message) for name, host, status, message in steps if name == "himeno"}
    assert {h: s for h, (s, _) in himeno.items()} == {"h01": "ok", "h02": "ok", "h03": "failed", "h04": "ok"}, steps
    assert re.match(r"h03: stalled: still running \d+ s after its start, when the other nodes ended in a median "
                    r"[\d.]+ s", himeno["h03"][1]), himeno
    assert sorted((host, status) for name, host, status, _ in steps if name == "cpufreq") == [
        ("h01", "ok"), ("h02", "ok"), ("h03", "ok"), ("h04", "ok")], steps
    assert [status for name, _, status, _ in steps if name.startswith("link matrix")] == ["ok"], steps
    from clusterbench.analysis.cluster.findings import paragraph

    said = paragraph(view_of(store, "stalled"))
    assert "not measured: node h03: himeno failed: stalled: still running" in said, said
    assert not left, [(x.pid, x.name()) for x in left]
    assert not subprocess.run(["ip", "netns", "pids", ns], capture_output=True, text=True).stdout.split()


@pytest.mark.timeout(200)
def test_one_at_a_time_a_node_stopped_in_a_per_node_step_is_ended_by_the_earlier_nodes_durations(cluster, tmp_path):
    """--one-at-a-time, no --step-timeout: every process on the second node seen running Himeno
    (the order is drawn at random) SIGSTOPped while it runs. A group of one has no others beside
    it, and the run waited on that node for ever; the straggler rule now bounds its launch by the
    step's launches that ended well on other nodes before it (here the first node's), as the test
    above scaled down. Its step is stored failed, named stalled, with what the bound was made of;
    the other nodes' Himeno and every node's cpufreq are measured, and nothing of the run is left.
    The first node of a step has no earlier launch: it is bounded by the time the suite declares
    (the test below)."""
    store = f"sqlite:///{tmp_path / 'stalled-alone.db'}"
    seen: list[str] = []     # the hosts seen running Himeno, in order
    stopped: list[int] = []
    ranks: list[str] = []    # the stopped host's cbk, seen stopped (not one that had ended as it was found)

    def stop_the_second_node_to_run_himeno() -> None:
        for _ in range(600):
            for host in HOSTS:
                if host in seen or not (comms := himeno_runs_on(cluster, host)):
                    continue
                seen.append(host)
                if len(seen) == 2:
                    return stop_all(comms, stopped, ranks)
            time.sleep(0.05)

    p, left = run_cluster_while(cluster, store, stop_the_second_node_to_run_himeno, stopped, "--only=himeno,cpufreq",
                                "--one-at-a-time", "--repeat", "1", "--himeno.seconds=2", "--himeno.threads=1",
                                "--cpufreq.seconds=0.2", "--stall-floor", "30", "--stall-factor", "4", *BOUNDS,
                                "--label", "stalled-alone", "--quiet", timeout=150)
    assert len(seen) == 2 and stopped and ranks, f"seen {seen}: the second node's rank was not seen running, " \
                                                 "or had ended when it was stopped"
    first, second = seen
    assert p.returncode == 1, p.stdout[-3000:] + p.stderr[-3000:]
    steps = store_rows(store, "select name, host, status, message from steps order by id")
    himeno = {host: (status, message) for name, host, status, message in steps if name == "himeno"}
    assert {h: s for h, (s, _) in himeno.items()} == {h: "failed" if h == second else "ok" for h in HOSTS}, steps
    assert re.match(rf"{second}: stalled: still running \d+ s after its start, when the other nodes' \d earlier "
                    r"launch(es)? of this step, one at a time, ended in a median [\d.]+ s \(bound: the greater of "
                    r"--stall-floor 30 s and --stall-factor 4 x that median\)", himeno[second][1]), himeno
    assert sorted((host, status) for name, host, status, _ in steps if name == "cpufreq") == [
        (h, "ok") for h in HOSTS], steps
    assert not left, [(x.pid, x.name()) for x in left]
    for host in HOSTS:
        assert not subprocess.run(["ip", "netns", "pids", cluster.host(host).ns], capture_output=True,
                                  text=True).stdout.split(), host


@pytest.mark.timeout(200)
def test_one_at_a_time_the_first_node_of_a_step_is_ended_by_the_time_the_suite_declares(cluster, tmp_path):
    """--one-at-a-time, no --step-timeout: every process on the first node seen running Himeno
    SIGSTOPped while it runs. It has no earlier launch of the step on another node to go by, and
    the run waited on it for ever; it is now bounded by the time the suite declares for a Himeno
    repetition in time mode (--himeno.seconds, run/cluster/declared_time.py), scaled down as the
    tests above: the greater of a 30 s floor and 4 x 2 s. Its step is stored failed, named
    stalled with what the bound was made of; the other nodes' Himeno (bounded by its duration no
    more: it ended no launch well) and every node's cpufreq are measured. The floor holds the
    launch's start-up, which the declared 2 s leaves out: alone, beside a second pytest and a busy
    loop (load 5 to 9), healthy launches took 1.7 to 8.8 s, 1.2 s short of the 10 s floor this
    test had."""
    store = f"sqlite:///{tmp_path / 'stalled-first.db'}"
    seen: list[str] = []
    stopped: list[int] = []
    ranks: list[str] = []

    def stop_the_first_node_to_run_himeno() -> None:
        for _ in range(600):
            for host in HOSTS:
                if comms := himeno_runs_on(cluster, host):
                    seen.append(host)
                    return stop_all(comms, stopped, ranks)
            time.sleep(0.05)

    p, left = run_cluster_while(cluster, store, stop_the_first_node_to_run_himeno, stopped, "--only=himeno,cpufreq",
                                "--one-at-a-time", "--repeat", "1", "--himeno.seconds=2", "--himeno.threads=1",
                                "--cpufreq.seconds=0.2", "--stall-floor", "30", "--stall-factor", "4", *BOUNDS,
                                "--label", "stalled-first", "--quiet", timeout=150)
    assert seen and stopped and ranks, "the first node's rank was not seen running, or had ended when it was stopped"
    (first,) = seen
    assert p.returncode == 1, p.stdout[-3000:] + p.stderr[-3000:]
    steps = store_rows(store, "select name, host, status, message from steps order by id")
    himeno = {host: (status, message) for name, host, status, message in steps if name == "himeno"}
    assert {h: s for h, (s, _) in himeno.items()} == {h: "failed" if h == first else "ok" for h in HOSTS}, steps
    assert re.match(rf"{first}: stalled: still running \d+ s after its start, the step's first launch one at a time "
                    r"\(no other node's to go by\), which should last 2 s \(--himeno.seconds=2, 1 repetition\) "
                    r"\(bound: the greater of --stall-floor 30 s and --stall-factor 4 x that\)", himeno[first][1]), himeno
    assert sorted((host, status) for name, host, status, _ in steps if name == "cpufreq") == [
        (h, "ok") for h in HOSTS], steps
    assert not left, [(x.pid, x.name()) for x in left]
