"""Cluster facts are stored as facts (#34): the node a per-node step ran on
is the step's host column, not text in its name, and a cluster run is a
run of kind "cluster", not a run whose suite happens to be called so.
Stores written before both are migrated (0006, 0007)."""
from __future__ import annotations

import pytest
import sqlalchemy as sa

from conftest import store_at, store_rows
from clusterbench.results.sample import Sample


@pytest.mark.both_stores
def test_a_store_written_with_hosts_in_step_names_is_migrated_to_host_and_kind_columns(store_url):
    from clusterbench.store import Store

    engine = store_at(store_url, "0005")
    runs = [("cluster", None), (None, None), (None, "fio 3.33 JSON, file a.json")]
    steps = [(1, "node h01: stream"), (1, "node h02.example.org: seqio cold"), (1, "link matrix (mpiGraph shift pattern)"),
             (2, "node x: a user's own step name"), (3, None)]
    with engine.begin() as conn:
        for suite, imported in runs:
            conn.execute(sa.text("insert into runs (suite, imported_from, started, status) "
                                 "values (:s, :i, '2025-01-01', 'ok')"), {"s": suite, "i": imported})
        for i, (run_id, name) in enumerate(steps):
            conn.execute(sa.text("insert into steps (run_id, position, name, kernel, params, launcher, ranks, status, "
                                 "started) values (:r, :i, :n, 'null', '{}', 'mpiexec', 1, 'ok', '2025-01-01')"),
                         {"r": run_id, "i": i, "n": name})
    store = Store(store_url)
    assert [(st.host, st.name) for st in store.steps_of(1)] == [
        ("h01", "stream"), ("h02.example.org", "seqio cold"), (None, "link matrix (mpiGraph shift pattern)")]
    # only cluster runs wrote "node HOST: " names: another run's step keeps the name its user gave
    assert [(st.host, st.name) for st in store.steps_of(2)] == [(None, "node x: a user's own step name")]
    assert [store.run(i).kind for i in (1, 2, 3)] == ["cluster", "measured", "imported"]
    assert store_rows(store_url, "select version_num from alembic_version") == [("0012",)]


def _cluster_like_run(store, *, suite: str | None, kind: str) -> int:
    """Two nodes' stream figures, h02 at half h01's rate."""
    run_id = store.begin_run(label=f"{suite}-{kind}", command="clusterbench run cluster", suite=suite, kind=kind)
    for position, (host, rate) in enumerate((("h01", 100.0), ("h02", 50.0), ("h03", 101.0))):
        step_id = store.begin_step(run_id, position=position, name="stream", kernel="stream", params={},
                                   launcher="mpiexec", ranks=1, ranks_per_node=None, host=host)
        for rep in range(3):
            store.add_sample(step_id, Sample("copy", "n/a", None, "MiB/s", rate + rep, repetition=rep), [])
        store.finish_step(step_id, "ok")
    store.finish_run(run_id, "ok")
    return run_id


def test_show_knows_a_cluster_run_by_its_kind_whatever_its_suite_is_called(cli, store_url):
    from clusterbench.store import Store

    store = Store(store_url)
    renamed = _cluster_like_run(store, suite="nightly nodes", kind="cluster")
    named_so = _cluster_like_run(store, suite="cluster", kind="measured")
    out = cli("show", str(renamed)).stdout
    assert f"Cluster run {renamed}" in out and "3 nodes" in out, out
    assert "h02" in out   # the node, read from the host column
    out = cli("show", str(named_so)).stdout
    assert "Cluster run" not in out, out
    assert "node h01: stream" in out   # a per-node step still says which node it ran on


def test_a_step_run_by_run_has_no_host_and_its_run_is_measured(cli, store_url):
    assert cli("run", "null", "--seconds=0.001", "--repeat", "1").status == 0
    assert store_rows(store_url, "select host from steps") == [(None,)]
    assert store_rows(store_url, "select kind from runs") == [("measured",)]


def test_the_checks_between_samples_of_a_cluster_run_compare_a_node_only_with_itself(store_url):
    """h01's cold read at 5x its own O_DIRECT read was helped by a cache;
    h02's faster disk must not hide it (the same directory name, another node)."""
    from clusterbench.run import step_engine
    from clusterbench.store import Store

    store = Store(store_url)
    run_id = store.begin_run(label="c", command="clusterbench run cluster", suite="cluster", kind="cluster")
    for position, (host, direct, cold) in enumerate((("h01", 100.0, 500.0), ("h02", 1000.0, 900.0))):
        step_id = store.begin_step(run_id, position=position, name="seqio", kernel="seqio", params={},
                                   launcher="mpiexec", ranks=1, ranks_per_node=None, host=host)
        for mode, value in (("direct", direct), ("cold", cold)):
            record = {"phase": "read", "mode": mode, "rate": value, "rate_unit": "MiB/s", "dir": "/scratch",
                      "sweep_key": None, "qualifiers": []}
            store.add_sample(step_id, Sample.from_record(record), [])
        store.finish_step(step_id, "ok")
    step_engine.add_cross_warnings(store, run_id)
    warned = {(st.host, s.mode): s.warnings for st in store.steps_of(run_id) for s in store.samples_of(st.id)}
    assert any("faster than the O_DIRECT read" in w for w in warned[("h01", "cold")]), warned
    assert warned[("h02", "cold")] == [] and warned[("h01", "direct")] == []
    from clusterbench.report.data import load_run

    limits = {(st["host"], row.mode): row.limit for st in load_run(store, run_id)["steps"] for row in st["summary"]}
    assert limits[("h01", "cold")] == "cache: above the device's direct rate", limits
    assert limits[("h02", "cold")].startswith("device: 90 %"), limits
