"""One set of GPUs per rank (--gpus-per-rank, E11): the devices come from
what the batch system granted, as Grid Engine (SGE_HGR_gpu) and Slurm
(CUDA_VISIBLE_DEVICES, SLURM_STEP_GPUS, SLURM_JOB_GPUS) set them, split by
node-local rank; cbk's run record states what each rank saw. No GPU is
needed: the grants are set in the environment and the ranks are real MPI
ranks under mpiexec, on this one host; tests/test_multihost.py has the
two-host version. `show` states the devices of each rank."""
from __future__ import annotations

import json

import pytest

from clusterbench.launch import gpubind
from clusterbench.errors import BadInput
from conftest import store_rows

SLURM = {"SLURM_JOB_ID": "42"}


def test_grants_are_read_as_each_batch_system_writes_them():
    assert gpubind.granted({"SGE_HGR_gpu": "0 1"}) == gpubind.Grant("SGE_HGR_gpu", ("0", "1"))
    # Slurm with a device cgroup: CUDA_VISIBLE_DEVICES is renumbered from 0, SLURM_JOB_GPUS physical
    assert gpubind.granted({**SLURM, "SLURM_JOB_GPUS": "2,3", "CUDA_VISIBLE_DEVICES": "0,1"}) == \
        gpubind.Grant("CUDA_VISIBLE_DEVICES", ("0", "1"))
    assert gpubind.granted({**SLURM, "SLURM_JOB_GPUS": "2,3", "SLURM_STEP_GPUS": "3"}) == \
        gpubind.Grant("SLURM_STEP_GPUS", ("3",))
    assert gpubind.granted({**SLURM, "SLURM_JOB_GPUS": "2,3"}) == gpubind.Grant("SLURM_JOB_GPUS", ("2", "3"))
    # outside Slurm its leftover variables mean nothing; a user's own CUDA_VISIBLE_DEVICES does
    assert gpubind.granted({"SLURM_JOB_GPUS": "2,3"}) is None
    assert gpubind.granted({"CUDA_VISIBLE_DEVICES": "GPU-8f3c2a1e-1111-2222-3333-444455556666"}).devices == \
        ("GPU-8f3c2a1e-1111-2222-3333-444455556666",)
    assert gpubind.granted({}) is None


@pytest.mark.parametrize("value", ["0 x1", "", "0;1", "gpu0", "0 0"])
def test_a_malformed_grid_engine_grant_is_one_line(value):
    with pytest.raises(BadInput, match=r"^SGE_HGR_gpu=.* (is not a list of GPU ids|names a GPU twice)"):
        gpubind.granted({"SGE_HGR_gpu": value})


def test_ranks_get_disjoint_slices_and_share_only_when_asked():
    grant = gpubind.Grant("SGE_HGR_gpu", ("4", "5", "6", "7"))
    assert [gpubind.assign(grant, r, 2, False) for r in range(2)] == [("4", "5"), ("6", "7")]
    with pytest.raises(BadInput, match=r"^--gpus-per-rank 2 x 3 rank\(s\) on a node needs 6 GPUs, but "
                                       r"SGE_HGR_gpu grants 4 \(4 5 6 7\): use fewer ranks per node, or --share-gpus$"):
        gpubind.assign(grant, 2, 2, False)
    assert [gpubind.assign(grant, r, 3, True) for r in range(2)] == [("4", "5", "6"), ("7", "4", "5")]
    with pytest.raises(BadInput, match="needs 5 GPUs"):
        gpubind.assign(grant, 0, 5, True)  # one rank cannot have more than exist, shared or not
    # AMD: HIP reads CUDA_VISIBLE_DEVICES after ROCR renumbered, so only ROCR is set
    assert gpubind.binding_env(("2",), amd=True) == {"ROCR_VISIBLE_DEVICES": "2", "CUDA_VISIBLE_DEVICES": None,
                                                     "HIP_VISIBLE_DEVICES": None}


def test_node_local_rank_comes_from_the_launcher():
    assert gpubind.local_rank({"MPI_LOCALRANKID": "3"}) == 3
    assert gpubind.local_rank({"OMPI_COMM_WORLD_LOCAL_RANK": "1", "OMPI_COMM_WORLD_SIZE": "4"}) == 1
    assert gpubind.local_rank({"SLURM_LOCALID": "2"}) == 2
    assert gpubind.local_rank({}) == 0
    with pytest.raises(BadInput, match="exports no node-local rank"):
        gpubind.local_rank({"PMI_SIZE": "4"})


