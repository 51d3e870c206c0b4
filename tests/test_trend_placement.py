"""trend keeps apart what compare keeps apart: where the ranks ran.

E7's placements (2 ranks on one node through shared memory, 2 ranks on two
nodes through the network) are different figures; compare matches steps on
np and ppn, but trend pooled them into one series, so a history that
alternated placements showed a "change point" that was only a placement."""
from __future__ import annotations

import pytest


def pingpong_record(rep: int, latency_us: float, ranks_per_node: int) -> dict:
    return {"schema": 1, "type": "measurement", "kernel": "mpi", "repetition": rep, "phase": "pingpong",
            "mode": "library", "ranks": 2, "nodes": 2 // ranks_per_node, "ranks_per_node": ranks_per_node,
            "size_bytes": 8, "bytes": 8, "ops": 10, "seconds": latency_us * 1e-6, "rate": latency_us,
            "rate_unit": "us", "sweep_key": "size_bytes", "qualifiers": [], "warnings": []}


def fill(url: str, placements: list[tuple[int, float]], params: dict | None = None) -> None:
    """One ok run of `mpi --np 2 --ppn P --op=pingpong --sizes=8` per (P, latency)."""
    from clusterbench.results.sample import Sample
    from clusterbench.store import Store

    store = Store(url)
    for ppn, latency in placements:
        run = store.begin_run(label=f"ppn{ppn}", command="clusterbench run mpi", suite=None, user="t")
        step = store.begin_step(run, position=0, name="mpi", kernel="mpi", params=params or {"op": "pingpong", "sizes": "8"},
                                launcher="mpiexec", ranks=2, ranks_per_node=ppn)
        for rep in range(3):
            store.add_sample(step, Sample.from_record(pingpong_record(rep, latency * (1 + rep / 100), ppn)), [])
        store.finish_step(step, "ok", stop_reason="fixed: 3 repetitions")
        store.finish_run(run, "ok")


@pytest.mark.timeout(60)
def test_two_placements_of_one_pingpong_are_two_series_not_one_with_a_false_change(tmp_path):
    from clusterbench.analysis import trend_series
    from clusterbench.store import Store

    url = f"sqlite:///{tmp_path / 'results.db'}"
    # eight runs, one node then two nodes by turns: 1 us (shared memory) and 9 us (network)
    fill(url, [(2, 1.0), (1, 9.0)] * 4)
    found = trend_series.load(Store(url), "mpi", "pingpong")
    assert len(found) == 2, [s.title for s in found]
    by_ppn = {s.params.get("ppn"): s for s in found}
    assert set(by_ppn) == {"1", "2"}
    assert [round(p.median) for p in by_ppn["2"].points] == [1] * 4
    assert [round(p.median) for p in by_ppn["1"].points] == [9] * 4
    assert all("np=2" in s.title and f"ppn={ppn}" in s.title for ppn, s in by_ppn.items())

    only = trend_series.load(Store(url), "mpi", "pingpong", params=trend_series.wanted_params("mpi", {"ppn": "1"})[0])
    assert [s.params["ppn"] for s in only] == ["1"]
    assert trend_series.load(Store(url), "mpi", "pingpong", params={"np": "4"}) == []


@pytest.mark.timeout(120)
def test_trend_takes_the_placement_as_a_filter_and_names_it_when_refusing(cli, store_url):
    fill(store_url, [(2, 1.0), (1, 9.0)])
    r = cli("trend", "mpi:pingpong", "--param", "ppn=2")
    assert r.status == 0, r.stderr
    assert "mpi:pingpong:library 8 B np=2 ppn=2:" in r.stdout and "ppn=1" not in r.stdout, r.stdout
    r = cli("trend", "mpi:pingpong", "--param", "ppn=two")
    assert r.status == 2 and "--param ppn=two: not a whole number of ranks per node" in r.stderr, r.stderr
    r = cli("trend", "mpi:pingpong", "--param", "nodes=2")
    assert r.status == 2 and "(parameters: " in r.stderr and "the placement: np, ppn" in r.stderr, r.stderr


@pytest.mark.timeout(60)
def test_a_parameter_at_its_default_or_an_op_list_is_the_same_series(cli, store_url):
    """`run mpi --np 2 --sizes=8` and the same with --op=pingpong (mpi's default) were two series,
    'np=2' and 'np=2 op=pingpong', each with half the history; and --op=pingpong,bw a third.
    The op is the phase (compare matches them so): one series of three runs."""
    for params in ({"sizes": "8"}, {"op": "pingpong", "sizes": "8"}, {"op": "pingpong,bw", "sizes": "8"}):
        fill(store_url, [(2, 1.0)], params)
    r = cli("trend", "mpi:pingpong")
    assert r.status == 0, r.stderr
    assert "mpi:pingpong:library 8 B np=2 ppn=2: 3 runs, 0 change points" in r.stdout, r.stdout
    assert "op=" not in r.stdout and r.stdout.count("mpi:pingpong:library") == 1, r.stdout
    # the op as a filter picks each of the three: one ran pingpong among other ops
    r = cli("trend", "mpi:pingpong", "--param", "op=pingpong")
    assert r.status == 0 and "ppn=2: 3 runs" in r.stdout, r.stdout


@pytest.mark.timeout(60)
def test_a_one_rank_kernels_series_title_has_no_rank_count(tmp_path):
    """seqio's series keep their titles: np=1 is said by nothing."""
    from clusterbench.analysis.trend_series import _placement
    from types import SimpleNamespace

    assert _placement(SimpleNamespace(ranks=1, ranks_per_node=None)) == {}
    assert _placement(SimpleNamespace(ranks=1, ranks_per_node=None), always=True) == {"np": "1"}
    assert _placement(SimpleNamespace(ranks=4, ranks_per_node=2)) == {"np": "4", "ppn": "2"}


@pytest.mark.timeout(120)
def test_compare_of_two_placements_says_which_parameter_differs_and_what_to_do(cli, store_url):
    """`compare ppn1 ppn2` of E7's placements said only "no measurement with
    equal kernel and parameters in all of: ppn1, ppn2": not which parameter
    kept them apart, nor how to put placements side by side."""
    fill(store_url, [(1, 9.0), (2, 1.0)])
    r = cli("compare", "ppn1", "ppn2")
    assert r.status == 2 and r.stderr.count("\n") == 1, r.stderr
    assert "mpi ran with ppn=1 in ppn1 and ppn=2 in ppn2" in r.stderr, r.stderr
    assert "ppn = [1, 2]" in r.stderr
    # the report of the two says the same, above each run on its own
    out = cli("report", "ppn1", "ppn2", "-o", "-", "--format", "html").stdout
    assert "mpi ran with ppn=1 in ppn1 and ppn=2 in ppn2" in out
