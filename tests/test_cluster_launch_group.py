"""run cluster's all-at-once launch group (run/cluster/execute.py `_run_together`):
a launch that ended is handed on even when a later one of its group fails to
start, so the node that ran is stored with what it printed (#34)."""
from __future__ import annotations

import re
import threading

import pytest

from clusterbench.run.cluster import execute


def test_a_launch_that_started_is_handed_on_when_the_next_fails_to_start(tmp_path, monkeypatch):
    # before the fix no waiter was started for it: its end was awaited this long, and never came
    monkeypatch.setattr(execute, "STOPPED_OUTPUT_WAIT_S", 5.0)
    ran = execute.NodeLaunch("h01", 1, ["sh", "-c", "echo measured"])
    missing = execute.NodeLaunch("h02", 2, [str(tmp_path / "no-such-launcher")])
    handed = []
    with pytest.raises(FileNotFoundError):
        execute._run_together([ran, missing], {}, None,
                              lambda lc, stopped=False: handed.append((lc.host, stopped, lc.out)))
    assert [(host, stopped) for host, stopped, _ in handed] == [("h01", True)]
    assert ran.proc.returncode is not None and missing.proc is None


def test_all_cores_per_node_counts_the_cpus_a_job_may_use_on_the_smallest_node():
    # h04's cpuset gives its jobs one of its two CPUs online: the scaling step's "all cores per node"
    # placed two ranks on it, one CPU; a snapshot without cpu.cgroup_cpus (older collectors) counts those online
    envs = {"h01": {"cpu.threads": 2, "cpu.cgroup_cpus": "0-1"}, "h02": {"cpu.threads": 2},
            "h04": {"cpu.threads": 2, "cpu.cgroup_cpus": "1"}}
    assert execute.node_cpus(envs) == 1
    assert execute.node_cpus({h: e for h, e in envs.items() if h != "h04"}) == 2
    assert execute.node_cpus({}) == 1


def test_a_launch_stopped_while_the_others_ended_is_ended_as_stalled_and_leaves_no_process():
    """The straggler rule (run/cluster/straggler.py): a launch that stops itself (SIGSTOP, as a
    frozen node's) while the rest of its group ends is ended once it ran past the floor (the
    others' median x the factor being less), and handed on with why; before, the group waited
    on it for ever. Its deadline's reason is the message the node's step is stored with."""
    import psutil

    from clusterbench.run.cluster.straggler import StragglerRule

    group = [execute.NodeLaunch(f"h0{i}", i, ["sh", "-c", "sleep 0.2"]) for i in (1, 2, 3)]
    group.append(execute.NodeLaunch("h04", 4, ["sh", "-c", "kill -STOP $$; sleep 611"]))
    handed = []
    runner = threading.Thread(target=execute._run_together, daemon=True,
                              args=(group, {}, None, lambda lc, stopped=False: handed.append(lc),
                                    StragglerRule(floor_s=1, factor=10)))
    runner.start()
    runner.join(timeout=60)
    if runner.is_alive():   # the failing case leaves nothing stopped behind
        group[-1].proc.kill()
    assert not runner.is_alive(), "the group still waits on the stopped launch"
    assert [lc.host for lc in handed][-1] == "h04" and all(lc.proc.returncode == 0 for lc in handed[:3])
    stalled = handed[-1]
    assert stalled.deadline.expired and re.match(r"stalled: still running \d+ s after its start, when the other "
                                                 r"nodes ended in a median [\d.]+ s \(bound: the greater of "
                                                 r"--stall-floor 1 s and --stall-factor 10 x that median\)",
                                                 stalled.err), stalled.err
    assert not psutil.pid_exists(stalled.proc.pid) or psutil.Process(stalled.proc.pid).status() == "zombie"
    assert not [p for p in psutil.process_iter(["cmdline"]) if p.info["cmdline"] == ["sleep", "611"]]


def test_the_straggler_bound_waits_for_half_the_group_and_keeps_a_floor():
    from clusterbench.run.cluster.straggler import StragglerRule

    rule = StragglerRule(floor_s=60, factor=10)
    assert rule.bound_s([], 4) is None and rule.bound_s([3.0], 4) is None   # fewer than half ended well
    assert rule.bound_s([3.0, 4.0], 4) == 60   # 10 x 3.5 s is under the floor
    assert rule.bound_s([20.0, 30.0, 40.0], 4) == 300
    assert rule.bound_s([2.0], 2) == 60   # two nodes: the one that ended is the others


