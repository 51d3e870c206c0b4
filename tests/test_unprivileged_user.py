"""What a user without root meets, as a real unprivileged process (uid 65534):
a cold read by drop-caches refused before anything is timed, a store in
another user's directory or file refused in one line (and read where it can
be), and MPICH's slab files in /dev/shm neither tripping cbk nor left by it.
As root, each case drops to 65534 in the child; as a user, it runs as that
user, which is the point."""
from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from conftest import killed_if_left
from unprivileged import CLI_SCRIPT, NOBODY, drop_root

@pytest.fixture
def nobody_dir():
    """A directory the unprivileged process may write (pytest's tmp_path is root's only)."""
    d = Path(tempfile.mkdtemp(prefix="cb-nobody-", dir="/tmp"))
    os.chmod(d, 0o777)
    try:
        yield d
    finally:
        shutil.rmtree(d)


def records(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines() if line.startswith("{")]


def cbk_as_nobody(cbk_bin: str, *args: str, cwd: Path) -> subprocess.CompletedProcess:
    try:
        return subprocess.run([cbk_bin, *args], cwd=cwd, capture_output=True, text=True, timeout=60,
                              preexec_fn=drop_root)
    except PermissionError:
        pytest.skip(f"{cbk_bin} cannot be run by uid {NOBODY} here")


# --- a cold read by drop-caches ---------------------------------------------------------------------------

@pytest.mark.timeout(60)
@pytest.mark.parametrize("args", [
    ["seqio", "--file-size=1m", "--cold-method=drop-caches"],
    ["manyfiles", "--files=2", "--file-size=64k", "--read=cold", "--cold-method=drop-caches"],
    ["pario", "--block-size=1m", "--transfer-size=256k", "--cold=drop-caches"],
])
def test_drop_caches_without_root_is_refused_before_the_write_is_timed(cbk_bin, nobody_dir, args):
    """It was found at the read: the write had been measured, the run failed (exit 1) and was stored."""
    p = cbk_as_nobody(cbk_bin, *args, f"--dir={nobody_dir}", cwd=nobody_dir)
    if os.access("/proc/sys/vm/drop_caches", os.W_OK) and os.geteuid() != 0:
        pytest.skip("this user may write /proc/sys/vm/drop_caches")
    assert p.returncode == 2, p.stdout + p.stderr
    errors = [r for r in records(p.stdout + p.stderr) if r["type"] == "error"]
    assert errors and "drop-caches needs to write /proc/sys/vm/drop_caches" in errors[0]["message"], p.stderr
    assert "fadvise" in errors[0]["message"]
    assert not [r for r in records(p.stdout) if r["type"] == "measurement"]
    assert list(nobody_dir.iterdir()) == []  # no private directory, no file


@pytest.mark.timeout(60)
def test_drop_caches_refused_through_the_cli_stores_nothing(cbk_bin, nobody_dir):
    env = dict(os.environ, CLUSTERBENCH_CBK=cbk_bin, CLUSTERBENCH_DB=f"sqlite:///{nobody_dir / 'r.db'}",
               HOME=str(nobody_dir), CLUSTERBENCH_STATE_DIR=str(nobody_dir / "state"), COLUMNS="200",
               PATH=str(Path(cbk_bin).parent) + os.pathsep + os.environ.get("PATH", ""))
    (nobody_dir / "d").mkdir(mode=0o777)
    os.chmod(nobody_dir / "d", 0o777)
    p = subprocess.run([sys.executable, "-c", CLI_SCRIPT, "run", "seqio", f"--dir={nobody_dir / 'd'}",
                        "--file-size=1m", "--repeat", "1", "--cold-method=drop-caches"],
                       cwd=nobody_dir, env=env, capture_output=True, text=True, timeout=60)
    assert p.returncode == 2, p.stdout + p.stderr
    assert len(p.stderr.strip().splitlines()) == 1 and "cold-method=drop-caches needs" in p.stderr, p.stderr
    assert sorted(x.name for x in nobody_dir.iterdir()) == ["d"] and not list((nobody_dir / "d").iterdir())


# --- stores this user may not write -------------------------------------------------------------------------

