"""An import is stored through the store's row layer (store/imported_run.py)
in one transaction: on a current SQLite file by the standard library's
sqlite3, without SQLAlchemy, writing what SQLAlchemy writes; on any store, a
failure part-way through the file leaves no run, step, sample or
environment of it behind, and says so in one line."""
from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
import shutil
import sqlite3

import pytest
import sqlalchemy as sa

from conftest import REPO, store_at, store_rows

from clusterbench.importers.import_runs import Overrides, parse_file, store_runs
from clusterbench.store import database
from clusterbench.store.database import Store
from clusterbench.store.rows_alchemy import AlchemyRows
from clusterbench.store.rows_sqlite import SqliteRows

FIXTURES = REPO / "tests" / "fixtures" / "import"
TABLES = ("environments", "runs", "run_hosts", "steps", "samples")
# a latency no row of the big file holds but the one the store is made to refuse
REFUSED_US = 777.25


def osu_rows(path, rows: int, refused_at: int | None = None) -> str:
    """An OSU latency table of `rows` rows (as tests/test_import_plausibility.py's),
    the row `refused_at` (0-based) with the latency REFUSED_US."""
    table = "".join(f"{1 << (i % 23):<10}{REFUSED_US if i == refused_at else 1.5 + i % 7:>20.2f}\n"
                    for i in range(rows))
    path.write_text("# OSU MPI Latency Test v7.4\n# Size          Latency (us)\n" + table)
    return str(path)


def refuse_the_marked_row(url: str) -> None:
    """A trigger in the store that refuses the sample of latency REFUSED_US, as
    a full disk or a server's check would refuse a write part-way through."""
    if url.startswith("sqlite"):
        c = sqlite3.connect(url.removeprefix("sqlite:///"))
        c.execute(f"create trigger refuse_marked before insert on samples when new.value = {REFUSED_US} "
                  "begin select raise(abort, 'the test refuses this sample'); end")
        c.commit()
        c.close()
        return
    engine = sa.create_engine(url)
    with engine.begin() as c:
        c.execute(sa.text(f"""create function refuse_marked() returns trigger language plpgsql as $$
            begin if new.value = {REFUSED_US} then raise exception 'the test refuses this sample'; end if;
            return new; end $$"""))
        c.execute(sa.text("create trigger refuse_marked before insert on samples "
                          "for each row execute function refuse_marked()"))
    engine.dispose()


def counts(url: str) -> list[int]:
    return [store_rows(url, f"select count(*) from {t}")[0][0] for t in TABLES]


@pytest.mark.both_stores
@pytest.mark.timeout(300)
def test_an_import_refused_mid_file_leaves_nothing_of_it_and_says_so_in_one_line(cli, tmp_path, store_url):
    assert cli("import", str(FIXTURES / "osu-7.4-latency.txt"), "--host", "n01").status == 0
    before = counts(store_url)
    refuse_the_marked_row(store_url)
    # 30,000 rows: the refused one (row 25,001) comes after two whole batches of 10,000 were written
    big = osu_rows(tmp_path / "osu-big.txt", 30_000, refused_at=25_000)
    r = cli("import", big, "--host", "n02", "--date", "2024-01-01")
    assert r.status == 1, (r.stdout, r.stderr)
    assert r.stderr.strip().count("\n") == 0 and "Traceback" not in r.stderr
    assert r.stderr.startswith("Error: the store ") and "the test refuses this sample" in r.stderr
    # no run, host link, step, sample, nor the new host's environment
    assert counts(store_url) == before
    fine = osu_rows(tmp_path / "osu-fine.txt", 30_000)
    r = cli("import", fine, "--host", "n02", "--date", "2024-01-01")
    assert r.status == 0, r.stderr
    assert counts(store_url) == [before[0] + 1, before[1] + 1, before[2] + 1, before[3] + 1, before[4] + 30_000]


def test_an_import_into_a_current_sqlite_store_imports_no_sqlalchemy(cli, store_url):
    """SQLAlchemy's import was a tenth of a 100,000-row import: a current
    SQLite store takes the run through store/rows_sqlite.py, as `run` does."""
    path = str(FIXTURES / "imb-2021.3-mpi1.txt")
    assert cli("import", path).status == 0   # makes the store
    # --again: the same bytes, looked up (and let through) by the standard library's rows too
    r = cli("import", "--again", path, env={"PYTHONPROFILEIMPORTTIME": "1"})
    assert r.status == 0, r.stderr
    imported = {line.rsplit("|", 1)[1].strip() for line in r.stderr.splitlines() if line.startswith("import time:")}
    assert "clusterbench.store.imported_run" in imported and "clusterbench.store.rows_sqlite" in imported
    assert not {m for m in imported if m.split(".")[0] in ("sqlalchemy", "alembic")}
    assert store_rows(store_url, "select count(*) from runs") == [(2,)]
    assert store_rows(store_url, "select count(distinct step_id) from samples") == \
        store_rows(store_url, "select count(*) from steps")


