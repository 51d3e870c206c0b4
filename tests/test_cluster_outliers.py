"""The outlier rules of a cluster run (clusterbench.cluster.outliers) and
the environment table, on numbers chosen to sit either side of each bound."""
from __future__ import annotations

import pytest

from clusterbench.cluster.analysis import env_differences, parse_fraction
from clusterbench.cluster.outliers import judge_nodes, link_bound
from clusterbench.errors import BadInput


def flagged(values: dict[str, float], threshold: float = 0.10) -> list[str]:
    return [n.host for n in judge_nodes(values, threshold) if n.flagged]


def test_a_node_must_be_past_both_the_relative_and_the_robust_bound():
    # 22 % below four nodes that agree within 1 %: flagged
    assert flagged({"h01": 100, "h02": 101, "h03": 78, "h04": 99.5, "h05": 100.5}) == ["h03"]
    # 5 % below: inside the relative bound, however tight the others
    assert flagged({"h01": 100, "h02": 100.1, "h03": 95, "h04": 99.9}) == []
    # 20 % off, but the others spread as much: the robust bound excuses it
    assert flagged({"h01": 100, "h02": 120, "h03": 80, "h04": 110, "h05": 90}) == []
    # the others agree exactly (MAD 0): the relative bound decides
    assert flagged({"h01": 100, "h02": 100, "h03": 100, "h04": 80}) == ["h04"]
    # two nodes cannot say which one is odd
    assert flagged({"h01": 100, "h02": 50}) == []


def test_leave_one_out_on_four_nodes_flags_the_slow_node_not_the_noisy_one():
    # seen on the test cluster: h03 capped, h04 noisy; on all four nodes the MAD excused h03
    nodes = {n.host: n for n in judge_nodes({"h01": 399, "h02": 450, "h03": 110, "h04": 587}, 0.5)}
    assert [h for h, n in nodes.items() if n.flagged] == ["h03"]
    assert nodes["h03"].ratio == pytest.approx(110 / 424.5) and nodes["h03"].z < -3.5


def test_link_bound_is_the_upper_quartile_so_a_bad_port_does_not_hide():
    # 4 nodes, h03's port at a third: 6 of 12 links slow; the median would sit between
    links = [24.0] * 6 + [8.0] * 6
    ref, bound = link_bound(links, 0.25)
    assert ref == 24.0 and bound == 18.0


def test_environment_table_names_the_value_on_most_nodes_and_the_nodes_that_differ():
    envs = {h: {"host.name": h, "kernel.shmmni": 4096, "kernel.release": "6.1", "memory.free_bytes": i}
            for i, h in enumerate(["h01", "h02", "h03", "h04"])}
    envs["h03"]["kernel.shmmni"] = 8192
    del envs["h04"]["kernel.release"]
    diffs = env_differences(envs)
    assert [(d.key, d.most, d.differ) for d in diffs] == [
        ("kernel.release", "6.1", {"h04": "(absent)"}), ("kernel.shmmni", "4096", {"h03": "8192"})]


@pytest.mark.parametrize("text, value", [("10%", 0.10), ("10 %", 0.10), ("0.25", 0.25)])
def test_thresholds_read_as_fraction_or_percentage(text, value):
    assert parse_fraction(text, "threshold") == pytest.approx(value)


@pytest.mark.parametrize("text", ["0", "100%", "ten", "-5%"])
def test_bad_threshold_is_one_clear_line(text):
    with pytest.raises(BadInput, match="--threshold"):
        parse_fraction(text, "threshold")


@pytest.mark.parametrize("args, message", [
    ([], "run cluster needs nodes: --hostfile FILE"),
    (["--hostfile", "{hosts}", "--only=stream,gpu"], "--only stream,gpu: no part gpu"),
    (["--hostfile", "{hosts}", "--threshold=ten"], "--threshold ten: give a fraction"),
    (["--hostfile", "{hosts}", "--colour=red"], "run cluster: unknown option --colour"),
    (["--hostfile", "{hosts}", "--np", "4"], "run cluster chooses ranks, placement and launcher itself: drop --np"),
    (["--hostfile", "{one}"], "run cluster: 1 node(s) found"),
])
def test_bad_input_is_one_line_exit_2_and_no_run_stored(cli, tmp_path, args, message):
    (tmp_path / "hosts").write_text("n01\nn02\n")
    (tmp_path / "one").write_text("n01\n")
    args = [a.format(hosts=tmp_path / "hosts", one=tmp_path / "one") for a in args]
    r = cli("run", "cluster", *args, env={"CLUSTERBENCH_TESTBED": "", "SLURM_JOB_ID": ""})
    assert r.status == 2 and message in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert "no store at" in cli("list").stderr   # not even a store file was created


def test_links_are_judged_within_their_class_same_switch_or_across_the_trunk():
    from clusterbench.cluster.analysis import link_matrix
    from clusterbench.cluster.execute import switch_of
    from clusterbench.sample import Sample

    switches = switch_of("h01:sw1,h02:sw1,h03:sw2,h04:sw2")
    envs = {h: {"fabric.switch": s} for h, s in switches.items()}
    rate = {("h01", "h02"): 100, ("h02", "h01"): 100, ("h03", "h04"): 100, ("h04", "h03"): 60}
    samples = [Sample("link_bandwidth", "n/a", None, "MiB/s", rate.get((a, b), 30),
                      qualifiers=(("src_host", a), ("dst_host", b)))
               for a in switches for b in switches if a != b]
    links = {(lk.src, lk.dst): lk for lk in link_matrix([{"name": "link matrix (mpiGraph shift pattern)",
                                                           "samples": samples}], envs, 0.25)}
    assert links[("h01", "h03")].link_class == "across trunk" and links[("h01", "h02")].link_class == "same switch"
    # 30 MiB/s across the trunk is what every trunk link does: not flagged; 60 on a switch is
    assert [k for k, lk in links.items() if lk.flagged] == [("h04", "h03")]
    with pytest.raises(BadInput, match="--topology"):
        switch_of("h01sw1")


def test_a_grid_engine_jobs_nodes_come_from_its_pe_hostfile(tmp_path, monkeypatch):
    from clusterbench.cluster.execute import find_hosts

    pe = tmp_path / "pe_hostfile"
    pe.write_text("n03 2 all.q@n03 UNDEFINED\nn01 2 all.q@n01 UNDEFINED\nn03 1 long.q@n03 UNDEFINED\n")
    for var in ("SLURM_JOB_ID", "SLURM_JOB_NODELIST", "SLURM_NODELIST", "CLUSTERBENCH_TESTBED"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("PE_HOSTFILE", str(pe))
    monkeypatch.setenv("JOB_ID", "17")
    # in the job's order, each once; mpiexec without a host file (Hydra and
    # Open MPI read $PE_HOSTFILE themselves)
    assert find_hosts(None) == (["n03", "n01"], None, "mpiexec")
    monkeypatch.delenv("JOB_ID")   # a stale PE_HOSTFILE outside a job is not an allocation
    with pytest.raises(BadInput, match="needs nodes"):
        find_hosts(None)
