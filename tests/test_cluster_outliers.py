"""The outlier rules of a cluster run (clusterbench.analysis.cluster.outliers) and
the environment table, on numbers chosen to sit either side of each bound."""
from __future__ import annotations

import os

import pytest

from clusterbench.analysis.cluster.analysis import env_differences, parse_fraction, split_resends
from clusterbench.analysis.cluster.outliers import judge_nodes, link_bound
from clusterbench.errors import BadInput


def flagged(values: dict[str, float], threshold: float = 0.10) -> list[str]:
    return [n.host for n in judge_nodes(values, threshold) if n.flagged]


def _resends(bytes_pct: float, segments_twice: int, segments: int = 3660) -> tuple:
    rec = {"tcp_bytes_sent": 5_245_711, "tcp_bytes_retransmitted": round(5_245_711 * bytes_pct / 100),
           "tcp_segments_sent": segments, "tcp_segments_duplicated": segments_twice}
    lost, copied = split_resends(bytes_pct, rec)
    return round(lost, 2), round(copied, 2)


@pytest.mark.parametrize("resent, twice, lost, copied", [
    (0.44, 16, 0.0, 0.0),      # a healthy link on a loaded node: every resend answered by a D-SACK (spurious)
    (1.31, 48, 0.0, 0.0),
    (9.38, 0, 9.38, 0.0),      # a shaped port dropping: resends that no D-SACK answers
    (0.08, 530, 0.0, 14.4),    # a port copying frames: D-SACKs that no resend explains
    (0.0, 0, 0.0, 0.0),
])
def test_resends_a_dsack_answers_are_spurious_and_dsacks_no_resend_explains_are_network_copies(resent, twice, lost,
                                                                                             copied):
    """Measured on the test cluster, two suites of four workers side by side (2026-12-08): healthy
    links resent 0.2 to 1.4 % a repetition and were flagged lossy, every resend matched by as many
    D-SACKs; a dropping port's resends had none, a duplicating port's copies were resent by no one."""
    assert _resends(resent, twice) == (lost, copied)


def test_a_record_without_tcp_or_dsack_counts_is_neither_loss_nor_copies():
    assert split_resends(0.0, {"tcp_bytes_sent": 0}) == (None, None)       # the library carried the link otherwise
    assert split_resends(2.0, {"tcp_bytes_sent": 100}) == (2.0, None)      # a kernel without D-SACK counts


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


def test_link_bound_is_the_best_link_so_a_bad_port_does_not_hide():
    # 4 nodes, h03's port at a third: 6 of 12 links slow; the median would sit between
    links = [24.0] * 6 + [8.0] * 6
    assert link_bound(links, 0.25) == (24.0, 18.0, "the class's best link")


def test_link_bound_is_the_links_rate_when_that_is_higher():
    # every link of the class at 60 MiB/s on a 1 Gbit/s link (119 MiB/s): all slow, none would be flagged alone
    ref, bound, what = link_bound([60.0] * 12, 0.25, 1e9)
    assert what == "the link's rate" and ref == pytest.approx(119.2, abs=0.1) and bound > 60
    # a link measured above its stated rate: the best link stays the reference
    assert link_bound([130.0, 128.0], 0.25, 1e9)[2] == "the class's best link"


def test_a_node_whose_repetitions_overlap_the_others_is_not_flagged():
    # an 8-byte latency: h02's median 3x the others', but its repetitions scatter through theirs
    medians = {"h01": 0.11, "h02": 0.33, "h03": 0.12, "h04": 0.115}
    reps = {"h01": [0.11, 0.35, 0.10], "h02": [0.12, 0.33, 0.38], "h03": [0.12, 0.11, 0.30],
            "h04": [0.115, 0.36, 0.11]}
    assert flagged(medians) == ["h02"]   # the medians alone would flag it
    judged = {n.host: n for n in judge_nodes(medians, 0.10, reps)}
    assert not any(n.flagged for n in judged.values()) and judged["h02"].apart_from == 0


def test_a_node_whose_repetitions_all_clear_the_others_is_flagged():
    # h03's Himeno capped: every repetition below every repetition of the others, even when all are noisy
    reps = {"h01": [400, 430, 390], "h02": [450, 380, 420], "h03": [110, 150, 130], "h04": [587, 370, 500]}
    judged = {n.host: n for n in judge_nodes({h: sorted(v)[1] for h, v in reps.items()}, 0.5, reps)}
    assert [h for h, n in judged.items() if n.flagged] == ["h03"] and judged["h03"].apart_from == 3
    # on a loaded machine the others' medians scatter enough for the Z to excuse h03; its repetitions do not
    reps = {"h01": [100, 150, 400], "h02": [300, 160, 350], "h03": [40, 45, 50], "h04": [500, 170, 420]}
    medians = {h: sorted(v)[1] for h, v in reps.items()}
    assert flagged(medians, 0.5) == []
    assert [n.host for n in judge_nodes(medians, 0.5, reps) if n.flagged] == ["h03"]


def test_a_node_sentence_prints_a_memory_rate_as_its_table_does_not_in_exponent_notation():
    from clusterbench.analysis.cluster.analysis import ClusterView, node_figures
    from clusterbench.analysis.cluster.findings import node_sentences
    from clusterbench.results.sample import Sample

    # stream triad in MiB/s has five digits: ".4g" wrote them "7.06e+04 vs 9.04e+04"
    triad = {"h01": [90512.3, 90490.1, 90530.7], "h02": [90400.2, 90410.8, 90390.5],
             "h03": [70600.4, 70610.9, 70590.2], "h04": [90300.6, 90310.1, 90320.3], "h05": [90450.0, 90460.0, 90440.0]}
    steps = [{"name": "stream", "host": h, "kernel": "stream", "status": "ok",
              "samples": [Sample("triad", "best", "best", "MiB/s", v, repetition=i) for i, v in enumerate(vs)]}
             for h, vs in triad.items()]
    [fig] = node_figures(steps, 0.10)
    [said] = node_sentences(ClusterView(sorted(triad), figures=[fig]))
    assert said.startswith("h03: ") and "(70,600 vs 90,400 MiB/s" in said and "e+" not in said, said


