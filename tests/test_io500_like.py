"""The io500-like suite: its score is IO500's arithmetic (geometric means of
GiB/s and kIOPS, then of the two) over the medians of each phase, labelled
as not an official result; the suite runs end to end (shrunk) on real MPI
and real files and leaves nothing."""
from __future__ import annotations

import math
import re
from importlib import resources

import pytest

from clusterbench.analysis.io500_score import score_lines
from conftest import tree

GIB = 1024 ** 3


def rec(phase, mode, bytes_=0, ops=0, seconds=1.0):
    from clusterbench.results.sample import Sample  # a stored sample, as load_run gives it

    return Sample.from_record({"phase": phase, "mode": mode, "bytes": bytes_, "ops": ops, "seconds": seconds})


def fixture_run(bw_gib: dict, kiops: dict) -> dict:
    steps = {}
    for (step, phase, mode), v in bw_gib.items():
        # two repetitions around the value: the median is v
        steps.setdefault(step, []).extend([rec(phase, mode, int(v * 0.5 * GIB), seconds=0.5),
                                           rec(phase, mode, int(v * 2 * GIB), seconds=2.0)])
    for (step, phase), v in kiops.items():
        steps.setdefault(step, []).append(rec(phase, "n/a", ops=int(v * 1000)))
    return {"steps": [{"name": k, "samples": v} for k, v in steps.items()]}


@pytest.mark.timeout(10)
def test_score_is_iors_geometric_means_of_the_medians():
    bw = {("ior-easy", "write", "fsync"): 2.0, ("ior-easy", "read", "warm"): 8.0,
          ("ior-hard", "write", "fsync"): 0.5, ("ior-hard", "read", "warm"): 1.0}
    md = {("mdtest-easy", "file-create"): 10, ("mdtest-easy", "file-stat"): 100, ("mdtest-easy", "file-remove"): 10,
          ("mdtest-hard", "file-create"): 1, ("mdtest-hard", "file-read"): 10, ("mdtest-hard", "file-stat"): 100,
          ("mdtest-hard", "file-remove"): 1}
    run = fixture_run(bw, md)
    run["steps"][0]["samples"].append(rec("write", "buffered", int(100 * GIB)))  # not IO500's figure: ignored
    lines = score_lines(run)
    bw_score = (2.0 * 8.0 * 0.5 * 1.0) ** 0.25
    md_score = (10 * 100 * 10 * 1 * 10 * 100 * 1) ** (1 / 7)
    score = re.search(r"Bandwidth ([\d.]+) GiB/s : IOPS ([\d.]+) kiops : TOTAL ([\d.]+)", lines[-1])
    assert [float(x) for x in score.groups()] == pytest.approx([bw_score, md_score, math.sqrt(bw_score * md_score)],
                                                               rel=1e-5)
    assert "not an official IO500 result" in lines[-1] and "NOT an official IO500 result" in lines[1]
    assert "[RESULT] ior-easy-write           2.000000 GiB/s" in lines


@pytest.mark.timeout(10)
def test_missing_phase_gives_no_score():
    assert score_lines({"steps": []}) == ["io500-like: a phase is missing or failed; no score"]


@pytest.mark.timeout(300)
def test_suite_runs_shrunk_and_prints_the_score(cli, mpiexec, tmp_path):
    text = (resources.files("clusterbench.suites") / "io500-like.toml").read_text()
    for big, small in (('"32m"', '"1m"'), ("segments = 400", "segments = 8"), ("items = 1000", "items = 20"),
                       ("items = 500", "items = 20")):
        assert big in text
        text = text.replace(big, small)
    suite = tmp_path / "io500-like.toml"
    suite.write_text(text)
    data = tmp_path / "data"
    data.mkdir()
    r = cli("run", str(suite), "--repeat", "1", "--quiet", f"--dir={data}", "--report", str(tmp_path / "r.html"))
    assert r.status == 0, r.stderr
    score = re.search(r"^\[SCORE \] Bandwidth ([\d.]+) GiB/s : IOPS ([\d.]+) kiops : TOTAL ([\d.]+) "
                      r"\(not an official IO500 result\)$", r.stdout, re.M)
    assert score and all(float(x) > 0 for x in score.groups()), r.stdout
    assert len(re.findall(r"^\[RESULT\] ", r.stdout, re.M)) == 11
    assert tree(data) == []
