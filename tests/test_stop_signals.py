"""A stop signal ends every command as Ctrl-C ends a run: the command's
own clean-up runs (a transaction rolled back, a lock or temporary file
removed), one line says what stopped it, and the exit status is 128 + the
signal's number. Runs themselves: test_cli_runs.py, test_private_dirs.py."""
from __future__ import annotations

import contextlib
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from clusterbench.launch.processes import STOP_GRACE_S
from conftest import hang_up, killed_if_left, run_bounded, start_under_nohup, store_rows, terminal_sigint


def start(args: list[str], env: dict) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "clusterbench", *args], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True, preexec_fn=terminal_sigint)


def wait_for(condition, p: subprocess.Popen, what: str, timeout_s: float = 60) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        if p.poll() is not None:
            pytest.fail(f"the command ended before {what}: {p.communicate()}")
        if time.monotonic() > deadline:
            pytest.fail(f"{what} did not happen within {timeout_s} s")
        time.sleep(0.005)


def has_open(pid: int, path: Path) -> bool:
    """Whether the process holds path open (it is past its start-up, inside the command)."""
    try:
        return any(os.readlink(f"/proc/{pid}/fd/{fd}") == str(path) for fd in os.listdir(f"/proc/{pid}/fd"))
    except OSError:   # a descriptor closed between the listing and the readlink
        return False


def stop(p: subprocess.Popen, sig: signal.Signals) -> tuple[str, str]:
    """Ctrl-C as a terminal sends it, to the process group; any other
    signal as kill(1) sends it, to the process alone."""
    if sig == signal.SIGINT:
        os.killpg(p.pid, sig)
    else:
        p.send_signal(sig)
    try:
        return p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()


def said_once(err: str, command: str, sig: signal.Signals) -> None:
    lines = [line for line in err.splitlines() if line.strip()]
    assert lines == [f"clusterbench {command}: interrupted by {sig.name}"], err


STOPS = [signal.SIGINT, signal.SIGTERM, signal.SIGHUP]


def osu_file(path: Path, rows: int) -> Path:
    table = "".join(f"{1 << (i % 23):<10}{1.5 + i % 7:>20.2f}\n" for i in range(rows))
    path.write_text("# OSU MPI Latency Test v7.4\n# Size          Latency (us)\n" + table)
    return path


def run_ids(store: Path) -> list[int]:
    """The store's runs, read as a reader (no file made; a store not made yet has none)."""
    try:
        c = sqlite3.connect(f"{store.as_uri()}?mode=ro", uri=True)
    except sqlite3.Error:
        return []
    try:
        return [i for (i,) in c.execute("select id from runs order by id")]
    except sqlite3.Error:
        return []
    finally:
        c.close()


@pytest.mark.timeout(180)
@pytest.mark.parametrize("sig", STOPS, ids=[s.name for s in STOPS])
def test_a_stopped_import_keeps_the_files_stored_before_says_so_and_exits_128_plus_the_signal(cbk_bin, tmp_path,
                                                                                                sig):
    """Ctrl-C during an import ended it as click ends it, "Aborted!" and
    exit 1, the status of a failure; SIGTERM and SIGHUP killed it with no
    word."""
    store = tmp_path / "results.db"
    env = dict(os.environ, CLUSTERBENCH_CBK=cbk_bin, CLUSTERBENCH_DB=str(store), COLUMNS="200")
    r = run_bounded([sys.executable, "-m", "clusterbench", "run", "null", "--seconds=0.01", "--repeat", "1",
                     "--quiet"], timeout=120, env=env)
    assert r.returncode == 0, r.stderr
    small = osu_file(tmp_path / "small.txt", 10)
    big = osu_file(tmp_path / "big.txt", 100_000)   # seconds of storing: the signal comes while it is stored

    p = start(["import", "--host", "n01", "--date", "2024-01-01", str(small), str(big)], env)
    wait_for(lambda: run_ids(store) == [1, 2], p, "the first file was stored")
    out, err = stop(p, sig)

    assert p.returncode == 128 + sig, err
    # the big file's transaction rolled back, and said so: the stop is not held for a file's whole write
    said_once(err.replace(f"note: stopped after 1 file of 2, stored as run 2; {big} not stored\n", ""), "import", sig)
    assert sorted(os.listdir(tmp_path)) == ["big.txt", "results.db", "small.txt"]
    assert store_rows(f"sqlite:///{store}", "select id, status from runs") == [(1, "ok"), (2, "ok")]
    assert store_rows(f"sqlite:///{store}", "select count(*) from samples s join steps t on s.step_id = t.id "
                                            "where t.run_id = 2") == [(10,)]


