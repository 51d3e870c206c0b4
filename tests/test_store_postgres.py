"""The store on a shared PostgreSQL database: first runs at once, input
PostgreSQL refuses (where SQLite would store it), and plain postgresql:// URLs."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from conftest import store_rows


@pytest.mark.both_stores
@pytest.mark.timeout(180)
def test_four_first_runs_at_once_on_a_new_store_all_land(cbk_bin, store_url):
    """Issue #20 finding 5: each first run migrates the empty store; without the
    migration lock two of them create the same tables (DuplicateTable on
    PostgreSQL, 'table already exists' on SQLite)."""
    env = dict(os.environ, CLUSTERBENCH_CBK=cbk_bin, CLUSTERBENCH_DB=store_url)
    procs = [subprocess.Popen([sys.executable, "-m", "clusterbench", "run", "null", "--seconds=0.01",
                               "--repeat", "2", "--label", f"first{i}", "--quiet"], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for i in range(4)]
    for p in procs:
        _, err = p.communicate(timeout=150)
        assert p.returncode == 0, err
    assert store_rows(store_url, "select label, status from runs order by label") == [
        (f"first{i}", "ok") for i in range(4)]
    assert store_rows(store_url, "select count(*) from samples") == [(8,)]
    assert store_rows(store_url, "select version_num from alembic_version") == [("0012",)]


@pytest.mark.both_stores
@pytest.mark.timeout(60)
@pytest.mark.parametrize("args, suite, message", [
    (["--label", "x" * 201], None, "--label is 201 characters long; the store holds at most 200"),
    (["--label", "a\x01b"], None, "--label 'a\\x01b': character 2 is a control character (U+0001)"),
    ([], 'name = "wr\\u0000ite"\nkernel = "null"\nparams = { seconds = "0.01" }\n',
     # the suite's schema refuses it first (control characters in a name), before the store's own check
     "step 1: name = 'wr\\x00ite': expected text without control characters"),
])
def test_what_the_store_cannot_hold_is_refused_before_the_run(cli, store_url, tmp_path, args, suite, message):
    """Issue #20 finding 7: PostgreSQL raised DataError with a traceback after the run had measured."""
    target = "null"
    if suite:
        target = str(tmp_path / "s.toml")
        (tmp_path / "s.toml").write_text('description = "t"\n[[steps]]\n' + suite)
    r = cli("run", target, "--seconds=0.01", "--repeat", "2", *args) if not suite else cli("run", target, *args)
    assert r.status == 2, r.stderr
    assert r.stderr.strip().count("\n") == 0 and message in r.stderr and "Traceback" not in r.stderr
    if store_url.startswith("postgresql"):
        assert store_rows(store_url, "select count(*) from pg_tables where tablename = 'runs'") in ([(0,)], [(1,)])
        if store_rows(store_url, "select count(*) from pg_tables where tablename = 'runs'") == [(1,)]:
            assert store_rows(store_url, "select count(*) from runs") == [(0,)]
    else:
        assert not (tmp_path / "results.db").exists()


def test_a_plain_postgresql_url_uses_psycopg(postgres_server):
    from clusterbench.store import Store

    plain = postgres_server.new_database().replace("postgresql+psycopg://", "postgresql://")
    store = Store(plain)
    assert store.engine.dialect.driver == "psycopg"
    store.begin_run(label="plain", command="test", suite=None)
    assert [r.label for r in store.list_runs()] == ["plain"]


def test_an_unreachable_server_is_one_line(cli, tmp_path):
    r = cli("list", "--db", f"postgresql://someone:secret@/nodb?host={tmp_path}")
    assert r.status == 2 and r.stderr.count("\n") == 1 and "cannot open the store" in r.stderr
    assert "secret" not in r.stderr


@pytest.mark.timeout(120)
@pytest.mark.parametrize("store_url", ["postgresql"], indirect=True)
def test_a_run_of_year_1_reads_on_a_database_whose_time_zone_is_west_of_utc(cli, store_url):
    """psycopg converts a timestamptz to the session's time zone: with the
    database's TimeZone America/New_York, a run dated 0001-01-01 UTC (an
    older import --date 0001-01-01) was '0001-12-31 19:03:58-04:56:02 BC',
    which it refused, and every list and show was a traceback."""
    import sqlalchemy as sa

    assert cli("run", "null", "--seconds=0", "--repeat", "1", "--quiet").status == 0
    engine = sa.create_engine(store_url)
    with engine.begin() as c:
        c.execute(sa.text(f'alter database "{c.execute(sa.text("select current_database()")).scalar()}" '
                          "set timezone = 'America/New_York'"))
        c.execute(sa.text("update runs set started = '0001-01-01 00:00:00+00', finished = null"))
    engine.dispose()
    for args in (["list"], ["show", "1"], ["export", "1", "--format", "csv"]):
        r = cli(*args)
        assert r.status == 0 and "Traceback" not in r.stderr, (args, r.stderr[-500:])
    assert "run 1: ok, 0001-01-01 00:00:00 UTC" in cli("show", "1").stdout