def test_a_figure_whose_nodes_share_one_device_says_so_instead_of_flagging_each():
    from clusterbench.analysis.cluster.analysis import ClusterView, node_figures
    from clusterbench.analysis.cluster.findings import node_sentences
    from clusterbench.results.sample import Sample

    # seen on the test cluster: a cold read 883 to 2,995 MiB/s on four namespaces reading one disk
    cold = {"h01": [883, 900, 890], "h02": [2995, 2950, 2980], "h03": [1500, 1490, 1510], "h04": [1400, 1420, 1410]}
    steps = [{"name": "seqio", "host": h, "kernel": "seqio", "status": "ok",
              "samples": [Sample("read", "cold", "cold", "MiB/s", v, repetition=i, directory="/scratch")
                          for i, v in enumerate(vs)]} for h, vs in cold.items()]
    one_disk = {h: {"target./scratch.device": "sda", "system.boot_time": "2026-11-28T01:00:00"} for h in cold}
    [fig] = node_figures(steps, 0.10, one_disk)
    assert fig.shared_device == "sda on one machine" and fig.flagged == []
    [said] = node_sentences(ClusterView(sorted(cold), figures=[fig]))
    assert "share one device (sda on one machine), 883 to 2,995 MiB/s" in said
    # the same device name on machines booted apart: four disks, each node judged
    apart_machines = {h: {"target./scratch.device": "sda", "system.boot_time": f"2026-11-2{i}T01:00:00"}
                      for i, h in enumerate(cold)}
    [fig] = node_figures(steps, 0.10, apart_machines)
    assert fig.shared_device == "" and {n.host for n in fig.flagged} == {"h01", "h02"}


def test_nodes_left_on_one_device_beside_a_node_with_its_own_are_not_judged_but_that_node_is():
    from clusterbench.analysis.cluster.analysis import ClusterView, node_figures
    from clusterbench.analysis.cluster.findings import node_sentences
    from clusterbench.results.sample import Sample

    # the test cluster with h04's scratch on a throttled disk of its own (tests/test_cluster_run.py):
    # h03's cold read 73 % above the median, its repetitions clear of h04's and h02's, was flagged
    cold = {"h01": [1558, 1400, 1700], "h02": [723, 697, 800], "h03": [1971, 2366, 1900], "h04": [4.0, 3.9, 4.1]}
    steps = [{"name": "seqio", "host": h, "kernel": "seqio", "status": "ok",
              "samples": [Sample("read", "cold", "cold", "MiB/s", v, repetition=i, directory="/scratch")
                          for i, v in enumerate(vs)]} for h, vs in cold.items()]
    boot = {"system.boot_time": "2026-12-06T01:00:00"}
    envs = {h: {"target./scratch.device": "loop0" if h == "h04" else "vda", **boot} for h in cold}
    [fig] = node_figures(steps, 0.25, envs)
    assert [n.host for n in fig.flagged] == ["h04"] and fig.shared_device == ""
    assert fig.device_sharers == {h: "vda on one machine" for h in ("h01", "h02", "h03")}
    said = node_sentences(ClusterView(sorted(cold), figures=[fig], threshold=0.25))
    assert said[0].startswith("h04: disk in the scratch directory (seqio), read (cold) 100 % below the median of 4 nodes"), said
    assert said[1] == ("disk in the scratch directory (seqio), read (cold): h01, h02, h03 read one device (vda on one machine), 697 to 2,366 MiB/s: "
                       "the device's spread, not judged per node"), said


def test_a_part_swept_by_a_list_is_judged_at_each_of_its_points():
    """`run cluster --stream.array-size=1m,64m` plans a step per point,
    "stream [array-size=1m]" and "stream [array-size=64m]". The analysis
    looked each up in the suite by that whole name, found no part, and named
    both points' figures "stream copy": one figure, each node's last point
    overwriting its first, so h04, slow at 64 MiB only, was judged on
    whichever point came last."""
    from clusterbench.analysis.cluster.analysis import node_figures
    from clusterbench.results.sample import Sample

    rates = {"1m": {"h01": 9000, "h02": 9100, "h03": 8900, "h04": 9050},
             "64m": {"h01": 5000, "h02": 5100, "h03": 4900, "h04": 2000}}
    steps = [{"name": f"stream [array-size={size}]", "host": h, "kernel": "stream", "status": "ok",
              "params": {"threads": 0, "array-size": size}, "ranks": 1, "ranks_per_node": None,
              "swept": ["array-size"],
              "samples": [Sample("copy", None, None, "MiB/s", v * (1 + i / 1000), repetition=i) for i in range(3)]}
             for size in ("64m", "1m") for h, v in rates[size].items()]
    figs = {f.name: f for f in node_figures(steps, 0.10)}
    assert set(figs) == {"memory bandwidth (STREAM), array size 1 MiB, copy",
                         "memory bandwidth (STREAM), array size 64 MiB, copy"}, set(figs)
    assert [n.host for n in figs["memory bandwidth (STREAM), array size 64 MiB, copy"].flagged] == ["h04"]
    assert figs["memory bandwidth (STREAM), array size 1 MiB, copy"].flagged == []


