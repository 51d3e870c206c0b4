"""The store refuses what is not its own (#20 finding 5, SQLite): foreign,
corrupt, empty, newer-schema and mistyped stores give one line and exit 2
and leave the file as it was; a store on a read-only file system is read."""
from __future__ import annotations

import datetime as dt
import hashlib
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import run_bounded, store_rows, tree


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def make_foreign(path: Path, *, runs_table: bool) -> None:
    c = sqlite3.connect(path)
    c.execute("create table runs(id integer primary key, what text)" if runs_table else "create table t(x)")
    c.execute("insert into " + ("runs(what) values ('theirs')" if runs_table else "t values (1)"))
    c.commit()
    c.close()


def make_newer(path: Path) -> None:
    c = sqlite3.connect(path)
    c.execute("create table alembic_version(version_num varchar(32) primary key)")
    c.execute("insert into alembic_version values ('ffffffffffff')")
    c.commit()
    c.close()


@pytest.fixture(scope="module")
def good_store(tmp_path_factory, cbk_bin) -> Path:
    d = tmp_path_factory.mktemp("good")
    r = run_bounded([sys.executable, "-m", "clusterbench", "run", "null", "--seconds=0.01", "--repeat", "2",
                     "--quiet", "--db", str(d / "good.db")],
                    timeout=120, env=dict(os.environ, CLUSTERBENCH_CBK=cbk_bin))
    assert r.returncode == 0, r.stderr
    return d / "good.db"


MAKERS = {
    "foreign": lambda p, good: make_foreign(p, runs_table=False),
    "foreign-with-runs-table": lambda p, good: make_foreign(p, runs_table=True),
    "newer-schema": lambda p, good: make_newer(p),
    "text": lambda p, good: p.write_text("name,value\nx,1\n"),
    "random": lambda p, good: p.write_bytes(os.urandom(8192)),
    "truncated": lambda p, good: p.write_bytes(good.read_bytes()[:6000]),
    "empty": lambda p, good: p.write_bytes(b""),
}
MESSAGES = {"foreign": "another program's", "foreign-with-runs-table": "another program's",
            "newer-schema": "does not know", "text": "not an SQLite", "random": "not an SQLite",
            "truncated": "not a readable SQLite", "empty": "empty file"}


def invoke(*args: str, env: dict | None = None):
    """The command in this process (click's runner): fast enough for many cases."""
    from click.testing import CliRunner

    from clusterbench.cli import cli

    return CliRunner().invoke(cli, list(args), env=env)


COMMANDS = [("list",), ("show", "1"), ("export", "--format", "csv", "1"), ("run", "null", "--seconds=0.01")]


@pytest.mark.parametrize("kind", sorted(MAKERS))
def test_a_file_that_is_not_our_store_is_refused_and_unchanged(tmp_path, good_store, cbk_bin, kind):
    path = tmp_path / "their.db"
    MAKERS[kind](path, good_store)
    before, names = digest(path), sorted(os.listdir(tmp_path))
    for command in COMMANDS:
        r = invoke(*command, "--db", str(path), env={"CLUSTERBENCH_CBK": cbk_bin})
        assert r.exit_code == 2, (command, r.stderr, r.exception)
        assert len(r.stderr.strip().splitlines()) == 1 and MESSAGES[kind] in r.stderr, r.stderr
        assert digest(path) == before
        assert sorted(os.listdir(tmp_path)) == names  # no -wal, -shm or .lock file either


def test_a_foreign_runs_table_is_refused_by_a_real_run(cli, tmp_path):
    path = tmp_path / "their.db"
    make_foreign(path, runs_table=True)
    before = digest(path)
    r = cli("run", "null", "--seconds=0.01", "--db", str(path))
    assert r.status == 2 and r.stderr.count("\n") == 1 and "another program's" in r.stderr, r.stderr
    assert digest(path) == before and os.listdir(tmp_path) == ["their.db"]


# every command that only reads the store; {out}: a folder for the files they would write
READING = [("list",), ("show", "1"), ("export", "--format", "csv", "1"), ("compare", "a", "b"),
           ("report", "a", "-o", "{out}/r.html"), ("history", "-o", "{out}/h.html"), ("trend", "seqio:read:cold"),
           ("env", "--diff", "1", "2"), ("prune", "--before", "2026-01-01", "--dry-run"), ("prune", "--run", "1")]


def reading(out: Path) -> list[tuple[str, ...]]:
    return [tuple(a.format(out=out) for a in command) for command in READING]


