"""Launcher command lines (exact strings), suites and sweeps."""
from __future__ import annotations

import json
import os
import re
import subprocess

import pytest

from conftest import run_bounded

from clusterbench.errors import BadInput
from clusterbench.launch import Job
from clusterbench.launch.local import Local
from clusterbench.launch.mpiexec import hydra_command, openmpi_command
from clusterbench.launch.qrsh import qrsh_command
from clusterbench.launch.srun import srun_command
from clusterbench.run.plan import expand
from clusterbench import suites

JOB = Job(("/opt/cb/cbk", "null", "--seconds=1", "--repetitions=3"), ranks=8, ranks_per_node=4,
          hostfile="/tmp/hosts", oversubscribe=True, env={"MPIR_CVAR_X": "1"})


def test_hydra_command_line():
    assert hydra_command("/usr/bin/mpiexec", JOB) == [
        "/usr/bin/mpiexec", "-n", "8", "-ppn", "4", "-f", "/tmp/hosts", "-genv", "MPIR_CVAR_X", "1",
        "/opt/cb/cbk", "null", "--seconds=1", "--repetitions=3"]


def test_openmpi_command_line():
    assert openmpi_command("/usr/bin/mpiexec", JOB, as_root=True) == [
        "/usr/bin/mpiexec", "-n", "8", "--map-by", "ppr:4:node", "--hostfile", "/tmp/hosts", "--oversubscribe",
        "--allow-run-as-root", "-x", "MPIR_CVAR_X=1", "/opt/cb/cbk", "null", "--seconds=1", "--repetitions=3"]


def test_srun_command_line():
    assert srun_command("/usr/bin/srun", JOB, "pmi2") == [
        "/usr/bin/srun", "--ntasks=8", "--mpi=pmi2", "--kill-on-bad-exit=1", "--disable-status", "--export=ALL",
        "--nodes=2",
        "--ntasks-per-node=4", "--nodefile=/tmp/hosts", "--overcommit", "/opt/cb/cbk", "null", "--seconds=1",
        "--repetitions=3"]
    assert srun_command("srun", Job(("cbk", "null")), "pmix") == [
        "srun", "--ntasks=1", "--mpi=pmix", "--kill-on-bad-exit=1", "--disable-status", "--export=ALL", "cbk",
        "null"]


def test_each_srun_rank_says_its_node_and_a_silent_rank_is_named_by_it_or_a_layout_none_contradicts():
    from clusterbench.launch.rank_placement import slurm_block, told_or_laid_out
    from clusterbench.launch.rank_note import SLURM, telling_node, told_nodes

    rank = subprocess.run(telling_node(("sh", "-c", 'echo "ran $0 $1"', "a b", "c;d"), SLURM), capture_output=True,
                          text=True, env={**os.environ, "SLURM_PROCID": "2", "SLURMD_NODENAME": "h03"}, timeout=30)
    assert rank.stdout == "ran a b c;d\n" and rank.returncode == 0, rank
    assert told_nodes("3: other\n" + rank.stderr + "cbk: null: x\n") == {2: "h03"}
    layout = slurm_block(("h01", "h02"), (2, 2), 4, None)   # ranks 0-1 on h01, 2-3 on h02
    agreed = told_or_laid_out({0: "h01", 3: "h02"}, layout)
    assert [agreed.host_of(r) for r in range(5)] == ["h01", "h01", "h02", "h02", None]
    moved = told_or_laid_out({0: "h03", 3: "h04"}, layout)   # the step ran elsewhere: the layout names no one
    assert [moved.host_of(r) for r in range(4)] == ["h03", None, None, "h04"]
    assert told_or_laid_out({}, None).host_of(0) is None


def test_slurm_cpus_per_node_is_read_in_the_forms_slurm_writes():
    from clusterbench.launch.allocation import cpus_per_node

    assert cpus_per_node("2(x3),1") == [2, 2, 2, 1]
    assert cpus_per_node("64") == [64]
    assert cpus_per_node("36(x2),72,1(x3)") == [36, 36, 72, 1, 1, 1]
    assert cpus_per_node("2(x3),x") is None and cpus_per_node("") is None


