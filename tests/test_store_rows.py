"""A run on a SQLite store at the head revision stores through the standard
library (store/rows_sqlite.py), everything else through SQLAlchemy
(rows_alchemy.py): the two must write the same rows and read them back the
same, and a plain SQLite URL must name the same file both ways."""
from __future__ import annotations

import datetime as dt
import os
import re
import sqlite3
import subprocess
import sys

import pytest
import sqlalchemy as sa

from clusterbench.results.sample import Sample
from conftest import store_rows
from clusterbench.store import database
from clusterbench.store.database import Store
from clusterbench.store.rows_alchemy import AlchemyRows
from clusterbench.store.rows_sqlite import SqliteRows
from clusterbench.store.sqlite_url import render, sqlite_file

TABLES = ("environments", "runs", "run_hosts", "steps", "samples")


def _current_store(path) -> Store:
    Store(f"sqlite:///{path}")   # creates and migrates it (SQLAlchemy, Alembic)
    return Store(f"sqlite:///{path}")


def _write_a_run(store: Store) -> int:
    env = {"host.name": "n01", "cpu.model": "AMD EPYC \u00e9", "memory.bytes": 25769803776, "gpu": None}
    store.add_environment(env, "h" * 64)
    store.add_environment(env, "h" * 64)   # a second run's same machine: stored once
    run_id = store.begin_run(label="rows", command="clusterbench run null --label=rows", suite="s")
    store.link_host(run_id, "n01", "h" * 64)
    ok = store.begin_step(run_id, position=0, name="null", kernel="null", params={"seconds": "0.01", "x": [1, 2]},
                          launcher="local", ranks=2, ranks_per_node=None)
    for rep, value in enumerate((99.25, 1e-9, 3e12)):
        record = {"type": "sample", "kernel": "null", "phase": "null", "repetition": rep, "value": value,
                  "unit": "MiB/s", "seconds": 0.5, "bytes": 2**40 + rep, "ops": None, "note": "\u00b5s"}
        store.add_sample(ok, Sample.from_record(record), ["first warning"] if rep else [])
    first = store.samples_of(ok)[0]
    store.add_sample_warnings(first.id, ["added after the run"])
    store.finish_step(ok, "ok", build={"type": "run", "mpi": None}, stop_reason="5 repetitions")
    skipped = store.begin_step(run_id, position=1, name=None, kernel="gpu", params={}, launcher="local", ranks=1,
                               ranks_per_node=1)
    store.finish_step(skipped, "skipped", message="no GPU")   # build None: stored as JSON null
    store.finish_run(run_id, "ok")
    return run_id


def _dump(path) -> dict:
    """Every table as SQLite holds it: values and their storage classes."""
    c = sqlite3.connect(path)

    def kinds(t: str) -> str:
        return ", ".join(f"typeof({col[1]})" for col in c.execute(f"pragma table_info({t})"))

    try:
        return {t: c.execute(f"select *, {kinds(t)} from {t}").fetchall() for t in TABLES}
    finally:
        c.close()


def test_both_row_layers_write_the_same_rows_and_read_them_back_the_same(tmp_path, monkeypatch):
    fixed = dt.datetime(2026, 11, 26, 9, 30, 1, 123456, tzinfo=dt.timezone.utc)
    monkeypatch.setattr(database, "now", lambda: fixed)
    fast, slow = _current_store(tmp_path / "fast.db"), _current_store(tmp_path / "slow.db")
    assert isinstance(fast.rows.rows, SqliteRows)   # inside store/failures.py's guard
    slow.rows = AlchemyRows(slow.engine)
    ids = [_write_a_run(s) for s in (fast, slow)]
    assert ids[0] == ids[1]
    fast.rows.close()
    slow.engine.dispose()
    written = _dump(tmp_path / "fast.db")
    assert written == _dump(tmp_path / "slow.db")
    assert written["runs"][0][7] == "2026-11-26 09:30:01.123456" and len(written["samples"]) == 3
    # read back by each layer, from the file either wrote
    for reader in (Store(f"sqlite:///{tmp_path / 'fast.db'}"), Store(f"sqlite:///{tmp_path / 'slow.db'}")):
        alchemy = Store(str(reader.url))
        alchemy.rows = AlchemyRows(alchemy.engine)
        for store in (reader, alchemy):
            run = store.run(ids[0])
            assert run.started == fixed.replace(tzinfo=None) and run.label == "rows" and run.status == "ok"
        got = [(s.run(ids[0]), s.steps_of(ids[0]), [s.samples_of(st.id) for st in s.steps_of(ids[0])],
                s.environments_of(ids[0])) for s in (reader, alchemy)]
        assert tuple(got[0][0]) == tuple(got[1][0])
        assert [tuple(r) for r in got[0][1]] == [tuple(r) for r in got[1][1]]
        assert got[0][2] == got[1][2] and got[0][3] == got[1][3]
        steps = got[0][1]
        assert steps[0].params == {"seconds": "0.01", "x": [1, 2]} and steps[1].build is None
        assert got[0][2][0][0].warnings == ["added after the run"] and got[0][2][0][1].bytes == 2**40 + 1
        assert got[0][3] == {"n01": {"host.name": "n01", "cpu.model": "AMD EPYC \u00e9",
                                     "memory.bytes": 25769803776, "gpu": None}}


