"""clusterbench under a real Grid Engine cell (one node, started by the
test): qrsh as the launcher, and a batch script submitted with qsub -sync y,
whose runs carry the job id."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO, store_rows, tree
from sge_cluster import GridEngineCell, why_not

pytestmark = pytest.mark.skipif(why_not() is not None, reason=str(why_not()))


@pytest.fixture(scope="module")
def sge(tmp_path_factory):
    cell = GridEngineCell(tmp_path_factory.mktemp("sge"))
    cell.start()
    yield cell
    cell.stop()


def sge_env(sge) -> dict:
    return {k: sge.env[k] for k in ("SGE_ROOT", "SGE_CELL", "SGE_QMASTER_PORT", "SGE_EXECD_PORT")}


@pytest.mark.timeout(240)
def test_qrsh_runs_one_rank_and_an_mpi_job_in_a_parallel_environment(cli, sge, mpiexec, store_url, tmp_path):
    r = cli("run", "null", "--launcher", "qrsh", "--seconds=0.01", "--repeat", "2", env=sge_env(sge))
    assert r.status == 0, r.stderr
    r = cli("run", "mpi", "--launcher", "qrsh", "--np", "2", "--op=pingpong", "--sizes=8,4k", "--iterations=50",
            "--warmup=5", env=sge_env(sge))
    assert r.status == 0, r.stderr
    assert store_rows(store_url, "select launcher, ranks, status from steps order by id") == [
        ("qrsh", 1, "ok"), ("qrsh", 2, "ok")]
    ranks = store_rows(store_url, "select distinct json_extract(record, '$.ranks') from samples "
                                  "where json_extract(record, '$.kernel') = 'mpi'")
    assert ranks == [(2,)]


@pytest.mark.timeout(300)
def test_the_example_job_script_runs_under_qsub(cli, sge, mpiexec, cbk_bin, tmp_path, store_url):
    bindir = Path(sys.executable).parent
    clusterbench = bindir / "clusterbench"
    if not clusterbench.exists():  # a developer's tree run with PYTHONPATH=src: a bin directory like .venv's
        (tmp_path / "bin").mkdir()
        clusterbench = tmp_path / "bin" / "clusterbench"
        clusterbench.write_text(f'#!/bin/sh\nexec {sys.executable} -m clusterbench "$@"\n')
        clusterbench.chmod(0o755)
        # a wrapper, not a symlink: Hydra looks for its proxy next to argv[0]
        (tmp_path / "bin" / "mpiexec").write_text(f'#!/bin/sh\nexec {mpiexec} "$@"\n')
        (tmp_path / "bin" / "mpiexec").chmod(0o755)
    env = {**os.environ, **sge_env(sge), "CLUSTERBENCH": str(clusterbench), "CLUSTERBENCH_DB": store_url,
           "CLUSTERBENCH_CBK": cbk_bin,
           "PATH": f"{Path(cbk_bin).parent}{os.pathsep}{bindir}{os.pathsep}{os.environ['PATH']}"}
    r = subprocess.run(["qsub", "-sync", "y", "-o", str(tmp_path / "job.out"),
                        str(REPO / "examples" / "gridengine" / "quick.sh")],
                       cwd=tmp_path, capture_output=True, text=True, env=env, timeout=280)
    out = (tmp_path / "job.out").read_text() if (tmp_path / "job.out").exists() else ""
    assert r.returncode == 0, r.stdout + r.stderr + out
    job = r.stdout.split("Your job ")[1].split()[0]
    runs = store_rows(store_url, "select label, status, batch_job from runs order by id")
    assert runs == [(f"sge-{job}", "ok", f"sge {job}")] * 2, out
    assert store_rows(store_url, "select launcher, ranks from steps order by id") == [("mpiexec", 2), ("local", 1)]
    exported = json.loads(cli("export", "1", "--format", "json").stdout)
    assert exported["runs"][0]["batch_job"] == f"sge {job}"
    assert not [p for p in tree(tmp_path) if "cbk-" in p]


@pytest.mark.timeout(180)
def test_qrsh_ranks_bind_their_own_gpus_from_the_resource_map(cli, sge, mpiexec, store_url):
    # this Grid Engine has no resource maps: SGE_HGR_gpu is set as a Univa/Altair
    # cell sets it for `-l gpu=2` and reaches the job through qrsh -V
    r = cli("run", "null", "--launcher", "qrsh", "--np", "2", "--gpus-per-rank", "1", "--seconds=0.01",
            "--repeat", "1", "--quiet", env={**sge_env(sge), "SGE_HGR_gpu": "2 3"})
    assert r.status == 0, r.stderr
    ((build,),) = store_rows(store_url, "select build from steps")
    assert json.loads(build)["gpu_devices"] == ["2", "3"]


@pytest.mark.timeout(240)
def test_a_hostile_dir_reaches_cbk_through_qrsh_as_one_word(cli, sge, store_url, tmp_path):
    # qrsh runs its command through a shell on the execution host: `;`, `$(...)`,
    # spaces and `$` in a --dir must name a directory, never run anything
    pwned = tmp_path / "PWNED"
    hostile = tmp_path / f"a b;touch {pwned};$(touch {pwned}2)$HOME"
    hostile.mkdir(parents=True)
    r = cli("run", "seqio", "--launcher", "qrsh", f"--dir={hostile}", "--file-size=1m", "--block-size=256k",
            "--repeat", "1", "--quiet", env=sge_env(sge))
    assert r.status == 0, r.stderr
    assert not pwned.exists() and not Path(f"{pwned}2").exists()
    assert tree(hostile) == []   # the run used it, and left nothing in it
    ((params,),) = store_rows(store_url, "select params from steps")
    assert json.loads(params)["dir"] == str(hostile)
