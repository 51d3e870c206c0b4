"""Reading and writing runs, steps, samples and environments.

Every write is its own short transaction, so a run killed at any moment
leaves what it measured so far and a consistent store; SQLite runs in WAL
mode with a busy timeout so two runs can write at once.
"""
from __future__ import annotations

import contextlib
import datetime as dt
import fcntl
import os
import socket
import weakref
from pathlib import Path
from typing import Any, Iterator

import sqlalchemy as sa
from sqlalchemy import event

from clusterbench import batchjob
from clusterbench.errors import BadInput
from clusterbench.sample import Sample
from clusterbench.store import revisions
from clusterbench.store.redact import mask_passwords, public_url
from clusterbench.store.revisions import MIGRATIONS
from clusterbench.store.schema import environments, run_hosts, runs, samples, steps


def default_url() -> str:
    """$CLUSTERBENCH_DB, else results.db in the user's data directory."""
    env = os.environ.get("CLUSTERBENCH_DB")
    if env:
        return env if "://" in env else f"sqlite:///{Path(env).resolve()}"
    from platformdirs import user_data_dir

    path = Path(user_data_dir("clusterbench")) / "results.db"
    return f"sqlite:///{path}"


def now() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc)


def _sqlite_pragmas(dbapi_conn, _record) -> None:
    cur = dbapi_conn.cursor()
    cur.execute("PRAGMA journal_mode=WAL")
    cur.execute("PRAGMA busy_timeout=60000")
    cur.execute("PRAGMA foreign_keys=ON")
    cur.close()


# pg_advisory_xact_lock key of the migrations: any fixed 64-bit number, the same in every clusterbench
MIGRATION_LOCK_KEY = 0x636C7573746572   # "cluster"


def with_driver(url: str) -> str:
    """postgresql:// means psycopg (3), the driver the [postgres] extra installs:
    SQLAlchemy 2.0 would otherwise look for psycopg2."""
    parsed = sa.engine.make_url(url)
    if parsed.drivername == "postgresql":
        return url.replace("postgresql://", "postgresql+psycopg://", 1)
    return url