def _dump(path) -> dict:
    """Every table as SQLite holds it: values and their storage classes."""
    c = sqlite3.connect(path)

    def kinds(t: str) -> str:
        return ", ".join(f"typeof({col[1]})" for col in c.execute(f"pragma table_info({t})"))

    try:
        return {t: c.execute(f"select *, {kinds(t)} from {t} order by 1").fetchall() for t in TABLES}
    finally:
        c.close()


@pytest.mark.parametrize("fixture", ["imb-2021.3-mpi1.txt", "iperf3-3.12-tcp.json", "fio-3.33-randwrite.jsonplus",
                                     "ior-4.0.0-posix-fpp.txt"])
def test_both_row_layers_store_an_import_the_same(tmp_path, monkeypatch, fixture):
    """The standard library's rows and SQLAlchemy's (PostgreSQL's path) write
    the same tables for the same import: JSON as json.dumps, dates as
    SQLAlchemy writes them, the warnings and records of every sample."""
    monkeypatch.setattr(database, "now", lambda: dt.datetime(2026, 11, 28, 11, 0, 0, 250000, tzinfo=dt.timezone.utc))
    path = str(FIXTURES / fixture)
    stores = {}
    for name in ("sqlite3", "sqlalchemy"):
        Store(f"sqlite:///{tmp_path / name}.db")   # created (a copy of the template store)
        stores[name] = Store(f"sqlite:///{tmp_path / name}.db")
    assert isinstance(stores["sqlite3"].rows.rows, SqliteRows)
    stores["sqlalchemy"].rows.rows = AlchemyRows(stores["sqlalchemy"].engine)
    for name, store in stores.items():
        runs = parse_file(path)   # parsed anew: storing fills in the runs' notes
        for run in runs:
            for st in run.steps[:1]:
                st.samples[0].warnings.append("a warning, to store one that is not empty")
        store_runs(store, runs, path, Overrides(host="n01", date=dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc)),
                   sha256=hashlib.sha256(b"the file's bytes").hexdigest())
    stores["sqlite3"].rows.close()
    stores["sqlalchemy"].engine.dispose()
    fast, slow = _dump(tmp_path / "sqlite3.db"), _dump(tmp_path / "sqlalchemy.db")
    assert fast == slow
    assert fast["samples"] and fast["samples"][0][10] == '["a warning, to store one that is not empty"]'
    assert fast["environments"][0][1] == "2026-11-28 11:00:00.250000"


def _fio_named(tmp_path, name: str, job: str, host: str | None = None) -> str:
    doc = json.loads((FIXTURES / "fio-3.33-randread.json").read_text())
    doc["jobs"][0]["jobname"] = job
    if host is not None:
        doc["jobs"][0]["hostname"] = host
    path = tmp_path / name
    path.write_text(json.dumps(doc))
    return str(path)


@pytest.mark.both_stores
@pytest.mark.timeout(300)
def test_what_the_store_cannot_hold_is_refused_or_cut_before_an_import_as_before_a_run(cli, tmp_path, store_url):
    """`run` refuses a label over 200 characters or holding a NUL on every
    backend (docs/team.md); `import` stored them on SQLite and failed on
    PostgreSQL. Now the same on both: refused in one line, exit 2, nothing
    stored; a file's job name too long for a step name is cut, as `ior`'s."""
    good = str(FIXTURES / "osu-7.4-latency.txt")
    assert cli("import", "--host", "n01", good).status == 0
    for args, says in (
            (["--label", "x" * 201], "--label is 201 characters long; the store holds at most 200"),
            (["--label", "a\x00b"], "--label contains a NUL character"),
            (["--host", "h" * 256], "--host is 256 characters long; the store holds at most 255"),
            ([_fio_named(tmp_path, "nul-job.json", "a\x00b")], "nul-job.json: fio: the step name"),
            ([_fio_named(tmp_path, "long-host.json", "j", host="n" * 300)],
             "long-host.json: fio: the host name is 300 characters long")):
        r = cli("import", good, *args)
        assert r.status == 2 and says in r.stderr, (args[0][:20], r.stderr)
        assert r.stderr.strip().count("\n") == 0 and "Traceback" not in r.stderr
        assert store_rows(store_url, "select count(*) from runs") == [(1,)]
    r = cli("import", "--host", "n01", _fio_named(tmp_path, "long-job.json", "j" * 400))
    assert r.status == 0, r.stderr
    (name,), = store_rows(store_url, "select name from steps where kernel = 'randio'")
    assert len(name) == 200 and name.startswith("fio job jjj") and name.endswith("…")


