"""trend keeps each machine's figures apart: a series per host.

Runs of two nodes made one series: eight seqio runs on n01 then eight on
n02 showed a change point that was only the host switch, and a cluster
run's per-node steps (one per node, steps.host) were pooled into one point
per run, the slow node hidden in the median of four."""
from __future__ import annotations

import pytest


def cold_read(rep: int, mib_per_s: float) -> dict:
    return {"schema": 1, "type": "measurement", "kernel": "seqio", "repetition": rep, "phase": "read",
            "mode": "cold", "ranks": 1, "bytes": 1 << 30, "ops": 1024, "seconds": 1024 / mib_per_s,
            "rate": mib_per_s, "rate_unit": "MiB/s", "sweep_key": None, "qualifiers": [], "warnings": []}


def fill(url: str, runs: list[dict[str | None, float]], run_host: str | None = None) -> None:
    """One ok run per item, {step host (None: the run's own): MiB/s}."""
    import sqlalchemy as sa

    from clusterbench.results.sample import Sample
    from clusterbench.store import Store
    from clusterbench.store.schema import runs as runs_table

    store = Store(url)
    for per_host in runs:
        run = store.begin_run(label=None, command="clusterbench run seqio", suite=None, user="t")
        for position, (host, rate) in enumerate(per_host.items()):
            step = store.begin_step(run, position=position, name="seqio", kernel="seqio", params={}, launcher="local",
                                    ranks=1, ranks_per_node=None, host=host)
            for rep in range(3):
                store.add_sample(step, Sample.from_record(cold_read(rep, rate * (1 + rep / 100))), [])
            store.finish_step(step, "ok", stop_reason="fixed: 3 repetitions")
        store.finish_run(run, "ok")
        if run_host:
            with store.engine.begin() as c:
                c.execute(sa.update(runs_table).where(runs_table.c.id == run).values(host=run_host))


@pytest.mark.timeout(60)
def test_runs_of_two_hosts_are_two_series_not_one_with_a_change_at_the_switch(tmp_path):
    from clusterbench.analysis import trend_series
    from clusterbench.store import Store

    url = f"sqlite:///{tmp_path / 'results.db'}"
    fill(url, [{None: 1000.0}] * 8, run_host="n01")
    fill(url, [{None: 700.0}] * 8, run_host="n02")
    found = trend_series.load(Store(url), "seqio", "read", "cold")
    assert sorted(s.title for s in found) == ["seqio:read:cold on n01", "seqio:read:cold on n02"]
    assert all(s.changes == [] and len(s.points) == 8 for s in found)
    assert {s.host: round(s.points[0].median) for s in found} == {"n01": 1010, "n02": 707}
    only = trend_series.load(Store(url), "seqio", "read", "cold", host="n02")
    assert [(s.title, len(s.points)) for s in only] == [("seqio:read:cold", 8)]   # one machine: no need to say


@pytest.mark.timeout(60)
def test_a_cluster_runs_nodes_are_each_their_own_series(tmp_path):
    from clusterbench.analysis import trend_series
    from clusterbench.store import Store

    url = f"sqlite:///{tmp_path / 'results.db'}"
    fill(url, [{"h01": 1000.0, "h02": 1000.0, "h03": 300.0}] * 3, run_host="login")
    found = {s.host: s for s in trend_series.load(Store(url), "seqio", "read", "cold")}
    assert set(found) == {"h01", "h02", "h03"}
    assert [round(p.median) for p in found["h03"].points] == [303] * 3
    assert [s.title for s in trend_series.load(Store(url), "seqio", "read", "cold", host="h03")] == ["seqio:read:cold"]
    (upper,) = trend_series.load(Store(url), "seqio", "read", "cold", host="H03")   # a host name in any case
    assert [round(p.median) for p in upper.points] == [303] * 3


@pytest.mark.timeout(120)
def test_trend_prints_each_hosts_series_under_its_name(cli, store_url):
    fill(store_url, [{None: 1000.0}] * 2, run_host="n01")
    fill(store_url, [{None: 700.0}] * 2, run_host="n02")
    r = cli("trend", "seqio:read:cold")
    assert r.status == 0, r.stderr
    assert "seqio:read:cold on n01: 2 runs" in r.stdout and "seqio:read:cold on n02: 2 runs" in r.stdout