def devices_seen(store_url: str) -> list[list]:
    return [json.loads(b)["gpu_devices"] for (b,) in store_rows(store_url, "select build from steps order by id")]


@pytest.mark.timeout(120)
@pytest.mark.parametrize("grant, per_rank, expected", [
    ({"SGE_HGR_gpu": "0 1 2 3"}, 2, ["0,1", "2,3"]),
    ({**SLURM, "SLURM_JOB_GPUS": "4,5"}, 1, ["4", "5"]),
    ({**SLURM, "SLURM_JOB_GPUS": "4,5", "SLURM_STEP_GPUS": "5,7"}, 1, ["5", "7"]),
    ({**SLURM, "SLURM_JOB_GPUS": "6,7", "CUDA_VISIBLE_DEVICES": "0,1"}, 1, ["0", "1"]),
])
def test_each_mpi_rank_sees_its_own_granted_devices(cli, mpiexec, store_url, grant, per_rank, expected):
    r = cli("run", "null", "--np", "2", "--gpus-per-rank", str(per_rank), "--seconds=0.01", "--repeat", "1",
            "--quiet", env=grant)
    assert r.status == 0, r.stderr
    assert devices_seen(store_url) == [expected]
    shown = cli("show", "1")
    assert shown.status == 0, shown.stderr
    # the caption wraps at the table's width
    assert f"GPUs seen: rank 0: {expected[0]}; rank 1: {expected[1]}" in " ".join(shown.stdout.split())


@pytest.mark.timeout(120)
def test_without_binding_the_record_says_every_device_was_visible(cli, mpiexec, store_url):
    r = cli("run", "null", "--np", "2", "--seconds=0.01", "--repeat", "1", "--quiet", env={"SGE_HGR_gpu": "0 1"})
    assert r.status == 0, r.stderr
    assert devices_seen(store_url) == [[None, None]]
    assert "GPUs seen" not in cli("show", "1").stdout  # nothing bound, nothing to say


@pytest.mark.timeout(120)
def test_shared_gpus_only_when_asked(cli, mpiexec, store_url):
    r = cli("run", "null", "--np", "3", "--gpus-per-rank", "1", "--share-gpus", "--seconds=0.01", "--repeat", "1",
            "--quiet", env={"SGE_HGR_gpu": "0 1"})
    assert r.status == 0, r.stderr
    assert devices_seen(store_url) == [["0", "1", "0"]]
    assert "GPUs seen: rank 0: 0; rank 1: 1; rank 2: 0" in " ".join(cli("show", "1").stdout.split())


@pytest.mark.timeout(60)
@pytest.mark.parametrize("grant, args, line", [
    ({"SGE_HGR_gpu": "0 1 2"}, ("--np", "2", "--gpus-per-rank", "2"),
     "Error: --gpus-per-rank 2 x 2 rank(s) on a node needs 4 GPUs, but SGE_HGR_gpu grants 3 (0 1 2): "
     "use fewer ranks per node, or --share-gpus"),
    ({"SGE_HGR_gpu": "0,x"}, ("--np", "2", "--gpus-per-rank", "1"),
     "Error: SGE_HGR_gpu='0,x' is not a list of GPU ids (expected indices such as '0 1' or '0,1', or GPU-/MIG- "
     "UUIDs)"),
    ({}, ("--gpus-per-rank", "1"),
     "Error: --gpus-per-rank 1: no GPUs granted to this job (no SGE_HGR_gpu, SLURM_STEP_GPUS, SLURM_JOB_GPUS or "
     "CUDA_VISIBLE_DEVICES): " + gpubind.HINT),
])
def test_bad_grants_are_one_line_exit_2_and_store_nothing(cli, store_url, grant, args, line):
    import os
    from pathlib import Path

    if not grant and gpubind.granted(os.environ):
        pytest.skip("this machine's environment grants GPUs itself")
    r = cli("run", "null", *args, "--seconds=0.01", "--repeat", "1", "--quiet", env=grant)
    assert (r.status, r.stderr.strip()) == (2, line)
    db = Path(store_url.removeprefix("sqlite:///"))
    assert not db.exists() or store_rows(store_url, "select count(*) from runs") == [(0,)]


