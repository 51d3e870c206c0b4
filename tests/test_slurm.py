"""clusterbench under a real Slurm (one node, started by the test): srun as
the launcher, a batch script submitted with sbatch, and a launcher whose PMI
does not meet cbk's MPI rejected rather than stored as N one-rank runs."""
from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import REPO, failed_steps, store_rows, terminal_sigint, tree
from slurm_cluster import SlurmCluster, sbatch_wait, why_not

pytestmark = pytest.mark.skipif(why_not() is not None, reason=str(why_not()))


@pytest.fixture(scope="module")
def slurm(tmp_path_factory):
    cluster = SlurmCluster(tmp_path_factory.mktemp("slurm"))
    cluster.start()
    yield cluster
    cluster.stop()


@pytest.fixture
def scli(cli, slurm):
    """The cli fixture, pointed at the test cluster."""
    return lambda *args, env=None, **kw: cli(*args, env={"SLURM_CONF": str(slurm.conf), **(env or {})}, **kw)


@pytest.mark.timeout(180)
def test_srun_launches_the_ranks_as_one_mpi_job(scli, mpiexec, store_url, tmp_path):
    r = scli("run", "mpi", "--launcher", "srun", "--np", "2", "--op=pingpong", "--sizes=8,4k",
             "--iterations=50", "--warmup=5", "--repeat", "2")
    assert r.status == 0, r.stderr
    assert store_rows(store_url, "select launcher, ranks, status from steps") == [("srun", 2, "ok")]
    sizes = store_rows(store_url, "select json_extract(record, '$.size_bytes'), json_extract(record, '$.ranks') "
                                  "from samples")
    assert sorted(sizes) == [(8, 2), (8, 2), (4096, 2), (4096, 2)]


@pytest.mark.timeout(180)
def test_a_pmi_mismatch_fails_the_step_instead_of_storing_one_rank_runs(scli, mpiexec, store_url):
    # --mpi=none: srun starts two processes that each think they are MPI's only rank
    r = scli("run", "null", "--launcher", "srun", "--np", "2", "--seconds=0.01",
             env={"CLUSTERBENCH_SRUN_MPI": "none"})
    assert r.status == 1
    (status, message), = store_rows(store_url, "select status, message from steps")
    assert status == "failed" and "as 1 rank(s), not 2" in message and "srun" in message


@pytest.mark.timeout(300)
def test_the_example_batch_script_runs_under_sbatch(slurm, cli, cbk_bin, tmp_path, store_url):
    """examples/slurm/quick.sbatch as a user submits it (sbatch, waited for), results in the store."""
    script = REPO / "examples" / "slurm" / "quick.sbatch"
    bindir = Path(sys.executable).parent
    clusterbench = bindir / "clusterbench"
    if not clusterbench.exists():  # a developer's tree run with PYTHONPATH=src
        clusterbench = tmp_path / "clusterbench"
        clusterbench.write_text(f'#!/bin/sh\nexec {sys.executable} -m clusterbench "$@"\n')
        clusterbench.chmod(0o755)
    env = {**os.environ, "SLURM_CONF": str(slurm.conf), "CLUSTERBENCH": str(clusterbench),
           "CLUSTERBENCH_DB": store_url, "CLUSTERBENCH_CBK": cbk_bin,
           "PATH": f"{Path(cbk_bin).parent}{os.pathsep}{bindir}{os.pathsep}{os.environ['PATH']}"}
    r = sbatch_wait([f"--output={tmp_path}/job.out", str(script)], cwd=tmp_path, env=env, timeout=280)
    out = (tmp_path / "job.out").read_text() if (tmp_path / "job.out").exists() else ""
    assert r.returncode == 0, r.stderr + out
    job = r.stdout.split()[-1]
    runs = store_rows(store_url, "select label, status, batch_job from runs order by id")
    assert runs == [(f"slurm-{job}", "ok", f"slurm {job}")] * 2, out
    listed = cli("list")
    assert listed.status == 0 and "batch job" in listed.stdout and f"slurm {job}" in listed.stdout
    shown = cli("show", "1")
    assert shown.status == 0 and f"in batch job slurm {job}" in shown.stdout
    exported = json.loads(cli("export", "1", "--format", "json").stdout)
    assert exported["runs"][0]["batch_job"] == f"slurm {job}"
    assert store_rows(store_url, "select launcher, ranks from steps order by id") == [("srun", 2), ("local", 1)]
    assert not [p for p in tree(tmp_path) if "cbk-" in p]
    # what the job was given, in each run's snapshot (its id is the run's): partition, nodes, CPUs
    for (data,) in store_rows(store_url, "select e.data from run_hosts h join environments e "
                                         "on e.hash = h.environment_hash"):
        env = json.loads(data)
        assert {k: v for k, v in env.items() if k.startswith("batchjob.")} == {
            "batchjob.system": "slurm", "batchjob.partition": "test", "batchjob.nodes": socket.gethostname(),
            "batchjob.node_count": 1, "batchjob.cpus_per_node": "2"}, env


