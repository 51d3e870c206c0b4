"""--repeat auto and its recorded stopping rule; store migrations from old versions."""
from __future__ import annotations

import sqlalchemy as sa
import pytest


def rows(url: str, sql: str) -> list:
    with sa.create_engine(url).connect() as c:
        return c.execute(sa.text(sql)).all()


@pytest.mark.timeout(120)
def test_repeat_auto_stops_on_the_ci_and_says_so(cli, store_url):
    # 0.2 s sleeps: a loaded machine wakes a sleeper milliseconds late, which
    # spread 20 ms sleeps past a 20 % interval in 30 repetitions (seen at load 10)
    r = cli("run", "null", "--seconds=0.2", "--repeat", "auto", "--ci-target", "20")
    assert r.status == 0, r.stderr
    ((reason,),) = rows(store_url, "select stop_reason from steps")
    assert reason.startswith("ci: ") and "target 20%" in reason
    n = rows(store_url, "select count(*), max(repetition) from samples")[0]
    assert n[0] >= 6 and n[1] == n[0] - 1  # repetitions numbered on across batches


@pytest.mark.timeout(120)
def test_repeat_auto_stops_at_max_repeat_when_the_ci_is_out_of_reach(cli, store_url):
    r = cli("run", "null", "--seconds=0.001", "--repeat", "auto", "--ci-target", "0.1", "--max-repeat", "8")
    assert r.status == 0, r.stderr
    ((reason,),) = rows(store_url, "select stop_reason from steps")
    assert reason.startswith("max-repeat: 8") or reason.startswith("ci: ")
    if reason.startswith("max-repeat"):
        assert rows(store_url, "select count(*) from samples") == [(8,)]


@pytest.mark.parametrize("value", ["0", "many", "-3"])
def test_bad_repeat_is_bad_input(cli, value):
    r = cli("run", "null", "--repeat", value)
    assert r.status == 2 and "--repeat" in r.stderr


@pytest.mark.both_stores
def test_a_version_0001_store_is_upgraded_keeping_its_runs(store_url):
    from alembic import command
    from alembic.config import Config

    from clusterbench.store import Store
    from clusterbench.store.revisions import MIGRATIONS

    url = store_url
    engine = sa.create_engine(url)
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    with engine.begin() as conn:
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, "0001")
        conn.execute(sa.text("insert into runs (label, started, status) values ('old', '2025-01-01', 'ok')"))
        conn.execute(sa.text("insert into steps (run_id, position, kernel, params, launcher, ranks, status, started) "
                             "values (1, 0, 'seqio', '{}', 'local', 1, 'ok', '2025-01-01')"))
    assert "stop_reason" not in {c["name"] for c in sa.inspect(engine).get_columns("steps")}
    store = Store(url)
    assert "stop_reason" in {c["name"] for c in sa.inspect(store.engine).get_columns("steps")}
    assert [r.label for r in store.list_runs()] == ["old"]
    assert store.steps_of(1)[0].stop_reason is None
    assert store.list_runs()[0].batch_job is None
    assert store.list_runs()[0].imported_from is None   # 0004: a run stored before it was measured
    assert store.list_runs()[0].imported_sha256 is None   # 0009: nor has it a file's hash
    assert rows(url, "select version_num from alembic_version") == [("0012",)]


@pytest.mark.both_stores
def test_a_sweep_step_stored_before_0012_keeps_no_swept_names_and_its_title_is_read_from_its_name(store_url, cbk_bin,
                                                                                                monkeypatch):
    """0012 stores which parameters a step swept (steps.swept); a step stored before it has only its
    name, NULL there, and the reports read its name's bracket as they did before."""
    from conftest import store_at

    from clusterbench.report.data import load_run, step_title
    from clusterbench.store import Store

    monkeypatch.setenv("CLUSTERBENCH_CBK", cbk_bin)
    engine = store_at(store_url, "0011")
    with engine.begin() as conn:
        conn.execute(sa.text("insert into runs (label, started, status) values ('old', '2025-01-01', 'ok')"))
        conn.execute(sa.text("insert into steps (run_id, position, name, kernel, params, launcher, ranks, status, "
                             "started) values (1, 0, 'burst [bytes=2m]', 'null', '{\"bytes\": \"2m\"}', 'local', 1, "
                             "'ok', '2025-01-01')"))
    engine.dispose()
    store = Store(store_url)
    assert rows(store_url, "select version_num from alembic_version") == [("0012",)]
    assert store.steps_of(1)[0].swept is None
    (step,) = load_run(store, 1)["steps"]
    assert step["name"] == "burst [bytes=2m]" and step_title(step) == "burst, bytes 2 MiB"


