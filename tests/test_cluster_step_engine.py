"""A per-node step of `run cluster` goes through the step engine `run`
uses (run/step_engine.py, #34): it is opened with its node in the host column,
the stale private directories of killed runs are swept where it works, a
stop signal that ends cbk on a node stops the run as interrupted, and the
run is a run of kind "cluster". On a 2-host test cluster."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from conftest import find_cbk, store_rows, run_bounded
from clusterbench.testbed import cluster as tc

pytestmark = pytest.mark.skipif(tc.why_not() is not None, reason=f"no test cluster: {tc.why_not()}")


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    c = tc.up(tmp_path_factory.mktemp("testbed") / "tb", 2, link="1gbit")
    yield c
    tc.down(c.dir)


def plant_orphan(parent, name: str):
    """A private directory whose owner stamp names this host and a pid no process has."""
    d = parent / name
    d.mkdir()
    (d / "data.00000000").write_bytes(b"x" * 4096)
    stamp = {"owner": "cbk", "host": os.uname().nodename, "boot_id": "", "pid": 2**22 + 1, "start_ticks": 0,
             "started_unix_s": 0, "run_id": "00", "store_run": None}
    (d / ".cbk-owner").write_text(json.dumps(stamp))
    return d


@pytest.mark.timeout(300)
def test_a_per_node_step_is_stored_with_its_host_and_swept_as_a_run_step_is(cluster, tmp_path):
    store = f"sqlite:///{tmp_path / 'r.db'}"
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    orphan = plant_orphan(scratch, "cbk-seqio-dead01")
    env = {**os.environ, **cluster.env(), "CLUSTERBENCH_CBK": find_cbk(), "CLUSTERBENCH_DB": store}
    p = run_bounded([sys.executable, "-m", "clusterbench", "run", "cluster", "--only=seqio", "--repeat", "1",
                     "--seqio.file-size=4m", f"--scratch={scratch}", "--label", "engine"], timeout=240, env=env)
    assert p.returncode == 0, p.stdout + p.stderr
    assert not orphan.exists()
    assert "removed a stale private directory" in p.stdout + p.stderr
    # swept: what the plan swept, stored as a run's step stores it (0012): nothing here
    assert store_rows(store, "select host, name, status, swept from steps order by host") == [
        ("h01", "seqio", "ok", "[]"), ("h02", "seqio", "ok", "[]")]
    assert store_rows(store, "select kind, suite from runs") == [("cluster", "cluster")]
    show = run_bounded([sys.executable, "-m", "clusterbench", "show", "engine"], timeout=60, env=env)
    assert show.returncode == 0 and "Cluster run 1 (engine)" in show.stdout and "2 nodes" in show.stdout, show.stdout


def wait_for_stamp(scratch, proc: subprocess.Popen, timeout_s: float = 90) -> dict:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        for stamp in scratch.glob("cbk-*/.cbk-owner"):
            try:
                return json.loads(stamp.read_text())
            except (OSError, ValueError):   # being written, or removed between glob and read
                pass
        if proc.poll() is not None:
            pytest.fail(f"the run ended before a private directory appeared: {proc.communicate()}")
        time.sleep(0.05)
    pytest.fail("no private directory with an owner stamp appeared")


@pytest.mark.timeout(300)
def test_a_stop_signal_that_reaches_cbk_on_one_node_stops_the_cluster_run_as_interrupted(cluster, tmp_path):
    """As `run` does: a batch system's signal (or a Ctrl-C) that reaches only
    cbk on a node stops the whole run as interrupted, not failed, and every
    node's cbk removes its files."""
    store = f"sqlite:///{tmp_path / 'r.db'}"
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    env = {**os.environ, **cluster.env(), "CLUSTERBENCH_CBK": find_cbk(), "CLUSTERBENCH_DB": store}
    p = subprocess.Popen([sys.executable, "-m", "clusterbench", "run", "cluster", "--only=seqio", "--repeat", "10000",
                          "--seqio.file-size=2m", "--seqio.block-size=64k", "--seqio.write=buffered",
                          "--seqio.read=none", f"--scratch={scratch}", "--quiet"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, start_new_session=True)
    try:
        stamp = wait_for_stamp(scratch, p)
        assert stamp["store_run"] == 1   # the store's run id reached cbk on the node, as on `run`
        os.kill(stamp["pid"], signal.SIGINT)
        out, err = p.communicate(timeout=120)
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
    assert p.returncode == 130 and "Traceback" not in err, out + err
    assert store_rows(store, "select status from runs") == [("interrupted",)]
    steps = store_rows(store, "select status, message from steps")
    assert ("interrupted", "cbk ended by SIGINT") in steps and {s for s, _ in steps} == {"interrupted"}, steps
    assert list(scratch.glob("cbk-*")) == []


def per_node_repetitions(store_url: str) -> dict[str, tuple[int, str, dict]]:
    """{host: (repetitions stored, stop_reason, {figure: values})} of run 1's per-node steps."""
    from clusterbench.store import Store

    store = Store(store_url)
    out = {}
    for st in store.steps_of(1):
        samples = store.samples_of(st.id)
        figures: dict = {}
        for s in samples:
            figures.setdefault(s.key(), []).append(s.value)
        out[st.host] = (len({s.repetition for s in samples}), st.stop_reason, figures)
    return out


def run_cluster_auto(cluster, tmp_path, *args: str) -> str:
    store = f"sqlite:///{tmp_path / 'r.db'}"
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    env = {**os.environ, **cluster.env(), "CLUSTERBENCH_CBK": find_cbk(), "CLUSTERBENCH_DB": store}
    p = run_bounded([sys.executable, "-m", "clusterbench", "run", "cluster", "--only=seqio", "--repeat", "auto",
                     "--seqio.file-size=2m", "--seqio.read=none", f"--scratch={scratch}", "--quiet", *args],
                    timeout=240, env=env)
    assert p.returncode == 0, p.stdout + p.stderr
    return store


@pytest.mark.timeout(300)
def test_repeat_auto_runs_all_nodes_together_until_every_nodes_ci_rule_says_stop(cluster, tmp_path):
    """All at once, the nodes repeat as one launch group: the same count on
    each, and each node's stop_reason is the CI rule on its own samples."""
    from clusterbench.analysis import stats

    store = run_cluster_auto(cluster, tmp_path, "--ci-target", "100", "--max-repeat", "8")
    nodes = per_node_repetitions(store)
    assert sorted(nodes) == ["h01", "h02"]
    counts = {n for n, _, _ in nodes.values()}
    assert len(counts) == 1, nodes   # the group stops together
    (n,) = counts
    assert 6 <= n <= 8
    for host, (_, reason, figures) in nodes.items():
        widths = [stats.ci_width_ratio(v) for v in figures.values()]
        if reason.startswith("ci: "):
            assert reason.endswith(f"after {n}") and all(w is not None and w <= 1.0 for w in widths), (host, reason)
        else:
            assert reason.startswith("max-repeat: 8 repetitions") and n == 8, (host, reason)
    if n < 8:   # the group stopped before the limit: every node's CI was within the target
        assert all(r.startswith("ci: ") for _, r, _ in nodes.values()), nodes


@pytest.mark.timeout(300)
def test_repeat_auto_one_at_a_time_stops_each_node_on_its_own_rule(cluster, tmp_path):
    """A 0.1 % CI is out of a fsync write's reach: every node stops on
    --max-time after the first 6 repetitions, and says so."""
    store = run_cluster_auto(cluster, tmp_path, "--one-at-a-time", "--ci-target", "0.1", "--max-time", "1")
    nodes = per_node_repetitions(store)
    assert sorted(nodes) == ["h01", "h02"]
    for host, (n, reason, _) in nodes.items():
        assert n >= 6 and reason.startswith("max-time: ") and reason.endswith(
            f"after {n} repetitions (CI target 0.1% not reached)"), (host, n, reason)


@pytest.mark.timeout(300)
def test_memory_limit_caps_each_nodes_step_in_a_cgroup_on_that_node(cluster, tmp_path, machine_settings_changed):
    """--memory-limit as `run` applies it: each node's cbk started inside a
    memory cgroup by cgexec through the launcher, so the cap holds on the
    node; each node's step keeps that node's peak, and its records the limit.
    One at a time: the test hosts share one machine's cgroup tree, so nodes
    at once would share one cgroup (as ranks on one host do)."""
    from clusterbench.store import Store

    store = f"sqlite:///{tmp_path / 'r.db'}"
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    env = {**os.environ, **cluster.env(), "CLUSTERBENCH_CBK": find_cbk(), "CLUSTERBENCH_DB": store}
    p = run_bounded([sys.executable, "-m", "clusterbench", "run", "cluster", "--only=seqio", "--repeat", "1",
                     "--one-at-a-time", "--memory-limit", "64m", "--seqio.file-size=4m", "--seqio.write=buffered",
                     "--seqio.read=none", f"--scratch={scratch}", "--quiet"], timeout=240, env=env)
    assert p.returncode == 0, p.stdout + p.stderr
    steps = Store(store).steps_of(1)
    assert sorted(st.host for st in steps) == ["h01", "h02"]
    for st in steps:
        (cg,) = st.build["memory_cgroups"]
        assert cg["host"] == st.host and cg["memory_limit_bytes"] == 64 << 20, cg
        assert 0 < cg["memory_peak_bytes"] <= 64 << 20, cg
    limits = store_rows(store, "select distinct json_extract(record, '$.memory_limit_bytes') from samples")
    assert limits == [(64 << 20,)], limits
