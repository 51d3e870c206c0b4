"""clusterbench run/list/show/export against a real store and real cbk."""
from __future__ import annotations

import csv
import io
import json
import os
import signal
import subprocess
import sys
import time

import pytest
import sqlalchemy as sa

from conftest import as_json, store_rows, terminal_sigint, tree, wait_for_data_file


@pytest.mark.both_stores
@pytest.mark.timeout(120)
def test_run_stores_every_repetition_with_environment_and_shows_a_table(cli, tmp_path, store_url):
    target = tmp_path / "target"
    target.mkdir()
    r = cli("run", "seqio", f"--dir={target}", "--file-size=4m", "--block-size=1m", "--repeat", "3",
            "--label", "disk")
    assert r.status == 0, r.stderr
    assert "stored as run 1" in r.stdout
    for col in ("median", "min", "max", "MiB/s", "fsync", "cold", "MB/s"):
        assert col in r.stdout
    assert store_rows(store_url, "select status, label from runs") == [("ok", "disk")]
    samples = store_rows(store_url, "select phase, mode, repetition, unit from samples order by id")
    assert samples == [(p, m, rep, "MiB/s") for rep in range(3) for p, m in (("write", "fsync"), ("read", "cold"))]
    (params,) = store_rows(store_url, "select params from steps")
    assert as_json(params[0])["dir"] == str(target)
    assert len(store_rows(store_url, "select * from run_hosts")) == 1
    assert tree(target) == []

    shown = cli("show", "disk")
    assert shown.status == 0 and "write" in shown.stdout and "cold" in shown.stdout
    listed = cli("list")
    assert listed.status == 0 and "disk" in listed.stdout and "ok" in listed.stdout


@pytest.mark.both_stores
@pytest.mark.timeout(120)
def test_export_formats_are_valid(cli, tmp_path):
    assert cli("run", "null", "--seconds=0.01", "--repeat", "2", "--label", "n").status == 0
    j = cli("export", "n", "--format", "json")
    doc = json.loads(j.stdout)
    (run,) = doc["runs"]
    assert run["label"] == "n" and len(run["steps"][0]["samples"]) == 2
    c = cli("export", "1", "--format", "csv")
    rows = list(csv.DictReader(io.StringIO(c.stdout)))
    assert len(rows) == 2 and rows[0]["unit"] == "MiB/s" and float(rows[0]["value"]) > 0
    md = cli("export", "1", "--format", "md", "-o", str(tmp_path / "r.md"))
    text = (tmp_path / "r.md").read_text()
    assert md.status == 0 and "| phase | n | median |" in text and "| null | 2 |" in text


@pytest.mark.timeout(60)
@pytest.mark.parametrize("args, message", [
    (["run", "nosuch"], "no such kernel"),
    (["run", "seqio", "--nosuch=1"], "has no parameter --nosuch"),
    (["run", "seqio", "--file-size=10X"], "is not a size"),
    (["run", "seqio", "--file-size"], "--file-size needs a value (--file-size=VALUE)"),   # not "true is not a size"
    (["run", "seqio", "--dir=/nonexistent/dir"], "No such file or directory"),
    (["run", "seqio", "--np", "2"], "runs as one process"),
    (["run", "seqio", "--repetitions=2"], "--repeat"),
    (["run", "null", "--launcher", "nosuch"], "no such launcher"),
    (["run", "missing-suite.toml"], "does not exist"),
    (["show", "nolabel"], "no store at"),  # reading never creates a store (#20 finding 5)
    (["export", "42"], "no store at"),
    # past MPI's int: an OverflowError traceback once the run was begun, which stayed stored as failed
    (["run", "null", "--np", "99999999999999999999"], "1<=x<=2147483647"),
    (["ior", "mpiexec", "-n", "2147483648", "ior", "-w"], "more than MPI can count"),
    (["import", "--np", "2147483648", "osu.txt"], "1<=x<=2147483647"),
    # a timer thread's OverflowError, the run stored without any timeout; nan timed every step out at once
    (["run", "null", "--step-timeout", "1e308"], "1<=x<=31536000 (seconds)"),
    (["run", "null", "--start-timeout", "0.5"], "1<=x<=31536000 (seconds)"),
    (["run", "null", "--step-timeout", "nan"], "nan is not a finite number"),
    (["run", "null", "--repeat", "auto", "--ci-target", "nan"], "nan is not a finite number"),   # never reached
    (["compare", "a", "b", "--fail-if", "slower", "--threshold", "nan"], "nan is not a finite number"),   # never failed
    (["run", "null", "--bytes=16777215t"], "out of range [0, 9223372036854775807]"),   # past the store's bytes column
    # root's os.access passed /proc: the run was stored, then its report failed
    (["run", "null", "--report-dir", "/proc"], "--report-dir /proc: cannot write"),
])
def test_bad_input_is_one_line_exit_2_and_stores_nothing(cli, store_url, args, message):
    r = cli(*args)
    assert r.status == 2, r.stderr
    assert message in r.stderr and len(r.stderr.strip().splitlines()) == 1
    if os.path.exists(store_url.removeprefix("sqlite:///")):
        assert store_rows(store_url, "select count(*) from runs") == [(0,)]