@pytest.mark.timeout(180)
@pytest.mark.parametrize("sig", STOPS, ids=[s.name for s in STOPS])
def test_a_first_run_stopped_while_it_makes_the_store_leaves_no_lock_file(cbk_bin, tmp_path, sig):
    """A new store is made under a lock file beside it (store/database.py),
    from a template built in the cache folder the first time. SIGTERM or
    SIGHUP then killed the command outright: `results.db.lock` stayed in
    the user's folder, and the template's temporary file in the cache."""
    folder, cache = tmp_path / "store", tmp_path / "cache"
    folder.mkdir()
    cache.mkdir()
    store = folder / "results.db"
    # an empty cache: the template is built, under the store's lock, for most of a second
    env = dict(os.environ, CLUSTERBENCH_CBK=cbk_bin, CLUSTERBENCH_DB=str(store), XDG_CACHE_HOME=str(cache),
               COLUMNS="200")
    p = start(["run", "null", "--seconds=0.01", "--repeat", "1", "--quiet"], env)
    wait_for(lambda: (folder / "results.db.lock").exists(), p, "the store's lock file appeared")
    out, err = stop(p, sig)

    assert p.returncode == 128 + sig, err
    said_once(err, "run", sig)
    assert [name for name in os.listdir(folder) if name != "results.db"] == []
    assert [str(f) for f in cache.rglob("*.tmp")] == []
    r = run_bounded([sys.executable, "-m", "clusterbench", "run", "null", "--seconds=0.01", "--repeat", "1",
                     "--quiet"], timeout=120, env=env)
    assert r.returncode == 0, r.stderr
    assert store_rows(f"sqlite:///{store}", "select status from runs") == [("ok",)]


def test_a_stop_while_the_runs_row_is_written_leaves_the_run_interrupted_not_running(tmp_path, monkeypatch):
    """Ctrl-C during the INSERT of a run's row (an fsync, or a wait on
    another writer) is raised as the INSERT returns: the row was committed,
    its id never handed back, and the run stayed `running`, later `killed`,
    while the command said "the run is stored as interrupted". Seen in 1 of
    about 15 runs stopped in their first second."""
    from clusterbench.run.runner import stored_run
    from clusterbench.store import Store

    store = Store(f"sqlite:///{tmp_path / 'results.db'}")
    insert = store.begin_run

    def stopped_as_it_returns(**run):
        insert(**run)
        raise KeyboardInterrupt   # what the signal handler raises at the first bytecode after the INSERT

    monkeypatch.setattr(store, "begin_run", stopped_as_it_returns)
    with pytest.raises(KeyboardInterrupt):
        with stored_run(store, "cut", "clusterbench run null", None):
            pytest.fail("the run's body ran")
    assert [(r.status, r.message) for r in store.list_runs()] == [("interrupted", "interrupted by SIGINT")]


def test_a_stop_before_the_runs_row_is_written_does_not_say_the_run_was_stored(cbk_bin, tmp_path, monkeypatch):
    """A Ctrl-C that lands after the store is open but before the run's row
    is written (while the progress display imports rich, about 0.1 s of a
    run's start) said "the run is stored as interrupted, with what it
    measured", and `list` had no such run (4 of 25 Ctrl-Cs at random
    moments of a run's first 0.6 s)."""
    from click.testing import CliRunner

    from clusterbench.cli import cli
    from clusterbench.launch.stop_signals import STOP_SIGNALS
    from clusterbench.run import progress

    def stopped_at_start(*_args, **_kwargs):
        raise KeyboardInterrupt   # what the signal handler raises wherever the main thread is

    store = tmp_path / "results.db"
    monkeypatch.setattr(progress, "Progress", stopped_at_start)
    handlers = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, *STOP_SIGNALS)}
    try:   # the command drops stop signals as it leaves: this process's own are given back after
        r = CliRunner().invoke(cli, ["run", "null", "--seconds=0", "--repeat", "1", "--db", str(store)],
                               env={"CLUSTERBENCH_CBK": cbk_bin, "COLUMNS": "200"})
    finally:
        for sig, handler in handlers.items():
            signal.signal(sig, handler)
    assert r.exit_code == 130, r.output
    assert r.output.strip().splitlines() == ["interrupted before the run began: it was not stored"], r.output
    assert run_ids(store) == []


@pytest.mark.timeout(120)
def test_a_stop_while_the_command_line_is_imported_is_one_line_not_a_traceback(tmp_path):
    """The command line takes a tenth of a second or more to import (click,
    rich), before any stop handler is installed: a Ctrl-C then printed a
    20-line traceback ending in KeyboardInterrupt, half of the Ctrl-Cs sent
    in `list`'s first 0.3 s. Here click's import waits until the test has
    sent the Ctrl-C, so it lands there every time."""
    shadow = tmp_path / "shadow" / "click"
    shadow.mkdir(parents=True)
    ready = tmp_path / "importing"
    (shadow / "__init__.py").write_text(f"import pathlib, time\npathlib.Path({str(ready)!r}).touch()\n"
                                        "time.sleep(60)\n")
    src = Path(__file__).resolve().parent.parent / "src"
    env = dict(os.environ, PYTHONPATH=f"{tmp_path / 'shadow'}{os.pathsep}{src}",
               CLUSTERBENCH_DB=str(tmp_path / "results.db"))
    p = start(["list"], env)
    wait_for(ready.exists, p, "click's import began")
    out, err = stop(p, signal.SIGINT)
    assert p.returncode == 130, err
    assert err.splitlines() == ["clusterbench: interrupted by SIGINT"], err
    assert out == ""


