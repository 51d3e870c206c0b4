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

from conftest import REPO, failed_steps, store_rows, tree, run_bounded
from sge_cluster import GridEngineCell, why_not

pytestmark = [pytest.mark.skipif(why_not() is not None, reason=str(why_not())),
              pytest.mark.long_module]


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
    # what the job was given, in each run's snapshot (its id is the run's): queue, PE, slots, hosts count
    for (data,) in store_rows(store_url, "select e.data from run_hosts h join environments e "
                                         "on e.hash = h.environment_hash"):
        env = json.loads(data)
        assert {k: v for k, v in env.items() if k.startswith("batchjob.")} == {
            "batchjob.system": "sge", "batchjob.queue": "all.q", "batchjob.parallel_environment": "mpi",
            "batchjob.slots": 2, "batchjob.node_count": 1}, env


@pytest.mark.timeout(240)
def test_more_ranks_than_the_jobs_slots_are_refused_inside_a_qsub_job(sge, mpiexec, cbk_bin, tmp_path):
    """mpiexec (Hydra) inside a two-slot job started all four ranks on the two
    slots, and the run was stored as ok: two ranks to each CPU granted."""
    store = tmp_path / "results.db"
    script = tmp_path / "job.sh"
    script.write_text("#!/bin/bash\n"
                      f"{sys.executable} -m clusterbench run null --launcher mpiexec --np 4 --seconds=0.01 "
                      "--repeat 1 --quiet\necho exit=$?\n")
    env = {**os.environ, **sge_env(sge), "CLUSTERBENCH_DB": f"sqlite:///{store}", "CLUSTERBENCH_CBK": cbk_bin,
           "PATH": f"{Path(cbk_bin).parent}{os.pathsep}{os.environ['PATH']}"}
    r = subprocess.run(["qsub", "-sync", "y", "-V", "-cwd", "-S", "/bin/bash", "-pe", "mpi", "2", "-j", "y",
                        "-o", str(tmp_path / "job.out"), str(script)], cwd=tmp_path, capture_output=True, text=True,
                       env=env, timeout=200)
    out = (tmp_path / "job.out").read_text() if (tmp_path / "job.out").exists() else ""
    assert r.returncode == 0, r.stdout + r.stderr + out
    job = r.stdout.split("Your job ")[1].split()[0]
    assert out.splitlines()[-2:] == [
        f"Error: null: 4 ranks; Grid Engine job {job} was granted 2 slot(s) (NSLOTS): ask qsub for -pe mpi 4, "
        "or pass --oversubscribe", "exit=2"], out
    assert not store.exists() or store_rows(f"sqlite:///{store}", "select count(*) from runs") == [(0,)]


@pytest.mark.timeout(180)
def test_qrsh_ranks_bind_their_own_gpus_from_the_resource_map(cli, sge, mpiexec, store_url):
    # this Grid Engine has no resource maps: SGE_HGR_gpu is set as a Univa/Altair
    # cell sets it for `-l gpu=2` and reaches the job through qrsh -V
    r = cli("run", "null", "--launcher", "qrsh", "--np", "2", "--gpus-per-rank", "1", "--seconds=0.01",
            "--repeat", "1", "--quiet", env={**sge_env(sge), "SGE_HGR_gpu": "2 3"})
    assert r.status == 0, r.stderr + failed_steps(store_url)
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


@pytest.fixture(scope="module")
def sge_hosts(tmp_path_factory):
    """A cell on a test cluster of three hosts: qmaster and submit host h01,
    one sge_execd (one slot) on h02 and on h03; links of 1 Gbit/s."""
    from clusterbench.testbed import cluster as tc

    if tc.why_not():
        pytest.skip(f"no test cluster: {tc.why_not()}")
    base = tmp_path_factory.mktemp("sge-hosts")
    testbed = tc.up(base / "tb", 3, link="1gbit")
    cell = GridEngineCell(base / "sge", testbed=testbed)
    try:
        cell.start()
        yield cell
    finally:
        cell.stop()
        tc.down(testbed.dir)