def test_a_run_the_store_lost_is_refused_by_either_layer(tmp_path):
    store = _current_store(tmp_path / "s.db")
    with pytest.raises(Exception, match="no run 7 in sqlite:///"):
        store.run(7)
    with pytest.raises(KeyError, match="no column nope in table runs"):
        store.rows.update("runs", {"id": 1}, {"nope": 1})


def test_only_a_current_plain_sqlite_file_takes_the_standard_library_path(tmp_path):
    new = Store(f"sqlite:///{tmp_path / 'new.db'}")   # created here, as a copy of the template store
    assert isinstance(new.rows.rows, SqliteRows)
    assert isinstance(Store(f"sqlite:///{tmp_path / 'new.db'}").rows.rows, SqliteRows)
    assert isinstance(Store(f"sqlite:///{tmp_path / 'new.db'}?timeout=5").rows.rows, AlchemyRows)


@pytest.mark.parametrize("path", ["/tmp/plain.db", "/tmp/a b/x%20y.db", "/tmp/\u00e9t\u00e9/r.db", "rel/x.db",
                                  "/tmp/a@b/x.db", "/tmp/a:b/c.db", "/tmp/#x.db", "/tmp/+plus.db"])
def test_a_plain_sqlite_url_names_the_file_sqlalchemy_names(path):
    url = f"sqlite:///{path}"
    parsed = sa.engine.make_url(url)
    assert sqlite_file(url) == parsed.database
    assert render(sqlite_file(url)) == parsed.render_as_string(hide_password=True)


@pytest.mark.parametrize("url", ["sqlite:///:memory:", "sqlite://", "sqlite:////tmp/x.db?mode=ro",
                                 "postgresql+psycopg://u:pw@h/d", "sqlite+pysqlite:////tmp/x.db"])
def test_other_urls_are_left_to_sqlalchemy(url):
    assert sqlite_file(url) is None


@pytest.mark.timeout(120)
def test_three_runs_at_once_on_a_current_store_all_land(cbk_bin, tmp_path):
    url = f"sqlite:///{tmp_path / 'results.db'}"
    env = dict(os.environ, CLUSTERBENCH_CBK=cbk_bin, CLUSTERBENCH_DB=url)
    run = [sys.executable, "-m", "clusterbench", "run", "null", "--seconds=0.005", "--quiet"]
    subprocess.run([*run, "--repeat", "1", "--label", "first"], env=env, check=True, capture_output=True)
    procs = [subprocess.Popen([*run, "--repeat", "30", "--label", f"c{i}"], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE) for i in range(3)]
    for p in procs:
        _, err = p.communicate(timeout=90)
        assert p.returncode == 0, err
    assert not (tmp_path / "results.db-wal").exists()   # the last connection checkpointed and removed it
    c = sqlite3.connect(tmp_path / "results.db")
    rows = c.execute("select r.label, r.status, count(s.id) from runs r join steps t on t.run_id = r.id "
                     "join samples s on s.step_id = t.id group by r.id order by r.label").fetchall()
    c.close()
    assert rows == [("c0", "ok", 30), ("c1", "ok", 30), ("c2", "ok", 30), ("first", "ok", 1)]


def test_a_stop_while_a_tables_columns_are_first_read_leaves_the_table_readable(tmp_path, monkeypatch):
    """A Ctrl-C raised between caching a table's columns and its row type left the columns cached alone:
    every later select on that table in the process raised KeyError (found by injection)."""
    from clusterbench.store import rows_sqlite

    path = tmp_path / "r.db"
    _write_a_run(_current_store(path))
    rows = SqliteRows(str(path))
    real = rows_sqlite.namedtuple

    def stopped_once(*args, **kwargs):
        monkeypatch.setattr(rows_sqlite, "namedtuple", real)
        raise KeyboardInterrupt

    monkeypatch.setattr(rows_sqlite, "namedtuple", stopped_once)
    with pytest.raises(KeyboardInterrupt):
        rows.select("runs", {})
    assert [r.label for r in rows.select("runs", {})] == ["rows"]
    rows.close()


_VIEWS = (["list"], ["show", "1", "2"], ["export", "1", "2", "--format", "csv"], ["report", "1", "2", "-o", "-"])


@pytest.mark.timeout(120)
def test_a_run_dated_before_the_year_1000_keeps_the_store_readable(cli, store_url, tmp_path):
    """strftime('%Y') wrote year 1 as '1-01-01 ...', which fromisoformat
    refused: one import --date 0001-01-01 made every list, show, export and
    report of the store a traceback. import refuses such a date now; the row
    layer still writes any year with four digits."""
    store = _current_store(tmp_path / "results.db")
    store.rows.insert("runs", {"label": "y1", "command": "clusterbench import", "status": "ok", "kind": "imported",
                               "started": dt.datetime(1, 1, 1, tzinfo=dt.timezone.utc)})
    assert store_rows(store_url, "select started from runs") == [("0001-01-01 00:00:00.000000",)]
    assert cli("run", "null", "--seconds=0", "--repeat", "1", "--quiet").status == 0
    views_read_year_1(cli)


