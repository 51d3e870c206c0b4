"""Reading and writing runs, steps, samples and environments.

Every write is its own short transaction, so a run killed at any moment
leaves what it measured so far and a consistent store (an imported file, all
of its runs or none, is one transaction); SQLite runs in WAL mode with a
busy timeout so two runs can write at once.
"""
from __future__ import annotations

import contextlib
import datetime as dt
import fcntl
import functools
import os
import socket
import weakref
from pathlib import Path
from typing import Any, Iterator

from clusterbench.environment import batchjob
from clusterbench.errors import BadInput
from clusterbench.results.sample import Sample
from clusterbench.store import revisions, run_kinds
from clusterbench.store.disk_reserve import DiskReserve
from clusterbench.store.failures import Guarded, store_failures
from clusterbench.store.redact import mask_secrets, public_url, raw_at_in_password
from clusterbench.store.sqlite_url import path_url, sqlite_file

# SQLAlchemy is imported where a store needs it: a run on a SQLite store at the
# head revision stores through rows_sqlite and never imports it (docs/design.md).


def default_url() -> str:
    """$CLUSTERBENCH_DB, else results.db in the user's data directory."""
    env = os.environ.get("CLUSTERBENCH_DB")
    if env:
        return env if "://" in env else path_url(str(Path(env).resolve()))
    from platformdirs import user_data_dir

    path = Path(user_data_dir("clusterbench")) / "results.db"
    return path_url(str(path))


def now() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc)


def with_driver(url: str) -> str:
    """postgresql:// means psycopg (3), the driver the [postgres] extra installs:
    SQLAlchemy 2.0 would otherwise look for psycopg2."""
    if url.startswith("postgresql://"):
        return url.replace("postgresql://", "postgresql+psycopg://", 1)
    return url


@contextlib.contextmanager
def _migration_lock(database: str | None) -> Iterator[None]:
    """Two first runs on a new SQLite file must not both create the tables
    (PostgreSQL takes an advisory lock in engine.migrate instead). database:
    the SQLite file, None for a store without one."""
    if not database:
        yield
        return
    lock = database + ".lock"
    try:
        while True:
            with open(lock, "a") as f:
                fcntl.flock(f, fcntl.LOCK_EX)
                try:
                    if os.fstat(f.fileno()).st_ino != os.stat(lock).st_ino:
                        continue   # its holder migrated and removed it meanwhile: lock the name anew
                except FileNotFoundError:
                    continue
                try:
                    yield
                finally:
                    # removed while held, once the store is made: nothing is left
                    # beside the user's file, and sqlite_check (which waits on the
                    # lock file while it exists) finds a whole store without it
                    with contextlib.suppress(OSError):
                        os.unlink(lock)
                return
    except BaseException:
        # stopped (Ctrl-C) between making the file and the body above, where
        # nothing removed it: the lock file stayed beside the user's store
        _remove_if_free(lock)
        raise


def _remove_if_free(lock: str) -> None:
    """Removes the lock file if no process holds it. One that another
    process holds is its holder's to remove; one that nobody holds may go
    at any time: whoever opened it and then takes it finds the name no
    longer names its file, and locks the name anew (the loop above)."""
    try:
        fd = os.open(lock, os.O_RDONLY | os.O_CLOEXEC)   # never made here
    except OSError:
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        if os.fstat(fd).st_ino == os.stat(lock).st_ino:
            os.unlink(lock)
    except OSError:   # held by another process (BlockingIOError), or gone meanwhile
        pass
    finally:
        os.close(fd)