@pytest.mark.timeout(180)
def test_inside_an_allocation_every_node_gets_an_environment_snapshot(slurm, tmp_path):
    code = ("import json; from clusterbench.launch import get; "
            "from clusterbench.run.runner import collect_all, collector_argv; "
            f"srun = get('srun'); cmd = srun.node_command(collector_argv([{str(tmp_path)!r}]), 1, None); "
            "print(json.dumps([e.get('host.name') for e in collect_all([cmd], srun.node_output_labelled)]))")
    r = subprocess.run(["salloc", "--nodes=1", sys.executable, "-c", code], capture_output=True, text=True,
                       env=slurm.env, timeout=170)
    assert r.returncode == 0, r.stderr
    (line,) = [x for x in r.stdout.splitlines() if x.startswith("[")]
    got = json.loads(line)
    assert got == [socket.gethostname()]


@pytest.mark.timeout(240)
def test_a_step_larger_than_the_allocation_is_refused_before_anything_is_stored(slurm, cbk_bin, mpiexec, tmp_path):
    """srun refused them only after the run was begun: exit 1 and a failed run
    stored; mpiexec started them all on the job's CPUs."""
    store = tmp_path / "results.db"
    env = {**slurm.env, "CLUSTERBENCH_CBK": cbk_bin, "CLUSTERBENCH_DB": f"sqlite:///{store}", "COLUMNS": "200"}
    run = [sys.executable, "-m", "clusterbench", "run", "null", "--launcher", "srun", "--seconds=0.01",
           "--repeat", "1", "--quiet"]
    too_many = subprocess.run(["salloc", "--nodes=1", "--ntasks=1", *run, "--np", "2"], capture_output=True,
                              text=True, env=env, timeout=200)
    too_wide = subprocess.run(["salloc", "--nodes=1", "--ntasks=2", *run, "--np", "4", "--ppn", "2"],
                              capture_output=True, text=True, env=env, timeout=200)
    # Hydra inside the allocation ran both ranks on the job's one CPU, and the run was stored as ok
    hydra = subprocess.run(["salloc", "--nodes=1", "--ntasks=1", *run, "--np", "2", "--launcher", "mpiexec"],
                           capture_output=True, text=True, env=env, timeout=200)
    said = [[line for line in r.stderr.splitlines() if not line.startswith("salloc:")]
            for r in (too_many, too_wide, hydra)]
    assert (too_many.returncode, too_wide.returncode, hydra.returncode) == (2, 2, 2), said
    assert len(said[2]) == 1 and said[2][0].split(" was given ")[1] == said[0][0].split(" was given ")[1], said
    assert len(said[0]) == 1 and said[0][0].startswith("Error: null: 2 ranks; Slurm job ") and \
        said[0][0].endswith(" was given 1 CPU(s) (SLURM_JOB_CPUS_PER_NODE=1): ask sbatch/salloc for more "
                            "(--ntasks=2), or pass --oversubscribe"), said
    assert len(said[1]) == 1 and "4 ranks, 2 a node, need 2 nodes; Slurm job " in said[1][0] and \
        said[1][0].endswith(" has 1 (SLURM_JOB_NUM_NODES): ask sbatch/salloc for more (--nodes=2), "
                            "or give fewer ranks"), said
    assert not store.exists() or store_rows(f"sqlite:///{store}", "select count(*) from runs") == [(0,)]


@pytest.mark.timeout(180)
@pytest.mark.parametrize("export", [{}, {"SLURM_EXPORT_ENV": "NONE"}], ids=["export-default", "export-none"])
def test_srun_ranks_bind_their_own_gpus_by_slurm_local_id(scli, mpiexec, store_url, export):
    # no GPU gres on the test cluster: the grant is set as Slurm sets it in a
    # GPU job (CUDA_VISIBLE_DEVICES, passed on by srun); the node-local rank is
    # the SLURM_LOCALID srun gives each task. In a job submitted with
    # `sbatch --export=NONE` (SLURM_EXPORT_ENV=NONE) srun gave the ranks none
    # of the step's variables: the binding's wrapper found no clusterbench
    # (PYTHONPATH) and no grant, as --mpi-algorithm's CVARs were dropped
    r = scli("run", "null", "--launcher", "srun", "--np", "2", "--gpus-per-rank", "1", "--seconds=0.01",
             "--repeat", "1", "--quiet", env={"CUDA_VISIBLE_DEVICES": "1,0", **export})
    assert r.status == 0, r.stderr + failed_steps(store_url)   # once failed in a full run, passed alone
    ((build,),) = store_rows(store_url, "select build from steps")
    assert json.loads(build)["gpu_devices"] == ["1", "0"]