def test_nodes_of_one_machine_run_at_once_are_contention_said_once_not_flagged():
    """#40, by hand: `run cluster` all at once on the test cluster's four
    namespaces of one 2-core machine flagged h04's 8 B pingpong at 4,010 us
    against 0.28 us on two nodes whose ranks won the CPUs."""
    from clusterbench.analysis.cluster.analysis import ClusterView, node_figures, ran_at_once
    from clusterbench.analysis.cluster.findings import node_sentences
    from clusterbench.results.sample import Sample

    lat = {"h01": [3850, 3900, 3800], "h02": [0.28, 0.27, 0.29], "h03": [0.26, 0.25, 0.27], "h04": [4010, 4050, 3990]}
    steps = [{"name": "mpi", "host": h, "kernel": "mpi", "status": "ok",
              "samples": [Sample("pingpong", "n/a", None, "us", v, repetition=i) for i, v in enumerate(vs)]}
             for h, vs in lat.items()]
    one_machine = {h: {"system.boot_time": "2026-11-28T01:00:00"} for h in lat}
    [fig] = node_figures(steps, 0.25, one_machine, at_once=True)
    assert fig.shared_machine and fig.flagged == []
    [said] = node_sentences(ClusterView(sorted(lat), figures=[fig], threshold=0.25))
    assert said.startswith("the nodes ran at once on one machine: ") and "not judged per node" in said
    # one at a time on the same machine, or at once on machines booted apart: each node judged
    [fig] = node_figures(steps, 0.25, one_machine, at_once=False)
    assert not fig.shared_machine and fig.flagged
    apart = {h: {"system.boot_time": f"2026-11-2{i}T01:00:00"} for i, h in enumerate(lat)}
    [fig] = node_figures(steps, 0.25, apart, at_once=True)
    assert not fig.shared_machine and fig.flagged
    # how the run ran is read from the command that made it
    assert ran_at_once({"command": "clusterbench run cluster --hostfile h"})
    assert not ran_at_once({"command": "clusterbench run cluster --one-at-a-time --hostfile h"})
    # read as `run` reads it: a value after a space, and an explicit false
    assert not ran_at_once({"command": "clusterbench run cluster --one-at-a-time true --hostfile h"})
    assert ran_at_once({"command": "clusterbench run cluster --one-at-a-time=false --hostfile h"})


@pytest.mark.parametrize("command, expected", [
    ("clusterbench run cluster --threshold=20% --hostfile h", {"threshold": 0.2}),
    # the form run cluster's own help gives: the run judged with 20 %, its show and report must too
    ("clusterbench run cluster --threshold 20% --link-threshold 0.4 --hostfile h",
     {"threshold": 0.2, "link_threshold": 0.4}),
    ("clusterbench run --repeat 3 cluster --link-threshold=30%", {"link_threshold": 0.3}),
    ("clusterbench run cluster --threshold lots", {}),          # not a fraction: the defaults
    ("clusterbench run cluster --label 'unbalanced", {}),      # does not split: the defaults
])
def test_a_cluster_runs_thresholds_are_read_back_as_the_run_read_them(command, expected):
    from clusterbench.analysis.cluster.analysis import thresholds_of

    assert thresholds_of({"command": command}) == expected


def test_environment_table_names_the_value_on_most_nodes_and_the_nodes_that_differ():
    envs = {h: {"host.name": h, "kernel.shmmni": 4096, "kernel.release": "6.1", "memory.free_bytes": i}
            for i, h in enumerate(["h01", "h02", "h03", "h04"])}
    envs["h03"]["kernel.shmmni"] = 8192
    del envs["h04"]["kernel.release"]
    diffs = env_differences(envs)
    assert [(d.key, d.most, d.differ) for d in diffs] == [
        ("kernel.release", "6.1", {"h04": "(absent)"}), ("kernel.shmmni", "4096", {"h03": "8192"})]


def test_environment_values_that_differ_are_shown_as_a_person_reads_them():
    """A memory cgroup's limit on one node read "h04 has 1073741824" in the
    report; byte counts and flags read as `env --diff` shows them."""
    envs = {h: {"host.name": h, "memory.cgroup_limit_bytes": 64 << 30, "cpu.smt_active": True}
            for h in ["h01", "h02", "h03", "h04"]}
    envs["h04"]["memory.cgroup_limit_bytes"] = 1 << 30
    envs["h02"]["cpu.smt_active"] = False
    diffs = {d.key: (d.most, d.differ) for d in env_differences(envs)}
    assert diffs == {"memory.cgroup_limit_bytes": ("64 GiB", {"h04": "1 GiB"}), "cpu.smt_active": ("yes", {"h02": "no"})}


def test_a_run_whose_parts_were_all_skipped_counts_its_nodes_not_the_launching_host():
    """A cluster run on two GPU-less nodes with only the GPU parts asked for
    stores no step; its snapshots are the two nodes' and the launching
    host's, which is not a node."""
    from clusterbench.analysis.cluster.analysis import analyse
    from clusterbench.analysis.cluster.findings import paragraph

    envs = {h: {"host.name": h} for h in ("login1", "n01", "n02")}
    view = analyse({"steps": [], "environments": envs, "host": "login1", "kind": "cluster"})
    assert view.hosts == ["n01", "n02"] and paragraph(view).startswith("2 nodes, 0 per-node figures")
    # a run whose one snapshot is the launching host's (a one-node run) still counts it
    assert analyse({"steps": [], "environments": {"n01": {}}, "host": "n01", "kind": "cluster"}).hosts == ["n01"]


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
    (["--hostfile", "{hosts}", "--np", "4"], "run cluster places its ranks itself"),
    (["--hostfile", "{hosts}", "--ppn", "2"], "and picks the launcher the nodes came with: drop --ppn"),
    (["--hostfile", "{hosts}", "--launcher", "srun"], "drop --launcher"),
    (["--hostfile", "{hosts}", "--gpus-per-rank", "1"], "a launch of its own: drop --gpus-per-rank"),
    (["--hostfile", "{hosts}", "--setting", "vm.dirty_ratio=5"],
     "--setting changes this host only (its journal, here, restores it), and run cluster measures its nodes"),
    (["--hostfile", "{hosts}", "--setting-a", "thp=never", "--setting-b", "thp=always"],
     "--setting-a/--setting-b change this host only"),
    (["--hostfile", "{hosts}", "--mpi-algorithm", "allreduce=ring"], "drop --mpi-algorithm"),
    (["--hostfile", "{hosts}", "--memory-limit", "1m"], "--memory-limit 1m: at least 16m"),
    (["--hostfile", "{one}"], "run cluster: 1 node(s) found"),
    # a typo in --topology left n02 without a switch in silence
    (["--hostfile", "{hosts}", "--topology", "n01:sw1,nx2:sw2"], "--topology: nx2 is not a node of this run"),
    # ran every node at once in silence
    (["--hostfile", "{hosts}", "--one-at-a-time=yes"], "--one-at-a-time=yes: give it bare (--one-at-a-time)"),
    (["--hostfile", "{hosts}", "--links-one-pair=1"], "--links-one-pair=1: give it bare"),
    # every node failed its seqio after the snapshots, or wrote where its own working directory was
    (["--hostfile", "{hosts}", "--scratch="], "--scratch is empty: give a directory every node has"),
    (["--hostfile", "{hosts}", "--scratch=scratch"], "--scratch scratch: give an absolute path"),
])
def test_bad_input_is_one_line_exit_2_and_no_run_stored(cli, tmp_path, args, message):
    (tmp_path / "hosts").write_text("n01\nn02\n")
    (tmp_path / "one").write_text("n01\n")
    args = [a.format(hosts=tmp_path / "hosts", one=tmp_path / "one") for a in args]
    r = cli("run", "cluster", *args, env={"CLUSTERBENCH_TESTBED": "", "SLURM_JOB_ID": ""})
    assert r.status == 2 and message in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert "no store at" in cli("list").stderr   # not even a store file was created