@pytest.mark.timeout(120)
def test_a_stop_while_clusterbench_reads_its_own_options_exits_130_not_aborted(tmp_path):
    """`clusterbench --version` runs cbk and mpiexec while click reads the
    group's options, outside any command: a Ctrl-C there was click's
    "Aborted!" and exit 1, a failed measurement's status."""
    ready = tmp_path / "describing"
    cbk = tmp_path / "cbk"
    cbk.write_text(f"#!/bin/sh\ntouch {ready}\nexec sleep 60\n")
    cbk.chmod(0o755)
    env = dict(os.environ, CLUSTERBENCH_CBK=str(cbk), XDG_CACHE_HOME=str(tmp_path / "cache"))
    p = start(["--version"], env)
    wait_for(ready.exists, p, "cbk was asked to describe itself")
    out, err = stop(p, signal.SIGINT)
    assert p.returncode == 130, err
    assert err.splitlines() == ["clusterbench: interrupted by SIGINT"], err


def _invoked_with_stop_handlers_kept(args: list[str], env: dict):
    """CliRunner's run of the command line; the command drops stop signals
    as it leaves: this process's own are given back after."""
    from click.testing import CliRunner

    from clusterbench.cli import cli
    from clusterbench.launch.stop_signals import STOP_SIGNALS

    handlers = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, *STOP_SIGNALS)}
    try:
        return CliRunner().invoke(cli, args, env=env)
    finally:
        for sig, handler in handlers.items():
            signal.signal(sig, handler)


def test_a_stop_after_an_ok_run_was_stored_names_the_run_it_kept(cbk_bin, tmp_path, monkeypatch):
    """A Ctrl-C that lands after the run is closed ok, between its "run 1:
    ok" table and the "stored as run 1" line, said only "clusterbench run:
    interrupted by SIGINT": nothing told the user the run was kept, nor
    its id."""
    from clusterbench.report import terminal

    def stopped_while_printed(console, run):
        console.print(f"run {run['id']}: {run['status']}", markup=False)
        raise KeyboardInterrupt   # what the signal handler raises wherever the main thread is

    store = tmp_path / "results.db"
    monkeypatch.setattr(terminal, "print_run", stopped_while_printed)
    r = _invoked_with_stop_handlers_kept(["run", "null", "--seconds=0", "--repeat", "1", "--db", str(store)],
                                         {"CLUSTERBENCH_CBK": cbk_bin, "COLUMNS": "200"})
    assert r.exit_code == 130, r.output
    assert r.output.strip().splitlines()[-2:] == ["run 1: ok", "interrupted: run 1 is stored (ok): clusterbench "
                                                               "show 1"], r.output
    assert store_rows(f"sqlite:///{store}", "select id, status from runs") == [(1, "ok")]


def test_a_stop_while_an_ok_run_is_closed_waits_for_the_close_and_names_the_run(cbk_bin, tmp_path, monkeypatch):
    """A Ctrl-C inside the write that closes a run ok (an fsync, a wait on
    another writer) was raised there: the command said "interrupted before
    the run began: it was not stored" of a run the store held, or left it
    `running` when the write had not committed. The stop is held until the
    run's row says ok, then raised."""
    from clusterbench.store import database

    finish = database.Store.finish_run

    def stopped_while_closing(self, run_id, status, message=None):
        # raised in this thread, whose handler runs before raise_signal returns: inside the close. os.kill
        # let the kernel hand it to pytest-xdist's I/O thread, and CPython 3.11 then ran the handler only
        # once the main thread next took the GIL: after the command had ended (exit 0, a CI run under load)
        signal.raise_signal(signal.SIGINT)
        finish(self, run_id, status, message)

    store = tmp_path / "results.db"
    monkeypatch.setattr(database.Store, "finish_run", stopped_while_closing)
    r = _invoked_with_stop_handlers_kept(["run", "null", "--seconds=0", "--repeat", "1", "--quiet",
                                          "--db", str(store)], {"CLUSTERBENCH_CBK": cbk_bin})
    assert r.exit_code == 130, r.output
    assert r.output.strip().splitlines() == ["interrupted: run 1 is stored (ok): clusterbench show 1"], r.output
    assert store_rows(f"sqlite:///{store}", "select id, status from runs") == [(1, "ok")]