def test_a_list_limit_past_the_stores_integers_lists_every_run(cli):
    assert cli("run", "null", "--seconds=0", "--repeat", "1", "--quiet").status == 0
    r = cli("list", "--limit", "99999999999999999999")   # was an OverflowError traceback
    assert r.status == 0 and "clusterbench run null" in r.stdout, r.stderr


def test_show_refuses_a_bad_threshold_whatever_run_it_shows(cli):
    """`show 1 --threshold abc` (or 150%) printed run 1, exit 0: the thresholds were read only
    when a cluster run came to be shown, so a typo passed until one did."""
    assert cli("run", "null", "--seconds=0", "--repeat", "1", "--quiet").status == 0
    for flag, value, words in (("--threshold", "abc", "give a fraction"), ("--threshold", "150%", "below 100 %"),
                               ("--link-threshold", "0", "above 0")):
        r = cli("show", "1", flag, value)
        assert r.status == 2 and r.stdout == "", (r.stdout, r.stderr)
        assert f"{flag} {value}: " in r.stderr and words in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert cli("show", "1", "--threshold", "20%").status == 0


@pytest.mark.timeout(120)
@pytest.mark.parametrize("sig", ["SIGINT", "SIGUSR1"])  # Ctrl-C; Grid Engine's -notify / s_rt warning
def test_a_stop_signal_marks_run_interrupted_and_leaves_no_file(cbk_bin, tmp_path, store_url, sig):
    target = tmp_path / "target"
    target.mkdir()
    env = dict(os.environ, CLUSTERBENCH_CBK=cbk_bin, CLUSTERBENCH_DB=store_url)
    p = subprocess.Popen([sys.executable, "-m", "clusterbench", "run", "seqio", f"--dir={target}",
                          "--file-size=8g", "--write=buffered", "--read=none", "--quiet"],
                         env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
                         preexec_fn=terminal_sigint)
    assert wait_for_data_file(target, timeout_s=30), "the write never started"
    # Ctrl-C at a terminal, and a batch system's signal, reach the whole process group
    os.killpg(p.pid, getattr(signal, sig))
    out, err = p.communicate(timeout=60)
    assert p.returncode == 128 + getattr(signal, sig), err   # as a shell reports it: 130 Ctrl-C, 138 SIGUSR1
    assert tree(target) == []
    assert store_rows(store_url, "select status, message from runs") == [("interrupted", f"interrupted by {sig}")]
    assert store_rows(store_url, "select status from steps") == [("interrupted",)]