def test_links_are_judged_within_their_class_same_switch_or_across_the_trunk():
    from clusterbench.analysis.cluster.analysis import link_matrix
    from clusterbench.run.cluster.execute import switch_of
    from clusterbench.results.sample import Sample

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
    from clusterbench.run.cluster.execute import find_hosts

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


def link_steps(matrix: dict[tuple[str, str], float]) -> list[dict]:
    from clusterbench.results.sample import Sample

    return [{"name": "link matrix (mpiGraph shift pattern)",
             "samples": [Sample("link_bandwidth", "n/a", None, "MiB/s", v, qualifiers=(("src_host", a), ("dst_host", b)))
                         for (a, b), v in matrix.items()]}]


# the issue's matrix (#40): h03's port shaped to a third, h02's TCP stack mis-tuned; healthy 106-110 MiB/s
ISSUE_40_MATRIX = {("h01", "h02"): 62.8, ("h01", "h03"): 21.1, ("h01", "h04"): 106,
                   ("h02", "h01"): 8.2, ("h02", "h03"): 16.0, ("h02", "h04"): 25.5,
                   ("h03", "h01"): 20.1, ("h03", "h02"): 16.0, ("h03", "h04"): 37.2,
                   ("h04", "h01"): 110, ("h04", "h02"): 24.6, ("h04", "h03"): 37.0}


def test_a_link_measured_faster_than_its_rate_is_said_not_to_be_a_figure_of_the_link():
    """No transfer outruns its link: a figure above the rate (a receiver
    timed late, before linkmatrix's go word) is named; when every link is
    above it, the rate given is what is wrong."""
    from clusterbench.analysis.cluster.analysis import ClusterView, link_matrix
    from clusterbench.analysis.cluster.findings import link_sentences

    healthy = {(a, b): 22.5 for a in ("h01", "h02", "h03") for b in ("h01", "h02", "h03") if a != b}
    links = link_matrix(link_steps({**healthy, ("h01", "h02"): 29.4}), {}, 0.5, link_bits_per_s=200e6)
    assert [(lk.src, lk.dst) for lk in links if lk.above_rate] == [("h01", "h02")]
    (said,) = link_sentences(ClusterView(["h01", "h02", "h03"], links=links))
    assert said == ("link h01->h02: 29.4 MiB/s is above its link's rate (23.84 MiB/s), so not a figure of the link "
                    "(timed wrong, or the rate known is)")
    # within 5 % of the rate (a rounded nominal rate, a token bucket's burst): nothing said
    assert not any(lk.above_rate for lk in link_matrix(link_steps({**healthy, ("h01", "h02"): 24.5}), {}, 0.5,
                                                       link_bits_per_s=200e6))
    # every link above it: the rate given is wrong
    slow_rate = link_matrix(link_steps(healthy), {}, 0.5, link_bits_per_s=100e6)
    assert link_sentences(ClusterView(["h01", "h02", "h03"], links=slow_rate)) == [
        "every link (6) is above the link's rate known (11.92 MiB/s): give the links' real rate with --link-speed"]
    # the figure above the rate sets no reference: a link at 60 % of the rate is within the 50 %
    # bound of the rate, not flagged against the impossible 29.4 (it was, at 48 % of it)
    links = link_matrix(link_steps({**healthy, ("h01", "h02"): 29.4, ("h02", "h03"): 14.3}), {}, 0.5,
                        link_bits_per_s=200e6)
    assert not any(lk.flagged for lk in links)
    assert {lk.reference_is for lk in links} == {"the link's rate"}
    # every link above it: the rate is wrong, the best link is the reference, a slow one still flagged
    wrong_rate = link_matrix(link_steps({**healthy, ("h02", "h03"): 9.0}), {}, 0.5, link_bits_per_s=50e6)
    assert [(lk.src, lk.dst) for lk in wrong_rate if lk.flagged] == [("h02", "h03")]
    # no rate known: nothing to be above
    assert not any(lk.above_rate for lk in link_matrix(link_steps({**healthy, ("h01", "h02"): 29.4}), {}, 0.5))