def test_a_run_closed_by_a_stop_leaves_none_of_its_steps_running(tmp_path):
    """A step's row is written before its launch starts and is closed by the
    code around the launch: a Ctrl-C in between (the launcher's command
    being made, cbk being started) closed the run as interrupted and left
    the step `running` for good (the next command's reaping only looks at
    runs still running)."""
    from clusterbench.run.runner import stored_run
    from clusterbench.store import Store

    store = Store(f"sqlite:///{tmp_path / 'results.db'}")
    with pytest.raises(KeyboardInterrupt):
        with stored_run(store, None, "clusterbench run null", None) as (run_id, _statuses):
            store.begin_step(run_id, position=0, name=None, kernel="null", params={}, launcher="local", ranks=1,
                             ranks_per_node=None)
            raise KeyboardInterrupt   # before the launch took the step over
    (run,) = store.list_runs()
    assert run.status == "interrupted"
    assert [(s.status, s.finished is not None) for s in store.steps_of(run.id)] == [("interrupted", True)]


def files_below(root: Path) -> int:
    return sum(len(files) for _dirpath, _dirs, files in os.walk(root))


def ctrl_c_twice_while_cbk_removes_its_files(args: list[str], work: Path, env: dict) -> tuple[int, str, int]:
    """Ctrl-C once the kernel has made 80,000 files, and again once their
    removal is under way, as an impatient user's. Returns the exit status,
    stderr, and how many files were left the moment clusterbench ended."""
    p = start(args, env)
    try:
        wait_for(lambda: files_below(work) >= 80_000, p, "the kernel made 80,000 files", timeout_s=120)
        made = files_below(work)
        os.killpg(p.pid, signal.SIGINT)
        wait_for(lambda: files_below(work) < made - 1000, p, "cbk began removing its files")
        os.killpg(p.pid, signal.SIGINT)
        _out, err = p.communicate(timeout=120)
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
    return p.returncode, err, files_below(work)


@pytest.mark.timeout(180)
def test_a_second_ctrl_c_while_cbk_removes_its_files_does_not_end_clusterbench_before_it(cbk_bin, tmp_path):
    """The stop of a launch waits for cbk to remove its files. A second
    Ctrl-C during that wait was raised there: clusterbench exited 130 while
    cbk was still removing tens of thousands of files (the next command in
    that directory found them), its step `running`."""
    work = tmp_path / "work"
    work.mkdir()
    store = tmp_path / "results.db"
    env = dict(os.environ, CLUSTERBENCH_CBK=cbk_bin, CLUSTERBENCH_DB=str(store), COLUMNS="200")
    # one process (no MPI launcher): the files of a create phase, removed file by file on the stop
    status, err, left = ctrl_c_twice_while_cbk_removes_its_files(
        ["run", "metadata", f"--dir={work}", "--items=200000", "--kind=files", "--phases=create", "--repeat", "1",
         "--quiet"], work, env)
    assert status == 130, err
    assert left == 0 and os.listdir(work) == [], left
    assert store_rows(f"sqlite:///{store}", "select status, message from steps") == \
        [("interrupted", "interrupted by a signal")]


@pytest.mark.timeout(180)
def test_a_second_ctrl_c_does_not_make_mpiexec_kill_the_ranks_removing_their_files(cbk_bin, mpiexec, tmp_path):
    """mpiexec was in the terminal's process group: a second Ctrl-C reached
    Hydra's mpiexec itself, which kill -9'd its ranks mid-cleanup, and tens
    of thousands of files (with the stamped private directory) stayed in
    --dir. The launch now has a process group of its own, and gets one
    SIGINT, from clusterbench."""
    work = tmp_path / "work"
    work.mkdir()
    store = tmp_path / "results.db"
    env = dict(os.environ, CLUSTERBENCH_CBK=cbk_bin, CLUSTERBENCH_DB=str(store), COLUMNS="200",
               PATH=str(Path(mpiexec).parent) + os.pathsep + os.environ.get("PATH", ""))
    status, err, left = ctrl_c_twice_while_cbk_removes_its_files(
        ["run", "metadata", "--np", "2", f"--dir={work}", "--items=100000", "--kind=files", "--phases=create",
         "--repeat", "1", "--quiet"], work, env)
    assert status == 130, err
    assert left == 0 and os.listdir(work) == [], (left, os.listdir(work))
    assert store_rows(f"sqlite:///{store}", "select status from runs") == [("interrupted",)]
    assert store_rows(f"sqlite:///{store}", "select status from steps") == [("interrupted",)]