def cli_as_nobody(cbk_bin: str, home: Path, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, CLUSTERBENCH_CBK=cbk_bin, HOME=str(home), CLUSTERBENCH_STATE_DIR=str(home / "state"),
               COLUMNS="200", PATH=str(Path(cbk_bin).parent) + os.pathsep + os.environ.get("PATH", ""))
    env.pop("CLUSTERBENCH_DB", None)
    return subprocess.run([sys.executable, "-c", CLI_SCRIPT, *args], cwd=home, env=env, capture_output=True,
                          text=True, timeout=60)


@pytest.fixture
def others_dir(cli, tmp_path_factory):
    """A directory of root's holding root's store, readable by all; a store made by a real run."""
    if os.geteuid() != 0:
        pytest.skip("needs root to make another user's directory")
    d = Path(tempfile.mkdtemp(prefix="cb-root-", dir="/tmp"))
    os.chmod(d, 0o755)
    try:
        r = cli("run", "null", "--repeat", "1", env={"CLUSTERBENCH_DB": f"sqlite:///{d / 'team.db'}"})
        assert r.status == 0, r.stderr
        os.chmod(d / "team.db", 0o644)
        yield d
    finally:
        shutil.rmtree(d)


@pytest.mark.timeout(120)
def test_a_store_in_another_users_directory_is_one_line_exit_2(cbk_bin, nobody_dir, others_dir):
    before = sorted(x.name for x in others_dir.iterdir())
    new = cli_as_nobody(cbk_bin, nobody_dir, "run", "null", "--repeat", "1", "--db",
                        f"sqlite:///{others_dir / 'new.db'}")
    assert new.returncode == 2, new.stderr   # was a PermissionError traceback at the lock file, exit 1
    assert new.stderr.strip() == (f"Error: cannot create a store at {others_dir / 'new.db'}: directory {others_dir} "
                                  "is not writable by this user; give --db a path in a directory of yours")
    old = cli_as_nobody(cbk_bin, nobody_dir, "run", "null", "--repeat", "1", "--db",
                        f"sqlite:///{others_dir / 'team.db'}")
    assert old.returncode == 2, old.stderr   # was "attempt to write a readonly database", exit 1, after the run
    assert old.stderr.strip() == (f"Error: cannot store in {others_dir / 'team.db'}: this user may not write it; "
                                  "give --db a store of yours")
    # reading another user's store needs no write: list and show read it
    listed = cli_as_nobody(cbk_bin, nobody_dir, "list", "--db", f"sqlite:///{others_dir / 'team.db'}")
    assert listed.returncode == 0, listed.stderr
    assert "clusterbench run null" in listed.stdout
    shown = cli_as_nobody(cbk_bin, nobody_dir, "show", "1", "--db", f"sqlite:///{others_dir / 'team.db'}")
    assert shown.returncode == 0 and "null" in shown.stdout, shown.stderr
    assert sorted(x.name for x in others_dir.iterdir()) == before
    assert sorted(x.name for x in nobody_dir.iterdir()) == []   # no store, no state
    with sqlite3.connect(others_dir / "team.db") as db:
        assert db.execute("select count(*) from runs").fetchone() == (1,)


# --- MPICH's slab files in /dev/shm ----------------------------------------------------------------------

def in_private_dev_shm(script: str, *args: str) -> subprocess.CompletedProcess:
    """script under sh in new pid and mount namespaces with a tmpfs of its own on /dev/shm, so
    pids start at 1 and no other process's slab files are seen or touched. Not /tmp: the checkout,
    cbk and its MPI library may live there (a fresh clone's), and a tmpfs over it hides them
    (what Hydra leaves in /tmp when a job fails, hydra_hwloc_xmlfile_*, is Hydra's leak)."""
    if os.geteuid() != 0:
        pytest.skip("needs root for a pid and mount namespace with a private /dev/shm")
    for tool in ("unshare", "setpriv"):
        if not shutil.which(tool):
            pytest.skip(f"{tool} (util-linux) is not installed")
    return subprocess.run(["unshare", "--pid", "--fork", "--mount", "--propagation", "private", "--mount-proc",
                           "sh", "-c", "mount -t tmpfs -o mode=1777 cbtest /dev/shm && " + script, "sh", *args],
                          capture_output=True, text=True, timeout=90, cwd="/")