def test_a_step_larger_than_its_batch_job_is_told_before_anything_runs():
    """srun refused these after the run was stored: 'Only allocated 1 nodes
    asked for 2', 'More processors requested than permitted' (exit 1, a
    failed run), and Hydra ran every rank on the slots it was granted; they
    are bad input, known from the job's own variables."""
    from clusterbench.launch.allocation import misfit as allocation_misfit

    job = {"SLURM_JOB_ID": "77", "SLURM_JOB_NUM_NODES": "4", "SLURM_JOB_CPUS_PER_NODE": "2(x3),1"}
    argv = ("cbk", "null")
    assert allocation_misfit(Job(argv, 7), job) is None
    assert allocation_misfit(Job(argv, 8), job) == (
        "8 ranks; Slurm job 77 was given 7 CPU(s) (SLURM_JOB_CPUS_PER_NODE=2(x3),1): ask sbatch/salloc for more "
        "(--ntasks=8), or pass --oversubscribe")
    assert allocation_misfit(Job(argv, 8, oversubscribe=True), job) is None
    assert allocation_misfit(Job(argv, 6, 2), job) is None   # three nodes of 2 CPUs
    assert allocation_misfit(Job(argv, 8, 2), job) == (
        "8 ranks, 2 a node, need 4 nodes of 2 CPUs; Slurm job 77 has 3 (SLURM_JOB_CPUS_PER_NODE=2(x3),1): "
        "ask sbatch/salloc for more, or pass --oversubscribe")
    assert allocation_misfit(Job(argv, 10, 2, oversubscribe=True), job) == (
        "10 ranks, 2 a node, need 5 nodes; Slurm job 77 has 4 (SLURM_JOB_NUM_NODES): ask sbatch/salloc for more "
        "(--nodes=5), or give fewer ranks")
    # a heterogeneous job: its script's variables are the first component's (test_slurm_multinode.py); Slurm
    # before 20.02 spelt HET as PACK
    het = {**job, "SLURM_HET_SIZE": "2", "SLURM_JOB_NODELIST_HET_GROUP_0": "n01",
           "SLURM_JOB_NODELIST_HET_GROUP_1": "n[02-04]", "SLURM_JOB_NUM_NODES_HET_GROUP_0": "1",
           "SLURM_JOB_NUM_NODES_HET_GROUP_1": "3"}
    said = ("Slurm job 77 is heterogeneous (2 components: n01 + n[02-04]), and srun, mpiexec and run cluster would "
            "see its first component alone (n01): submit one job of all the nodes (sbatch -N 4), or one job a component")
    assert allocation_misfit(Job(argv, 2), het) == said
    assert allocation_misfit(Job(argv, 2), {k.replace("HET", "PACK"): v for k, v in het.items()}) == said
    assert allocation_misfit(Job(argv, 2), {**het, "SLURM_HET_SIZE": "1"}) is None
    # outside an allocation srun asks for its own; inside a step, srun within srun is not checked
    assert allocation_misfit(Job(argv, 99, 2), {}) is None
    assert allocation_misfit(Job(argv, 99, 2), {**job, "SLURM_STEP_ID": "0"}) is None
    # Grid Engine: the slots and hosts of the parallel environment; JOB_ID alone is someone else's variable
    sge = {"JOB_ID": "5678", "SGE_ROOT": "/opt/sge", "PE": "mpi", "NSLOTS": "6", "NHOSTS": "2",
           "PE_HOSTFILE": "/opt/sge/default/spool/n01/active_jobs/5678.1/pe_hostfile"}
    assert allocation_misfit(Job(argv, 6), sge) is None and allocation_misfit(Job(argv, 6, 3), sge) is None
    assert allocation_misfit(Job(argv, 8), sge) == (
        "8 ranks; Grid Engine job 5678 was granted 6 slot(s) (NSLOTS): ask qsub for -pe mpi 8, "
        "or pass --oversubscribe")
    assert allocation_misfit(Job(argv, 8, oversubscribe=True), sge) is None
    assert allocation_misfit(Job(argv, 6, 2), sge) == (
        "6 ranks, 2 a node, need 3 hosts; Grid Engine job 5678 was granted 2 (NHOSTS): ask qsub for more "
        "(-pe mpi ...), or give fewer ranks")
    assert allocation_misfit(Job(argv, 99), {"JOB_ID": "5678", "NSLOTS": "1"}) is None
    # a job of no parallel environment has one slot, and Hydra started every rank there
    assert allocation_misfit(Job(argv, 2), {"JOB_ID": "9", "SGE_ROOT": "/opt/sge", "NSLOTS": "1", "NHOSTS": "1"}) == (
        "2 ranks; Grid Engine job 9 was granted 1 slot(s) (NSLOTS): ask qsub for -pe <parallel environment> 2, "
        "or pass --oversubscribe")


def test_qrsh_command_line():
    inner = ["/usr/bin/mpiexec", "-n", "8", "/opt/cb/cbk", "null"]
    assert qrsh_command("/usr/bin/qrsh", JOB, "mpi", inner) == [
        "/usr/bin/qrsh", "-V", "-now", "no", "-cwd", "-pe", "mpi", "8", *inner]
    assert qrsh_command("qrsh", Job(("cbk", "null")), "mpi", ["cbk", "null"]) == [
        "qrsh", "-V", "-now", "no", "-cwd", "cbk", "null"]