# stops the upgrade in 0005 (it canonicalises each step's parameters), after 0002-0004 added their columns
_STOPPED_UPGRADE = """
import os, signal, sys
signal.signal(signal.SIGINT, signal.default_int_handler)   # the suite may run with SIGINT ignored (a CI job's &)
from clusterbench.results import params
def stop(*_args):
    os.kill(os.getpid(), signal.{sig})
    raise AssertionError("the signal did not stop the upgrade")
params.canonical = stop
from clusterbench.store import Store
Store(sys.argv[1])
"""


@pytest.mark.timeout(120)
@pytest.mark.parametrize("sig", ["SIGINT", "SIGKILL"])
def test_an_upgrade_stopped_midway_leaves_the_old_store_as_it_was_and_the_next_open_upgrades_it(tmp_path, sig):
    """SQLite committed each ALTER TABLE of an upgrade on its own: a Ctrl-C
    or a kill during the upgrade of an old store left 0002's column with
    0001's version, and every later command failed on "duplicate column
    name: stop_reason". The upgrade is one transaction now."""
    import signal
    import subprocess
    import sys

    from conftest import store_at

    url = f"sqlite:///{tmp_path / 'old.db'}"
    engine = store_at(url, "0001")
    with engine.begin() as conn:
        conn.execute(sa.text("insert into runs (label, started, status) values ('old', '2025-01-01', 'ok')"))
        conn.execute(sa.text("insert into steps (run_id, position, kernel, params, launcher, ranks, status, started) "
                             "values (1, 0, 'seqio', '{\"file-size\": \"1g\"}', 'local', 1, 'ok', '2025-01-01')"))
    engine.dispose()
    schema = "select type, name, sql from sqlite_master order by name"
    before = rows(url, schema)

    r = subprocess.run([sys.executable, "-c", _STOPPED_UPGRADE.format(sig=sig), url], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == -getattr(signal, sig), r.stderr

    assert rows(url, "select version_num from alembic_version") == [("0001",)]
    assert rows(url, schema) == before
    from clusterbench.store import Store

    store = Store(url)
    assert [run.label for run in store.list_runs()] == ["old"]
    assert rows(url, "select version_num from alembic_version") == [("0012",)]


@pytest.mark.parametrize("env, expected", [
    ({}, None),
    ({"SLURM_JOB_ID": "1234"}, "slurm 1234"),
    ({"SLURM_JOB_ID": "1240", "SLURM_ARRAY_JOB_ID": "1234", "SLURM_ARRAY_TASK_ID": "6"}, "slurm 1234_6"),
    ({"JOB_ID": "77", "SGE_ROOT": "/opt/sge", "SGE_TASK_ID": "undefined"}, "sge 77"),
    ({"JOB_ID": "77", "SGE_ROOT": "/opt/sge", "SGE_TASK_ID": "3"}, "sge 77.3"),
    ({"JOB_ID": "77"}, None),  # a JOB_ID without Grid Engine around it is someone else's variable
    ({"PBS_JOBID": "42.head"}, "pbs 42.head"),
])
def test_the_batch_job_is_named_from_the_schedulers_variables(env, expected):
    from clusterbench.environment import batchjob

    assert batchjob.current(env) == expected


@pytest.mark.parametrize("values, done, elapsed_s, expected", [
    # 8 values within +-1 %: the CI [x(2), x(7)] is 1 % of the median -> the CI rule
    ([100.0, 100.5, 99.5, 100.2, 99.8, 100.1, 99.9, 100.3], 8, 1.0, "ci: "),
    # spread +-50 %: the CI cannot reach 5 %; the count limit is hit first
    ([50.0, 150.0, 100.0, 60.0, 140.0, 90.0, 110.0, 70.0], 8, 1.0, "max-repeat: 8"),
    # same spread, fewer repetitions but out of time
    ([50.0, 150.0, 100.0, 60.0, 140.0, 90.0], 6, 5.0, "max-time: 5 s after 6"),
    # neither: go on
    ([50.0, 150.0, 100.0, 60.0, 140.0, 90.0], 6, 1.0, None),
    # under 6 values there is no 95 % CI: never the CI rule, however tight
    ([100.0] * 5, 5, 1.0, None),
    # figures all 0 (a CI of no width around a median of 0): the CI rule, not max-repeat
    ([0.0] * 6, 6, 1.0, "ci: 95 % CI within 0.0% of the median"),
    # a median of 0 with a CI of some width: no relative width reaches a target
    ([-1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 2.0], 8, 1.0, "max-repeat: 8"),
])
def test_auto_stop_rules(values, done, elapsed_s, expected):
    from clusterbench.run.plan import AutoRepeat
    from clusterbench.run.step_engine import auto_stop

    reason = auto_stop(AutoRepeat(ci_target=0.05, max_repeat=8, max_seconds=4.0), {("write", None): values},
                       done, elapsed_s)
    if expected is None:
        assert reason is None
    else:
        assert reason.startswith(expected), reason


def test_the_head_revision_read_from_the_files_is_alembics():
    """store/revisions.py reads the migration files without Alembic (to keep
    its import off every command); it must answer what Alembic answers."""
    from alembic.script import ScriptDirectory

    from clusterbench.store import revisions

    alembic_view = ScriptDirectory(str(revisions.MIGRATIONS))
    assert revisions.head() == alembic_view.get_current_head()
    assert revisions.known() == {r.revision for r in alembic_view.walk_revisions()}


def test_a_new_migration_file_becomes_the_head_and_a_branch_is_refused(tmp_path):
    from clusterbench.store import revisions

    versions = tmp_path / "versions"
    versions.mkdir()
    for name in ("0001_a.py", "0002_b.py"):
        (versions / name).write_text((revisions.MIGRATIONS / "versions" / name.replace("_a", "_initial")
                                      .replace("_b", "_stop_reason")).read_text())
    assert revisions.head(tmp_path) == "0002"
    (versions / "0003_c.py").write_text('"""c"""\nrevision = "0003"\ndown_revision = ("0002",)\nx = len("y")\n')
    revisions.parents.cache_clear()
    assert revisions.head(tmp_path) == "0003" and revisions.known(tmp_path) == {"0001", "0002", "0003"}
    (versions / "0004_d.py").write_text('revision = "0004"\ndown_revision = "0002"\n')
    revisions.parents.cache_clear()
    with pytest.raises(RuntimeError, match="2 heads"):
        revisions.head(tmp_path)
    revisions.parents.cache_clear()


@pytest.mark.both_stores
def test_a_run_on_a_current_store_does_not_import_alembic(cli, store_url):
    """Alembic's runtime costs 0.15 s per command; only a migration needs it.
    On a SQLite store the run imports no SQLAlchemy either (0.15-0.2 s):
    store/rows_sqlite.py stores it, and the result table is read back there."""
    first = cli("run", "null", "--seconds=0.001", "--repeat", "1", "--quiet", env={"PYTHONPROFILEIMPORTTIME": "1"})
    second = cli("run", "null", "--seconds=0.001", "--repeat", "1", "--quiet", env={"PYTHONPROFILEIMPORTTIME": "1"})
    assert first.status == 0 and second.status == 0, first.stderr + second.stderr
    imported = {line.rsplit("|", 1)[1].strip() for line in second.stderr.splitlines()
                if line.startswith("import time:")}
    assert "alembic" not in imported and "clusterbench.store.database" in imported
    if not store_url.startswith("sqlite"):   # a new SQLite file is a copy of the template store (test_store_template)
        assert "alembic" in first.stderr   # the new store was created by its migrations
    if store_url.startswith("sqlite"):
        shown = cli("run", "null", "--seconds=0.001", "--repeat", "2", env={"PYTHONPROFILEIMPORTTIME": "1"})
        for r in (second, shown):
            imported = {line.rsplit("|", 1)[1].strip() for line in r.stderr.splitlines()
                        if line.startswith("import time:")}
            assert "sqlalchemy" not in imported and "clusterbench.store.rows_sqlite" in imported
        assert "null" in shown.stdout and "MiB/s" in shown.stdout   # the table, read back without SQLAlchemy