def test_the_html_link_table_lists_links_above_their_rate_after_the_flagged_ones():
    """The terminal marks a link above its rate with ^; the HTML page, whose
    table listed only flagged links, lists it too and boxes it in the map."""
    from clusterbench.analysis.cluster.analysis import ClusterView, link_matrix
    from clusterbench.report.cluster_html import link_section

    healthy = {(a, b): 22.5 for a in ("h01", "h02", "h03") for b in ("h01", "h02", "h03") if a != b}
    links = link_matrix(link_steps({**healthy, ("h01", "h02"): 29.4, ("h03", "h01"): 6.0}), {}, 0.5,
                        link_bits_per_s=200e6)
    html = "\n".join(link_section(ClusterView(["h01", "h02", "h03"], links=links)))
    rows = [r for r in html.split("<tr>") if r.startswith('<td class="flag">')]
    assert [r.split("</td>")[0] for r in rows] == ['<td class="flag">h03 -&gt; h01', '<td class="flag">h01 -&gt; h02']
    assert "above the link&#x27;s rate (23.84 MiB/s): not a figure of the link" in rows[1] or \
        "above the link's rate (23.84 MiB/s): not a figure of the link" in rows[1]
    assert "25 % of the link&#x27;s rate" in rows[0]
    # one red box (flagged), one blue (above the rate)
    assert html.count("stroke: #ff0000") + html.count("stroke:#ff0000") == 1
    assert html.count("stroke: #0000ff") + html.count("stroke:#0000ff") == 1
    healthy_html = "\n".join(link_section(ClusterView(["h01", "h02", "h03"],
                                                       links=link_matrix(link_steps(healthy), {}, 0.5))))
    assert "<table>" not in healthy_html


@pytest.mark.parametrize("rate", [1e9, None])
def test_the_issues_matrix_names_h03s_port_and_h02s_send_side_and_nothing_else(rate):
    from clusterbench.analysis.cluster.analysis import ClusterView, link_matrix
    from clusterbench.analysis.cluster.findings import link_sentences

    links = link_matrix(link_steps(ISSUE_40_MATRIX), {}, 0.25, link_bits_per_s=rate)
    # h03<->h04 at a third of the link's rate: flagged now that the faults do not set the reference
    assert {(lk.src, lk.dst) for lk in links if not lk.flagged} == {("h01", "h04"), ("h04", "h01")}
    said = link_sentences(ClusterView(["h01", "h02", "h03", "h04"], links=links))
    assert len(said) == 2, said
    assert said[0].startswith("h02 sends slowly to every node") and "h02's send side" in said[0]
    assert said[1].startswith("every link to and from h03 is slow") and "h03's port" in said[1]
    assert ("the link's rate, 119 MiB/s" if rate else "the class's best link, 110 MiB/s") in said[0]


def test_a_class_all_of_whose_links_are_slow_is_flagged_against_the_links_rate():
    from clusterbench.analysis.cluster.analysis import link_matrix

    matrix = {(a, b): 70.0 for a in ("h01", "h02", "h03") for b in ("h01", "h02", "h03") if a != b}
    assert not any(lk.flagged for lk in link_matrix(link_steps(matrix), {}, 0.25))
    given = {"h01": {"conditions.link_bits_per_s": 1e9}}   # --link-speed 1gbit at run time
    assert all(lk.flagged and lk.reference_is == "the link's rate" for lk in link_matrix(link_steps(matrix), given, 0.25))
    # a veth's nominal 10 Gbit/s behind a 1 Gbit/s shaper says nothing about the path: not used (a NIC
    # speed is used when the best link reaches half of it; 70 of 119 MiB/s does)
    veth = {h: {"net.eth0.speed_mbps": 10000} for h in ("h01", "h02", "h03")}
    assert not any(lk.flagged for lk in link_matrix(link_steps(matrix), veth, 0.25))
    nic = {h: {"net.eth0.speed_mbps": 1000} for h in ("h01", "h02", "h03")}
    assert all(lk.flagged for lk in link_matrix(link_steps(matrix), nic, 0.25))


def test_a_node_that_only_sends_slowly_is_named_by_its_send_side():
    from clusterbench.analysis.cluster.analysis import ClusterView, link_matrix
    from clusterbench.analysis.cluster.findings import link_sentences

    hosts = ["h01", "h02", "h03", "h04"]
    matrix = {(a, b): (20.0 if a == "h02" else 108.0) for a in hosts for b in hosts if a != b}
    said = link_sentences(ClusterView(hosts, links=link_matrix(link_steps(matrix), {}, 0.25)))
    # its 3 sends, not its 3 receives too, which run at the others' rate
    assert said == ["h02 sends slowly to every node (3 links, at most 19 % of the class's best link, 108 MiB/s): "
                    "look at h02's send side (its TCP settings, its transmit path)"]


def test_a_port_shaped_one_way_is_named_by_that_side_and_counts_only_its_slow_links():
    """h03's port shaped to a quarter in one direction only (tc tbf 50mbit on one end of its
    cable, 200 Mbit/s elsewhere; a 3-host test cluster, best of 2 repetitions): the side is
    named, and the count is of the links it explains (its slow ones), not every link it has."""
    from clusterbench.analysis.cluster.analysis import ClusterView, link_matrix
    from clusterbench.analysis.cluster.findings import link_sentences

    hosts = ["h01", "h02", "h03"]
    sends_shaped = {("h01", "h02"): 21.86, ("h01", "h03"): 22.42, ("h02", "h01"): 22.23, ("h02", "h03"): 21.85,
                    ("h03", "h01"): 5.72, ("h03", "h02"): 5.69}
    said = link_sentences(ClusterView(hosts, links=link_matrix(link_steps(sends_shaped), {}, 0.5)))
    assert said == ["h03 sends slowly to every node (2 links, at most 26 % of the class's best link, 22.42 MiB/s): "
                    "look at h03's send side (its TCP settings, its transmit path)"], said
    receives_shaped = {("h01", "h02"): 22.88, ("h01", "h03"): 5.71, ("h02", "h01"): 22.92, ("h02", "h03"): 5.69,
                       ("h03", "h01"): 20.55, ("h03", "h02"): 8.08}
    said = link_sentences(ClusterView(hosts, links=link_matrix(link_steps(receives_shaped), {}, 0.5)))
    # its two receives and its send to h02 (8.08 MiB/s, flagged: the acknowledgements crossing the shaped way)
    assert len(said) == 1 and said[0].startswith("h03 receives slowly from every node (3 links,") \
        and "look at h03's receive side" in said[0], said