def test_qrsh_quotes_every_word_the_remote_shell_parses(tmp_path):
    # qrsh hands its command to a shell on the execution host as one line:
    # a hostile --dir must arrive as one word, with nothing executed
    hostile = ["/opt/cb/cbk", "seqio", "--dir=/scratch/a;touch PWNED;b", "--label=$(touch PWNED2) `touch PWNED3`",
               "--dir=/my data/$HOME's", "-genv", "X", "a b"]
    cmd = qrsh_command("/usr/bin/qrsh", Job(("cbk",)), "mpi", hostile)
    assert cmd == [
        "/usr/bin/qrsh", "-V", "-now", "no", "-cwd", "/opt/cb/cbk", "seqio", "'--dir=/scratch/a;touch PWNED;b'",
        "'--label=$(touch PWNED2) `touch PWNED3`'", "'--dir=/my data/$HOME'\"'\"'s'", "-genv", "X", "'a b'"]
    # a real shell parsing the line qrsh sends gets exactly the original argv
    line = " ".join(cmd[5:])
    script = f'set -- {line}; for a in "$@"; do printf "%s\\0" "$a"; done'
    words = subprocess.run(["sh", "-c", script], cwd=tmp_path, capture_output=True, text=True, check=True).stdout
    assert words.split("\0")[:-1] == hostile
    assert list(tmp_path.iterdir()) == []


def test_qrsh_tells_the_hosts_grid_engine_granted_before_mpiexec_and_they_are_read_back(tmp_path):
    """The hosts are granted on the execution host: the launch writes $PE_HOSTFILE on stderr (tagged),
    then is mpiexec itself; the tagged lines give the placement and are never the launch's failure."""
    from clusterbench.launch.messages import failure_line
    from clusterbench.launch.qrsh import granted, telling_pe_hostfile
    from clusterbench.launch.hostfile import HostEntry

    inner = ["/usr/bin/mpiexec", "-n", "3", "/opt/cb/cbk", "null"]
    assert telling_pe_hostfile(inner) == [
        "sh", "-c", 'sed "s/^/[clusterbench placement] /" "$PE_HOSTFILE" >&2; exec "$@"', "sh", *inner]
    (tmp_path / "pe_hostfile").write_text("h03 1 all.q@h03 UNDEFINED\nh02 2 all.q@h02 UNDEFINED\n")
    line = " ".join(qrsh_command("qrsh", Job(("cbk",)), "mpi", telling_pe_hostfile(["echo", "ran", "$HOME"]))[5:])
    r = subprocess.run(["sh", "-c", line], cwd=tmp_path, capture_output=True, text=True, check=True,
                       env={"PE_HOSTFILE": str(tmp_path / "pe_hostfile"), "PATH": "/usr/bin:/bin"})
    assert r.stdout == "ran $HOME\n"
    said = r.stderr + "cbk: rank 0 (h03) has waited 1 s in MPI_Init of 3 ranks\n"
    assert granted(said) == (HostEntry("h03", 1), HostEntry("h02", 2))
    assert failure_line(r.stderr, 7) == "exit status 7"


def test_local_runs_one_process_only():
    assert Local().command(Job(("cbk", "seqio", "--dir=/x"))) == ["cbk", "seqio", "--dir=/x"]
    with pytest.raises(BadInput, match="one process"):
        Local().command(JOB)


def _on_one_thread(cbk_bin: str, store_url: str, *args: str) -> subprocess.CompletedProcess:
    """clusterbench with one hardware thread to run on (its CPU affinity), so
    the bound on ranks is the same on any machine: 16."""
    import os
    import sys
    from pathlib import Path

    cpu = str(min(os.sched_getaffinity(0)))
    env = {**os.environ, "CLUSTERBENCH_CBK": cbk_bin, "CLUSTERBENCH_DB": store_url, "COLUMNS": "200",
           "PATH": str(Path(cbk_bin).parent) + os.pathsep + os.environ.get("PATH", "")}
    for name in ("SLURM_JOB_ID", "JOB_ID", "PBS_JOBID"):   # outside a batch job: this host alone
        env.pop(name, None)
    return run_bounded(["taskset", "-c", cpu, sys.executable, "-m", "clusterbench", *args], timeout=300, env=env)


@pytest.mark.timeout(300)
def test_ranks_far_past_this_hosts_hardware_threads_are_refused_unless_oversubscribe_is_given(cbk_bin, store_url):
    """`run null --np 100000` on a 2-core machine started 100,000 ranks
    (Hydra oversubscribes unasked). Past 16 ranks per hardware thread on this
    host alone, the run is refused in one line before the store is opened;
    16 per thread and --oversubscribe run."""
    from pathlib import Path

    refused = _on_one_thread(cbk_bin, store_url, "run", "null", "--np", "17", "--seconds=0", "--repeat", "1")
    assert refused.returncode == 2 and "Traceback" not in refused.stderr, refused.stderr
    (line,) = refused.stderr.strip().splitlines()
    assert "17 ranks" in line and "1 hardware thread " in line and "at most 16" in line and "--oversubscribe" in line
    assert not Path(store_url.removeprefix("sqlite:///")).exists()
    for args in (["--np", "16"], ["--np", "17", "--oversubscribe"]):
        r = _on_one_thread(cbk_bin, store_url, "run", "null", *args, "--seconds=0", "--repeat", "1", "--quiet")
        assert r.returncode == 0, r.stderr
    from conftest import store_rows

    assert store_rows(store_url, "select ranks from steps order by id") == [(16,), (17,)]