@pytest.mark.timeout(180)
def test_a_run_started_under_nohup_outlives_the_terminals_hangup(cbk_bin, tmp_path):
    """nohup starts a command with SIGHUP ignored, so that it outlives its
    terminal: the shell sends its jobs SIGHUP when the terminal closes. The
    run took SIGHUP back as a stop signal and was stored interrupted (exit
    129) when its user logged out."""
    work = tmp_path / "work"
    work.mkdir()
    store = tmp_path / "results.db"
    env = dict(os.environ, CLUSTERBENCH_CBK=cbk_bin, CLUSTERBENCH_DB=str(store), COLUMNS="200")

    p = start_under_nohup([sys.executable, "-m", "clusterbench", "run", "seqio", f"--dir={work}", "--file-size=1m",
                           "--block-size=64k", "--write=buffered", "--read=none", "--repeat", "40", "--quiet"], env)
    with killed_if_left(p):
        wait_for(lambda: any(work.glob("cbk-seqio-*")), p, "the kernel made its private directory")
        out, err = hang_up(p)
    assert p.returncode == 0, err
    assert store_rows(f"sqlite:///{store}", "select status from runs") == [("ok",)]
    assert store_rows(f"sqlite:///{store}", "select count(distinct repetition) from samples") == [(40,)]
    assert os.listdir(work) == []


