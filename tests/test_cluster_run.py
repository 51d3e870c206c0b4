"""`clusterbench run cluster` on a 4-host test cluster (links shaped to
200 Mbit/s) with faults the test plants, each of which must be flagged, and
only it; with none planted nothing may be flagged.

Faults: h03's link (both ends) shaped to a third of the others'; h03's
kernel.shmmni (an IPC-namespace sysctl) changed; h03's processes capped at
30 % of one CPU by a cgroup its ssh stand-in joins them to (5 % made the
link matrix, whose every round waits on h03's ranks, take 190 s of CI;
30 % still takes about 90 % off h03's Himeno, CFS throttling a 1 s run).

The four test hosts share this machine's two cores, so the per-node
figures run --one-at-a-time (all at once, each host's Himeno would time
the others' start and end: 60 % spread seen with no fault). The machine is
shared with other work: one node's median of 5 one-second Himeno runs was
seen 40 % off the others with no fault, so the tests judge nodes with
--threshold=50% and links with --link-threshold=40% (the defaults, 10 %
and 25 %, are for real nodes, each its own hardware). The slow link takes
67 % off its bandwidth."""
from __future__ import annotations

import os
import re
import secrets
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import find_cbk
from clusterbench.testbed import cluster as tc

pytestmark = [pytest.mark.skipif(tc.why_not() is not None, reason=f"no test cluster: {tc.why_not()}"),
              pytest.mark.alone]   # the hosts' Himeno judged against each other: no other test of the suite beside

HOSTS = ["h01", "h02", "h03", "h04"]
RATE, SLOW_RATE = "200mbit", "67mbit"
BOUNDS = ["--threshold=50%", "--link-threshold=40%"]
# small enough for CI: a link moves 4 MiB per round (4 windows of 4 x 256 KiB)
QUICK = ["--only=himeno,links", "--one-at-a-time", "--repeat", "5", "--himeno.seconds=1", "--links.size=256k", "--links.window=4",
         "--links.iterations=4", "--links.latency-iterations=20", *BOUNDS, "--quiet"]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    c = tc.up(tmp_path_factory.mktemp("testbed") / "tb", len(HOSTS), link=RATE)
    yield c
    tc.down(c.dir)


def configuration(view) -> list:
    """The environment differences but the machine-wide vm.* sysctls, which
    other work on this shared machine may change between two hosts'
    snapshots (the test hosts share the machine's kernel; CI runs alone)."""
    return [d for d in view.env if not d.key.startswith("vm.")]


def cli(cluster, store: str, *args: str, timeout: float = 400) -> subprocess.CompletedProcess:
    env = {**os.environ, **cluster.env(), "CLUSTERBENCH_CBK": find_cbk(), "CLUSTERBENCH_DB": store, "COLUMNS": "200"}
    return subprocess.run([sys.executable, "-m", "clusterbench", *args], capture_output=True, text=True,
                          timeout=timeout, env=env)


def view_of(store: str, label: str):
    from clusterbench.cluster.analysis import analyse, thresholds_of
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


def cpu_cgroup(name: str, cpu_fraction: float) -> Path:
    """A cgroup capped at cpu_fraction of one CPU (v2 cpu.max, else v1 CFS quota)."""
    root = Path("/sys/fs/cgroup")
    controllers = root / "cgroup.controllers"
    if controllers.exists() and "cpu" in controllers.read_text().split():
        (root / "cgroup.subtree_control").write_text("+cpu")
        d = root / name
        d.mkdir()
        (d / "cpu.max").write_text(f"{int(cpu_fraction * 100000)} 100000")
        return d
    v1 = root / "cpu"
    if not (v1 / "cpu.cfs_quota_us").exists():
        pytest.skip("no cpu controller (cgroup v2 cpu.max or v1 cpu.cfs_quota_us) to slow a host with")
    d = v1 / name
    d.mkdir()
    (d / "cpu.cfs_period_us").write_text("100000")
    (d / "cpu.cfs_quota_us").write_text(str(int(cpu_fraction * 100000)))
    return d