def test_more_ranks_per_node_than_ranks_is_refused_before_anything_runs(cli, store_url, tmp_path):
    """--np 2 --ppn 3 ran under Hydra, and under Open MPI (ppr:3:node asks 3
    slots) failed at launch with the run stored; a suite's step too."""
    from pathlib import Path

    suite = tmp_path / "s.toml"
    suite.write_text('[[steps]]\nkernel = "null"\nnp = [4, 2]\nppn = 4\nrepeat = 1\nparams = { seconds = 0 }\n')
    for args, named in ((["null", "--np", "2", "--ppn", "3", "--seconds=0", "--repeat", "1"], "3 ranks per node"),
                        ([str(suite)], "4 ranks per node (--ppn) of 2 ranks")):
        r = cli("run", *args)
        assert r.status == 2 and "Traceback" not in r.stderr, r.stderr
        (line,) = r.stderr.strip().splitlines()
        assert named in line and "--ppn" in line, line
    assert not Path(store_url.removeprefix("sqlite:///")).exists()


def test_a_step_placed_by_a_host_file_or_a_batch_allocation_is_not_bounded_by_this_host(monkeypatch):
    from clusterbench.launch.mpiexec import MpiExec

    for name in ("SLURM_JOB_ID", "JOB_ID", "PBS_JOBID"):
        monkeypatch.delenv(name, raising=False)
    assert MpiExec().on_this_host_only(Job(("cbk", "null"), 100))
    assert not MpiExec().on_this_host_only(Job(("cbk", "null"), 100, hostfile="/tmp/hosts"))
    monkeypatch.setenv("SLURM_JOB_ID", "1234")   # Hydra and Open MPI place the ranks on the allocation's nodes
    assert not MpiExec().on_this_host_only(Job(("cbk", "null"), 100))


def test_sweep_expands_lists_as_a_cartesian_product():
    steps = expand("seqio", {"block-size": ["4k", "1m"], "write": ["fsync", "direct"], "dir": "/d"}, repeat=2)
    assert [(s.params["block-size"], s.params["write"]) for s in steps] == [
        ("4k", "fsync"), ("4k", "direct"), ("1m", "fsync"), ("1m", "direct")]
    assert steps[0].name == "seqio [block-size=4k, write=fsync]"
    assert steps[0].cbk_args() == ("--block-size=4k", "--write=fsync", "--dir=/d", "--repetitions=2")
    ranks = expand("null", {}, repeat=1, ranks=[2, 4])
    assert [s.ranks for s in ranks] == [2, 4]


def test_quick_suite_loads_with_the_target_directory():
    quick = suites.load("quick", {"dir": "/scratch"})
    assert quick.steps and all(s.params.get("dir") == "/scratch" for s in quick.steps if "dir" in s.params)
    assert {"seqio", "manyfiles"} <= {s.kernel for s in quick.steps}


def test_a_suite_variable_no_step_uses_is_refused_naming_the_ones_it_takes(tmp_path):
    """`run quick --dir=/s --file-size=1m` wrote quick's 1 GiB files: a
    variable no step uses was dropped in silence, and the user believed it."""
    with pytest.raises(BadInput, match=r"^suite quick uses no --file-size \(its variables: --dir\)"):
        suites.load("quick", {"dir": "/s", "file-size": "1m"})
    with pytest.raises(BadInput, match=r"^suite node uses no --dir \(it takes no variables\)"):
        suites.load("node", {"dir": "/s"})
    conditions = tmp_path / "conditions.toml"
    conditions.write_text('memory-limit = "{limit}"\n[[steps]]\nkernel = "null"\n')
    assert suites.load(str(conditions), {"limit": "1g"}).conditions.memory_limit_bytes == 2**30
    assert suites.load("quick", {}).steps   # --dir's default is no variable given


@pytest.mark.timeout(60)
def test_run_of_a_suite_with_a_variable_it_does_not_use_is_exit_2_before_anything_runs(cli, tmp_path, store_url):
    r = cli("run", "quick", f"--dir={tmp_path}", "--file-size=1m")
    assert r.status == 2 and r.stdout == ""
    assert r.stderr.strip() == "Error: suite quick uses no --file-size (its variables: --dir)"
    assert list(tmp_path.iterdir()) == []