@pytest.fixture
def mpich_cbk(cbk_bin, nobody_dir):
    p = subprocess.run([cbk_bin, "null", "--seconds=0"], capture_output=True, text=True, timeout=60)
    run = [r for r in records(p.stdout) if r["type"] == "run"]
    if not run or "MPICH" not in (run[0].get("mpi_library") or ""):
        pytest.skip("this cbk is not built with MPICH, whose slab files these are")
    if cbk_as_nobody(cbk_bin, "null", "--seconds=0", cwd=nobody_dir).returncode in (126, 127):   # exec, loader
        pytest.skip(f"{cbk_bin} or its MPI library cannot be run by uid {NOBODY} here (a checkout under /root?)")
    return cbk_bin


AS_NOBODY = "setpriv --reuid=65534 --regid=65534 --clear-groups"


@pytest.mark.timeout(120)
def test_a_singleton_whose_pid_names_another_users_stale_slab_runs(mpich_cbk):
    """Root's stale slabs for pids 2..20, as killed jobs leave them (mode 600): cbk, given pid 3 here
    (sh is 1, mount 2), failed MPI_Init with 'Out of memory'. It runs under a free pid, and leaves nothing."""
    stale = " ".join(f"mpich_shm_{pid:x}_0" for pid in range(2, 21))
    # builtins only until cbk starts: a command substitution would fork and use up the pids
    script = (f'umask 077; for f in {stale}; do : > /dev/shm/$f; done; '
              f'{AS_NOBODY} "$1" null --seconds=0.05; echo "status $?"; ls -n /dev/shm')
    p = in_private_dev_shm(script, mpich_cbk)
    assert "status 0" in p.stdout, p.stdout + p.stderr
    assert [r for r in records(p.stdout) if r["type"] == "run"], p.stdout
    listing = [line.split() for line in p.stdout.split("status 0", 1)[1].splitlines() if "mpich" in line]
    # root's 19 files untouched, and none of nobody's left
    assert len(listing) == 19 and all(f[2] == "0" and f[4] == "0" for f in listing), p.stdout


@pytest.mark.timeout(120)
def test_a_kill_9_of_a_singleton_that_forked_to_a_free_pid_ends_its_child_too(mpich_cbk):
    """The fork leaves the pid its starter knows to a parent that only waits: a kill -9 of it (a
    test's, a user's, a batch system's) left the child measuring on, an orphan holding the port or
    the private directory (a killed TCP server's client waited 9 s for its timeout)."""
    stale = " ".join(f"mpich_shm_{pid:x}_0" for pid in range(2, 21))
    script = (f'umask 077; for f in {stale}; do : > /dev/shm/$f; done; '
              f'{AS_NOBODY} "$1" null --seconds=60 >/dev/null 2>&1 & p=$!; '
              'n=0; while [ $n -lt 100 ] && [ "$(pgrep -x cbk | wc -l)" -lt 2 ]; do sleep 0.1; n=$((n+1)); done; '
              'echo "running: $(pgrep -x cbk | wc -l)"; kill -9 $p; '
              'n=0; while [ $n -lt 50 ] && pgrep -x cbk >/dev/null; do sleep 0.1; n=$((n+1)); done; '
              'echo "left: $(pgrep -x cbk | wc -l)"')
    p = in_private_dev_shm(script, mpich_cbk)
    assert "running: 2" in p.stdout, p.stdout + p.stderr      # the parent and the child it forked
    assert "left: 0" in p.stdout, p.stdout + p.stderr


@pytest.mark.timeout(120)
def test_a_failed_or_stopped_mpi_job_leaves_no_slab_in_dev_shm(mpich_cbk):
    """MPI_Abort (a rank's failure) and a stop signal skip MPI_Finalize, which removes the slab:
    2 MiB of the node's memory were left in /dev/shm per job."""
    mpiexec = shutil.which("mpiexec", path=str(Path(mpich_cbk).parent) + os.pathsep + os.environ.get("PATH", ""))
    if not mpiexec:
        pytest.skip("no mpiexec")
    script = (f'{AS_NOBODY} "$2" -n 2 "$1" null --seconds=0.1 --fail-at=0 >/dev/null 2>&1; echo "failed $?"; '
              'ls /dev/shm; '
              f'{AS_NOBODY} "$2" -n 2 "$1" null --seconds=30 >/dev/null 2>&1 & '
              'n=0; while [ $n -lt 100 ] && [ -z "$(ls /dev/shm)" ]; do sleep 0.1; n=$((n+1)); done; sleep 0.5; '
              'echo "running: $(ls /dev/shm | tr "\\n" " ")"; '
              'for p in $(pgrep -x cbk); do kill -INT $p; done; wait; echo stopped; ls /dev/shm')
    p = in_private_dev_shm(script, mpich_cbk, mpiexec)
    assert "failed 1" in p.stdout, p.stdout + p.stderr
    after_failure = p.stdout.split("failed 1", 1)[1].split("running:", 1)[0].split()
    assert after_failure == [], p.stdout
    running = p.stdout.split("running:", 1)[1].split("\n", 1)[0]
    assert "mpich_shm_" in running, p.stdout     # the job did make one
    assert p.stdout.split("stopped", 1)[1].split() == [], p.stdout