def test_an_imported_job_name_cannot_retitle_the_terminal_or_split_the_lines_printed(cli, tmp_path):
    """fio keeps a job name as given: the step line and the note printed it raw (an OSC sequence retitled the
    terminal, a newline made a line of its own), where every report shows its control characters as escapes."""
    job = "rd\x1b]0;pwned\x07\nrep 9 read [n/a] 1e9 IOPS"
    r = cli("import", "--dry-run", "--host", "n01", _fio_named(tmp_path, "odd-job.json", job))
    assert r.status == 0, r.stderr
    assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f]", r.stdout + r.stderr)
    (line,) = [x for x in r.stdout.splitlines() if "fio job" in x]
    assert line.startswith("  fio job rd\\x1b]0;pwned\\x07\\nrep 9 read [n/a] 1e9 IOPS: randio")
    assert not any(x.startswith("rep 9") for x in r.stdout.splitlines())


# --- the same file imported twice (docs/import.md, "The same file twice") ---
OSU = FIXTURES / "osu-7.4-latency.txt"
HELD = re.compile(r"already imported as run (\d+) \(same bytes, imported \d{4}-\d\d-\d\d \d\d:\d\d UTC\); "
                  r"--again imports it again$")


def refused(r, says: str) -> None:
    """One line, exit status 2, no traceback, saying `says`."""
    assert r.status == 2, (r.stdout, r.stderr)
    assert r.stderr.strip().count("\n") == 0 and "Traceback" not in r.stderr and says in r.stderr, r.stderr


@pytest.mark.both_stores
@pytest.mark.timeout(300)
def test_a_file_whose_bytes_the_store_holds_is_refused_and_nothing_of_the_command_is_stored(cli, tmp_path,
                                                                                            store_url):
    """Imported twice, a file's samples were pooled twice by compare and
    trend (n doubled, a CI narrower than the data supports)."""
    a = tmp_path / "a.txt"
    shutil.copy(OSU, a)
    assert cli("import", "--host", "n01", str(a)).status == 0
    assert store_rows(store_url, "select id, imported_sha256 from runs") == [
        (1, hashlib.sha256(a.read_bytes()).hexdigest())]
    before = counts(store_url)
    copy = tmp_path / "renamed.txt"
    shutil.copy(a, copy)
    other = str(FIXTURES / "osu-5.3-latency.txt")
    for args, path in ((["--host", "n01", str(a)], a),             # a second command, the same name
                       (["--label", "new", str(copy)], copy),       # the same bytes under another name
                       ([other, str(a)], a),                        # after a file never imported: not stored either
                       (["--dry-run", str(copy)], copy)):           # a dry run says it would be refused
        r = cli("import", *args)
        refused(r, f"{path}: already imported as run 1 (same bytes, imported ")
        assert HELD.search(r.stderr.strip()), r.stderr
        assert counts(store_url) == before
    r = cli("import", "--again", "--label", "second-look", str(copy))
    assert r.status == 0, r.stderr
    assert f"note: {copy}: already imported as run 1 (same bytes" in r.stderr and "imported again (--again)" in r.stderr
    assert store_rows(store_url, "select id, label from runs order by id") == [(1, None), (2, "second-look")]
    refused(cli("import", str(a)), f"{a}: already imported as runs 1, 2 (same bytes, imported ")


@pytest.mark.both_stores
@pytest.mark.timeout(300)
def test_a_file_given_twice_in_one_command_is_refused_unless_again(cli, tmp_path, store_url):
    assert cli("import", "--host", "n01", str(FIXTURES / "osu-5.3-latency.txt")).status == 0   # the store
    before = counts(store_url)
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    shutil.copy(OSU, a)
    shutil.copy(OSU, b)
    refused(cli("import", str(a), str(a)), f"{a}: given twice in this command; --again imports it again")
    refused(cli("import", str(a), str(b)),
            f"{b}: the same bytes as {a}, given before it in this command; --again imports it again")
    refused(cli("import", "--dry-run", str(b), str(a)), f"{a}: the same bytes as {b}, given before it")
    assert counts(store_url) == before
    r = cli("import", "--again", "--host", "n01", str(a), str(b))
    assert r.status == 0, r.stderr
    assert sorted(n for (n,) in store_rows(store_url, "select count(*) from runs group by imported_sha256")) == [1, 2]