def test_suite_errors_are_bad_input(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text('[[steps]]\nkernel = "seqio"\nflavour = "x"\n')
    with pytest.raises(BadInput, match="unknown key"):
        suites.load(str(bad), {})
    var = tmp_path / "var.toml"
    var.write_text('[[steps]]\nkernel = "seqio"\nparams = { dir = "{scratch}" }\n')
    with pytest.raises(BadInput, match=r"no --scratch=VALUE"):
        suites.load(str(var), {})
    assert suites.load(str(var), {"scratch": "/s"}).steps[0].params["dir"] == "/s"


def test_hostfile_hosts_reads_both_flavours(tmp_path):
    from clusterbench.launch.job import hostfile_hosts

    f = tmp_path / "hosts"
    f.write_text("# nodes\nnode1:16\nnode2 slots=16\n\nnode1:4\n")
    assert hostfile_hosts(str(f)) == ["node1", "node2"]


def test_snapshots_come_back_whole_from_srun_chunks_interleaved_mid_line():
    """srun --label output as Slurm 22.05 forwards two tasks' long lines: 1 KiB chunks, each tagged."""
    from clusterbench.run.runner import labelled_objects

    lines = {t: json.dumps({"host.name": f"n{t}", "pad": "x" * 2500}) for t in (0, 1)}
    chunks = {t: [lines[t][i:i + 1024] for i in range(0, len(lines[t]), 1024)] for t in (0, 1)}
    out = "".join(f"{t}: {c}\n" for pair in zip(chunks[0], chunks[1]) for t, c in zip((0, 1), pair))
    out = "srun: warning: a launcher's noise\n" + out
    got = labelled_objects(out)
    assert sorted(g["host.name"] for g in got) == ["n0", "n1"]
    assert all(len(g["pad"]) == 2500 for g in got)


def test_launcher_help_names_every_registered_launcher(cli):
    from clusterbench.launch import names

    for command in ("run", "ior", "mdtest"):
        r = cli(command, "--help")
        assert r.status == 0
        text = " ".join(r.stdout.split())  # click wraps the help
        for name in names():
            assert f"{name} (" in text, (command, name)


def test_node_environments_are_asked_of_the_launcher(tmp_path, monkeypatch, cbk_bin):
    from clusterbench.launch import get

    hosts = tmp_path / "hosts"
    hosts.write_text("node1:4\nnode2:4\nnode1:2\n")
    argv = ("python3", "-m", "clusterbench.environment", "--line")
    mpiexec = get("mpiexec", cbk_bin)
    cmd = mpiexec.node_command(argv, 8, str(hosts))
    assert cmd[cmd.index("-n") + 1] == "2" and cmd[-4:] == list(argv)  # one process per host
    assert mpiexec.node_command(argv, 8, None) is None
    one = mpiexec.node_command(argv, 1, str(hosts))   # one rank runs on the file's first host: snapshot it
    assert one[one.index("-n") + 1] == "1" and one[-4:] == list(argv)
    assert get("local").node_command(argv, 1, None) is None
    # the snapshots are taken by one launch per host (one launch over all interleaves their long lines)
    folder = tmp_path / "one-host-files"
    folder.mkdir()
    per_host = mpiexec.node_commands(argv, 8, str(hosts), folder)
    assert len(per_host) == 2 and all(c[c.index("-n") + 1] == "1" and c[-4:] == list(argv) for c in per_host)
    assert sorted(f.read_text() for f in folder.iterdir()) == ["node1\n", "node2\n"]
    assert len(mpiexec.node_commands(argv, 1, str(hosts), folder)) == 1
    assert get("local").node_commands(argv, 1, None, folder) == []
    from clusterbench.launch.srun import LAUNCHER as srun

    monkeypatch.delenv("SLURM_JOB_ID", raising=False)
    assert srun.node_command(argv, 2, None) is None  # outside an allocation: this host's snapshot only


@pytest.mark.parametrize("text,hydra,openmpi", [
    # each MPI gets its own form unchanged, the other's as a host list in its own spelling (#33)
    ("h01:3\nh02:3\n", ["-f", "{f}"], ["--host", "h01:3,h02:3"]),
    ("h01 slots=3\nh02 slots=2 max_slots=4\n", ["-hosts", "h01:3,h02:2"], ["--hostfile", "{f}"]),
    ("# two nodes\nh01\nh02  # the second\n", ["-f", "{f}"], ["--hostfile", "{f}"]),
])
def test_each_mpi_gets_a_host_file_in_its_own_form(tmp_path, text, hydra, openmpi):
    f = tmp_path / "hosts"
    f.write_text(text)
    job = Job(("cbk", "null"), ranks=3, hostfile=str(f))
    fill = [x.replace("{f}", str(f)) for x in hydra]
    assert hydra_command("mpiexec", job) == ["mpiexec", "-n", "3", *fill, "cbk", "null"]
    fill = [x.replace("{f}", str(f)) for x in openmpi]
    assert openmpi_command("mpiexec", job, as_root=False) == ["mpiexec", "-n", "3", *fill, "cbk", "null"]


def test_a_host_file_line_in_no_known_form_is_one_line_naming_it(tmp_path):
    from clusterbench.launch.hostfile import read

    f = tmp_path / "hosts"
    f.write_text("h01:3\nh02 cpus=4\n")
    with pytest.raises(BadInput, match=r"line 2: 'h02 cpus=4' is neither 'host', 'host:slots' \(MPICH\) nor "
                                        r"'host slots=N' \(Open MPI\)"):
        read(str(f))


@pytest.mark.parametrize("line", ["h02:0", "h02 slots=0"])
def test_a_host_with_no_slot_is_one_line_naming_it(tmp_path, line):
    # Hydra 5.0.2 died of SIGFPE on `h02:0` (dividing by its slots), and the run said only "exit status -8"
    from clusterbench.launch.hostfile import read

    f = tmp_path / "hosts"
    f.write_text(f"h01:1\n{line}\n")
    with pytest.raises(BadInput, match=rf"line 2: '{line}': a host needs 1 slot or more \(drop the line "
                                       r"to leave the host out\)"):
        read(str(f))


@pytest.mark.parametrize("host", ["-oProxyCommand=x", "../../tmp/x", "h02/x", ".hidden"])
def test_a_host_file_entry_that_is_no_host_name_is_one_line_naming_it(tmp_path, host):
    """'-oProxyCommand=...' reached ssh as an option; run cluster names each
    node's one-line host file after it: '../../tmp/x' wrote /tmp/x.hosts, and
    'h02/x' was a FileNotFoundError traceback."""
    from clusterbench.launch.hostfile import read

    f = tmp_path / "hosts"
    f.write_text(f"h01\n{host}\n")
    with pytest.raises(BadInput, match=rf"line 2: '{re.escape(host)}': '{re.escape(host)}' is no host name"):
        read(str(f))


# Open MPI 4.1.6's refusal of a host file in MPICH's form, as it printed it on a lent GPU machine (#33)
OPEN_MPI_BANNER = """--------------------------------------------------------------------------
All nodes which are allocated for this job are already filled.
--------------------------------------------------------------------------
[gpu01:01234] 1 more process has sent help message help-orte-rmaps-base.txt / orte-rmaps-base:all-available-resources-used
"""


# MPICH 5.0.2's mpiexec -f hosts (h01, h09) when h09 cannot be reached: the cause is the first line
UNREACHABLE_NODE = """ssh: Could not resolve hostname h09: Name or service not known
[mpiexec@vm] ui_cmd_cb (/mpich-5.0.2/src/pm/hydra/mpiexec/pmiserv_pmci.c:51): Launch proxy failed.
[mpiexec@vm] HYDT_dmxu_poll_wait_for_event (/mpich-5.0.2/src/pm/hydra/lib/tools/demux/demux_poll.c:76): callback returned error status
[mpiexec@vm] HYD_pmci_wait_for_completion (/mpich-5.0.2/src/pm/hydra/mpiexec/pmiserv_pmci.c:180): error waiting for event
[mpiexec@vm] main (/mpich-5.0.2/src/pm/hydra/mpiexec/mpiexec.c:270): process manager error waiting for completion
"""


@pytest.mark.parametrize("stderr,line", [
    (OPEN_MPI_BANNER, "All nodes which are allocated for this job are already filled."),
    ("------\nThere are not enough slots available in the system to satisfy the 3\nslots that were requested.\n------\n",
     "There are not enough slots available in the system to satisfy the 3 slots that were requested."),
    ('{"schema":1,"type":"error","message":"seqio: no space left"}\n' + OPEN_MPI_BANNER, "seqio: no space left"),
    ("warning: x\n[mpiexec@h] error: unable to reach h02\n", "[mpiexec@h] error: unable to reach h02"),
    ("", "exit status 7"),
    # Hydra's call trace under the line that says why (a node unreachable): the cause, naming the node
    (UNREACHABLE_NODE, "ssh: Could not resolve hostname h09: Name or service not known"),
    ("testbed ssh: no host 'h09' in test cluster cb9e\n" + UNREACHABLE_NODE.split("\n", 1)[1],
     "testbed ssh: no host 'h09' in test cluster cb9e"),
    # a trace alone: its last line, as before
    (UNREACHABLE_NODE.split("\n", 1)[1], "[mpiexec@vm] main (/mpich-5.0.2/src/pm/hydra/mpiexec/mpiexec.c:270): "
                                         "process manager error waiting for completion"),
])
def test_a_launchers_failure_is_kept_whole_without_its_banner(stderr, line):
    from clusterbench.launch.messages import failure_line

    assert failure_line(stderr, 7) == line


def test_open_mpi_runs_ranks_from_a_host_file_in_mpich_form(tmp_path):
    """The host file form that failed under Open MPI (#33), with a real Open MPI."""
    import os
    import socket
    import sys
    from pathlib import Path

    cbk = Path(__file__).resolve().parent.parent / ".venv-openmpi" / "bin" / "cbk"
    if not os.access(cbk, os.X_OK):
        pytest.skip("no Open MPI cbk (scripts/build-openmpi-cbk.sh)")
    hosts = tmp_path / "hosts"
    hosts.write_text(f"{socket.gethostname()}:2\n")
    env = dict(os.environ, CLUSTERBENCH_CBK=str(cbk), CLUSTERBENCH_DB=f"sqlite:///{tmp_path / 'r.db'}",
               PATH=f"{cbk.parent}{os.pathsep}{os.environ['PATH']}")
    r = run_bounded([sys.executable, "-m", "clusterbench", "run", "null", "--np", "2", "--hostfile", str(hosts),
                     "--seconds=0.01", "--repeat", "1", "--quiet"], timeout=120, env=env)
    assert r.returncode == 0, r.stderr
    assert "stored as run 1" in r.stdout


# what a 4-rank cbk null under Debian's MPICH 4.0.2 printed on two test hosts when
# UCX stalled MPI_Finalize and cbk's watchdog ended three ranks (#33, 2026-11-28)
STALLED_FINALIZE = """cbk: rank 0: MPI_Finalize did not return within 5 s (CBK_FINALIZE_TIMEOUT_S); the results were already written, ending with status 0
cbk: rank 2: MPI_Finalize did not return within 5 s (CBK_FINALIZE_TIMEOUT_S); the results were already written, ending with status 0
cbk: rank 1: MPI_Finalize did not return within 5 s (CBK_FINALIZE_TIMEOUT_S); the results were already written, ending with status 0
[proxy:0:0@h01] HYDU_sock_write (utils/sock/sock.c:254): write error (Broken pipe)
[mpiexec@vm] HYD_pmci_wait_for_completion (pm/pmiserv/pmiserv_pmci.c:160): error waiting for event
[mpiexec@vm] main (ui/mpich/mpiexec.c:325): process manager error waiting for completion
"""


def test_a_finalize_stall_after_a_whole_measurement_is_said_not_failed():
    from clusterbench.launch.messages import finalize_stall

    assert finalize_stall(STALLED_FINALIZE) == (
        "MPI_Finalize did not return within 5 s on rank(s) 0, 1, 2; cbk ended them after their records were "
        "written (the environment variable CBK_FINALIZE_TIMEOUT_S sets how long it waits)")
    # a kernel's own failure is never excused by it
    assert finalize_stall('{"schema":1,"type":"error","message":"mpi: peer lost"}\n' + STALLED_FINALIZE) is None
    assert finalize_stall("[mpiexec@vm] main (ui/mpich/mpiexec.c:325): process manager error\n") is None


def test_a_timed_out_launch_names_whom_its_ranks_last_said_they_waited_on():
    # the link matrix with h03 stopped (kernels/core/patient_wait.c's notes, twice from rank 3)
    import subprocess

    from clusterbench.launch.messages import waits_named
    from clusterbench.launch.processes import Deadline

    stderr = ("cbk: rank 3 (h04) has waited 2 s on rank 2 (h03)\n"
              "[proxy:0:1@h02] some launcher noise\n"
              "1: cbk: rank 1 (h02) has waited 2 s in a barrier of every rank\n"
              "cbk: rank 3 (h04) has waited 31 s on rank 2 (h03) and rank 0 (h01)\n")
    assert waits_named(stderr) == ("rank 3 (h04) waited 31 s on rank 2 (h03) and rank 0 (h01); "
                                   "rank 1 (h02) waited 2 s in a barrier of every rank")
    assert waits_named("[mpiexec@vm] main: process manager error\n") == ""
    # a barrier's or collective's wait knows no peer: it says whom it is of, and the ranks that said
    # nothing (h03's, stopped) are named from every rank's notes together
    of_every_rank = ("cbk: rank 0 (h01) has waited 2 s in the timed allreduce of 64 KiB (library), a collective of "
                     "6 ranks on h01, h02, h03: a rank that does not say so holds it\n"
                     "1: cbk: rank 1 (h01) has waited 2 s in a barrier of 6 ranks on h01, h02, h03: a rank that does "
                     "not say so holds it\n"
                     "cbk: rank 2 (h02) has waited 2 s on rank 4 (h03)\n"
                     "cbk: rank 3 (h02) has waited 2 s on rank 2 (h02)\n")
    assert waits_named(of_every_rank).startswith(
        "ranks 4-5 said nothing, nor any rank on h03: the likely holders of the others' waits; rank 0 (h01) waited 2 s "
        "in the timed allreduce")
    # the set-up's, before any host is known; a large job's, past the hosts named
    assert waits_named("cbk: rank 1 (h02) has waited 2 s in the set-up's exchange of host names, a collective of 3 "
                       "ranks: a rank that does not say so holds it\n").startswith(
        "ranks 0, 2 said nothing: the likely holders of the others' waits; rank 1 (h02) waited 2 s in the set-up's")
    assert waits_named("cbk: rank 0 (h01) has waited 2 s in a barrier of 40 ranks on more than 16 hosts: a rank "
                       "that does not say so holds it\n").startswith("ranks 1-39 said nothing: the likely holders")
    # a barrier's round waits on one peer, which may wait itself (rank 1 on rank 3, held by rank 2): the note
    # names both the peer and the barrier's ranks, and the rank that said nothing is named first
    in_barrier = ("cbk: rank 0 (h01) has waited 2 s on rank 2 (h03) in a barrier of 4 ranks on h01, h02, h03, h04\n"
                  "cbk: rank 1 (h02) has waited 2 s on rank 3 (h04) in a barrier of 4 ranks on h01, h02, h03, h04\n"
                  "cbk: rank 3 (h04) has waited 2 s on rank 2 (h03) in a barrier of 4 ranks on h01, h02, h03, h04\n")
    assert waits_named(in_barrier).startswith(
        "rank 2 said nothing, nor any rank on h03: the likely holder of the others' waits; rank 0 (h01) waited 2 s "
        "on rank 2 (h03) in a barrier of 4 ranks"), waits_named(in_barrier)
    # every rank spoke (a wait on peers all round): no one to name
    assert waits_named(of_every_rank.replace("6 ranks", "4 ranks")).startswith("rank 0 (h01) waited 2 s")
    with subprocess.Popen(["true"]) as proc:
        deadline = Deadline(proc, 10)
        deadline.cancel()
    assert deadline.message(stderr).startswith("timed out: still running after 10 s (--step-timeout); the launcher "
                                               "and every rank were stopped; rank 3 (h04) waited 31 s on rank 2 (h03)")
    assert deadline.message("") == ("timed out: still running after 10 s (--step-timeout); the launcher and every "
                                    "rank were stopped")


def test_a_timed_out_launch_whose_ranks_noted_no_wait_says_what_cbk_said_last():
    """h03's cbk exited 1 before MPI_Init (a 3-host test cluster, the link matrix): Hydra waited
    for ever on the other ranks, held in MPI_Init where no note of a wait is made, and the step
    ended at --step-timeout saying only that it timed out. Its stderr as recorded there."""
    import subprocess

    from clusterbench.launch.processes import Deadline

    stderr = ("cbk: linkmatrix: cannot open /dev/infiniband/uverbs0: No such device\n"
              "[mpiexec@vm] HYDU_sock_write (/mpich-5.0.2/src/pm/hydra/lib/utils/sock.c:250): write error "
              "(Bad file descriptor)\n"
              "[mpiexec@vm] main (/mpich-5.0.2/src/pm/hydra/mpiexec/mpiexec.c:270): process manager error waiting "
              "for completion\n")
    with subprocess.Popen(["true"]) as proc:
        deadline = Deadline(proc, 15)
        deadline.cancel()
    assert deadline.message(stderr) == (
        "timed out: still running after 15 s (--step-timeout); the launcher and every rank were stopped; "
        "before it a rank said: cbk: linkmatrix: cannot open /dev/infiniband/uverbs0: No such device")
    # a note of a wait is named as such, not as what cbk said last; srun --label's prefix is not cbk's
    assert deadline.message("2: cbk: rank 2 (h03) has waited 2 s on rank 0 (h01)\n").endswith(
        "; rank 2 (h03) waited 2 s on rank 0 (h01)")
    assert deadline.message("1: cbk: seqio: open /scratch/x: Permission denied\n").endswith(
        "; before it a rank said: cbk: seqio: open /scratch/x: Permission denied")


def test_a_launcher_killed_by_sigpipe_after_cbks_run_record_keeps_the_whole_measurement():
    # ci24, 2026-11-28: a 4-rank link matrix across test hosts stored all its samples and cbk's
    # run record, then Hydra's mpiexec died of SIGPIPE (exit status -13, nothing on stderr)
    import signal

    from clusterbench.results.records import RunRecord
    from clusterbench.run.plan import Step
    from clusterbench.run.step_engine import judge

    step = Step("linkmatrix", {}, ranks=4)
    build = RunRecord(ranks=4, record={"type": "run", "ranks": 4})
    status, _, note = judge(-signal.SIGPIPE, "", build, step, "mpiexec")
    assert status == 0 and note.startswith("mpiexec died of SIGPIPE after cbk's run record was written"), note
    # before the run record, or with cbk's own error, or another signal: the step failed
    assert judge(-signal.SIGPIPE, "", None, step, "mpiexec")[0] == -signal.SIGPIPE
    error = '{"schema":1,"type":"error","message":"linkmatrix: peer lost"}\n'
    assert judge(-signal.SIGPIPE, error, build, step, "mpiexec")[0] == -signal.SIGPIPE
    assert judge(-signal.SIGKILL, "", build, step, "mpiexec")[0] == -signal.SIGKILL