class Store:
    def __init__(self, url: str | None = None, *, writing: bool = True):
        """writing: the command stores runs (it may create a new SQLite
        store); else a missing store is refused and a read-only one is read."""
        secret_url = with_driver(url or default_url())
        from clusterbench.output.render_text import utf8_problem

        if utf8_problem(secret_url):   # a URL is text: SQLite's and SQLAlchemy's both
            raise BadInput(f"store {mask_secrets(secret_url)}: {utf8_problem(secret_url)}; give the store a UTF-8 name")
        self.url = public_url(secret_url)   # the only form ever shown: no secret
        if raw_at_in_password(secret_url):
            raise BadInput(f"store URL {self.url}: its password holds a raw '@'; write it as %40")
        self.read_only = False
        # run id -> status of each run this store closed, in order: what a stop may say was kept (run/runner.stop_line)
        self.closed_runs: dict[int, str] = {}
        self._secret_url = secret_url
        self._reserve = None
        with store_failures(self.url, secret_url):   # "disk I/O error" at open: one line
            self._open(url, secret_url, writing)
        self.rows = Guarded(self.rows, self.url, secret_url)

    def _open(self, url: str | None, secret_url: str, writing: bool) -> None:
        database = sqlite_file(secret_url)
        plain_file = database is not None
        if database is None and secret_url.startswith("sqlite"):
            from clusterbench.store.engine import url_of

            parsed = url_of(secret_url)   # a query string or a driver: SQLAlchemy reads it
            if str(parsed.query.get("uri", "false")).lower() not in ("false", "0", "no", "off"):
                # SQLite would open another file than the one checked here (without file: it takes
                # "F?mode=ro" as the name: a stray file), and the checks below would judge the wrong file
                raise BadInput(f"cannot use store URL {self.url}: SQLite URI filenames (uri=true) are not taken; "
                               "give the file's path (a store on a read-only file system is read as it is)")
            database = parsed.database if parsed.database != ":memory:" else None
            if not database:   # `run` said "stored as run 1 in sqlite:///:memory:" of a run gone at its exit
                raise BadInput(f"cannot use store URL {self.url}: an SQLite database in memory keeps nothing past "
                               "this command; give a file (a path or sqlite:///PATH)")
        target = None
        if database:
            from clusterbench.store import sqlite_check

            # before any connection: a connection alone switches a foreign file to WAL mode
            target = sqlite_check.check(database, writing=writing,
                                        make_parent=url is None and "CLUSTERBENCH_DB" not in os.environ)
            if target.read_only:
                self.read_only = True
                immutable = "&immutable=1" if target.immutable else ""   # sqlite_check.py says when
                self._secret_url = f"sqlite:///{target.path.resolve().as_uri()}?mode=ro{immutable}&uri=true"
        if writing and target is not None and not self.read_only:
            self._reserve = DiskReserve(str(target.path.resolve().parent))   # room to close a run on a full disk
            weakref.finalize(self, self._reserve.close)
        current = target is not None and target.exists and target.revision == revisions.head()
        if plain_file and current and not self.read_only:
            # up to date: no lock file, no transaction, and no SQLAlchemy unless a query needs it
            from clusterbench.store.rows_sqlite import SqliteRows

            self.rows = SqliteRows(database)
            weakref.finalize(self, self.rows.close)
            return
        if plain_file and not target.exists and not self.read_only and self._from_template(database):
            return
        from clusterbench.store import engine as store_engine
        from clusterbench.store.rows_alchemy import AlchemyRows

        self.rows = AlchemyRows(self.engine)
        if self.read_only:
            return  # a known schema (checked), nothing to migrate, nothing to lock
        if current:
            return
        on_server = not secret_url.startswith("sqlite")
        if on_server:
            revision = store_engine.server_revision(self.engine, self.url, secret_url)
            if revision == revisions.head():
                return  # a database server's store, up to date: Alembic not imported either
            if revision is None and not writing:
                # as a missing SQLite file: reading creates no tables in a database it was pointed at
                raise BadInput(f"no store in {self.url} (no clusterbench tables yet: a run creates them; "
                               f"check the database name)")
        url = store_engine.url_of(secret_url)
        on_file = url.get_backend_name() == "sqlite" and url.database and url.database != ":memory:"
        with _migration_lock(url.database if on_file else None):
            store_engine.migrate(self.engine, self.url, secret_url)

    def _from_template(self, database: str) -> bool:
        """A new plain SQLite store, made as a copy of the template store
        (store/template.py) under the migration lock; False where another
        first run made it meanwhile or there is no template (then it is
        migrated)."""
        from clusterbench.store import template
        from clusterbench.store.rows_sqlite import SqliteRows

        with _migration_lock(database):
            if not template.fill(database):
                return False
        self.rows = SqliteRows(database)
        weakref.finalize(self, self.rows.close)
        return True

    @functools.cached_property
    def engine(self):
        """SQLAlchemy's engine, made when first needed (a run on a current SQLite store never does)."""
        from clusterbench.store.engine import make_engine

        engine = make_engine(self._secret_url, self.url, read_only=self.read_only)
        # connections closed when the store goes or at exit, not whenever a collection finds the pool:
        # closing the last one to a SQLite store checkpoints its -wal file and removes it (cli.main
        # freezes what is left at exit)
        weakref.finalize(self, engine.dispose)
        return engine

    def release_reserve(self) -> bool:
        """Frees the room kept to close a run on a full disk (disk_reserve.py);
        True if there was some."""
        return self._reserve is not None and self._reserve.release()

    # -- writing: each its own short transaction -------------------------
    def add_environment(self, env: dict, env_hash: str) -> str:
        self.rows.insert_absent("environments", {"hash": env_hash, "captured": now(), "data": env})
        return env_hash

    def begin_run(self, *, label: str | None, command: str, suite: str | None, user: str | None = None,
                  kind: str = run_kinds.MEASURED) -> int:
        if kind not in run_kinds.KINDS:
            raise ValueError(f"no run kind {kind!r} (kinds: {', '.join(run_kinds.KINDS)})")
        return self.rows.insert("runs", {
            "label": label, "user": user or _user(), "host": socket.gethostname(), "pid": os.getpid(),
            "command": command, "suite": suite, "started": now(), "status": "running",
            "batch_job": batchjob.current(), "kind": kind})

    def unclosed_run_of_this_process(self) -> int | None:
        """The newest run this process began and has not closed, found by
        its host and pid: what begin_run stored when a stop cut it short
        after the row was committed but before its id was returned."""
        mine = self.rows.select("runs", {"status": "running", "host": socket.gethostname(), "pid": os.getpid()})
        return max((r.id for r in mine), default=None)

    def link_host(self, run_id: int, host: str, env_hash: str) -> None:
        self.rows.insert("run_hosts", {"run_id": run_id, "host": host, "environment_hash": env_hash})

    def finish_run(self, run_id: int, status: str, message: str | None = None) -> None:
        if status != "ok":
            # a step whose row was written but which the stop or failure reached before the code that
            # closes it (its launch not started yet, or a second Ctrl-C during its stop): not left running
            self.rows.update("steps", {"run_id": run_id, "status": "running"}, {"status": status, "finished": now()})
        self.rows.update("runs", {"id": run_id}, {"status": status, "finished": now(), "message": message})
        self.closed_runs[run_id] = status

    def begin_step(self, run_id: int, *, position: int, name: str | None, kernel: str, params: dict,
                   launcher: str, ranks: int, ranks_per_node: int | None, host: str | None = None,
                   swept: list[str] | None = None) -> int:
        """host: the one node a per-node step runs on (run cluster); None where the launcher places the ranks.
        swept: the names that tell the step from its siblings (plan.Step.swept), [] outside a sweep;
        None where not known (its name's bracket is read instead, results/step_words.py)."""
        return self.rows.insert("steps", {
            "run_id": run_id, "position": position, "name": name, "kernel": kernel, "params": params,
            "launcher": launcher, "ranks": ranks, "ranks_per_node": ranks_per_node, "status": "running",
            "started": now(), "host": host, "swept": swept})

    def finish_step(self, step_id: int, status: str, build: dict | None = None, message: str | None = None,
                    stop_reason: str | None = None) -> None:
        self.rows.update("steps", {"id": step_id}, {
            "status": status, "finished": now(), "build": build, "message": message, "stop_reason": stop_reason})

    def add_sample(self, step_id: int, sample: Sample | dict, warnings: list[str],
                   repetition_offset: int = 0) -> None:
        """Stores a measurement (a Sample, or a record dict read into one); the
        mode column holds what the mode column shows (Sample.condition)."""
        s = sample if isinstance(sample, Sample) else Sample.from_record(sample)
        self.rows.insert("samples", {
            "step_id": step_id, "repetition": s.repetition + repetition_offset, "phase": s.phase,
            "mode": s.condition, "value": s.value, "unit": s.unit, "seconds": s.seconds, "bytes": s.bytes,
            "ops": s.ops, "warnings": warnings, "record": s.record})

    def add_sample_warnings(self, sample_id: int, extra: list[str]) -> None:
        # read then written by the run that owns the sample, the only writer of its warnings
        for row in self.rows.select("samples", {"id": sample_id}):
            self.rows.update("samples", {"id": sample_id}, {"warnings": list(row.warnings) + extra})

    def add_imported_file(self, runs: list[dict], *, imported_sha256: str | None = None,
                          again: bool = False) -> list[int]:
        """The runs read from one file of another tool's output, in one
        transaction that first looks the file's hash up (unless again: raises
        imported_run.AlreadyImported), through the row layer (store/imported_run.py)."""
        from clusterbench.store import imported_run

        with store_failures(self.url, self._secret_url, refusals=True):
            return imported_run.write_file(self.rows.rows, runs, captured=now(), imported_sha256=imported_sha256,
                                           again=again)

    # -- reading ---------------------------------------------------------
    def runs_imported_from(self, sha256: str) -> list[Any]:
        """The runs imported from a file of these bytes (runs.imported_sha256, 0009), oldest first."""
        return self.rows.select("runs", {"imported_sha256": sha256}, order_by="id")

    def reap_dead_runs(self) -> None:
        """A run still 'running' whose process on this host is gone was killed."""
        for row in self.rows.select("runs", {"status": "running", "host": socket.gethostname()}):
            if row.pid and not _alive(row.pid, row.started):
                # each update only touches what is still running: two commands reaping at once agree
                self.rows.update("runs", {"id": row.id, "status": "running"}, {
                    "status": "killed", "message": "the run's process ended without closing the run"})
                self.rows.update("steps", {"run_id": row.id, "status": "running"}, {"status": "killed"})

    def list_runs(self, label: str | None = None, limit: int | None = None, **filters) -> list[Any]:
        """Runs newest first; each filter given narrows them (store/queries.py)."""
        from clusterbench.store import queries

        with store_failures(self.url, self._secret_url):
            return queries.list_runs(self.engine, label, limit, **filters)

    def run_values(self, column: str) -> list[str]:
        """The distinct labels, users or hosts of the stored runs (store/queries.py)."""
        from clusterbench.store import queries

        with store_failures(self.url, self._secret_url):
            return queries.run_values(self.engine, column)

    def run_details(self, since: dt.datetime | None = None) -> dict[str, dict[int, Any]]:
        """Kernels, bytes written and failed step's message per run (store/queries.py)."""
        from clusterbench.store import queries

        with store_failures(self.url, self._secret_url):
            return queries.run_details(self.engine, since)

    def size_bytes(self) -> int | None:
        """The database's size on disk (store/queries.py), None for a dialect that cannot say."""
        from clusterbench.store import queries

        with store_failures(self.url, self._secret_url):
            return queries.size_bytes(self.engine)

    def prune(self, before: dt.datetime | None = None, *, run_ids: list[int] | None = None, keep_labels: bool = False,
              dry_run: bool = False) -> dict[str, int]:
        """Deletes runs started before `before`, or the runs run_ids, and what only they use (store/queries.py)."""
        from clusterbench.store import queries

        with store_failures(self.url, self._secret_url):
            return queries.prune(self.engine, before, run_ids=run_ids, keep_labels=keep_labels, dry_run=dry_run)

    def resolve(self, ref: str) -> list[int]:
        """Run ids for a run id or a label (newest first), through the row
        layer: show and export of a SQLite store need no SQLAlchemy. A ref
        that is both a run's id and another's label (stored before such
        labels were refused, storable.check_label) is refused: taken as the
        id, `prune 7` deleted run 7 where the user meant the runs labelled 7."""
        from clusterbench.store.run_ref import run_id_of

        run_id = run_id_of(ref)
        by_id = [run_id] if run_id is not None and self.rows.select("runs", {"id": run_id}) else []
        ids = sorted((r.id for r in self.rows.select("runs", {"label": ref})), reverse=True)
        if by_id and ids:
            raise BadInput(f"'{ref}' is run {run_id}'s id and the label of run(s) {', '.join(map(str, ids))}"
                           f" in {self.url}: name the labelled runs by their ids")
        if not by_id and not ids:
            raise BadInput(f"no run with id or label '{ref}' in {self.url} (see: clusterbench list)")
        return by_id or ids

    def run(self, run_id: int) -> Any:
        rows = self.rows.select("runs", {"id": run_id})
        if not rows:
            raise BadInput(f"no run {run_id} in {self.url}")
        return rows[0]

    def steps_of(self, run_id: int) -> list[Any]:
        return self.rows.select("steps", {"run_id": run_id}, order_by="position")

    def samples_of(self, step_id: int) -> list[Sample]:
        return [Sample.from_row(r) for r in self.rows.select("samples", {"step_id": step_id}, order_by="id")]

    def environment_hashes_of(self, run_id: int) -> frozenset[tuple[str, str]]:
        """(host, environment hash) of each host of the run: which snapshots it ran in, not read."""
        return frozenset((link.host, link.environment_hash) for link in self.rows.select("run_hosts", {"run_id": run_id}))

    def environments_of(self, run_id: int) -> dict[str, dict]:
        out = {}
        for link in self.rows.select("run_hosts", {"run_id": run_id}):
            for env in self.rows.select("environments", {"hash": link.environment_hash}):
                out[link.host] = env.data
        return out


def _user() -> str | None:
    import getpass

    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return None


# How much later than its run's row the process that wrote it may seem to have
# started: its start is read as boot time + ticks, and a clock set forward since
# moves the boot time with it. Generous, since a live run taken for dead is marked
# killed under its user; a pid reused within this of a dead run's start is missed.
PROCESS_START_SLACK_S = 60


def _alive(pid: int, started: dt.datetime) -> bool:
    """Whether the process that began a run at `started` is still there. A
    process with its pid that started after the run began is another one:
    the pid was reused, after a reboot (a node's power lost mid-run) or in
    a container, where each clusterbench may be pid 1 of its own namespace,
    and the dead run stayed `running` for good (`list --status running`)."""
    import psutil

    try:
        process_started = psutil.Process(pid).create_time()
    except psutil.NoSuchProcess:
        return False
    except psutil.Error:
        return True   # a process there that cannot be read: not ours to call dead
    if started.tzinfo is None:   # SQLite keeps the UTC time without its zone
        started = started.replace(tzinfo=dt.timezone.utc)
    return process_started <= started.timestamp() + PROCESS_START_SLACK_S