@pytest.mark.both_stores
@pytest.mark.timeout(120)
def test_kill_9_leaves_a_readable_store_and_the_run_marked_killed(cli, cbk_bin, store_url):
    env = dict(os.environ, CLUSTERBENCH_CBK=cbk_bin, CLUSTERBENCH_DB=store_url)
    p = subprocess.Popen([sys.executable, "-m", "clusterbench", "run", "null", "--seconds=0.2", "--repeat", "50",
                          "--quiet"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.time() + 30
    while time.time() < deadline:
        try:
            # not before the run made the file: a connection would create it empty, which is no store
            if (not store_url.startswith("sqlite:") or os.path.getsize(store_url.removeprefix("sqlite:///"))) and \
                    store_rows(store_url, "select count(*) from samples")[0][0] >= 2:
                break
        except (OSError, sa.exc.OperationalError, sa.exc.ProgrammingError):
            pass   # the run has not created the file or the tables yet
        time.sleep(0.1)
    p.kill()
    p.wait()
    r = cli("list")
    assert r.status == 0 and "killed" in r.stdout
    shown = cli("show", "1")
    assert shown.status == 0 and "null" in shown.stdout
    assert store_rows(store_url, "select count(*) from samples")[0][0] >= 2


@pytest.mark.both_stores
@pytest.mark.timeout(120)
def test_two_concurrent_runs_both_land(cbk_bin, store_url):
    env = dict(os.environ, CLUSTERBENCH_CBK=cbk_bin, CLUSTERBENCH_DB=store_url)
    procs = [subprocess.Popen([sys.executable, "-m", "clusterbench", "run", "null", "--seconds=0.02",
                               "--repeat", "20", "--label", f"c{i}", "--quiet"], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE) for i in range(2)]
    for p in procs:
        out, err = p.communicate(timeout=90)
        assert p.returncode == 0, err
    rows = store_rows(store_url, "select r.label, r.status, count(s.id) from runs r join steps t on t.run_id = r.id "
                                 "join samples s on s.step_id = t.id group by r.id order by r.label")
    assert rows == [("c0", "ok", 20), ("c1", "ok", 20)]


@pytest.mark.timeout(120)
def test_mpi_run_through_the_launcher(cli, mpiexec, store_url):
    r = cli("run", "null", "--np", "2", "--seconds=0.01", "--repeat", "2")
    assert r.status == 0, r.stderr
    assert store_rows(store_url, "select launcher, ranks from steps") == [("mpiexec", 2)]
    recs = [json.loads(x[0]) for x in store_rows(store_url, "select record from samples")]
    assert all(rec["ranks"] == 2 for rec in recs)


@pytest.mark.both_stores
@pytest.mark.timeout(60)
def test_failed_measurement_exits_1_and_keeps_the_run(cli, store_url):
    r = cli("run", "null", "--fail-at=1", "--repeat", "3")
    assert r.status == 1
    assert store_rows(store_url, "select status from runs") == [("failed",)]
    assert store_rows(store_url, "select status, message from steps")[0][0] == "failed"
    assert store_rows(store_url, "select count(*) from samples") == [(1,)]


@pytest.mark.timeout(120)
def test_a_step_past_its_timeout_is_ended_whole_and_stored_failed_with_the_reason(cli, mpiexec, store_url):
    """--step-timeout ends the launcher and every rank (#33): the run goes on,
    the step is failed with the reason, the repetition measured before is kept,
    and no process of the launch is left (the suite's process guard checks that
    too, after the test)."""
    import process_guard

    started = time.monotonic()
    r = cli("run", "null", "--np", "2", "--seconds=0.2,600", "--repeat", "1", "--step-timeout", "4", "--quiet")
    elapsed = time.monotonic() - started
    assert r.status == 1, r.stderr
    assert elapsed < 60, elapsed   # 4 s, then SIGINT to the tree: cbk ends on it at once
    steps = store_rows(store_url, "select status, message from steps order by position")
    assert steps[0] == ("ok", None)
    assert steps[1] == ("failed", "timed out: still running after 4 s (--step-timeout); the launcher and every "
                                  "rank were stopped")
    assert store_rows(store_url, "select status from runs") == [("failed",)]
    left = [cmd for _, cmd in process_guard.tagged(os.environ[process_guard.VAR]) if "null" in cmd]
    assert left == [], left


def test_help_is_instant_and_imports_nothing_heavy():
    code = ("import sys; from clusterbench import cli; "
            "heavy = [m for m in ('rich', 'numpy', 'sqlalchemy', 'scipy', 'matplotlib') if m in sys.modules]; "
            "assert not heavy, heavy")
    subprocess.run([sys.executable, "-c", code], check=True)
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "clusterbench", "--help"], check=True, capture_output=True)
    assert time.perf_counter() - t0 < 5  # generous: shared machines; the import check above is the real test


def test_version_says_whether_mpi_is_built_in(cli, cbk_bin):
    r = cli("--version")
    assert r.status == 0 and "cbk" in r.stdout and "MPI" in r.stdout


@pytest.mark.timeout(120)
def test_host_file_run_stores_an_environment_per_node(cli, mpiexec, tmp_path, store_url):
    import socket

    hosts = tmp_path / "hosts"
    hosts.write_text(f"{socket.gethostname()}:2\n")
    r = cli("run", "null", "--np", "2", "--hostfile", str(hosts), "--seconds=0.01", "--repeat", "1")
    assert r.status == 0, r.stderr
    assert [h for (h,) in store_rows(store_url, "select host from run_hosts")] == [socket.gethostname()]
    assert store_rows(store_url, "select user from runs")[0][0]