def test_a_mistyped_path_creates_nothing(cli, tmp_path):
    missing = tmp_path / "typo" / "deeper" / "results.db"
    for command in (("list",), ("show", "1"), ("run", "null", "--seconds=0.01")):
        r = cli(*command, "--db", str(missing))
        assert r.status == 2 and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert not (tmp_path / "typo").exists()
    r = cli("list", "--db", str(tmp_path / "new.db"))  # reading never creates a store
    assert r.status == 2 and "no store at" in r.stderr and not (tmp_path / "new.db").exists()
    r = cli("run", "null", "--seconds=0.01", "--db", str(tmp_path / "new.db"))  # a run does, where the directory is
    assert r.status == 0 and (tmp_path / "new.db").exists(), r.stderr


@pytest.mark.parametrize("name", ["a?b.db", "a%20b.db", "a%3Fb.db"])
def test_a_store_path_with_url_characters_is_that_file(cli, tmp_path, name):
    """A path was pasted into sqlite:///PATH unquoted: 'a?b.db' stored into a
    file named 'a' (the rest a query), 'a%20b.db' into 'a b.db'."""
    for how in ("--db", "CLUSTERBENCH_DB"):
        args = ["--db", str(tmp_path / name)] if how == "--db" else []
        env = {"CLUSTERBENCH_DB": str(tmp_path / name)} if how != "--db" else None
        r = cli("run", "null", "--seconds=0", "--repeat", "1", "--quiet", *args, env=env)
        assert r.status == 0, r.stderr
        assert sorted(os.listdir(tmp_path)) == [name], (how, os.listdir(tmp_path))
        assert sqlite3.connect(tmp_path / name).execute("select count(*) from runs").fetchone() == (1,)
        (tmp_path / name).unlink()


def test_no_reading_command_creates_a_store_it_is_pointed_at(tmp_path, cbk_bin):
    out = tmp_path / "out"
    out.mkdir()
    for db in (tmp_path / "new.db", tmp_path / "typo" / "results.db"):
        for command in reading(out):
            r = invoke(*command, "--db", str(db), env={"CLUSTERBENCH_CBK": cbk_bin})
            assert r.exit_code == 2, (command, r.stderr, r.exception)
            assert r.stderr.strip().splitlines() == [
                f"Error: no store at {db} (a run creates one; check the path or --db)"], (command, r.stderr)
    assert tree(tmp_path) == ["out"]


def test_the_default_store_is_made_by_the_first_run_and_never_by_a_reading_command(tmp_path, cbk_bin):
    """Without --db or $CLUSTERBENCH_DB the store is results.db in the user's
    data directory (~/.local/share/clusterbench): a look before the first run
    is one line and exit 2, and leaves no store, no directory and no output
    file (an empty store it made stayed behind, and answered 'no runs'); the
    first run makes the directory and the store."""
    home = tmp_path / "home"
    home.mkdir()
    out = tmp_path / "out"
    out.mkdir()
    env = {"CLUSTERBENCH_DB": None, "XDG_DATA_HOME": None, "HOME": str(home), "CLUSTERBENCH_CBK": cbk_bin}
    store = home / ".local" / "share" / "clusterbench" / "results.db"
    for command in reading(out):
        r = invoke(*command, env=env)
        assert r.exit_code == 2, (command, r.stderr, r.exception)
        assert r.stderr.strip().splitlines() == [
            f"Error: no store at {store} (the first `clusterbench run` creates it; "
            "--db or $CLUSTERBENCH_DB names another)"], (command, r.stderr)
    assert tree(tmp_path) == ["home", "out"]
    full_env = {k: v for k, v in os.environ.items() if k not in ("CLUSTERBENCH_DB", "XDG_DATA_HOME")}
    full_env.update(HOME=str(home), CLUSTERBENCH_CBK=cbk_bin)
    r = run_bounded([sys.executable, "-m", "clusterbench", "run", "null", "--seconds=0.01", "--quiet"],
                    timeout=120, env=full_env)
    assert r.returncode == 0, r.stderr
    assert sqlite3.connect(store).execute("select count(*) from runs").fetchone() == (1,)
    r = invoke("list", "--width", "200", env=env)   # wide enough that the command is on one line
    assert r.exit_code == 0 and "run null --seconds=0.01" in r.stdout, r.stderr


@pytest.mark.timeout(180)
def test_no_reading_command_creates_tables_in_an_empty_postgresql_database(postgres_server, tmp_path, cbk_bin):
    url = postgres_server.new_database()
    tables = "select count(*) from information_schema.tables where table_schema = 'public'"
    for command in reading(tmp_path):
        r = invoke(*command, "--db", url, env={"CLUSTERBENCH_CBK": cbk_bin})
        assert r.exit_code == 2, (command, r.stderr, r.exception)
        (line,) = r.stderr.strip().splitlines()
        assert line.startswith("Error: no store in postgresql+psycopg://") and "a run creates them" in line, line
    assert store_rows(url, tables) == [(0,)] and tree(tmp_path) == []
    r = run_bounded([sys.executable, "-m", "clusterbench", "run", "null", "--seconds=0.01", "--quiet", "--db", url],
                    timeout=120, env=dict(os.environ, CLUSTERBENCH_CBK=cbk_bin))
    assert r.returncode == 0, r.stderr
    assert store_rows(url, "select count(*) from runs") == [(1,)]