def state(pid: int) -> str:
    """A process's state letter (/proc/PID/stat field 3): T when stopped."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "gone"


@pytest.mark.timeout(180)
def test_ctrl_z_suspends_the_launch_with_clusterbench_and_fg_continues_both(cbk_bin, tmp_path):
    """The launch has a process group of its own, so a terminal's Ctrl-Z
    (SIGTSTP to the foreground group) stopped clusterbench alone and the
    benchmark ran on behind it. clusterbench now stops the launch's group
    with itself, and continues it on SIGCONT; the run then ends ok."""
    store = tmp_path / "results.db"
    env = dict(os.environ, CLUSTERBENCH_CBK=cbk_bin, CLUSTERBENCH_DB=str(store), COLUMNS="200")

    def job_control() -> None:
        terminal_sigint()
        signal.signal(signal.SIGTSTP, signal.SIG_DFL)

    p = subprocess.Popen([sys.executable, "-m", "clusterbench", "run", "null", "--seconds=0.5", "--repeat", "8",
                          "--quiet"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         # a group of its own in this session, as a shell's job: in a new session the group
                         # would be orphaned, and the kernel drops a SIGTSTP sent to an orphaned group
                         process_group=0, preexec_fn=job_control)
    try:
        def kernel() -> int | None:
            """The launch (`cbk null ...`), not the checks before it (`cbk --check null ...`)."""
            children = Path(f"/proc/{p.pid}/task/{p.pid}/children")
            for c in children.read_text().split() if children.exists() else []:
                try:
                    argv = Path(f"/proc/{c}/cmdline").read_bytes().split(b"\0")
                except OSError:
                    continue
                if os.path.basename(argv[0]) == b"cbk" and argv[1:2] == [b"null"]:
                    return int(c)
            return None

        wait_for(lambda: kernel() is not None, p, "the kernel started")
        cbk = kernel()
        time.sleep(0.5)   # clusterbench back from starting it (Popen returns after the exec), reading its records
        os.killpg(p.pid, signal.SIGTSTP)   # Ctrl-Z: the terminal's foreground group, clusterbench's
        wait_for(lambda: state(p.pid) == "T" and state(cbk) in ("T", "gone"), p,
                 "clusterbench and its kernel stopped", timeout_s=30)
        if state(cbk) == "T":              # (the kernel may have been between launches)
            time.sleep(0.3)
            assert state(cbk) == "T" and state(p.pid) == "T"
        os.killpg(p.pid, signal.SIGCONT)   # fg
        out, err = p.communicate(timeout=120)
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
    assert p.returncode == 0, err
    assert store_rows(f"sqlite:///{store}", "select status from runs") == [("ok",)]


def fake_gpu_queries(folder: Path, log: Path) -> Path:
    """nvidia-smi as a node without its persistence daemon has it (it takes
    seconds to answer, and a stop signal does not end it: a process in the
    driver's uninterruptible wait), and rocm-smi, which the GPU collector
    asks next. Each notes its start in log. nvidia-smi is a wrapper script,
    as a site's or a container's may be: the work is its child, whose pid it
    notes (ended with the wrapper alone, the child ran on)."""
    folder.mkdir()
    (folder / "nvidia-smi").write_text(f"#!/bin/sh\ntrap '' INT TERM\nsleep 30 &\necho \"nvidia-smi $!\" >> {log}\n"
                                       "wait\n")
    (folder / "rocm-smi").write_text(f"#!/bin/sh\necho rocm-smi >> {log}\nexit 1\n")
    for f in folder.iterdir():
        f.chmod(0o755)
    return folder


def running(pid: int) -> bool:
    return state(pid) not in ("gone", "Z")


@pytest.mark.timeout(180)
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_stop_while_the_environment_is_captured_ends_the_capture_and_its_commands(cbk_bin, tmp_path, sig):
    """The snapshot's topics run in threads, each asking its commands in
    turn. A stop signal there waited for every topic to end (nvidia-smi up
    to its 3 s timeout), and meanwhile the GPU topic went on to start
    rocm-smi after the run was stopped. An impatient second signal cut
    that wait short inside the executor's join: clusterbench exited with
    the threads still running, a command it had started left behind, and
    code of those threads ran under the interpreter's exit (a traceback
    after the stop line). Now the stop tells the topics to end: no command
    is started after it, the running one is ended, and the threads are
    waited for."""
    log = tmp_path / "commands.log"
    log.touch()
    fakes = fake_gpu_queries(tmp_path / "bin", log)
    store = tmp_path / "results.db"
    env = dict(os.environ, CLUSTERBENCH_CBK=cbk_bin, CLUSTERBENCH_DB=str(store), COLUMNS="200",
               XDG_CACHE_HOME=str(tmp_path / "cache"), PATH=f"{fakes}{os.pathsep}{os.environ['PATH']}")
    p = start(["run", "null", "--seconds=0.01", "--repeat", "1", "--quiet"], env)
    smi = None
    try:
        wait_for(lambda: log.read_text().startswith("nvidia-smi "), p, "the snapshot asked nvidia-smi")
        smi = int(log.read_text().split()[1])
        with log.open("a") as f:
            f.write("stop\n")
        os.killpg(p.pid, sig) if sig == signal.SIGINT else p.send_signal(sig)
        try:   # an impatient user's second stop, if the first has not ended it yet
            p.wait(timeout=0.3)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, sig) if sig == signal.SIGINT else p.send_signal(sig)
        out, err = p.communicate(timeout=60)
        left_running = running(smi)
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
        if smi and running(smi):
            os.kill(smi, signal.SIGKILL)
    assert p.returncode == 128 + sig, err
    assert err.splitlines() == ["interrupted: run 1 is stored as interrupted, with what it measured"], err
    assert log.read_text().split("stop\n")[1] == "", log.read_text()   # nothing asked after the stop
    assert not left_running, "nvidia-smi was left running"
    assert store_rows(f"sqlite:///{store}", "select status from runs") == [("interrupted",)]


@pytest.mark.timeout(180)
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_stop_while_the_nodes_environments_are_captured_ends_their_launches_and_commands(cbk_bin, mpiexec,
                                                                                           tmp_path, sig):
    """With a host file, `run` captures each node's snapshot by a launch of
    `python -m clusterbench.environment` there (here the host file names
    this host). A stop then went up past those launches: SIGTERM reached
    none of them, and after a Ctrl-C the collector took Hydra's passed-on
    second SIGINT as a second stop, which cut short its wait for its
    commands; either way clusterbench said the run was interrupted and
    left mpiexec, the node's collector and its nvidia-smi running."""
    log = tmp_path / "commands.log"
    log.touch()
    fakes = tmp_path / "bin"
    fakes.mkdir()
    # slow on the node only (a launch under Hydra has PMI_RANK): this host's own snapshot comes first
    (fakes / "nvidia-smi").write_text(f"#!/bin/sh\n[ -n \"$PMI_RANK\" ] || exit 1\ntrap '' INT TERM\n"
                                      f"echo \"node $$ $PPID\" >> {log}\nexec sleep 30\n")
    (fakes / "nvidia-smi").chmod(0o755)
    (tmp_path / "hosts").write_text("localhost\n")
    store = tmp_path / "results.db"
    env = dict(os.environ, CLUSTERBENCH_CBK=cbk_bin, CLUSTERBENCH_DB=str(store), COLUMNS="200",
               XDG_CACHE_HOME=str(tmp_path / "cache"), PATH=f"{fakes}{os.pathsep}{os.environ['PATH']}")
    p = start(["run", "null", "--seconds=0.01", "--launcher", "mpiexec", "--np", "1",
               "--hostfile", str(tmp_path / "hosts"), "--quiet"], env)
    smi = collector = None
    try:
        wait_for(lambda: log.read_text().startswith("node "), p, "the node's snapshot asked nvidia-smi")
        smi, collector = (int(w) for w in log.read_text().split()[1:3])
        stopped_at = time.monotonic()
        os.killpg(p.pid, sig) if sig == signal.SIGINT else p.send_signal(sig)
        out, err = p.communicate(timeout=60)
        stop_s = time.monotonic() - stopped_at
        left_running = [pid for pid in (smi, collector) if running(pid)]
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
        for pid in (smi, collector):
            if pid and running(pid):
                os.kill(pid, signal.SIGKILL)
    assert p.returncode == 128 + sig, err
    assert err.splitlines() == ["interrupted: run 1 is stored as interrupted, with what it measured"], err
    assert not left_running, f"left running: {left_running} (nvidia-smi {smi}, the node's collector {collector})"
    # ended by the collector itself, not by the SIGKILL after the launch's grace
    assert stop_s < STOP_GRACE_S, f"the stop took {stop_s:.1f} s"
    assert store_rows(f"sqlite:///{store}", "select status from runs") == [("interrupted",)]