def test_the_mistuned_tcp_stack_recorded_on_the_test_cluster_is_h02s_send_side():
    from clusterbench.analysis.cluster.analysis import ClusterView, link_matrix
    from clusterbench.analysis.cluster.findings import link_sentences

    # medians of a run of tests/test_cluster_run.py (200 Mbit/s links, h02: 16 KiB TCP buffers, reno):
    # h02's receives are slow too (its small receive buffer), its sends slower still
    recorded = {("h01", "h02"): 10.7, ("h01", "h03"): 12.5, ("h01", "h04"): 18.2, ("h02", "h01"): 6.0,
                ("h02", "h03"): 5.7, ("h02", "h04"): 3.6, ("h03", "h01"): 12.0, ("h03", "h02"): 10.8,
                ("h03", "h04"): 16.4, ("h04", "h01"): 16.9, ("h04", "h02"): 4.3, ("h04", "h03"): 19.9}
    # at the test cluster's link bound (its links to the partner of the shift's middle round run at 60 %)
    said = link_sentences(ClusterView(["h01", "h02", "h03", "h04"], links=link_matrix(link_steps(recorded), {}, 0.40)))
    assert len(said) == 1 and said[0].startswith("h02 sends slowly to every node") \
        and "look at h02's send side" in said[0], said


def shift_steps(matrix: dict[tuple[str, str], float], hosts: list[str]) -> list[dict]:
    """link_steps with each link's shift round recorded, as linkmatrix writes it."""
    from clusterbench.results.sample import Sample

    n = len(hosts)
    return [{"name": "link matrix (mpiGraph shift pattern)",
             "samples": [Sample("link_bandwidth", "n/a", None, "MiB/s", v, qualifiers=(("src_host", a), ("dst_host", b)),
                                record={"pattern": "shift", "nodes": n, "shift": (hosts.index(b) - hosts.index(a)) % n})
                         for (a, b), v in matrix.items()]}]


# best repetitions of a run on the test cluster beside two busy loops (200 Mbit/s links; h03 shaped to a
# third at both ends, h02 with 16 KiB TCP buffers and reno): h02<->h04, the middle round's pair, run alike
LOADED_BOTH_FAULTS = {("h01", "h02"): 6.67, ("h01", "h03"): 4.44, ("h01", "h04"): 15.96,
                      ("h02", "h01"): 4.16, ("h02", "h03"): 3.15, ("h02", "h04"): 3.33,
                      ("h03", "h01"): 4.22, ("h03", "h02"): 3.15, ("h03", "h04"): 7.19,
                      ("h04", "h01"): 15.12, ("h04", "h02"): 3.37, ("h04", "h03"): 6.89}


def test_a_pair_that_exchanged_both_ways_at_once_does_not_decide_a_nodes_side():
    from clusterbench.analysis.cluster.analysis import ClusterView, link_matrix
    from clusterbench.analysis.cluster.findings import link_sentences

    hosts = ["h01", "h02", "h03", "h04"]
    links = link_matrix(shift_steps(LOADED_BOTH_FAULTS, hosts), {}, 0.50)
    assert {(lk.src, lk.dst) for lk in links if lk.both_ways_at_once} == \
        {("h01", "h03"), ("h03", "h01"), ("h02", "h04"), ("h04", "h02")}
    said = link_sentences(ClusterView(hosts, links=links))
    # h02's sends to h01 at 0.62 of its receives from h01: its send side; with h02<->h04 (3.33 and 3.37)
    # counted as well the sides were 0.78 apart and h02 was called its port
    assert len(said) == 2, said
    assert said[0].startswith("h02 sends slowly to every node") and "h02's send side" in said[0], said
    assert said[1].startswith("every link to and from h03 is slow") and "h03's port" in said[1], said
    no_rounds = link_matrix(link_steps(LOADED_BOTH_FAULTS), {}, 0.50)
    assert "h02's port" in link_sentences(ClusterView(hosts, links=no_rounds))[0]


def test_a_node_whose_cbk_cannot_run_skips_the_cluster_wide_steps_saying_which(tmp_path):
    """A node whose cbk exits before MPI_Init left the link matrix's job over
    every node waiting for its rank forever (Hydra; no step timeout by
    default). Its snapshot already said cbk could not run there."""
    from clusterbench.run.cluster.execute import _skip, nodes_without_cbk, unfit_nodes
    from clusterbench.run.plan import Step
    from clusterbench.run.progress import Progress
    from clusterbench.store import Store

    envs = {"h01": {"cbk.version": "0.9"}, "h02": {"cbk.version_error": "exit status 127: cbk: not found"},
            "h03": {"cbk.version": "0.9"}}
    assert nodes_without_cbk(["h01", "h02", "h03", "h04"], envs) == "h02: exit status 127: cbk: not found"
    assert nodes_without_cbk(["h01", "h03", "h04"], envs) == ""   # h04: no snapshot, nothing said of its cbk
    store = Store(f"sqlite:///{tmp_path / 'r.db'}")
    run = store.begin_run(label=None, command="test", suite="cluster")
    step = Step(kernel="linkmatrix", params={}, repeat=3, ranks=3, name="link matrix (mpiGraph shift pattern)")
    assert _skip(store, run, 0, step, unfit_nodes(["h01", "h02"], envs, {}), Progress(enabled=False)) == "skipped"
    (stored,) = store.steps_of(run)
    assert stored.status == "skipped" and stored.message == (
        "cbk cannot run on every node (h02: exit status 127: cbk: not found), and a job over every node would "
        "wait for it")


