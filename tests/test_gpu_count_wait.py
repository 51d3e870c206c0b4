"""Counting a node's GPUs (`cbk --gpus`, the default one-GPU-per-rank binding's
grant outside a batch job) waited up to 120 s saying nothing, then bound no
GPU, and every rank's wrapper waited again; a stop left the runtime's helper
processes running. A runtime that does not answer is stood in for by a cbk
whose --gpus starts a helper and waits on it, as a runtime stuck in its start
would (every other argument goes to the test-runtime cbk)."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import psutil
import pytest

from clusterbench.errors import BadInput
from clusterbench.launch.gpubind import node_gpus


def silent_cbk(tmp_path, real_cbk: str) -> str:
    stub = tmp_path / "cbk"
    stub.write_text("#!/bin/sh\n"
                    'if [ "$1" = "--gpus" ]; then\n'
                    f'  sleep 1000 & echo $$ $! > {tmp_path}/counting.tmp && mv {tmp_path}/counting.tmp {tmp_path}/counting\n'
                    "  wait; exit 0\n"
                    "fi\n"
                    f'exec {real_cbk} "$@"\n')
    stub.chmod(0o755)
    return str(stub)


def counting_pids(tmp_path) -> list[int]:
    """The stub's shell and its helper, once it has started both."""
    marker = tmp_path / "counting"
    for _ in range(600):
        if marker.exists():
            return [int(p) for p in marker.read_text().split()]
        time.sleep(0.1)
    raise AssertionError("cbk --gpus never started")


def assert_gone(pids: list[int]) -> None:
    """Each process ended (an orphan is reaped by init a moment after its kill)."""
    for _ in range(100):
        alive = [p for p in pids if psutil.pid_exists(p) and psutil.Process(p).status() != psutil.STATUS_ZOMBIE]
        if not alive:
            return
        time.sleep(0.1)
    raise AssertionError(f"left running: {alive}")


@pytest.mark.timeout(120)
def test_a_gpu_count_that_does_not_answer_is_said_within_seconds_and_ctrl_c_leaves_nothing(gpu_test_cbk, tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CBK_TEST_GPU", "SGE_HGR", "SLURM"))
           and k not in ("CUDA_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "ZE_AFFINITY_MASK")}
    env.update(CLUSTERBENCH_CBK=silent_cbk(tmp_path, gpu_test_cbk), CLUSTERBENCH_DB=f"sqlite:///{tmp_path / 'r.db'}",
               CBK_TEST_GPUS="2")
    p = subprocess.Popen([sys.executable, "-m", "clusterbench", "run", "gpumem", "--array-size=64k", "--passes=2",
                          "--np", "2", "--repeat", "1", "--quiet"], env=env, stderr=subprocess.PIPE, text=True)
    try:
        pids = counting_pids(tmp_path)
        said = p.stderr.readline()   # before it gives up: the first line is what it waits for
        assert said.startswith(f"waiting for the GPU runtime to count this node's GPUs ({tmp_path / 'cbk'} --gpus): "
                               "no answer after 2 s; given up at 120 s (Ctrl-C stops now)"), said
        p.send_signal(signal.SIGINT)
        rest = p.communicate(timeout=60)[1]
    finally:
        p.kill()
    assert p.returncode == 130 and rest.strip() == "clusterbench run: interrupted by SIGINT", (p.returncode, rest)
    assert_gone(pids)
    assert not (tmp_path / "r.db").exists()   # nothing stored


@pytest.mark.timeout(60)
def test_a_gpu_count_past_its_limit_is_refused_naming_it_and_ends_the_runtimes_processes(gpu_test_cbk, tmp_path):
    said: list[str] = []
    with pytest.raises(BadInput) as refused:
        node_gpus(silent_cbk(tmp_path, gpu_test_cbk), said.append, limit_s=3)
    assert refused.value.message == (
        f"the GPU runtime did not count this node's GPUs in 3 s ({tmp_path / 'cbk'} --gpus, stopped): check its "
        "driver (nvidia-smi, rocm-smi), or name the GPUs to bind with CUDA_VISIBLE_DEVICES=0,1,...")
    assert said == [f"waiting for the GPU runtime to count this node's GPUs ({tmp_path / 'cbk'} --gpus): no answer "
                    "after 2 s; given up at 3 s (Ctrl-C stops now)"]
    assert_gone(counting_pids(tmp_path))


def test_a_gpu_count_that_answers_says_nothing(gpu_test_cbk, tmp_path, monkeypatch):
    monkeypatch.setenv("CBK_TEST_GPUS", "3")
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    said: list[str] = []
    assert node_gpus(gpu_test_cbk, said.append).devices == ("0", "1", "2") and said == []


@pytest.mark.timeout(120)
def test_a_run_counts_the_nodes_gpus_once_and_each_rank_once(gpu_test_cbk, mpiexec, tmp_path):
    """`run` checked the step before opening the store and again as it ran it, each check counting the
    GPUs for the binding and again for each rank's check: four counts in the run's own process, each a
    runtime's start (tens of seconds on a node of eight GPUs without persistence mode)."""
    calls = tmp_path / "calls"
    counting = tmp_path / "cbk"
    counting.write_text(f'#!/bin/sh\n[ "$1" = "--gpus" ] && echo "${{PMI_RANK:-run}}" >> {calls}\n'
                        f'exec {gpu_test_cbk} "$@"\n')
    counting.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CBK_TEST_GPU", "SGE_HGR", "SLURM"))
           and k not in ("CUDA_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "ZE_AFFINITY_MASK")}
    env.update(CLUSTERBENCH_CBK=str(counting), CLUSTERBENCH_DB=f"sqlite:///{tmp_path / 'r.db'}", CBK_TEST_GPUS="2")
    r = subprocess.run([sys.executable, "-m", "clusterbench", "run", "gpumem", "--array-size=64k", "--passes=2",
                        "--np", "2", "--repeat", "1", "--quiet"], env=env, capture_output=True, text=True, timeout=100)
    assert r.returncode == 0, r.stderr
    assert sorted(calls.read_text().split()) == ["0", "1", "run"]