@pytest.mark.timeout(180)
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_stop_signal_while_the_command_exits_is_dropped(cbk_bin, tmp_path, sig):
    """Once a command has said its last line, its exit still closes the
    store (weakref finalizers at exit: the SQLite connection checkpoints
    and removes its -wal file). A stop signal then, a second Ctrl-C after
    a stop's line most often, was raised inside those finalizers: "Exception
    ignored in: <finalize object>" and a KeyboardInterrupt traceback after
    the command's line, and the store's -wal and -shm files left. Here the
    signal comes from the first of the exit's callbacks, as the store is
    about to be closed."""
    store = tmp_path / "results.db"
    env = dict(os.environ, CLUSTERBENCH_CBK=cbk_bin, CLUSTERBENCH_DB=str(store), COLUMNS="200")
    r = run_bounded([sys.executable, "-m", "clusterbench", "run", "null", "--seconds=0.01", "--repeat", "1",
                     "--quiet"], timeout=120, env=env)
    assert r.returncode == 0, r.stderr
    # registered after weakref.finalize's own exit callback, so it runs before it (atexit runs the last first)
    script = ("import atexit, os, signal, sys, time, weakref\n"
              "weakref.finalize(object, int)\n"
              "def stop_at_exit():\n"
              f"    os.kill(os.getpid(), {int(sig)})\n"
              "    time.sleep(0.3)\n"
              "atexit.register(stop_at_exit)\n"
              "sys.argv = ['clusterbench', 'list']\n"
              "from clusterbench.cli import main\n"
              "main()\n")
    p = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120,
                       preexec_fn=terminal_sigint)
    assert (p.returncode, p.stderr) == (0, ""), p.stderr
    assert "ok" in p.stdout
    assert sorted(os.listdir(tmp_path)) == ["results.db"]


