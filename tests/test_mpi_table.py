"""E7 as people read it: --op takes a list (one command, one step per
operation), and the table shows IMB's t_min/t_avg/t_max over ranks and the
MB/s beside a point-to-point latency."""
from __future__ import annotations

import pytest


@pytest.mark.timeout(180)
def test_op_list_runs_each_operation_with_rank_times_and_mb_s(cli):
    r = cli("run", "mpi", "--np", "2", "--op=pingpong,allreduce", "--sizes=8,4k", "--repeat", "2", "--label", "e7",
            "--quiet")
    assert r.status == 0, r.stderr
    show = cli("show", "e7", "--width", "300")
    assert show.status == 0, show.stderr
    assert "mpi [op=pingpong]" in show.stdout and "mpi [op=allreduce]" in show.stdout
    pingpong, allreduce = show.stdout.split("mpi [op=allreduce]")
    assert "t_min / t_avg / t_max (ranks)" in pingpong and "MB/s" in pingpong
    assert "t_min / t_avg / t_max (ranks)" in allreduce and "MB/s" not in allreduce  # a collective has no bandwidth
    rows = [line for line in pingpong.splitlines() if line.startswith("│ pingpong")]
    assert len(rows) == 2
    for row in rows:
        cells = [c.strip() for c in row.strip("│").split("│")]
        t_min, t_avg, t_max = (float(x.replace(",", "")) for x in cells[-2].split(" / "))
        assert 0 < t_min <= t_avg <= t_max and float(cells[-1].replace(",", "")) > 0
    bad = cli("run", "mpi", "--np", "2", "--op=pingpong,allreduse")
    assert bad.status == 2 and "'allreduse' is not a value of it" in bad.stderr
