"""run cluster's all-at-once launch group (run/cluster/execute.py `_run_together`):
a launch that ended is handed on even when a later one of its group fails to
start, so the node that ran is stored with what it printed (#34)."""
from __future__ import annotations

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