def test_one_at_a_time_a_stopped_launch_is_ended_by_the_earlier_launches_of_other_nodes():
    """--one-at-a-time: a group of one has no others beside it; its bound comes from the step's
    launches that ended well on other nodes before it (earlier_well_s). Before, it had none, and
    a stopped node's launch was waited on for ever."""
    import psutil

    from clusterbench.run.cluster.straggler import StragglerRule

    alone = execute.NodeLaunch("h02", 2, ["sh", "-c", "kill -STOP $$; sleep 612"])
    handed = []
    runner = threading.Thread(target=execute._run_together, daemon=True,
                              args=([alone], {}, None, lambda lc, stopped=False: handed.append(lc),
                                    StragglerRule(floor_s=1, factor=10), [0.02, 0.03, 0.04]))
    runner.start()
    runner.join(timeout=60)
    if runner.is_alive():
        alone.proc.kill()
    assert not runner.is_alive(), "the launch is still waited on"
    assert handed == [alone] and alone.deadline.expired
    assert re.match(r"stalled: still running \d+ s after its start, when the other nodes' 3 earlier launches of "
                    r"this step, one at a time, ended in a median 0.03 s \(bound: the greater of --stall-floor 1 s "
                    r"and --stall-factor 10 x that median\)", alone.err), alone.err
    assert not psutil.pid_exists(alone.proc.pid) or psutil.Process(alone.proc.pid).status() == "zombie"
    assert not [p for p in psutil.process_iter(["cmdline"]) if p.info["cmdline"] == ["sleep", "612"]]


def test_one_at_a_time_the_bound_needs_one_earlier_launch_and_keeps_the_floor():
    from clusterbench.run.cluster.straggler import StragglerRule

    rule = StragglerRule(floor_s=60, factor=10)
    assert rule.bound_alone_s([]) is None   # the step's first node: no earlier launch (its declared time: below)
    assert rule.bound_alone_s([3.0]) == 60   # one earlier launch is enough; 10 x 3 s is under the floor
    assert rule.bound_alone_s([20.0, 30.0, 40.0]) == 300


def test_the_first_launch_of_a_step_one_at_a_time_is_bounded_by_the_time_the_suite_declares():
    """The suite's own parts (run/cluster/suite.toml): Himeno in time mode lasts --seconds a
    repetition, cpufreq --seconds for each count of busy CPUs; the parts whose time is the node's
    speed (STREAM, seqio, the pingpong, Himeno in iterations mode) declare none, and a node stopped
    in their first launch is still ended by --step-timeout alone (docs/cluster.md)."""
    from clusterbench.run.cluster.declared_time import launch_time
    from clusterbench.run.cluster.straggler import StragglerRule

    parts = execute.suite_entries()
    himeno = launch_time(parts["himeno"], {**parts["himeno"]["params"], "seconds": "0.3"}, 1, cpus=8)
    assert (himeno.seconds, himeno.by) == (0.3, "--himeno.seconds=0.3, 1 repetition")
    cpufreq = launch_time(parts["cpufreq"], parts["cpufreq"]["params"], 2, cpus=4)
    assert cpufreq.seconds == 0.5 * 4 * 2 and cpufreq.by == (
        "--cpufreq.seconds=0.5 for each of up to 4 counts of busy CPUs, 2 repetitions")
    assert launch_time(parts["himeno"], {**parts["himeno"]["params"], "mode": "iterations"}, 1, cpus=8) is None
    for part in ("stream", "seqio", "pingpong"):
        assert launch_time(parts[part], parts[part]["params"], 1, cpus=8) is None, part
    rule = StragglerRule(floor_s=60, factor=10)
    assert rule.bound_first_s(None) is None and rule.bound_first_s(2.0) == 60 and rule.bound_first_s(64.0) == 640


def test_seconds_and_shares_in_the_messages_are_written_without_an_exponent():
    """Python's :.2g and :g wrote a stalled node's "median 1.5e+02 s" (other nodes took 150 s), "after 1e+06 s
    (--step-timeout)" of --step-timeout 1000000, and a link duplicating every segment "1e+02 %"."""
    import subprocess

    from clusterbench.analysis.cluster.analysis import Link
    from clusterbench.analysis.cluster.findings import why_listed
    from clusterbench.launch.processes import Deadline
    from clusterbench.run.cluster.straggler import StragglerRule

    said = StragglerRule(floor_s=1e6, factor=10).message(2e6, [140.0, 150.0, 160.0])
    assert "ended in a median 150 s (bound: the greater of --stall-floor 1000000 s and --stall-factor 10 x" in said
    assert "which should last 120 s (" in StragglerRule().message_first(1300, 120.0, "--himeno.seconds=120")
    with subprocess.Popen(["true"]) as proc:
        deadline = Deadline(proc, 1e6)
        deadline.cancel()
    assert deadline.message("").startswith("timed out: still running after 1000000 s (--step-timeout)")
    every = Link("h01", "h02", 100.0, None, "tcp", retransmit_pct=150.0, lossy=True, duplicate_pct=100.0,
                 duplicating=True)
    assert why_listed(every) == ("TCP sent 150 % of its bytes again (packet loss); the network delivered 100 % of "
                                 "its segments twice (duplicated packets)")