@pytest.mark.parametrize("scontrol, said", [
    ("#!/bin/sh\necho 'slurm_load_ctl_conf error: Unable to contact slurm controller' >&2\nexit 1\n",
     "failed (slurm_load_ctl_conf error: Unable to contact slurm controller)"),
    (None, "could not run (No such file or directory)"),
])
def test_inside_an_allocation_a_failing_scontrol_is_said_not_a_request_for_an_allocation(cli, tmp_path, scontrol,
                                                                                         said):
    """Inside a Slurm job whose scontrol failed, run cluster said it needs
    nodes 'a Slurm allocation (sbatch -N 4)', and dropped scontrol's error;
    without scontrol on PATH it was a traceback."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    if scontrol:
        (bin_dir / "scontrol").write_text(scontrol)
        (bin_dir / "scontrol").chmod(0o755)
    import sys

    env = {"CLUSTERBENCH_TESTBED": "", "SLURM_JOB_ID": "42", "SLURM_JOB_NODELIST": "n[01-02]",
           "PATH": f"{bin_dir}:{os.path.dirname(sys.executable)}:/usr/bin:/bin" if scontrol else
           f"{bin_dir}:{os.path.dirname(sys.executable)}"}
    r = cli("run", "cluster", env=env)
    assert r.status == 2 and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert f"in Slurm job 42, `scontrol show hostnames n[01-02]` {said}: give the nodes with --hostfile" in r.stderr


def link_steps_with_retransmits(matrix: dict[tuple[str, str], float],
                                resent_pct: dict[tuple[str, str], list[float]]) -> list[dict]:
    """link_steps, with linkmatrix's link_retransmits records: each link's repetitions' percentages."""
    from clusterbench.results.sample import Sample

    steps = link_steps(matrix)
    steps[0]["samples"] += [Sample("link_retransmits", "n/a", None, "%", pct, qualifiers=(("src_host", a), ("dst_host", b)),
                                   record={"tcp_bytes_sent": 4 << 20})
                            for (a, b), reps in resent_pct.items() for pct in reps]
    return steps


HOSTS_4 = ("h01", "h02", "h03", "h04")


def test_a_port_that_drops_packets_is_named_by_its_links_retransmissions_not_twice_when_slow():
    """Packet loss hides from a link's best bandwidth and median latency; what TCP sent again
    (linkmatrix's link_retransmits) shows it. Every link of h04 resending is h04's port; a slow
    port's resends (the queue before a slow port drops what overflows) are not said again; a lone
    lossy link is listed alone; one repetition's burst is not loss (the median decides)."""
    from clusterbench.analysis.cluster.analysis import ClusterView, link_matrix
    from clusterbench.analysis.cluster.findings import loss_sentences

    healthy = {(a, b): 22.5 for a in HOSTS_4 for b in HOSTS_4 if a != b}
    quiet = {pair: [0.0, 0.0, 0.0] for pair in healthy}
    lossy_h04 = {**quiet, **{pair: [2.0, 2.6 + 0.1 * (pair[0] == "h04"), 3.1] for pair in healthy if "h04" in pair},
                 ("h01", "h02"): [0.0, 4.0, 0.0]}   # one loaded repetition overflowed a queue
    links = link_matrix(link_steps_with_retransmits(healthy, lossy_h04), {}, 0.5)
    assert sorted((lk.src, lk.dst) for lk in links if lk.lossy) == sorted(p for p in healthy if "h04" in p)
    assert loss_sentences(ClusterView(list(HOSTS_4), links=links)) == [
        "every link to and from h04 resends (6 links: TCP sent 2.6 to 2.7 % of their bytes again): "
        "look at h04's port or cable (packet loss both ways)"]
    # h03's port shaped to a quarter: slow, and its queue drops; said once, as slow
    shaped = {**healthy, **{pair: 5.5 for pair in healthy if "h03" in pair}}
    drops = {**quiet, **{pair: [4.0, 7.7, 11.1] for pair in healthy if pair[1] == "h03"}}
    links = link_matrix(link_steps_with_retransmits(shaped, drops), {}, 0.5)
    assert [lk for lk in links if lk.lossy] and loss_sentences(ClusterView(list(HOSTS_4), links=links)) == []
    # one lossy link, no node behind it
    links = link_matrix(link_steps_with_retransmits(healthy, {**quiet, ("h02", "h03"): [1.5, 1.8, 1.2]}), {}, 0.5)
    assert loss_sentences(ClusterView(list(HOSTS_4), links=links)) == [
        "link h02->h03: TCP sent 1.5 % of its bytes again (packet loss)"]
    # no TCP socket (InfiniBand, shared memory): no record, no percentage; a link no TCP byte crossed
    # has a record of 0 bytes, which says nothing either
    links = link_matrix(link_steps(healthy), {}, 0.5)
    assert all(lk.retransmit_pct is None and not lk.lossy for lk in links)
    from clusterbench.results.sample import Sample

    steps = link_steps(healthy)
    steps[0]["samples"].append(Sample("link_retransmits", "n/a", None, "%", 0.0, record={"tcp_bytes_sent": 0},
                                      qualifiers=(("src_host", "h01"), ("dst_host", "h02"))))
    assert link_matrix(steps, {}, 0.5)[0].retransmit_pct is None


def test_a_port_that_duplicates_packets_is_named_by_the_segments_its_links_delivered_twice():
    """A duplicated frame slows nothing and is resent by nobody; the D-SACKs its sender received
    (link_retransmits' tcp_segments_duplicated of tcp_segments_sent) show it. Every link of h04 at
    2.2 to 3.6 % (the test cluster with h04's cable duplicating 3 % each way) is h04's port; a
    resending link's few spurious retransmissions (at most 0.17 % there) are not; a lone link is
    listed alone; a kernel without the count (no field) judges nothing."""
    from clusterbench.analysis.cluster.analysis import ClusterView, link_matrix
    from clusterbench.analysis.cluster.findings import duplicate_sentences, why_listed
    from clusterbench.results.sample import Sample

    healthy = {(a, b): 22.5 for a in HOSTS_4 for b in HOSTS_4 if a != b}

    def steps_with(twice: dict[tuple[str, str], list[int]] | None) -> list[dict]:
        steps = link_steps(healthy)
        fields = lambda n: {} if n is None else {"tcp_segments_sent": 10000, "tcp_segments_duplicated": n}
        steps[0]["samples"] += [Sample("link_retransmits", "n/a", None, "%", 0.0,
                                       qualifiers=(("src_host", a), ("dst_host", b)),
                                       record={"tcp_bytes_sent": 4 << 20, **fields(n)})
                                for (a, b) in healthy for n in (twice.get((a, b), [0] * 3) if twice else [None])]
        return steps

    h04 = {pair: [220, 290 + 10 * (pair[0] == "h04"), 360] for pair in healthy if "h04" in pair}
    links = link_matrix(steps_with({**h04, ("h01", "h02"): [17, 3, 0]}), {}, 0.5)
    assert sorted((lk.src, lk.dst) for lk in links if lk.duplicating) == sorted(h04)
    assert duplicate_sentences(ClusterView(list(HOSTS_4), links=links)) == [
        "every link to and from h04 delivers segments twice (6 links: the network delivered 2.9 to 3 % of their "
        "segments twice): look at h04's port or its switch"]
    assert why_listed(next(lk for lk in links if lk.src == "h04")) == \
        "the network delivered 3 % of its segments twice (duplicated packets)"
    links = link_matrix(steps_with({("h02", "h03"): [80, 90, 100]}), {}, 0.5)
    assert duplicate_sentences(ClusterView(list(HOSTS_4), links=links)) == [
        "link h02->h03: the network delivered 0.9 % of its segments twice: look at the ports of h02 and h03 "
        "or the switch between them"]
    links = link_matrix(steps_with(None), {}, 0.5)
    assert all(lk.duplicate_pct is None and not lk.duplicating for lk in links)