def files_below(root: Path) -> int:
    return sum(len(files) for _dirpath, _dirs, files in os.walk(root))


def jobs(slurm) -> set[str]:
    """The ids of the jobs in the queue, running or pending."""
    r = subprocess.run(["squeue", "-h", "-o", "%i"], capture_output=True, text=True, env=slurm.env, timeout=60)
    return set(r.stdout.split())


@pytest.mark.timeout(240)
def test_ctrl_c_stops_an_srun_step_at_once_and_leaves_neither_files_nor_an_allocation(slurm, cbk_bin, tmp_path):
    """srun takes a first SIGINT as a request for the tasks' status; only a
    second within a second ends them. clusterbench sends a launch one
    SIGINT (srun has a process group of its own, so the terminal's reaches
    clusterbench alone), and so waited out its 15 s grace and killed srun
    with SIGKILL: cbk was still making files, not removing them, when
    clusterbench said the run was interrupted (115,000 files and cbk's
    private directory in --dir at its exit), and the allocation srun had
    asked for itself stayed RUNNING, its node held with no time limit.
    srun --disable-status forwards the one SIGINT to the tasks, and ends
    when they do. A million files to make: the kernel cannot end on its
    own within that grace."""
    work = tmp_path / "work"
    work.mkdir()
    store = tmp_path / "results.db"
    env = {**slurm.env, "CLUSTERBENCH_CBK": cbk_bin, "CLUSTERBENCH_DB": str(store), "COLUMNS": "200"}
    before = jobs(slurm)   # an earlier test's job may still be ending
    p = subprocess.Popen([sys.executable, "-m", "clusterbench", "run", "metadata", "--launcher", "srun", "--np", "1",
                          f"--dir={work}", "--items=1000000", "--kind=files", "--phases=create", "--repeat", "1",
                          "--quiet"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         start_new_session=True, preexec_fn=terminal_sigint)
    try:
        deadline = time.monotonic() + 120
        while files_below(work) < 20_000:
            assert p.poll() is None, p.communicate()
            assert time.monotonic() < deadline, "cbk made no 20,000 files under srun within 120 s"
            time.sleep(0.05)
        os.killpg(p.pid, signal.SIGINT)   # Ctrl-C, as the terminal sends it
        out, err = p.communicate(timeout=120)
        left_at_exit = files_below(work)
        deadline = time.monotonic() + 60
        while jobs(slurm) - before and time.monotonic() < deadline:   # Slurm's own bookkeeping may take a moment
            time.sleep(0.5)
        left_jobs = jobs(slurm) - before
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
        for job in jobs(slurm) - before:
            subprocess.run(["scancel", job], env=slurm.env, timeout=60)
    assert p.returncode == 130, err
    assert left_at_exit == 0 and os.listdir(work) == [], (left_at_exit, os.listdir(work))
    assert left_jobs == set(), left_jobs
    assert store_rows(f"sqlite:///{store}", "select status from steps") == [("interrupted",)]


@pytest.mark.timeout(240)
def test_an_ior_or_mdtest_line_pasted_with_its_srun_prefix_runs_through_srun(scli, mpiexec, store_url, tmp_path):
    """`srun -n 2 ior ...` was refused as four unexpected words ('srun', -n, '2', 'ior'); mpiexec's
    prefix was understood. It runs through the srun launcher, with srun's counts."""
    r = scli("ior", "srun", "-n", "2", "ior", "-b", "256k", "-t", "64k", "-F", "-o", str(tmp_path / "f"))
    assert r.status == 0, r.stderr
    r = scli("mdtest", "srun", "--ntasks=2", "-N", "1", "mdtest", "-F", "-n", "8", "-d", str(tmp_path))
    assert r.status == 0, r.stderr
    assert store_rows(store_url, "select kernel, launcher, ranks, ranks_per_node, status from steps order by id") == [
        ("pario", "srun", 2, None, "ok"), ("metadata", "srun", 2, 2, "ok")]
    clash = scli("ior", "--launcher", "mpiexec", "srun", "-n", "2", "ior", "-o", str(tmp_path / "g"))
    assert clash.status == 2 and "--launcher mpiexec and the line's srun disagree" in clash.stderr, clash.stderr