@pytest.mark.both_stores
@pytest.mark.timeout(300)
def test_runs_imported_before_the_file_hash_was_kept_are_not_refused_against(cli, tmp_path, store_url):
    """A run imported before 0009 has no hash: nothing to compare it with."""
    engine = store_at(store_url, "0008")
    with engine.begin() as conn:
        conn.execute(sa.text("insert into runs (started, status, imported_from, kind) "
                             f"values ('2025-01-01', 'ok', 'OSU 7.4 text, file {OSU}', 'imported')"))
    engine.dispose()
    assert cli("import", "--host", "n01", str(OSU)).status == 0
    assert store_rows(store_url, "select version_num from alembic_version") == [("0012",)]
    assert store_rows(store_url, "select id, imported_sha256 is null, imported_at is null from runs order by id") == [
        (1, True, True), (2, False, False)]
    refused(cli("import", str(OSU)), f"{OSU}: already imported as run 2 (same bytes")


@pytest.mark.both_stores
@pytest.mark.timeout(300)
def test_a_repaired_damaged_file_imported_again_is_refused_with_or_without_an_unreadable_file(cli, tmp_path,
                                                                                             store_url):
    """A damaged IOR JSON file is repaired as it is read (lenient_json.py):
    the hash is of the bytes read, not of what the repairs made; given again
    beside a file that cannot be read, whichever refusal comes first, nothing
    is stored."""
    damaged = FIXTURES / "ior-4.0.0-damaged-commas.json"
    assert cli("import", str(damaged)).status == 0
    sha256 = hashlib.sha256(damaged.read_bytes()).hexdigest()
    assert store_rows(store_url, "select imported_sha256 from runs") == [(sha256,)]
    before = counts(store_url)
    broken = tmp_path / "broken.txt"
    broken.write_text("neither IOR nor any tool's output\n")
    for files, says in (([damaged], f"{damaged}: already imported as run 1"),
                        ([damaged, broken], f"{broken}: not any known format"),
                        ([broken, damaged], f"{broken}: not any known format"),
                        ([damaged, damaged, broken], f"{damaged}: given twice in this command")):
        refused(cli("import", *map(str, files)), says)
        assert counts(store_url) == before


def test_a_dry_run_where_there_is_no_store_yet_makes_none(cli, tmp_path, store_url):
    """--dry-run reads the store to say what would be refused; it never makes one."""
    r = cli("import", "--dry-run", str(OSU))
    assert r.status == 0 and "would store" in r.stdout, r.stderr
    assert not (tmp_path / "results.db").exists()


# Each racer enters `clusterbench import` at one agreed moment, its modules
# imported before: the two differ by milliseconds, against the second or so
# the first spends storing 10,000 rows between its look-up and its commit.
RACER = """
import sys, time
import clusterbench.cli, clusterbench.commands.import_files, clusterbench.importers.import_runs
import clusterbench.store.database, clusterbench.store.imported_run
start_at = float(sys.argv[1])
while time.time() < start_at:
    time.sleep(0.0005)
sys.argv = ["clusterbench", *sys.argv[2:]]
clusterbench.cli.main()
"""


@pytest.mark.both_stores
@pytest.mark.timeout(300)
def test_two_imports_of_one_file_at_the_same_moment_store_it_once(cli, cbk_bin, tmp_path, store_url):
    """Each import looked the file's hash up, then stored it: two started at
    once both looked before either had stored, and both stored it (the race
    docs/import.md admitted). The look-up is now inside the storing
    transaction, which another import of the same bytes waits for."""
    import os
    import subprocess
    import sys
    import time

    assert cli("import", "--host", "n01", str(FIXTURES / "osu-5.3-latency.txt")).status == 0   # the store
    env = {**os.environ, "CLUSTERBENCH_CBK": cbk_bin, "CLUSTERBENCH_DB": store_url, "COLUMNS": "200"}
    # twice, each with a file of its own (a race won by chance once is not a proof): with the look-up
    # outside the transaction, both imports stored the file on the first try, on both stores
    for attempt in range(2):
        path = osu_rows(tmp_path / f"osu-{attempt}.txt", 10_000 + attempt)
        sha256 = hashlib.sha256(open(path, "rb").read()).hexdigest()
        start_at = time.time() + 1.5
        racers = [subprocess.Popen([sys.executable, "-c", RACER, str(start_at), "import", "--host", "n02",
                                    "--date", "2024-01-01", path], env=env, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, text=True) for _ in range(2)]
        outcomes = sorted((p.wait(timeout=120), p.stdout.read(), p.stderr.read()) for p in racers)
        for p in racers:
            p.stdout.close()
            p.stderr.close()
        (ok, ok_out, _), (no, _, no_err) = outcomes
        held = store_rows(store_url, f"select id from runs where imported_sha256 = '{sha256}'")
        assert len(held) == 1, (attempt, outcomes)
        (run_id,), = held
        assert ok == 0 and f"stored as run {run_id}: {path}" in ok_out, outcomes
        assert no == 2 and no_err.strip().count("\n") == 0 and "Traceback" not in no_err, outcomes
        assert f"{path}: already imported as run {run_id} (same bytes, imported " in no_err, no_err
        assert HELD.search(no_err.strip()), no_err