@pytest.fixture
def slow_h03(cluster):
    """h03's processes (everything its ssh stand-in starts) in a CPU-capped cgroup."""
    group = cpu_cgroup(f"cbk-test-slow-{cluster.id}-{secrets.token_hex(2)}", 0.3)
    original = cluster.ssh.read_text()
    cluster.ssh.write_text(original.replace(
        "\nexec nsenter", f'\n[ "$h" = h03 ] && echo $$ > {group / "cgroup.procs"}\nexec nsenter', 1))
    yield
    cluster.ssh.write_text(original)
    for _ in range(50):   # the run's processes have ended; the cgroup empties as they are reaped
        try:
            group.rmdir()
            break
        except OSError:
            import time

            time.sleep(0.1)


# -- the tests -----------------------------------------------------------

@pytest.mark.timeout(600)
def test_no_fault_flags_nothing(cluster, store, tmp_path):
    p = cli(cluster, store, "run", "cluster", *QUICK, "--label", "healthy", "--report-dir", str(tmp_path))
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    view = view_of(store, "healthy")
    assert view.hosts == HOSTS
    assert len(view.links) == 12 and all(lk.mib_s > 0 for lk in view.links)
    # every link near the shaped rate (200 Mbit/s = 23.8 MiB/s), none above it
    assert all(lk.mib_s < 200e6 / 8 / 2**20 * 1.1 for lk in view.links), [lk.mib_s for lk in view.links]
    assert [f.name for f in view.figures] == ["himeno jacobi (time)"]
    assert not [f.flagged for f in view.figures if f.flagged]
    assert not view.flagged_links and configuration(view) == []
    show = " ".join(cli(cluster, store, "show", "healthy").stdout.split())
    assert "Nothing flagged" in show or view.env, show
    assert not re.search(r"the median of 4 nodes|is slow|of the reference link", show), show


@pytest.mark.timeout(600)
def test_planted_faults_are_flagged_and_only_they(cluster, store, tmp_path, slow_h03):
    shape(cluster, "h03", SLOW_RATE)
    set_shmmni(cluster, "h03", 8192)
    try:
        p = cli(cluster, store, "run", "cluster", *QUICK, "--label", "faulty", "--report", str(tmp_path / "report.html"))
    finally:
        shape(cluster, "h03", RATE)
        set_shmmni(cluster, "h03", 4096)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    view = view_of(store, "faulty")
    # the slow node: h03, and only it
    (himeno,) = view.figures
    assert [nv.host for nv in himeno.flagged] == ["h03"], himeno.nodes
    assert himeno.flagged[0].ratio < 0.6, himeno.nodes
    # the slow port: the six links to and from h03, and no other
    flagged = {(lk.src, lk.dst) for lk in view.flagged_links}
    assert flagged == {(a, b) for a in HOSTS for b in HOSTS if a != b and "h03" in (a, b)}, \
        {(lk.src, lk.dst): round(lk.mib_s, 2) for lk in view.links}
    # the odd configuration: one key, one node
    (diff,) = configuration(view)
    assert (diff.key, diff.most, diff.differ) == ("kernel.shmmni", "4096", {"h03": "8192"})
    # said in sentences, in show and in the report
    show = " ".join(cli(cluster, store, "show", "faulty").stdout.split())   # rich wraps the paragraph
    assert re.search(r"h03: himeno jacobi \(time\) \d+ % below the median of 4 nodes", show), show
    assert "every link to and from h03 is slow (6 links" in show
    assert "kernel.shmmni: h03 has 8192, the other nodes 4096" in show
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
    # before = the faulty run: the slow node and h03's six links are fixed, nothing new
    assert re.search(r"7 flag\(s\) gone: [^;]*h03: himeno jacobi \(time\)", out), out
    assert "0 new." in out and "h02->h03" in out and "fixed" in out