@pytest.mark.timeout(120)
def test_a_rank_beyond_the_grant_fails_the_step_in_its_wrapper(cli, mpiexec, store_url, tmp_path):
    # with a host file the node's rank count is not known beforehand: each rank's wrapper checks
    import socket

    hosts = tmp_path / "hosts"
    hosts.write_text(f"{socket.gethostname()}:3\n")
    r = cli("run", "null", "--np", "3", "--hostfile", str(hosts), "--gpus-per-rank", "1", "--seconds=0.01",
            "--repeat", "1", "--quiet", env={"SGE_HGR_gpu": "0 1"})
    assert r.status == 2
    assert r.stderr.strip().splitlines()[-1] == ("Error: null: --gpus-per-rank 1 x 3 rank(s) on a node needs 3 GPUs, "
                                                 "but SGE_HGR_gpu grants 2 (0 1): use fewer ranks per node, or "
                                                 "--share-gpus")


@pytest.mark.timeout(120)
def test_a_suite_step_binds_gpus_with_its_own_key(cli, mpiexec, store_url, tmp_path):
    suite = tmp_path / "gpus.toml"
    suite.write_text('[[steps]]\nkernel = "null"\nnp = 2\nrepeat = 1\ngpus-per-rank = 1\n'
                     'params = { seconds = "0.01" }\n')
    r = cli("run", str(suite), "--quiet", env={"SGE_HGR_gpu": "3 2"})
    assert r.status == 0, r.stderr
    assert devices_seen(store_url) == [["3", "2"]]
    suite.write_text('[[steps]]\nkernel = "null"\ngpus-per-rank = 0\n')
    r = cli("run", str(suite), "--quiet")
    # refused by the suite's schema before anything runs
    assert (r.status, r.stderr.strip()) == (2, "Error: suite gpus, step 1: gpus-per-rank = 0: expected a whole number "
                                               "from 1")


def wrapped_env(tmp_path, environ: dict, per_rank: int) -> dict:
    """The variables a rank's wrapper hands to the program it execs (a real
    wrapper process, exec'ing a Python that writes its environment)."""
    import os
    import subprocess
    import sys

    out = tmp_path / "env.json"
    dump = f"import json, os; open({str(out)!r}, 'w').write(json.dumps(dict(os.environ)))"
    keep = {k: v for k, v in os.environ.items() if not k.startswith(("SLURM_", "SGE_", "CUDA_", "ROCR_", "ZE_"))}
    r = subprocess.run([sys.executable, "-m", "clusterbench.launch.gpubind", f"--per-rank={per_rank}", "--",
                        sys.executable, "-c", dump], env={**keep, **environ}, capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0, r.stderr
    return json.loads(out.read_text())


# task 1 of a two-task srun step in a job submitted with --gpus-per-task=1 on a
# two-GPU node: srun(1) says --gpus-per-task implies --gpu-bind=per_task, so the
# task sees its own GPU alone while the step has two on the node
SLURM_TASK_1_BOUND = {**SLURM, "SLURM_LOCALID": "1", "SLURM_GPUS_PER_TASK": "1", "SLURM_GPUS_ON_NODE": "2",
                      "SLURM_STEP_GPUS": "0,1", "CUDA_VISIBLE_DEVICES": "1", "PMI_SIZE": "2"}


def test_a_task_srun_bound_to_its_own_gpu_keeps_it(tmp_path):
    """Indexing the task's one-GPU list by its node-local rank asked task 1 for a
    second GPU it cannot see: "--gpus-per-rank 1 x 2 rank(s) on a node needs 2
    GPUs, but CUDA_VISIBLE_DEVICES grants 1", on every job that asked Slurm for
    --gpus-per-task."""
    env = wrapped_env(tmp_path, SLURM_TASK_1_BOUND, 1)
    assert "CBK_LAUNCH_ERROR" not in env, env["CBK_LAUNCH_ERROR"]
    assert (env["CUDA_VISIBLE_DEVICES"], env["CLUSTERBENCH_GPU_GRANT"]) == ("1", "CUDA_VISIBLE_DEVICES")
    # the step's whole grant (not bound per task) is still split by node-local rank
    unbound = {**SLURM_TASK_1_BOUND, "CUDA_VISIBLE_DEVICES": "0,1"}
    assert wrapped_env(tmp_path, unbound, 1)["CUDA_VISIBLE_DEVICES"] == "1"
    # a bound task with fewer GPUs than each rank wants: the wrapper's one line, for cbk to fail with
    too_few = wrapped_env(tmp_path, SLURM_TASK_1_BOUND, 2)
    assert too_few["CBK_LAUNCH_ERROR"] == ("--gpus-per-rank 2: srun bound this task to 1 GPU(s) "
                                           "(CUDA_VISIBLE_DEVICES=1, of 2 on the node): ask Slurm for "
                                           "--gpus-per-task=2, or drop --gpus-per-task for --gpus-per-node")