# --- clean on a shared scratch ----------------------------------------------------------------------------

@pytest.mark.timeout(60)
def test_clean_names_other_users_benchmark_directories_it_leaves(cbk_bin, nobody_dir):
    """On a shared scratch, root's stale cbk-seqio-XXXXXX is not this user's to remove; clean said
    'no stale benchmark directory' as if there were none."""
    if os.geteuid() != 0:
        pytest.skip("needs root to make another user's directory")
    scratch = nobody_dir / "scratch"
    scratch.mkdir()
    os.chmod(scratch, 0o1777)   # a shared scratch: sticky, so nobody may not remove root's
    theirs = scratch / "cbk-seqio-AbCdE1"
    theirs.mkdir(mode=0o700)
    (theirs / ".cbk-owner").write_text(json.dumps({"owner": "cbk", "host": os.uname().nodename, "boot_id": "",
                                                   "pid": 2**22 + 1, "start_ticks": 0, "started_unix_s": 0,
                                                   "run_id": "00", "store_run": None}))
    p = subprocess.run([sys.executable, "-c", CLI_SCRIPT, "clean", str(scratch)], cwd=nobody_dir,
                       env=dict(os.environ, CLUSTERBENCH_CBK=cbk_bin, HOME=str(nobody_dir),
                                CLUSTERBENCH_STATE_DIR=str(nobody_dir / "state")),
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines()[:2] == [
        f"no stale benchmark directory of yours in {str(scratch)!r}",
        f"left to their owners, other users' benchmark directories in {str(scratch)!r}: cbk-seqio-AbCdE1 (root)"]
    assert (theirs / ".cbk-owner").exists()


# --- another user's store while its owner writes it ------------------------------------------------------------

def team_cli(cbk_bin: str, team_db: Path, *args: str, nobody_home: Path | None = None) -> subprocess.Popen:
    """clusterbench on the team's store: as its owner (root), or as 65534 with nobody_home."""
    env = dict(os.environ, CLUSTERBENCH_CBK=cbk_bin, CLUSTERBENCH_DB=str(team_db), COLUMNS="200",
               PATH=str(Path(cbk_bin).parent) + os.pathsep + os.environ.get("PATH", ""))
    if nobody_home is not None:
        env.update(HOME=str(nobody_home), CLUSTERBENCH_STATE_DIR=str(nobody_home / "state"))
        return subprocess.Popen([sys.executable, "-c", CLI_SCRIPT, *args], cwd=nobody_home, env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return subprocess.Popen([sys.executable, "-m", "clusterbench", *args], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)


def samples_stored(team_db: Path, label: str) -> int:
    with contextlib.closing(sqlite3.connect(team_db)) as db:
        return db.execute("select count(*) from samples join steps on steps.id = samples.step_id "
                          "join runs on runs.id = steps.run_id where runs.label = ?", (label,)).fetchone()[0]


@pytest.mark.timeout(180)
def test_another_user_reads_a_run_in_progress_and_one_killed_mid_write(cbk_bin, nobody_dir, others_dir):
    """The team's store was read immutable by everyone but its owner: the commits in its -wal,
    a run in progress and everything since the last checkpoint, were not there for them."""
    team_db = others_dir / "team.db"
    run = team_cli(cbk_bin, team_db, "run", "null", "--seconds=0.2", "--repeat", "600", "--label", "live")
    try:
        for _ in range(600):
            if run.poll() is not None or samples_stored(team_db, "live") >= 3:
                break
            time.sleep(0.1)
        seen = samples_stored(team_db, "live")
        assert seen >= 3 and run.poll() is None, run.stderr.read() if run.poll() is not None else seen
        listed = team_cli(cbk_bin, team_db, "list", nobody_home=nobody_dir).communicate(timeout=60)
        assert "live" in listed[0] and "running" in listed[0], listed   # was only run 1, the checkpointed one
        exported = team_cli(cbk_bin, team_db, "export", "live", nobody_home=nobody_dir).communicate(timeout=60)
        samples = json.loads(exported[0])["runs"][0]["steps"][0]["samples"]
        assert len(samples) >= seen, exported[1]
    finally:
        os.killpg(run.pid, signal.SIGKILL)   # mid-write: its -wal and -shm stay, unchecked
        run.communicate()
    assert (others_dir / "team.db-wal").exists()   # the owner's next connection would checkpoint it: none yet
    exported = team_cli(cbk_bin, team_db, "export", "live", nobody_home=nobody_dir).communicate(timeout=60)
    read = len(json.loads(exported[0])["runs"][0]["steps"][0]["samples"])
    assert read == samples_stored(team_db, "live") and read >= seen, exported[1]
    shown = team_cli(cbk_bin, team_db, "show", "live", nobody_home=nobody_dir)
    out, err = shown.communicate(timeout=60)
    assert shown.returncode == 0 and "null" in out, err
    assert sorted(x.name for x in nobody_dir.iterdir()) == []   # no store, no state


READ_WHILE_WRITTEN = CLI_SCRIPT.split("# imports done")[0] + """
import collections, json, sqlite3, time
from clusterbench.store.opening import open_store
if os.geteuid() == 0:
    os.setgroups([]); os.setgid(65534); os.setuid(65534)
errors, reads, deadline = collections.Counter(), 0, time.monotonic() + float(sys.argv[2])
while time.monotonic() < deadline:
    try:
        store = open_store(sys.argv[1])
        for run in store.list_runs():
            for step in store.steps_of(run.id):
                store.samples_of(step.id)
        reads += 1
    except Exception as e:
        errors[f"{type(e).__name__}: {e}"] += 1
    finally:
        store = None
print(json.dumps({"reads": reads, "errors": errors}))
"""

WRITE_AND_CHECKPOINT = """
import sqlite3, sys, time
from clusterbench.results.sample import Sample
from clusterbench.store.opening import open_store
store, deadline = open_store(sys.argv[1], writing=True), time.monotonic() + float(sys.argv[2])
checkpoints = sqlite3.connect(sys.argv[1], isolation_level=None)
while time.monotonic() < deadline:
    run_id = store.begin_run(label="w", command="written", suite=None)
    step_id = store.begin_step(run_id, position=0, name=None, kernel="null", params={}, launcher="local", ranks=1,
                               ranks_per_node=None)
    for i in range(50):
        store.add_sample(step_id, Sample(phase="null", mode="n/a", condition="n/a", unit="MiB/s", value=1.0,
                                         repetition=i, seconds=0.01, record={"pad": "x" * 2000}), [])
    store.finish_step(step_id, "ok")
    store.finish_run(run_id, "ok")
    # what the last connection's close does at a run's end, and SQLite every 1000 pages of -wal
    checkpoints.execute("pragma wal_checkpoint")
"""


@pytest.mark.timeout(120)
def test_another_users_reads_of_a_store_being_checkpointed_are_whole(nobody_dir, others_dir):
    """Read immutable, a checkpoint rewriting the file under the read gave "database disk image is
    malformed" (one read in three, by hand) and counts of rows that never were."""
    team_db = str(others_dir / "team.db")
    env = dict(os.environ, HOME=str(nobody_dir))
    writer = subprocess.Popen([sys.executable, "-c", WRITE_AND_CHECKPOINT, team_db, "10"], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    with killed_if_left(writer):
        time.sleep(1)   # the writer's first commits in
        reader = subprocess.run([sys.executable, "-c", READ_WHILE_WRITTEN, team_db, "5"], env=env, cwd=nobody_dir,
                                capture_output=True, text=True, timeout=90)
        out, err = writer.communicate(timeout=60)
    assert writer.returncode == 0, err
    assert reader.returncode == 0, reader.stderr
    seen = json.loads(reader.stdout)
    assert seen["reads"] > 0 and seen["errors"] == {}, seen