@pytest.mark.timeout(180)
def test_ctrl_z_suspends_the_ranks_of_an_mpi_launch_too(cbk_bin, mpiexec, tmp_path):
    """Ctrl-Z stopped the launch's process group with clusterbench. Hydra's
    proxy starts each rank in a session of its own, so that stopped mpiexec
    alone, and the ranks measured on behind a suspended clusterbench.
    Every process of the launch's tree is stopped now, and continued on fg."""
    import psutil

    store = tmp_path / "results.db"
    env = dict(os.environ, CLUSTERBENCH_CBK=cbk_bin, CLUSTERBENCH_DB=str(store), COLUMNS="200",
               PATH=str(Path(mpiexec).parent) + os.pathsep + os.environ.get("PATH", ""))

    def job_control() -> None:
        terminal_sigint()
        signal.signal(signal.SIGTSTP, signal.SIG_DFL)

    p = subprocess.Popen([sys.executable, "-m", "clusterbench", "run", "null", "--np", "2", "--seconds=0.5",
                          "--repeat", "12", "--quiet"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, process_group=0, preexec_fn=job_control)   # a shell's job (see above)
    try:
        def ranks() -> list[int]:
            found = []
            with contextlib.suppress(psutil.Error):
                for c in psutil.Process(p.pid).children(recursive=True):
                    with contextlib.suppress(psutil.Error):
                        if c.name() == "cbk" and c.cmdline()[1:2] == ["null"]:
                            found.append(c.pid)
            return found

        wait_for(lambda: len(ranks()) == 2, p, "both ranks started")
        time.sleep(0.5)   # clusterbench back from starting the launch, reading its records
        both = ranks()
        os.killpg(p.pid, signal.SIGTSTP)   # Ctrl-Z
        wait_for(lambda: state(p.pid) == "T", p, "clusterbench stopped", timeout_s=30)
        deadline = time.monotonic() + 30
        while not all(state(r) == "T" for r in both) and time.monotonic() < deadline:
            time.sleep(0.05)
        stopped = [state(r) for r in both]
        os.killpg(p.pid, signal.SIGCONT)   # fg
        out, err = p.communicate(timeout=120)
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
    assert stopped == ["T", "T"], f"the ranks ran on behind a suspended clusterbench: {stopped}"
    assert p.returncode == 0, err
    assert store_rows(f"sqlite:///{store}", "select status from runs") == [("ok",)]


def test_the_wal_and_shm_files_a_stop_at_the_stores_opening_leaves_do_no_harm(cbk_bin, tmp_path):
    """A stop signal that lands just after the store's connection switched
    it to WAL mode (store/rows_sqlite.py), before the Store holds the
    connection and its closing finalizer, ends the command (one line, 143)
    with the connection never closed: an empty results.db-wal and a 32 KiB
    results.db-shm stay beside the store, as after any kill -9. They hold
    nothing (the -wal is empty; every committed run is in results.db), and
    the next command reads and writes the store and, closing it, removes
    both. Left as they are, documented (docs/reliability.md)."""
    store = tmp_path / "results.db"
    env = dict(os.environ, CLUSTERBENCH_CBK=cbk_bin, CLUSTERBENCH_DB=str(store), COLUMNS="200")
    run = [sys.executable, "-m", "clusterbench", "run", "null", "--seconds=0.01", "--repeat", "1", "--quiet"]
    r = run_bounded(run, timeout=120, env=env)
    assert r.returncode == 0, r.stderr
    # what that stop leaves: the store opened in WAL mode, the process gone without closing it
    subprocess.run([sys.executable, "-c", "import os, sqlite3, sys\n"
                    "c = sqlite3.connect(sys.argv[1]); c.execute('PRAGMA journal_mode=WAL')\n"
                    "os._exit(143)\n", str(store)], check=False, timeout=60)
    assert sorted(os.listdir(tmp_path)) == ["results.db", "results.db-shm", "results.db-wal"]
    assert (tmp_path / "results.db-wal").stat().st_size == 0
    # a copy of results.db alone has every run
    copy = tmp_path / "copy"
    copy.mkdir()
    (copy / "results.db").write_bytes(store.read_bytes())
    assert store_rows(f"sqlite:///{copy / 'results.db'}", "select id, status from runs") == [(1, "ok")]

    listed = run_bounded([sys.executable, "-m", "clusterbench", "list"], timeout=120, env=env)
    assert listed.returncode == 0 and " ok " in listed.stdout, listed.stderr
    r = run_bounded(run, timeout=120, env=env)
    assert r.returncode == 0, r.stderr
    assert sorted(os.listdir(tmp_path)) == ["copy", "results.db"]
    assert store_rows(f"sqlite:///{store}", "select id, status from runs") == [(1, "ok"), (2, "ok")]
    assert store_rows(f"sqlite:///{store}", "pragma integrity_check") == [("ok",)]


STOP_LANDS_IN = r"""
import os, signal, sys, time, weakref
from clusterbench.launch import stop_signals
from clusterbench.run import runner
from clusterbench.run.step_engine import Interrupted

sig, handler, where = signal.Signals[sys.argv[1]], sys.argv[2], sys.argv[3]
if handler == "run":
    stop_signals.install(runner._raise_interrupted)   # what a run installs: Interrupted(name)
else:
    stop_signals.stop_as_ctrl_c()   # what the command line installs; SIGINT keeps Python's own handler


def stop_lands_here():
    os.kill(os.getpid(), sig)
    for _ in range(100000):   # the handler runs here
        pass


class Held:
    pass


try:
    if where == "finalizer":
        held = Held()
        ref = weakref.ref(held, lambda _ref: stop_lands_here())
        del held
    else:
        try:   # as an environment collector guards against its own bugs
            stop_lands_here()
        except Exception:
            pass
    time.sleep(5)
    print("ran on")
except (KeyboardInterrupt, Interrupted) as stop:
    print("stopped by", stop.args[0] if stop.args else "SIGINT")
"""


@pytest.mark.parametrize("sig,handler,where", [
    ("SIGTERM", "cli", "finalizer"), ("SIGINT", "cli", "finalizer"), ("SIGTERM", "run", "finalizer"),
    ("SIGHUP", "run", "finalizer"), ("SIGTERM", "run", "except-Exception")])
def test_a_stop_signal_that_lands_in_a_finalizer_or_an_except_exception_still_stops_the_command(
        tmp_path, sig, handler, where):
    """A stop signal's handler runs wherever the main thread is. In a
    garbage collector's weakref callback (SQLAlchemy's) Python prints the
    exception it raises and drops it; in an `except Exception` block (an
    environment collector's, a library's) a stop that was an Exception was
    caught: either way a run stopped by SIGTERM measured on (a pario run in
    test_private_dirs.py, 1 in 40). The stop must still end the script."""
    script = tmp_path / "stop_lands_in.py"
    script.write_text(STOP_LANDS_IN)
    r = run_bounded([sys.executable, str(script), sig, handler, where], timeout=60, env=dict(os.environ),
                    start_new_session=True, preexec_fn=terminal_sigint)
    assert r.stdout.strip() == f"stopped by {sig}", r.stdout + r.stderr
    assert "Exception ignored" not in r.stderr, r.stderr


@pytest.mark.timeout(60)
def test_once_a_stop_is_said_further_stops_are_ignored_on_the_way_out():
    """A CI run under load: the second Ctrl-C of an impatient user landed
    in the interpreter's exit, after "interrupted: ..." was said, where the
    handlers are the default again, and clusterbench ended by the signal
    (status -2) instead of 130."""
    code = ("import os, signal, sys\n"
            "from clusterbench.launch.stop_signals import leaving\n"
            "status = leaving(KeyboardInterrupt('SIGTERM'))\n"
            "for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):\n"
            "    os.kill(os.getpid(), sig)\n"
            # ignored, not handled: finalization gives a handled signal its default action back
            "assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN\n"
            "sys.exit(status)\n")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=30,
                       env={**os.environ, "PYTHONPATH": str(Path(__file__).parent.parent / "src")})
    assert p.returncode == 143 and p.stderr == "", (p.returncode, p.stderr)