@pytest.mark.timeout(120)
def test_mpi_algorithm_selection_reaches_the_library_and_is_recorded(cli, mpiexec, store_url):
    r = cli("run", "mpi", "--np", "2", "--op=allreduce", "--sizes=1k", "--repeat", "1",
            "--mpi-algorithm", "allreduce=recursive_doubling")
    assert r.status == 0, r.stderr
    (rec,) = [json.loads(x[0]) for x in store_rows(store_url, "select record from samples")]
    assert "MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM" in json.dumps(rec)
    bad = cli("run", "mpi", "--np", "2", "--mpi-algorithm", "allreduce=nonsense")
    assert bad.status == 2 and "nonsense" in bad.stderr


@pytest.mark.timeout(120)
def test_suite_run_ends_with_an_html_report(cli, tmp_path):
    suite = tmp_path / "tiny.toml"
    suite.write_text('[[steps]]\nkernel = "null"\nrepeat = 5\nparams = { seconds = "0.001", bytes = ["1m", "2m"] }\n')
    out = tmp_path / "r.html"
    r = cli("run", str(suite), "--report", str(out))
    assert r.status == 0, r.stderr
    assert f"report: {out}" in r.stdout
    text = out.read_text()
    assert text.startswith("<!DOCTYPE html>") and "<svg" in text and "MiB/s" in text and "interval of the median" in text


@pytest.mark.both_stores
@pytest.mark.timeout(120)
def test_a_dead_runs_pid_taken_by_a_later_process_does_not_keep_the_run_running(cli, store_url):
    """A run is reaped as killed when its process is gone, found by host and
    pid. After a reboot (a node's power lost mid-run), or in a container
    where each clusterbench is pid 1 of its namespace, the pid belongs to a
    later process, and the dead run stayed `running` for good. A live run,
    whose process started before its row, is kept."""
    import datetime as dt

    from clusterbench.store import Store

    store = Store(store_url, writing=True)
    dead = store.begin_run(label="dead", command="clusterbench run null", suite=None)
    live = store.begin_run(label="live", command="clusterbench run null", suite=None)   # this test's process
    later = subprocess.Popen(["sleep", "300"])   # the dead run's pid, given again an hour after it began
    try:
        an_hour_before = dt.datetime.now(dt.timezone.utc) - dt.timedelta(hours=1)
        store.rows.update("runs", {"id": dead}, {"pid": later.pid, "started": an_hour_before})
        r = cli("list")
        assert r.status == 0, r.stderr
        assert store_rows(store_url, "select id, status from runs order by id") == [(dead, "killed"), (live, "running")]
    finally:
        later.kill()
        later.wait()


@pytest.mark.timeout(60)
def test_what_a_killed_suite_left_running_is_swept_and_a_live_suites_is_not(tmp_path):
    """A suite killed with -9 leaves tagged processes whose pytest is gone: the next
    suite kills them at its start; a suite that still runs keeps its own (#33)."""
    import process_guard

    gone = subprocess.Popen(["sleep", "300"], env={**os.environ, process_guard.VAR: "999999999-dead:1"})
    alive = subprocess.Popen(["sleep", "300"], env={**os.environ, process_guard.VAR: f"{process_guard.SESSION}:x"})
    try:
        # Popen returns once the child's exec has closed its close-on-exec pipe, which the kernel does
        # before it sets the new image's argument and environment bounds: until then /proc shows an empty
        # cmdline and environ, and a loaded machine (a second suite beside this one) left the sweep
        # finding nothing. Both are seen tagged first.
        deadline = time.monotonic() + 30
        while {gone.pid, alive.pid} - {pid for pid, _ in process_guard.tagged("")}:
            assert time.monotonic() < deadline, "the two sleeps never showed their tags in /proc"
            time.sleep(0.05)
        swept = process_guard.sweep_dead_sessions()
        # what was swept first: a wait that times out would not say why
        assert [pid for pid, _ in swept] == [gone.pid], (swept, gone.pid)
        assert gone.wait(timeout=10) is not None
        assert alive.poll() is None
    finally:
        for p in (gone, alive):
            p.kill()
            p.wait()