def views_read_year_1(cli) -> None:
    """Every view of a store holding one run of year 1 reads it, and list and prune show four digits."""
    for args in _VIEWS:
        r = cli(*args)
        assert r.status == 0 and "Traceback" not in r.stderr, (args, r.stderr[-300:])
    # four digits shown too: strftime's %Y wrote '1-01-01' in list and in prune's line
    assert "0001-01-01 00:00:00" in cli("list").stdout
    pruned = cli("prune", "--before", "0001-01-02", "--dry-run").stdout
    assert pruned.startswith("would delete 1 run, ") and "started before 0001-01-02" in pruned, pruned


@pytest.mark.timeout(120)
def test_a_short_year_an_older_version_stored_is_given_four_digits_and_the_store_reads(cli, store_url):
    """A store written before the row layer wrote four-digit years holds
    '1-01-01 00:00:00.000000' for an import --date 0001-01-01: every list,
    show, export and report of it was a traceback. Revision 0011 rewrites such
    years to four digits, keeping the value (and leaves other dates alone)."""
    from conftest import store_at

    store_at(store_url, "0010").dispose()
    c = sqlite3.connect(store_url.removeprefix("sqlite:///"))
    with c:   # as the old row layer wrote them: strftime's %Y
        c.execute("insert into runs (id, label, command, status, kind, started, finished) values "
                  "(1, 'old', 'clusterbench import', 'ok', 'imported', '1-01-01 00:00:00.000000', "
                  "'999-12-31 23:59:59.500000')")
        c.execute("insert into steps (run_id, position, kernel, params, launcher, ranks, status, started, finished) "
                  "values (1, 0, 'mpi', '{}', 'imported', 2, 'ok', '12-03-04 05:06:07.000000', "
                  "'2024-01-01 00:00:00.000000')")
        c.execute("insert into samples (step_id, repetition, phase, value, unit, warnings, record) "
                  "values (1, 0, 'bw', 1.5, 'MiB/s', '[]', '{}')")
    c.close()
    assert cli("run", "null", "--seconds=0", "--repeat", "1", "--quiet").status == 0   # migrates the store
    assert store_rows(store_url, "select started, finished from runs where id = 1") == [
        ("0001-01-01 00:00:00.000000", "0999-12-31 23:59:59.500000")]
    assert store_rows(store_url, "select started, finished from steps where run_id = 1") == [
        ("0012-03-04 05:06:07.000000", "2024-01-01 00:00:00.000000")]
    assert store_rows(store_url, "select version_num from alembic_version") == [("0012",)]
    views_read_year_1(cli)


@pytest.mark.timeout(120)
def test_every_view_prints_a_year_before_1000_with_four_digits(cli, store_url, tmp_path):
    """A store revision 0011 repaired holds '0001-01-01 ...'; strftime's %Y
    (and an f-string's {t:%Y}) still printed it '1-01-01' in show, trend,
    the history page and list --by month (output/date_text.py)."""
    assert cli("run", "null", "--seconds=0", "--repeat", "2", "--quiet").status == 0
    c = sqlite3.connect(store_url.removeprefix("sqlite:///"))
    with c:   # what 0011 leaves of an older import --date 0001-01-01
        c.execute("update runs set started = '0001-01-01 00:00:00.000000', finished = '0001-01-01 00:00:01.000000'")
        c.execute("update steps set started = '0001-01-01 00:00:00.000000', finished = '0001-01-01 00:00:01.000000'")
    c.close()
    shown = {"show": cli("show", "1").stdout, "trend": cli("trend", "null:null").stdout,
             "list --by month": cli("list", "--by", "month").stdout}
    assert cli("history", "-o", str(tmp_path / "history.html")).status == 0
    shown["history"] = (tmp_path / "history.html").read_text()
    for view, text in shown.items():
        assert "0001-01" in text and not re.search(r"(?<![0-9])1-01-01", text), (view, text[-2000:])



def test_a_stop_that_leaves_a_cursors_lock_taken_does_not_hang_the_step_closing_after_it(tmp_path):
    """A stop raised in contextlib's __enter__ after _cursor's generator took the lock leaves the
    generator suspended, holding it, for as long as the stop's traceback lives; the handler of that
    stop then closes the step through the same store, in the same thread. With a plain lock it waited
    for good (a SIGTERM'd run seqio, once in 8 CI runs). Here the lock is left taken by hand, as the
    stop leaves it, in a thread of its own so a hang is seen, not suffered."""
    import threading

    store = _current_store(tmp_path / "results.db")
    rows = store.rows.rows
    assert isinstance(rows, SqliteRows)
    found = []

    def stop_then_close():
        leaked = rows._cursor()
        leaked.__enter__()   # never exited: the generator holds the lock, as after the stop
        found.append(rows.select("runs", {}))   # the handler's write: waited for good on a plain lock

    worker = threading.Thread(target=stop_then_close, daemon=True)
    worker.start()
    worker.join(timeout=20)
    assert not worker.is_alive() and found == [[]]