def test_a_port_that_drops_one_percent_is_named_by_every_link_it_carries():
    """h03's port dropping 1 % of its frames each way (nftables on the test cluster's bridge, 3
    hosts, medians of 3 repetitions): TCP resent 0.56 to 1.5 % on each of its links, 0.0 on the
    other two. At a bound of 1 % only h03->h02 was lossy and the summary named that link alone;
    every link to and from h03 resends, so it is h03's port."""
    from clusterbench.analysis.cluster.analysis import ClusterView, link_matrix
    from clusterbench.analysis.cluster.findings import loss_sentences

    hosts = ("h01", "h02", "h03")
    recorded = {("h01", "h02"): 22.2, ("h01", "h03"): 22.2, ("h02", "h01"): 22.59, ("h02", "h03"): 22.54,
                ("h03", "h01"): 22.4, ("h03", "h02"): 22.18}
    resent = {("h01", "h02"): [0.0] * 3, ("h02", "h01"): [0.0] * 3, ("h01", "h03"): [0.69] * 3,
              ("h02", "h03"): [0.71] * 3, ("h03", "h01"): [0.56] * 3, ("h03", "h02"): [1.5] * 3}
    links = link_matrix(link_steps_with_retransmits(recorded, resent), {}, 0.5)
    assert loss_sentences(ClusterView(list(hosts), links=links)) == [
        "every link to and from h03 resends (4 links: TCP sent 0.56 to 1.5 % of their bytes again): "
        "look at h03's port or cable (packet loss both ways)"]


def test_a_node_whose_scratch_is_another_file_system_is_one_finding_not_thirteen_keys():
    """h03's --scratch on a tmpfs of its own where the others have the machine's ext4 disk (the
    snapshots of a 3-host test cluster run): its device, disks, model, read-ahead, scheduler, size,
    write cache ... differed too, each a sentence of the summary, the one fact lost among them. Said
    once, as its mount; the table keeps every key. A key of the directory that differs on a node
    whose mount does not is its own finding."""
    from clusterbench.analysis.cluster.analysis import ClusterView
    from clusterbench.analysis.cluster.findings import env_sentences

    t = "target./tmp/me/scratch."
    disk = {t + "device": "vda", t + "disks": "vda", t + "fs_type": "ext4",
            t + "model_error": "no such file /sys/devices/pci0000:00/0000:00:02.0/virtio1/block/vda/device/model",
            t + "mount_options": "rw,relatime,discard", t + "mount_point": "/", t + "read_ahead_kb": 8192,
            t + "rotational": True, t + "scheduler": "mq-deadline", t + "size_bytes": 274877906944,
            t + "source": "/dev/vda", t + "write_cache": "write back"}
    tmpfs = {t + "device_error": "tmpfs on cbkprobe is not a local block device (device 0:59 not in /sys/dev/block)",
             t + "fs_type": "tmpfs", t + "mount_options": "rw,relatime,size=65536k", t + "mount_point": "/tmp/me/scratch",
             t + "source": "cbkprobe"}
    envs = {"h01": disk, "h02": dict(disk), "h03": tmpfs, "h04": {**disk, t + "scheduler": "none"}, "h05": dict(disk)}
    view = ClusterView(sorted(envs), env=env_differences(envs))
    assert len(view.env) == 13
    assert env_sentences(view) == [
        "file system of /tmp/me/scratch: h03 has tmpfs from cbkprobe mounted at /tmp/me/scratch, the other nodes "
        "ext4 from /dev/vda mounted at / (9 more keys of /tmp/me/scratch differ with it, in the table)",
        "/tmp/me/scratch, I/O scheduler: h03 has (absent), h04 has none, the other nodes mq-deadline"], env_sentences(view)


def test_the_figures_of_one_machine_run_at_once_are_listed_apart_though_their_names_hold_commas():
    """A figure's name is its part's title, the phase and the condition
    ("memory bandwidth (STREAM), copy (best)"): listed with ", " between them,
    four stream figures read as eight."""
    from clusterbench.analysis.cluster.analysis import ClusterView, node_figures
    from clusterbench.analysis.cluster.findings import node_sentences
    from clusterbench.results.sample import Sample

    rates = {"h01": [9000, 9100, 9050], "h02": [4000, 4100, 4050]}
    steps = [{"name": "stream", "host": h, "kernel": "stream", "status": "ok",
              "samples": [Sample(phase, "n/a", "best", "MiB/s", v, repetition=i)
                          for phase in ("copy", "triad") for i, v in enumerate(vs)]}
             for h, vs in rates.items()]
    one_machine = {h: {"system.boot_time": "2026-11-28T01:00:00"} for h in rates}
    figures = node_figures(steps, 0.10, one_machine, at_once=True)
    [said] = node_sentences(ClusterView(sorted(rates), figures=figures, threshold=0.10))
    assert said.startswith("the nodes ran at once on one machine: memory bandwidth (STREAM), copy (best) / "
                           "memory bandwidth (STREAM), triad (best) differ by contention"), said
