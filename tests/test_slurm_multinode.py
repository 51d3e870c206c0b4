"""Slurm with several nodes: one slurmd per test host (clusterbench testbed),
so srun and sbatch cross host boundaries. A suite under `sbatch -N 2` is
stored with its batch job and both nodes' environment snapshots; `run
cluster` under `sbatch -N 4` takes its nodes from the allocation."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO, find_cbk, store_rows
from clusterbench.testbed import cluster as tc
from slurm_cluster import MultiNodeSlurm, sbatch_wait, why_not

WHY = tc.why_not() or why_not()
pytestmark = [pytest.mark.skipif(WHY is not None, reason=str(WHY)),
              pytest.mark.long_module]
OPENMPI_CBK = REPO / ".venv-openmpi" / "bin" / "cbk"
# srun serves MPICH through pmi2 and Open MPI 5 through PMIx (Slurm's
# mpi/pmix plugin needs Debian's libpmix-dev for its libpmix.so)
SRUN_MPI = {"mpich": "pmi2", "openmpi": "pmix"}


@pytest.fixture(params=["mpich", "openmpi"])
def family(request) -> tuple[str, str]:
    if request.param == "openmpi" and not os.access(OPENMPI_CBK, os.X_OK):
        pytest.skip("no Open MPI cbk: run scripts/build-openmpi-cbk.sh")
    return request.param, str(OPENMPI_CBK) if request.param == "openmpi" else find_cbk()


@pytest.fixture(scope="module")
def slurm(tmp_path_factory):
    base = tmp_path_factory.mktemp("slurm-multinode")
    hosts = tc.up(base / "tb", 4)
    cluster = MultiNodeSlurm(base / "slurm", hosts)
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.stop()
        tc.down(hosts.dir)


@pytest.mark.timeout(60)
def test_srun_and_sbatch_place_tasks_on_several_hosts(slurm, tmp_path):
    r = subprocess.run(["srun", "-N", "2", "hostname"], capture_output=True, text=True, env=slurm.env, timeout=50)
    assert r.returncode == 0, r.stderr
    assert sorted(r.stdout.split()) == ["h01", "h02"]
    out = tmp_path / "job.out"
    r = sbatch_wait(["-N", "3", f"--output={out}", "--wrap", "srun hostname"],
                    env=slurm.env, timeout=50)
    assert r.returncode == 0, r.stderr
    assert sorted(out.read_text().split()) == ["h01", "h02", "h03"]


@pytest.mark.timeout(300)
def test_a_suite_under_sbatch_on_two_nodes_is_stored_with_its_job_and_both_snapshots(slurm, family, tmp_path):
    name, cbk_bin = family
    store = f"sqlite:///{tmp_path / 'results.db'}"
    out = tmp_path / "job.out"
    bindir = Path(sys.executable).parent
    env = {**slurm.env, "CLUSTERBENCH_DB": store, "CLUSTERBENCH_CBK": cbk_bin,
           "CLUSTERBENCH_SRUN_MPI": SRUN_MPI[name],
           "PATH": f"{Path(cbk_bin).parent}{os.pathsep}{bindir}{os.pathsep}{os.environ['PATH']}"}
    script = (f"{sys.executable} -m clusterbench run cluster-smoke --launcher srun --label smoke-$SLURM_JOB_ID "
              f"--report {tmp_path / 'report.html'}")
    # four tasks a node: the suite places four ranks on one node (1x4) and on two (2x2)
    r = sbatch_wait(["-N", "2", "--ntasks-per-node=4", f"--output={out}", "--wrap", script],
                    cwd=tmp_path, env=env, timeout=280)
    log = out.read_text() if out.exists() else ""
    job = r.stdout.split()[-1] if r.stdout.split() else "?"
    assert r.returncode == 0, r.stderr + log[-3000:] + "\n" + slurm.job_log(job)
    steps_said = store_rows(store, "select name, status, message from steps order by id")
    assert store_rows(store, "select label, status, batch_job from runs") == [(f"smoke-{job}", "ok", f"slurm {job}")], \
        f"{steps_said}\n{log[-3000:]}\n{slurm.job_log(job)}"
    hosts = sorted(h for (h,) in store_rows(store, "select host from run_hosts"))
    assert hosts == ["h01", "h02"]
    # each node's snapshot (taken by an srun step of its own) names the job as the batch step's does:
    # the job-wide variables only, so the two nodes do not differ by them
    for (data,) in store_rows(store, "select e.data from run_hosts h join environments e "
                                     "on e.hash = h.environment_hash"):
        env = json.loads(data)
        assert {k: v for k, v in env.items() if k.startswith("batchjob.")} == {
            "batchjob.system": "slurm", "batchjob.partition": "test", "batchjob.nodes": "h[01-02]",
            "batchjob.node_count": 2, "batchjob.cpus_per_node": "4(x2)"}, env.get("host.name")
    steps = store_rows(store, "select launcher, ranks, ranks_per_node, status from steps order by id")
    assert steps == [("srun", 2, 1, "ok"), ("srun", 4, 4, "ok"), ("srun", 4, 2, "ok")]
    placed = store_rows(store, "select json_extract(record, '$.nodes'), json_extract(record, '$.same_node') "
                               "from samples where json_extract(record, '$.type') = 'measurement' "
                               "and json_extract(record, '$.size_bytes') = 1048576 order by id")
    assert placed[0] == (2, 0)                     # pingpong: two nodes, not the same
    assert [n for n, _ in placed[1:]] == [1, 2]    # bandwidth as 1x4 and 2x2


@pytest.mark.timeout(300)
def test_run_cluster_under_sbatch_on_four_nodes_takes_its_nodes_from_the_allocation(slurm, tmp_path):
    store = f"sqlite:///{tmp_path / 'results.db'}"
    out, report = tmp_path / "job.out", tmp_path / "cluster.html"
    bindir = Path(sys.executable).parent
    env = {**slurm.env, "CLUSTERBENCH_DB": store, "CLUSTERBENCH_CBK": find_cbk(), "CLUSTERBENCH_SRUN_MPI": "pmi2",
           "PATH": f"{Path(find_cbk()).parent}{os.pathsep}{bindir}{os.pathsep}{os.environ['PATH']}"}
    # laptop-small: Himeno for 0.2 s on one thread per node, one node at a time (the four
    # test hosts share two cores), and a link matrix of 4 x 256 KiB windows,
    # in the shift pattern and one pair at a time
    script = (f"{sys.executable} -m clusterbench run cluster --only=himeno,links --one-at-a-time --repeat 3 "
              "--himeno.seconds=0.2 --himeno.threads=1 --links.size=256k --links.window=4 --links.iterations=4 "
              f"--links.latency-iterations=20 --links-one-pair --quiet --label n4-$SLURM_JOB_ID --report {report}")
    r = sbatch_wait(["-N", "4", f"--output={out}", "--wrap", script],
                    cwd=tmp_path, env=env, timeout=280)
    log = out.read_text() if out.exists() else ""
    job = r.stdout.split()[-1] if r.stdout.split() else "?"
    assert r.returncode == 0, r.stderr + log[-3000:] + "\n" + slurm.job_log(job)
    assert store_rows(store, "select label, status, batch_job from runs") == [(f"n4-{job}", "ok", f"slurm {job}")], \
        f"{store_rows(store, 'select name, status, message from steps order by id')}\n{log[-3000:]}"
    assert sorted(h for (h,) in store_rows(store, "select host from run_hosts")) == ["h01", "h02", "h03", "h04"]
    assert {launcher for (launcher,) in store_rows(store, "select launcher from steps")} == {"srun"}
    from clusterbench.analysis.cluster.analysis import analyse, thresholds_of
    from clusterbench.report.data import load_run
    from clusterbench.store import Store

    s = Store(store)
    run = load_run(s, s.resolve(f"n4-{job}")[0])
    view = analyse(run, **thresholds_of(run))
    assert view.hosts == ["h01", "h02", "h03", "h04"]
    assert len(view.links) == 12 and all(lk.mib_s > 0 for lk in view.links)   # every ordered pair of 4
    assert [f.name for f in view.figures] == ["compute (Himeno), jacobi (time)"] and len(view.figures[0].nodes) == 4
    # --links-one-pair: the same 12 links again, each alone, in records that say so
    assert {(lk.src, lk.dst) for lk in view.links_alone} == {(lk.src, lk.dst) for lk in view.links}
    assert all(lk.mib_s > 0 for lk in view.links_alone)
    patterns = store_rows(store, "select steps.name, json_extract(samples.record, '$.pattern') from samples "
                                 "join steps on steps.id = samples.step_id "
                                 "where json_extract(samples.record, '$.phase') = 'link_bandwidth'")
    assert set(patterns) == {("link matrix (mpiGraph shift pattern)", "shift"),
                             ("link matrix (one pair at a time)", "one-pair")}, set(patterns)
    html = report.read_text()
    assert 'class="heatmap"' in html and all(h in html for h in ("h01", "h02", "h03", "h04"))
    assert "Links alone (one pair at a time)" in html


SHAPES = [(2, None), (3, None), (4, None), (5, None), (7, None), (9, None), (12, None), (5, 2), (3, 1), (8, 4), (6, 3),
          (3, 2), (4, 2), (2, 1)]


@pytest.mark.timeout(120)
@pytest.mark.parametrize("allocation", [("-N", "3", "-n", "12"), ("-N", "2", "-n", "5"), ("-N", "4", "-n", "7")],
                         ids=["3x4", "2-nodes-5", "4-nodes-7"])
def test_srun_places_each_task_where_rank_placement_says(slurm, tmp_path, monkeypatch, allocation):
    """A rank silent at the start deadline was named with its host under mpiexec with a host file, not
    under srun: its placement is now srun's block layout over the allocation (rank_placement.slurm_block),
    checked here against where real srun started each task, for the step shapes clusterbench asks of it
    (--ntasks, and --nodes with --ntasks-per-node for --ppn) in allocations of even and uneven CPUs."""
    from clusterbench.launch.job import Job
    from clusterbench.launch.srun import Srun

    out = tmp_path / "job.out"
    # each step once the one before has left the job: a step created while the last still held its CPUs
    # went to the nodes that had them free (2 tasks on h03 and h04, two suites side by side), as srun may
    steps_gone = ("while squeue -h -s -j $SLURM_JOB_ID -o %i | grep -qv -e '[.]batch$' -e '[.]extern$'; "
                  "do sleep 0.1; done")
    lines = ['echo "ALLOC $SLURM_JOB_ID $SLURM_JOB_NODELIST $SLURM_JOB_CPUS_PER_NODE"']
    for n, ppn in SHAPES:
        shape = f"--ntasks={n}" + (f" --nodes={-(-n // ppn)} --ntasks-per-node={ppn}" if ppn else "")
        lines.append(steps_gone)
        lines.append(f"srun {shape} sh -c 'echo TASK {n}:{ppn} $SLURM_PROCID $SLURMD_NODENAME'"
                     " || echo REFUSED " f"{n}:{ppn}")
    r = sbatch_wait([*allocation, f"--output={out}", "--wrap", "\n".join(lines)],
                    cwd=tmp_path, env=slurm.env, timeout=100)
    log = out.read_text() if out.exists() else ""
    assert r.returncode == 0, r.stderr + log
    (alloc,) = [line.split()[1:] for line in log.splitlines() if line.startswith("ALLOC ")]
    job_id, nodelist, cpus = alloc
    started: dict[str, dict[int, str]] = {}
    for line in log.splitlines():
        if line.startswith("TASK "):
            _, shape, rank, host = line.split()
            started.setdefault(shape, {})[int(rank)] = host
    monkeypatch.setenv("SLURM_JOB_ID", job_id)
    monkeypatch.setenv("SLURM_JOB_NODELIST", nodelist)
    monkeypatch.setenv("SLURM_JOB_CPUS_PER_NODE", cpus)
    monkeypatch.delenv("SLURM_STEP_ID", raising=False)
    compared = 0
    for n, ppn in SHAPES:
        tasks = started.get(f"{n}:{ppn}")
        if tasks is None:   # srun refused the shape in this allocation (more nodes or tasks than it has)
            continue
        placement = Srun.laid_out(Job(("true",), n, ppn))
        assert placement is not None, (n, ppn, nodelist, cpus)
        assert [placement.host_of(rank) for rank in range(n)] == [tasks[rank] for rank in range(n)], \
            (n, ppn, nodelist, cpus, log)
        compared += 1
    assert compared >= 4, log


def test_a_slurm_host_list_is_expanded_as_scontrol_expands_it(slurm):
    from clusterbench.launch.rank_placement import slurm_hostnames

    for nodelist in ("h[01-03,07],gpu[1-2],x", "n[008-010]", "a[1-2]b[3-4]", "node1,node[10-11]", "h01"):
        r = subprocess.run(["scontrol", "show", "hostnames", nodelist], capture_output=True, text=True,
                           env=slurm.env, timeout=30)
        assert r.returncode == 0, r.stderr
        assert slurm_hostnames(nodelist) == tuple(r.stdout.split()), nodelist


@pytest.mark.timeout(200)
@pytest.mark.parametrize("allocation", [("-N", "3", "-n", "12"), ("-N", "2", "-n", "5"), ("-N", "3")],
                         ids=["3x4", "2-nodes-5", "3x1"])
def test_mpiexec_inside_a_slurm_job_places_each_rank_where_rank_placement_says(slurm, tmp_path, monkeypatch,
                                                                             allocation):
    """mpiexec without a host file inside a Slurm job: Hydra's ranks and Open MPI's where the job's nodes and
    SLURM_TASKS_PER_NODE put them (Open MPI without --ppn: by core, a node's slots up to its cores), as
    clusterbench's own mpiexec command line started them."""
    import shlex

    from clusterbench.launch.job import Job
    from clusterbench.launch.mpiexec import MpiExec

    shapes = [(2, None), (3, None), (4, None), (5, None), (7, None), (9, None), (4, 1), (5, 2)]
    cbks = {"H": find_cbk(), **({"O": str(OPENMPI_CBK)} if os.access(OPENMPI_CBK, os.X_OK) else {})}
    jobs = {(tag, n, ppn): Job(("sh", "-c", f"echo {tag} {n}:{ppn} ${{PMI_RANK:-$OMPI_COMM_WORLD_RANK}} $(hostname)"),
                               n, ppn, program=cbk)
            for tag, cbk in cbks.items() for n, ppn in shapes}
    out = tmp_path / "job.out"
    # each launch bounded, and one that hung tried once more: prterun 5.0.11 under Slurm, with other Open MPI
    # jobs starting beside it (the suite's other workers), once never started its fourth rank (180 s, a CI run)
    bounded = "timeout -k 5 30 {cmd} 2>/dev/null || {{ [ $? -eq 124 ] && echo HUNG {key} && timeout -k 5 30 {cmd} 2>/dev/null; }}"
    lines = ['echo "ALLOC $SLURM_JOB_ID $SLURM_JOB_NODELIST $SLURM_TASKS_PER_NODE"',
             *(bounded.format(cmd=shlex.join(MpiExec().command(job)), key=f"{tag}-{n}:{ppn}")
               for (tag, n, ppn), job in jobs.items()),
             "exit 0"]   # a shape the MPI refuses is left out below, not the job's failure
    r = sbatch_wait([*allocation, f"--output={out}", "--wrap", "\n".join(lines)],
                    cwd=tmp_path, env=slurm.env, timeout=180)
    log = out.read_text() if out.exists() else ""
    assert r.returncode == 0, r.stderr + log
    (alloc,) = [line.split()[1:] for line in log.splitlines() if line.startswith("ALLOC ")]
    started: dict[tuple, dict[int, str]] = {}
    for line in log.splitlines():
        words = line.split()
        if len(words) == 4 and words[0] in cbks and words[2].isdigit():
            n, ppn = words[1].split(":")
            started.setdefault((words[0], int(n), None if ppn == "None" else int(ppn)), {})[int(words[2])] = words[3]
    monkeypatch.setenv("SLURM_JOB_ID", alloc[0])
    monkeypatch.setenv("SLURM_JOB_NODELIST", alloc[1])
    monkeypatch.setenv("SLURM_TASKS_PER_NODE", alloc[2])
    monkeypatch.delenv("SLURM_STEP_ID", raising=False)
    compared = by_core = 0
    for key, job in jobs.items():
        ranks = started.get(key, {})
        if len(ranks) != job.ranks:   # the MPI refused the shape here (Open MPI past a node's slots)
            continue
        placement = MpiExec().laid_out(job)
        assert placement is not None and [placement.host_of(r) for r in range(job.ranks)] == \
            [ranks[r] for r in range(job.ranks)], (key, alloc, log)
        compared += 1
        by_core += key[0] == "O" and job.ranks_per_node is None
    assert compared >= len(shapes), log
    # Open MPI without --ppn (mapping by core, a node's slots up to its cores) placed and compared here too
    assert by_core >= 2 or "O" not in cbks, log


def silent_rank_2(slurm, tmp_path, cbk: str, rank: str, node: str, before: str, run: str,
                  job: list[str]) -> tuple[str, str, str]:
    """`clusterbench run null --np 3 ... --start-timeout 12` in an sbatch job (`job`: its shape), run
    after `before` with the options `run`, where rank 2 (`rank`: the variable its process manager
    names it by) writes its node (`node`, a shell word) and sleeps before it becomes cbk. Returns
    the node rank 2 wrote, the step's message, and what the job and sbatch said."""
    store = f"sqlite:///{tmp_path / 'results.db'}"
    out = tmp_path / "job.out"
    wrapper = tmp_path / "cbk-rank2-silent"
    wrapper.write_text('#!/bin/sh\ncase " $* " in *" --seconds=0.25 "*)\n'
                       f'  [ "${rank}" = 2 ] && {{ echo {node} > {tmp_path}/rank2; exec sleep 600; }};;\n'
                       f'esac\nexec {cbk} "$@"\n')
    wrapper.chmod(0o755)
    bindir = Path(sys.executable).parent
    env = {**slurm.env, "CLUSTERBENCH_DB": store, "CLUSTERBENCH_CBK": str(wrapper), "CLUSTERBENCH_SRUN_MPI": "pmi2",
           "CBK_WAIT_NOTE_S": "1", "PATH": f"{Path(cbk).parent}{os.pathsep}{bindir}{os.pathsep}{os.environ['PATH']}"}
    script = (f"{before}{sys.executable} -m clusterbench run null --np 3 {run} --seconds=0.25 --repeat 1 "
              "--start-timeout 12 --quiet")
    r = sbatch_wait([*job, f"--output={out}", "--wrap", script], cwd=tmp_path, env=env, timeout=180)
    said = (out.read_text() if out.exists() else "") + r.stderr
    (message,), = store_rows(store, "select message from steps")
    return (tmp_path / "rank2").read_text().strip(), message, said


@pytest.mark.timeout(200)
def test_a_silent_rank_under_srun_is_named_with_the_host_srun_started_it_on(slurm, tmp_path):
    """At the start deadline the message said "rank 2 said nothing" under srun, where under mpiexec with a
    host file it named the host. Rank 2 here sleeps before it becomes cbk, and says where srun started it.
    The job asks for cyclic distribution: srun's block layout (rank_placement.slurm_block) puts rank 2 of
    3 on h02 of two nodes of 2 CPUs, where srun starts it on h01; each rank's own note of its node
    (launch/rank_note.py) names h01, and the layout, contradicted, names no one."""
    node, message, said = silent_rank_2(slurm, tmp_path, find_cbk(), "SLURM_PROCID", "$SLURMD_NODENAME",
                                        "export SLURM_DISTRIBUTION=cyclic; ", "--launcher srun", ["-N", "2", "-n", "4"])
    assert node == "h01", said
    assert "; rank 2 (placed on h01) said nothing: the likely holder of the others' waits; " in message, (message, said)
    assert "[clusterbench placement]" not in message, message


@pytest.mark.timeout(200)
def test_a_silent_rank_of_an_oversubscribed_open_mpi_inside_a_slurm_job_is_named_with_the_node_it_said(slurm,
                                                                                                     tmp_path):
    """mpiexec without a host file inside an sbatch job of one slot a node: Open MPI, oversubscribed, places
    the ranks past the slots as it sees fit, and the batch job's layout (mpiexec.batch_allocation) names no
    host, as for Open MPI without Grid Engine support in a qsub job; the message said "rank 2 said nothing".
    Each rank now says first the node it started on (launch/rank_note.py). Rank 2 sleeps before it becomes
    cbk, and writes its node."""
    if not os.access(OPENMPI_CBK, os.X_OK):
        pytest.skip(f"no Open MPI cbk at {OPENMPI_CBK} (scripts/setup.sh --test builds it)")
    node, message, said = silent_rank_2(slurm, tmp_path, str(OPENMPI_CBK), "OMPI_COMM_WORLD_RANK", "$(uname -n)", "",
                                        "--launcher mpiexec --oversubscribe", ["-N", "2", "-n", "2"])
    assert node in ("h01", "h02"), said
    assert f"; rank 2 (placed on {node}) said nothing: the likely holder of the others' waits; " in message, \
        (message, said)


@pytest.mark.timeout(120)
def test_srun_mpiexec_and_run_cluster_inside_a_heterogeneous_job_are_refused_in_one_line(slurm, tmp_path):
    """sbatch -N1 : -N2: the script's SLURM_JOB_NODELIST is the first component's alone, and srun without
    --het-group runs there, so run cluster took one node of three for the cluster and an srun step ran on
    it alone. Refused before anything is stored, naming every component and the job to submit instead."""
    store = tmp_path / "results.db"
    out = tmp_path / "job.out"
    bindir = Path(sys.executable).parent
    env = {**slurm.env, "CLUSTERBENCH_DB": f"sqlite:///{store}", "CLUSTERBENCH_CBK": find_cbk(),
           "CLUSTERBENCH_SRUN_MPI": "pmi2",
           "PATH": f"{Path(find_cbk()).parent}{os.pathsep}{bindir}{os.pathsep}{os.environ['PATH']}"}
    cb = f"{sys.executable} -m clusterbench"
    script = "\n".join([
        'echo "NODES $SLURM_JOB_NODELIST"', "echo SRUN $(srun hostname | sort)",
        f"{cb} run null --launcher srun --np 2 --seconds=0.01 --repeat 1 --quiet; echo exit=$?",
        f"{cb} run null --launcher mpiexec --np 2 --seconds=0.01 --repeat 1 --quiet; echo exit=$?",
        f"{cb} run cluster --only=links --quiet; echo exit=$?"])
    r = sbatch_wait(["-N1", f"--output={out}", ":", "-N2", "--wrap", script],
                    cwd=tmp_path, env=env, timeout=100)
    log = out.read_text() if out.exists() else ""
    assert r.returncode == 0, r.stderr + log
    job = r.stdout.split()[-1]
    lines = log.splitlines()
    # what the refusal rests on: the script sees the first component, and srun runs there alone
    assert lines[:2] == ["NODES h01", "SRUN h01"], log
    said = (f"Slurm job {job} is heterogeneous (2 components: h01 + h[02-03]), and srun, mpiexec and run cluster "
            "would see its first component alone (h01): submit one job of all the nodes (sbatch -N 3), "
            "or one job a component")
    assert lines[2:] == [f"Error: null: {said}", "exit=2", f"Error: null: {said}", "exit=2",
                         f"Error: run cluster: {said}", "exit=2"], log
    assert not store.exists() or store_rows(f"sqlite:///{store}", "select count(*) from runs") == [(0,)]