@pytest.mark.timeout(240)
def test_two_execution_hosts_a_qsub_job_and_a_qrsh_mpi_run_span_both(sge_hosts, mpiexec, cbk_bin, tmp_path):
    cell = sge_hosts
    assert cell.exec_hosts == ["h02", "h03"]
    # a two-slot job gets one slot on each host; its first task starts the
    # second on the other host with qrsh -inherit (what Hydra and Open MPI do)
    script = tmp_path / "job.sh"
    script.write_text("#!/bin/sh\ncut -d' ' -f1 \"$PE_HOSTFILE\"\necho first=$(hostname)\n"
                      "for h in $(cut -d' ' -f1 \"$PE_HOSTFILE\"); do\n"
                      "  [ \"$h\" = \"$(hostname)\" ] || echo inherit=$(qrsh -inherit \"$h\" hostname)\ndone\n")
    r = cell.run(["qsub", "-sync", "y", "-pe", "mpi", "2", "-j", "y", "-o", str(tmp_path / "job.out"), str(script)],
                 cwd=tmp_path, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    out = (tmp_path / "job.out").read_text().split()
    granted, first = sorted(out[:2]), out[2].split("=")[1]
    assert granted == ["h02", "h03"], out
    assert out[3] == f"inherit={({'h02', 'h03'} - {first}).pop()}", out

    # clusterbench from the submit host: qrsh -pe mpi 2 starts mpiexec on one
    # execution host, which starts the second rank on the other
    store = f"sqlite:///{tmp_path / 'results.db'}"
    env = {**cell.env, "CLUSTERBENCH_DB": store, "CLUSTERBENCH_CBK": cbk_bin,
           "PATH": f"{Path(mpiexec).parent}{os.pathsep}{cell.env['PATH']}"}
    r = cell.run([sys.executable, "-m", "clusterbench", "run", "mpi", "--launcher", "qrsh", "--np", "2",
                  "--op=pingpong", "--sizes=1m", "--iterations=30", "--warmup=3", "--repeat", "1", "--quiet"],
                 env=env, cwd=tmp_path, timeout=180)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    r = cell.run([sys.executable, "-m", "clusterbench", "export", "1", "--format", "json"], env=env, cwd=tmp_path)
    (step,) = json.loads(r.stdout)["runs"][0]["steps"]
    assert step["launcher"] == "qrsh" and sorted(step["build"]["hosts"]) == ["h02", "h03"]
    (m,) = [s["record"] for s in step["samples"] if s["record"].get("type") == "measurement"]
    # across hosts: TCP over the shaped link, not shared memory
    assert m["same_node"] is False and m["bandwidth_mb_s"] <= 125 * 2**20 / (2**20 - 125_000) * 1.02, m


@pytest.mark.timeout(240)
def test_run_cluster_in_a_qsub_job_takes_its_nodes_from_the_parallel_environment(sge_hosts, mpiexec, cbk_bin,
                                                                                 tmp_path):
    cell = sge_hosts
    store = f"sqlite:///{tmp_path / 'results.db'}"
    report = tmp_path / "cluster.html"
    env = {**cell.env, "CLUSTERBENCH_DB": store, "CLUSTERBENCH_CBK": cbk_bin,
           "PATH": f"{Path(mpiexec).parent}{os.pathsep}{cell.env['PATH']}"}
    # The test hosts share one /tmp, and Grid Engine removes a job's $TMPDIR
    # (/tmp/JOB.TASK.QUEUE) when any of its tasks ends, on "any host": here
    # that is the directory the other hosts' tasks still use. On real nodes
    # each /tmp is the node's own; the job gets a TMPDIR of its own here.
    job_tmp = tmp_path / "job-tmp"
    job_tmp.mkdir()
    script = tmp_path / "cluster.sh"
    # laptop-small: Himeno 0.2 s on one thread per node, one node at a time, a 2 x 2 link matrix
    script.write_text(f"#!/bin/sh\nexport TMPDIR={job_tmp}\n"
                      f"exec {sys.executable} -m clusterbench run cluster --only=himeno,links "
                      "--one-at-a-time --repeat 2 --himeno.seconds=0.2 --himeno.threads=1 --links.size=256k --links.window=4 "
                      f"--links.iterations=4 --links.latency-iterations=20 --quiet --label ge-$JOB_ID --report {report}\n")
    r = cell.run(["qsub", "-sync", "y", "-V", "-pe", "mpi", "2", "-j", "y", "-o", str(tmp_path / "job.out"), str(script)],
                 env=env, cwd=tmp_path, timeout=200)
    if r.returncode:
        log = (tmp_path / "job.out").read_text() if (tmp_path / "job.out").exists() else ""
        shown = run_bounded([sys.executable, "-m", "clusterbench", "show", "1"], timeout=120, env=env)
        raise AssertionError(r.stderr + log[-3000:] + shown.stdout[-4000:] + shown.stderr[-2000:])
    (label, status, batch), = store_rows(store, "select label, status, batch_job from runs")
    assert label.startswith("ge-") and status == "ok" and batch == f"sge {label[3:]}", \
        (label, status, batch, failed_steps(store))
    from clusterbench.analysis.cluster.analysis import analyse, thresholds_of
    from clusterbench.report.data import load_run
    from clusterbench.store import Store

    s = Store(store)
    run = load_run(s, s.resolve(label)[0])
    view = analyse(run, **thresholds_of(run))
    assert view.hosts == ["h02", "h03"]   # the parallel environment's hosts, not the submit host h01
    assert len(view.links) == 2 and all(lk.mib_s > 0 for lk in view.links)   # h02->h03 and h03->h02
    assert len(view.figures[0].nodes) == 2
    assert 'class="heatmap"' in report.read_text()


@pytest.mark.timeout(200)
def test_mpiexec_inside_a_qsub_job_places_each_rank_where_pe_hostfile_says(sge_hosts, mpiexec, cbk_bin, tmp_path,
                                                                          monkeypatch):
    """A rank silent at the start deadline inside a Grid Engine job was named alone: its placement is now
    Hydra's over $PE_HOSTFILE's hosts and slots, checked against where clusterbench's own mpiexec command
    started each rank in a job of uneven slots (two on h02, one on h03)."""
    import shlex

    from clusterbench.launch.job import Job
    from clusterbench.launch.mpiexec import MpiExec

    cell = sge_hosts
    shapes = [(3, None), (4, None), (5, None), (7, None), (2, 1), (3, 2), (4, 2)]
    jobs = {(n, ppn): Job(("sh", "-c", f"echo H {n}:{ppn} $PMI_RANK $(hostname)"), n, ppn, program=cbk_bin)
            for n, ppn in shapes}
    script = tmp_path / "job.sh"
    script.write_text("#!/bin/sh\ncp \"$PE_HOSTFILE\" pe_hostfile\necho JOB $JOB_ID\n"
                      + "".join(shlex.join(MpiExec().command(job)) + " 2>/dev/null\n" for job in jobs.values()))
    cell._run("qconf", "-mattr", "queue", "slots", "2", "all.q@h02")
    try:
        r = cell.run(["qsub", "-sync", "y", "-V", "-cwd", "-pe", "mpi", "3", "-j", "y", "-o", str(tmp_path / "job.out"),
                      str(script)], cwd=tmp_path, timeout=150,
                     env={**cell.env, "PATH": f"{Path(mpiexec).parent}{os.pathsep}{cell.env['PATH']}"})
    finally:   # the module's other tests take one slot a host
        cell._run("qconf", "-mattr", "queue", "slots", "1", "all.q@h02")
    log = (tmp_path / "job.out").read_text() if (tmp_path / "job.out").exists() else ""
    assert r.returncode == 0, r.stdout + r.stderr + log
    pe_hostfile = (tmp_path / "pe_hostfile").read_text()
    assert sorted(line.split()[:2] for line in pe_hostfile.splitlines()) == [["h02", "2"], ["h03", "1"]], pe_hostfile
    started: dict[tuple, dict[int, str]] = {}
    for line in log.splitlines():
        words = line.split()
        if len(words) == 4 and words[0] == "H" and words[2].isdigit():
            n, ppn = words[1].split(":")
            started.setdefault((int(n), None if ppn == "None" else int(ppn)), {})[int(words[2])] = words[3]
    (job_id,) = [line.split()[1] for line in log.splitlines() if line.startswith("JOB ")]
    monkeypatch.delenv("SLURM_JOB_ID", raising=False)
    monkeypatch.setenv("JOB_ID", job_id)
    monkeypatch.setenv("SGE_ROOT", cell.env["SGE_ROOT"])
    monkeypatch.setenv("PE_HOSTFILE", str(tmp_path / "pe_hostfile"))
    for key, job in jobs.items():
        ranks = started.get(key, {})
        assert len(ranks) == job.ranks, (key, pe_hostfile, log)
        placement = MpiExec().laid_out(job)
        assert placement is not None and [placement.host_of(r) for r in range(job.ranks)] == \
            [ranks[r] for r in range(job.ranks)], (key, pe_hostfile, log)


@pytest.mark.timeout(200)
def test_a_silent_rank_under_qrsh_is_named_with_the_host_grid_engine_granted_it(sge_hosts, mpiexec, cbk_bin,
                                                                               tmp_path):
    """Under qrsh the hosts are granted on the execution host after the launch, and the rank that said
    nothing at the start deadline was named alone. Each rank now says first the node it started on
    (launch/rank_note.py), and the launch writes $PE_HOSTFILE on stderr, for Hydra's placement of a rank
    that said none. Rank 1 here sleeps before it becomes cbk, and says where it was started."""
    cell = sge_hosts
    wrapper = tmp_path / "cbk-rank1-silent"
    wrapper.write_text('#!/bin/sh\ncase " $* " in *" --seconds=0.25 "*)\n'
                       f'  [ "$PMI_RANK" = 1 ] && {{ hostname > {tmp_path}/rank1; exec sleep 600; }};;\n'
                       f'esac\nexec {cbk_bin} "$@"\n')
    wrapper.chmod(0o755)
    store = f"sqlite:///{tmp_path / 'results.db'}"
    env = {**cell.env, "CLUSTERBENCH_DB": store, "CLUSTERBENCH_CBK": str(wrapper), "CBK_WAIT_NOTE_S": "1",
           "PATH": f"{Path(mpiexec).parent}{os.pathsep}{cell.env['PATH']}"}
    r = cell.run([sys.executable, "-m", "clusterbench", "run", "null", "--launcher", "qrsh", "--np", "2",
                  "--seconds=0.25", "--repeat", "1", "--start-timeout", "12", "--quiet"],
                 env=env, cwd=tmp_path, timeout=150)
    assert r.returncode == 1, r.stdout[-2000:] + r.stderr[-2000:]
    (message,), = store_rows(store, "select message from steps")
    host = (tmp_path / "rank1").read_text().strip()
    assert host in ("h02", "h03"), (host, message)
    assert f"; rank 1 (placed on {host}) said nothing: the likely holder of the others' waits" in message, message
    assert "clusterbench placement" not in message, message
