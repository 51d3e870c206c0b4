"""E7 as people read it: --op takes a list measured in one launch (one
command, one step, one mpiexec, as one IMB run does several benchmarks), and
the table shows IMB's t_min/t_avg/t_max over ranks and the MB/s beside a
point-to-point latency."""
from __future__ import annotations

import json

import pytest


@pytest.mark.timeout(180)
def test_op_list_runs_each_operation_in_one_launch_with_rank_times_and_mb_s(cli):
    r = cli("run", "mpi", "--np", "2", "--op=pingpong,allreduce", "--sizes=8,4k", "--repeat", "2", "--label", "e7",
            "--quiet")
    assert r.status == 0, r.stderr
    steps = json.loads(cli("export", "e7", "--format", "json").stdout)["runs"][0]["steps"]
    assert len(steps) == 1 and steps[0]["params"]["op"] == "pingpong,allreduce"
    show = cli("show", "e7", "--width", "300")
    assert show.status == 0, show.stderr
    pingpong = [line for line in show.stdout.splitlines() if line.startswith("│ pingpong")]
    allreduce = [line for line in show.stdout.splitlines() if line.startswith("│ allreduce")]
    assert len(pingpong) == 2 and len(allreduce) == 2  # both operations, both sizes, in order
    assert show.stdout.index("│ pingpong") < show.stdout.index("│ allreduce")
    assert "fastest / mean / slowest rank (µs)" in show.stdout and "MB/s" in show.stdout
    for row in pingpong + allreduce:
        cells = [c.strip() for c in row.strip("│").split("│")]
        t_min, t_avg, t_max = (float(x.replace(",", "")) for x in cells[-2].split(" / "))
        assert 0 < t_min <= t_avg <= t_max
        if row in pingpong:
            assert float(cells[-1].replace(",", "")) > 0
        else:
            assert cells[-1] == "-"  # a collective has no bandwidth

    bad = cli("run", "mpi", "--np", "2", "--op=pingpong,allreduse")
    assert bad.status == 2 and "'allreduse' is not one of: pingpong,bw" in bad.stderr
    twice = cli("run", "mpi", "--np", "2", "--op=bw,bw")
    assert twice.status == 2 and "names bw twice" in twice.stderr


@pytest.mark.timeout(180)
def test_a_pingpong_of_a_list_compares_with_one_measured_alone(cli):
    for label, ops in (("listed", "allreduce,pingpong"), ("alone", "pingpong")):
        r = cli("run", "mpi", "--np", "2", f"--op={ops}", "--sizes=8", "--repeat", "2", "--label", label, "--quiet")
        assert r.status == 0, r.stderr
    c = cli("compare", "listed", "alone", "--format", "json")
    assert c.status == 0, c.stderr
    doc = json.loads(c.stdout)
    assert [p["measurement"] for p in doc["points"]] == ["pingpong 8 B"]
    assert all(p["results"][n]["n"] == 2 for p in doc["points"] for n in ("listed", "alone"))
    assert [(p["title"], p["in"]) for p in doc["partial"]] == [("mpi: allreduce 8 B", ["listed"])]


def test_the_mb_s_beside_a_median_latency_is_the_rate_at_that_latency():
    """Two pingpongs of 1 MB at 100 and 200 us: the median latency is 150 us,
    so the rate beside it is 1e6 B / 150 us = 6,667 MB/s, not the median of
    10,000 and 5,000 MB/s (7,500). A bandwidth row keeps its median rate."""
    from clusterbench.analysis.step_summary import Row

    pingpong = Row("pingpong", None, "us", values=[100.0, 200.0], bandwidth_mb_s=[10_000.0, 5_000.0])
    assert pingpong.median == 150.0
    assert pingpong.median_bandwidth_mb_s == pytest.approx(1e6 / 150.0)
    bw = Row("bw", None, "MiB/s", values=[9_536.7, 4_768.4], bandwidth_mb_s=[10_000.0, 5_000.0])
    assert bw.median_bandwidth_mb_s == 7_500.0
    odd = Row("pingpong", None, "us", values=[100.0, 200.0, 400.0], bandwidth_mb_s=[10_000.0, 5_000.0, 2_500.0])
    assert odd.median_bandwidth_mb_s == pytest.approx(5_000.0)