@contextlib.contextmanager
def _migration_lock(url: sa.engine.URL) -> Iterator[None]:
    """Two first runs on a new SQLite file must not both create the tables
    (PostgreSQL takes an advisory lock in _migrate instead)."""
    if url.get_backend_name() != "sqlite" or not url.database or url.database == ":memory:":
        yield
        return
    with open(url.database + ".lock", "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        yield


class Store:
    def __init__(self, url: str | None = None, *, writing: bool = True):
        """writing: the command stores runs (it may create a new SQLite
        store); else a missing store is refused and a read-only one is read."""
        secret_url = with_driver(url or default_url())
        self.url = public_url(secret_url)   # the only form ever shown: no password
        self.read_only = False
        parsed = sa.engine.make_url(secret_url)
        target = None
        if parsed.get_backend_name() == "sqlite" and parsed.database and parsed.database != ":memory:":
            from clusterbench.store import sqlite_check

            # before any connection: a connection alone switches a foreign file to WAL mode
            target = sqlite_check.check(parsed.database, writing=writing,
                                        make_parent=url is None and "CLUSTERBENCH_DB" not in os.environ)
            if target.read_only_fs:
                self.read_only = True
                secret_url = f"sqlite:///{target.path.resolve().as_uri()}?mode=ro&immutable=1&uri=true"
        try:
            self.engine = sa.create_engine(secret_url)
        except (sa.exc.ArgumentError, ImportError) as e:
            raise BadInput(f"cannot use store URL {self.url}: {mask_passwords(str(e), secret_url)}") from None
        # connections closed when the store goes or at exit, not whenever a collection finds the pool:
        # closing the last one to a SQLite store checkpoints its -wal file and removes it (cli.main
        # freezes what is left at exit)
        weakref.finalize(self, self.engine.dispose)
        if self.read_only:
            return  # a known schema (checked), nothing to migrate, nothing to lock
        if parsed.get_backend_name() == "sqlite":
            event.listen(self.engine, "connect", _sqlite_pragmas)
        if target is not None and target.exists and target.revision == revisions.head():
            return  # up to date: no lock file, no transaction
        if parsed.get_backend_name() != "sqlite" and self._server_revision(secret_url) == revisions.head():
            return  # a database server's store, up to date: Alembic not imported either
        with _migration_lock(parsed):
            self._migrate(secret_url)

    def _server_revision(self, secret_url: str) -> str | None:
        """The schema revision of a store on a database server; None for a new one (no table yet)."""
        try:
            with self.engine.connect() as conn:
                return conn.execute(sa.text("select version_num from alembic_version")).scalar()
        except sa.exc.OperationalError as e:   # unreachable, refused: said once, as _migrate says it
            raise _unusable(self.url, e, secret_url) from None
        except sa.exc.DBAPIError:
            return None   # no alembic_version table: _migrate creates the store

    def _migrate(self, secret_url: str) -> None:
        # Alembic only here: a store already at the head never imports it (store/revisions.py)
        from alembic import command
        from alembic.config import Config

        cfg = Config()
        cfg.set_main_option("script_location", str(MIGRATIONS))
        try:
            with self.engine.begin() as conn:
                if conn.dialect.name == "postgresql":
                    # first runs at once on a new database: one creates the tables, the others wait for its
                    # commit and find them (else DuplicateTable / UniqueViolation); released at commit
                    conn.execute(sa.text("select pg_advisory_xact_lock(:key)"), {"key": MIGRATION_LOCK_KEY})
                cfg.attributes["connection"] = conn
                command.upgrade(cfg, "head")
        except sa.exc.OperationalError as e:
            raise _unusable(self.url, e, secret_url) from None

    # -- writing ---------------------------------------------------------
    def add_environment(self, env: dict, env_hash: str) -> str:
        with self.engine.begin() as c:
            if not c.execute(sa.select(environments.c.hash).where(environments.c.hash == env_hash)).first():
                try:
                    with c.begin_nested():
                        c.execute(environments.insert().values(hash=env_hash, captured=now(), data=env))
                except sa.exc.IntegrityError:
                    pass  # stored meanwhile by a concurrent run
        return env_hash

    def begin_run(self, *, label: str | None, command: str, suite: str | None, user: str | None = None) -> int:
        with self.engine.begin() as c:
            r = c.execute(runs.insert().values(
                label=label, user=user or _user(),
                host=socket.gethostname(), pid=os.getpid(), command=command, suite=suite,
                started=now(), status="running", batch_job=batchjob.current()))
            return r.inserted_primary_key[0]

    def link_host(self, run_id: int, host: str, env_hash: str) -> None:
        with self.engine.begin() as c:
            c.execute(run_hosts.insert().values(run_id=run_id, host=host, environment_hash=env_hash))

    def finish_run(self, run_id: int, status: str, message: str | None = None) -> None:
        with self.engine.begin() as c:
            c.execute(runs.update().where(runs.c.id == run_id).values(status=status, finished=now(), message=message))

    def begin_step(self, run_id: int, *, position: int, name: str | None, kernel: str, params: dict,
                   launcher: str, ranks: int, ranks_per_node: int | None) -> int:
        with self.engine.begin() as c:
            r = c.execute(steps.insert().values(
                run_id=run_id, position=position, name=name, kernel=kernel, params=params, launcher=launcher,
                ranks=ranks, ranks_per_node=ranks_per_node, status="running", started=now()))
            return r.inserted_primary_key[0]

    def finish_step(self, step_id: int, status: str, build: dict | None = None, message: str | None = None,
                    stop_reason: str | None = None) -> None:
        with self.engine.begin() as c:
            c.execute(steps.update().where(steps.c.id == step_id).values(
                status=status, finished=now(), build=build, message=message, stop_reason=stop_reason))

    def add_sample(self, step_id: int, sample: Sample | dict, warnings: list[str],
                   repetition_offset: int = 0) -> None:
        """Stores a measurement (a Sample, or a record dict read into one); the
        mode column holds what the mode column shows (Sample.condition)."""
        s = sample if isinstance(sample, Sample) else Sample.from_record(sample)
        with self.engine.begin() as c:
            c.execute(samples.insert().values(
                step_id=step_id, repetition=s.repetition + repetition_offset, phase=s.phase, mode=s.condition,
                value=s.value, unit=s.unit, seconds=s.seconds, bytes=s.bytes, ops=s.ops, warnings=warnings,
                record=s.record))

    def add_sample_warnings(self, sample_id: int, extra: list[str]) -> None:
        with self.engine.begin() as c:
            row = c.execute(sa.select(samples.c.warnings).where(samples.c.id == sample_id)).first()
            if row is not None:
                c.execute(samples.update().where(samples.c.id == sample_id)
                          .values(warnings=list(row.warnings) + extra))

    def add_imported_run(self, *, label: str | None, command: str | None, host: str | None,
                         started: dt.datetime, finished: dt.datetime | None, imported_from: str,
                         imported_steps: list, snapshots: dict[str, tuple[str, dict]]) -> int:
        """A run read from another tool's output, in one transaction: all of
        it is stored or none. imported_steps: clusterbench.importers.ImportedStep;
        snapshots: host -> (hash, environment snapshot)."""
        with self.engine.begin() as c:
            run_id = c.execute(runs.insert().values(
                label=label, user=None, host=host, pid=None, command=command, suite=None, started=started,
                finished=finished or started, status="ok", imported_from=imported_from)).inserted_primary_key[0]
            for env_hash, env in snapshots.values():
                if not c.execute(sa.select(environments.c.hash).where(environments.c.hash == env_hash)).first():
                    c.execute(environments.insert().values(hash=env_hash, captured=now(), data=env))
            for h, (env_hash, _) in snapshots.items():
                c.execute(run_hosts.insert().values(run_id=run_id, host=h, environment_hash=env_hash))
            for position, st in enumerate(imported_steps):
                step_id = c.execute(steps.insert().values(
                    run_id=run_id, position=position, name=st.name, kernel=st.kernel, params=st.params,
                    launcher="imported", ranks=st.ranks, ranks_per_node=st.ranks_per_node, status="ok",
                    started=started, finished=finished or started)).inserted_primary_key[0]
                for s in st.samples:
                    c.execute(samples.insert().values(
                        step_id=step_id, repetition=s.repetition, phase=s.phase, mode=s.condition, value=s.value,
                        unit=s.unit, seconds=s.seconds, bytes=s.bytes, ops=s.ops, warnings=list(s.warnings),
                        record=s.record))
        return run_id

    # -- reading ---------------------------------------------------------
    def reap_dead_runs(self) -> None:
        """A run still 'running' whose process on this host is gone was killed."""
        host = socket.gethostname()
        with self.engine.begin() as c:
            for row in c.execute(sa.select(runs.c.id, runs.c.pid).where(
                    runs.c.status == "running", runs.c.host == host)).all():
                if row.pid and not _alive(row.pid):
                    c.execute(runs.update().where(runs.c.id == row.id).values(
                        status="killed", message="the run's process ended without closing the run"))
                    c.execute(steps.update().where(steps.c.run_id == row.id, steps.c.status == "running")
                              .values(status="killed"))

    def list_runs(self, label: str | None = None, limit: int | None = None, *, user: str | None = None,
                  host: str | None = None, status: str | None = None, kernel: str | None = None,
                  since: dt.datetime | None = None, until: dt.datetime | None = None) -> list[Any]:
        """Runs newest first; each filter given narrows them (times are UTC, `until` exclusive)."""
        q = sa.select(runs).order_by(runs.c.id.desc())
        for column, value in ((runs.c.label, label), (runs.c.user, user), (runs.c.host, host),
                              (runs.c.status, status)):
            if value:
                q = q.where(column == value)
        if kernel:
            q = q.where(sa.exists().where(steps.c.run_id == runs.c.id, steps.c.kernel == kernel))
        if since:
            q = q.where(runs.c.started >= since)
        if until:
            q = q.where(runs.c.started < until)
        if limit:
            q = q.limit(limit)
        with self.engine.connect() as c:
            return c.execute(q).all()

    def prune(self, before: dt.datetime, *, keep_labels: bool = False, dry_run: bool = False) -> dict[str, int]:
        """Deletes runs started before `before` (not running ones; with keep_labels not labelled ones),
        their steps, samples and host links, then environments no run uses. One transaction.
        Returns how many rows of each went (or would go, with dry_run)."""
        doomed = sa.select(runs.c.id).where(runs.c.started < before, runs.c.status != "running")
        if keep_labels:
            doomed = doomed.where(runs.c.label.is_(None))
        doomed_steps = sa.select(steps.c.id).where(steps.c.run_id.in_(doomed))
        unused_env = sa.select(environments.c.hash).where(~sa.exists().where(
            run_hosts.c.environment_hash == environments.c.hash, run_hosts.c.run_id.not_in(doomed)))
        count = sa.func.count()
        with self.engine.begin() as c:
            n = {"runs": c.execute(sa.select(count).select_from(doomed.subquery())).scalar(),
                 "steps": c.execute(sa.select(count).select_from(doomed_steps.subquery())).scalar(),
                 "samples": c.execute(sa.select(count).where(samples.c.step_id.in_(doomed_steps))).scalar(),
                 "environments": c.execute(sa.select(count).select_from(unused_env.subquery())).scalar()}
            if not dry_run:
                c.execute(samples.delete().where(samples.c.step_id.in_(doomed_steps)))
                c.execute(steps.delete().where(steps.c.run_id.in_(doomed)))
                c.execute(run_hosts.delete().where(run_hosts.c.run_id.in_(doomed)))
                c.execute(runs.delete().where(runs.c.id.in_(doomed)))
                c.execute(environments.delete().where(~sa.exists().where(
                    run_hosts.c.environment_hash == environments.c.hash)))
        return n

    def resolve(self, ref: str) -> list[int]:
        """Run ids for a run id or a label (newest first)."""
        with self.engine.connect() as c:
            if ref.isdigit() and c.execute(sa.select(runs.c.id).where(runs.c.id == int(ref))).first():
                return [int(ref)]
            ids = [r.id for r in c.execute(sa.select(runs.c.id).where(runs.c.label == ref)
                                           .order_by(runs.c.id.desc())).all()]
        if not ids:
            raise BadInput(f"no run with id or label '{ref}' in {self.url} (see: clusterbench list)")
        return ids

    def run(self, run_id: int) -> Any:
        with self.engine.connect() as c:
            row = c.execute(sa.select(runs).where(runs.c.id == run_id)).first()
        if row is None:
            raise BadInput(f"no run {run_id} in {self.url}")
        return row

    def steps_of(self, run_id: int) -> list[Any]:
        with self.engine.connect() as c:
            return c.execute(sa.select(steps).where(steps.c.run_id == run_id).order_by(steps.c.position)).all()

    def samples_of(self, step_id: int) -> list[Sample]:
        with self.engine.connect() as c:
            rows = c.execute(sa.select(samples).where(samples.c.step_id == step_id).order_by(samples.c.id)).all()
        return [Sample.from_row(r) for r in rows]

    def environments_of(self, run_id: int) -> dict[str, dict]:
        with self.engine.connect() as c:
            rows = c.execute(sa.select(run_hosts.c.host, environments.c.data)
                             .join(environments, environments.c.hash == run_hosts.c.environment_hash)
                             .where(run_hosts.c.run_id == run_id)).all()
        return {r.host: r.data for r in rows}


def _unusable(url: str, e: sa.exc.OperationalError, secret_url: str) -> BadInput:
    why = " ".join(str(e.orig).split())   # the driver's hint on a second line: one line
    return BadInput(f"cannot open the store {url}: {mask_passwords(why, secret_url)}")


def _user() -> str | None:
    import getpass

    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