def test_bad_input_creates_no_store(cli, tmp_path):
    r = cli("run", "null", "--seconds=-1", "--db", str(tmp_path / "new.db"))
    assert r.status == 2
    assert os.listdir(tmp_path) == []


def test_a_store_on_a_read_only_file_system_is_read(cli, tmp_path, good_store, cbk_bin):
    if os.geteuid() != 0 or not shutil.which("unshare"):
        pytest.skip("needs root for a private read-only bind mount")
    ro = tmp_path / "ro"
    ro.mkdir()
    shutil.copy(good_store, ro / "good.db")
    before = digest(ro / "good.db")
    py = sys.executable
    # a private mount namespace: the read-only mount ends with the shell
    script = ('mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" || exit 99\n'
              'for c in list "show 1" "export --format csv 1"; do "$2" -m clusterbench $c --db "$1/good.db" || exit 1; done\n'
              '"$2" -m clusterbench prune --before "$3" --dry-run --db "$1/good.db" || exit 1\n'
              '"$2" -m clusterbench prune --before "$3" --db "$1/good.db"; echo "prune=$?"\n'
              '"$2" -m clusterbench run null --seconds=0.01 --db "$1/good.db"; echo "run=$?"')
    # every run: before tomorrow (a date past the day after is refused as a typo)
    tomorrow = (dt.datetime.now(dt.timezone.utc) + dt.timedelta(days=1)).strftime("%Y-%m-%d")
    r = subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c", script, "sh", str(ro), py, tomorrow],
                       capture_output=True, text=True, timeout=120,
                       env=dict(os.environ, CLUSTERBENCH_CBK=cbk_bin, COLUMNS="200"))
    if r.returncode == 99:
        pytest.skip(f"cannot mount here: {r.stderr.strip()}")
    assert r.returncode == 0, r.stderr
    assert "null" in r.stdout and "run=2" in r.stdout and "prune=2" in r.stdout
    assert "would delete 1 run, " in r.stdout
    errors = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(errors) == 2 and all("read-only" in e for e in errors), r.stderr
    assert os.listdir(ro) == ["good.db"] and digest(ro / "good.db") == before


def _open_store(url: str) -> str:
    from clusterbench.store.database import Store

    try:
        Store(url)
        return "ok"
    except Exception as e:  # noqa: BLE001 - the message is the finding
        return str(e)


@pytest.mark.timeout(120)
def test_first_opens_at_once_wait_for_the_migration_instead_of_judging_a_half_made_store(tmp_path):
    """SQLite commits each CREATE TABLE at once: a second process that read the
    file mid-migration saw an empty alembic_version ("holds store schema None")
    or no table yet ("another program's database"). Readers now wait on the
    migration's lock file. Before the fix, the first trial failed."""
    import multiprocessing

    ctx = multiprocessing.get_context("fork")
    for trial in range(6):
        url = f"sqlite:///{tmp_path}/s{trial}.db"
        with ctx.Pool(6) as pool:
            results = pool.map(_open_store, [url] * 6)
        assert results == ["ok"] * 6, (trial, results)


@pytest.mark.parametrize("holder", ["none", "another process"])
def test_a_first_open_stopped_at_the_migration_lock_leaves_no_lock_file_and_keeps_a_holders(tmp_path, monkeypatch,
                                                                                         holder):
    """A new store is made under `<store>.lock`, removed by whoever holds it
    once the store is made. A Ctrl-C between making that file and taking
    it, or just after taking it, left it beside the user's store for good.
    Stopped while another process holds it, the file stays: it is the
    holder's, and removing it would let a third process migrate beside it."""
    import fcntl

    from clusterbench.store import database

    db = tmp_path / "new.db"
    lock = tmp_path / "new.db.lock"
    real_flock, calls = fcntl.flock, []

    def stopped(fd, op):
        """Ctrl-C at the first flock: once it is taken, or while it waits on the holder."""
        if not calls:
            calls.append(op)
            if holder == "none":
                real_flock(fd, op)
            raise KeyboardInterrupt
        return real_flock(fd, op)

    theirs = None
    if holder != "none":
        theirs = open(lock, "a")
        real_flock(theirs, fcntl.LOCK_EX)
    monkeypatch.setattr(database.fcntl, "flock", stopped)
    try:
        with pytest.raises(KeyboardInterrupt):
            database.Store(f"sqlite:///{db}")
        assert calls == [fcntl.LOCK_EX]
        assert sorted(os.listdir(tmp_path)) == ([] if holder == "none" else ["new.db.lock"])
    finally:
        if theirs is not None:
            theirs.close()
