"""The SQLAlchemy engine of a store, and what needs one: a database server's
schema revision, and the migrations (Alembic). Imported only when a store
needs SQLAlchemy (store/database.py says when)."""
from __future__ import annotations

import contextlib
import logging
import warnings
from typing import Iterator

import sqlalchemy as sa
from sqlalchemy import event

from clusterbench.errors import BadInput
from clusterbench.store.redact import mask_secrets
from clusterbench.store.revisions import MIGRATIONS

# pg_advisory_xact_lock key of the migrations: any fixed 64-bit number, the same in every clusterbench
MIGRATION_LOCK_KEY = 0x636C7573746572   # "cluster"


def _sqlite_pragmas(dbapi_conn, _record) -> None:
    cur = dbapi_conn.cursor()
    cur.execute("PRAGMA journal_mode=WAL")
    cur.execute("PRAGMA busy_timeout=60000")
    cur.execute("PRAGMA foreign_keys=ON")
    cur.close()


def _utc_session(dbapi_conn, _record) -> None:
    """A PostgreSQL session reads timestamps in UTC, whatever the server's or
    the database's TimeZone: psycopg converts each timestamptz to the
    session's zone, and a run dated year 1 (an older import --date
    0001-01-01) west of UTC is '0001-12-31 19:00-05 BC', which it refuses
    (DataError, 'timestamp too small'): every list and show of the store
    was a traceback. The store keeps and prints UTC anyway."""
    cur = dbapi_conn.cursor()
    cur.execute("SET TIME ZONE 'UTC'")
    cur.close()
    dbapi_conn.commit()   # the SET began a transaction (the driver's autocommit is off): it must not stay open


def _reader_args(secret_url: str, read_only: bool) -> dict:
    """A read-only SQLite store may be another user's being written: its statements wait out the
    owner's commits (store/sqlite_reader.py)."""
    if not (read_only and secret_url.startswith("sqlite")):
        return {}
    from clusterbench.store.sqlite_reader import ReaderConnection

    return {"connect_args": {"factory": ReaderConnection}}


def make_engine(secret_url: str, shown_url: str, *, read_only: bool) -> sa.engine.Engine:
    try:
        with warnings.catch_warnings():
            # SQLAlchemy warns, and goes on, about what it will ignore in a URL (sqlite:///F?mode=ro
            # without uri=true): the store would be used other than as asked (mode=ro, then a run wrote)
            warnings.simplefilter("error", sa.exc.SAWarning)
            engine = sa.create_engine(secret_url, **_reader_args(secret_url, read_only))
    except sa.exc.SAWarning as e:
        why = mask_secrets(str(e).split(" (Background on this")[0], secret_url)
        raise BadInput(f"cannot use store URL {shown_url}: {why}") from None
    except (sa.exc.ArgumentError, ImportError, ValueError) as e:
        why = "its port is not a number" if "int()" in str(e) else mask_secrets(str(e), secret_url)
        if isinstance(e, sa.exc.NoSuchModuleError):   # "Can't load plugin: sqlalchemy.dialects:foo"
            kind = secret_url.split(":", 1)[0]
            why = (f"no kind of store is called '{kind}' (a store is a file path, sqlite:///PATH or "
                   f"postgresql+psycopg://USER@HOST[:PORT]/DATABASE)")
        raise BadInput(f"cannot use store URL {shown_url}: {why}") from None
    if engine.dialect.name == "sqlite" and not read_only:
        event.listen(engine, "connect", _sqlite_pragmas)
    if engine.dialect.name == "postgresql":
        # psycopg logs "error ignored terminating <psycopg.Pipeline ...>" when an executemany's
        # pipeline ends after the error that stopped it, which the command says in one line already
        logging.getLogger("psycopg").addHandler(logging.NullHandler())
        event.listen(engine, "connect", _utc_session)
    return engine


def url_of(secret_url: str) -> sa.engine.URL:
    return sa.engine.make_url(secret_url)


def server_revision(engine: sa.engine.Engine, shown_url: str, secret_url: str) -> str | None:
    """The schema revision of a store on a database server; None for a new one (no table yet)."""
    try:
        with engine.connect() as conn:
            return conn.execute(sa.text("select version_num from alembic_version")).scalar()
    except sa.exc.OperationalError as e:   # unreachable, refused: said once, as migrate says it
        raise unusable(shown_url, e, secret_url) from None
    except sa.exc.DBAPIError:
        return None   # no alembic_version table: migrate creates the store


def migrate(engine: sa.engine.Engine, shown_url: str, secret_url: str) -> None:
    # Alembic only here: a store already at the head never imports it (store/revisions.py)
    from alembic import command
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    try:
        with _one_transaction(engine) as conn:
            if conn.dialect.name == "postgresql":
                # first runs at once on a new database: one creates the tables, the others wait for its
                # commit and find them (else DuplicateTable / UniqueViolation); released at commit
                conn.execute(sa.text("select pg_advisory_xact_lock(:key)"), {"key": MIGRATION_LOCK_KEY})
            cfg.attributes["connection"] = conn
            command.upgrade(cfg, "head")
    except sa.exc.OperationalError as e:
        raise unusable(shown_url, e, secret_url) from None


@contextlib.contextmanager
def _one_transaction(engine: sa.engine.Engine) -> Iterator[sa.engine.Connection]:
    """Every migration to the head in one transaction: all of them or none.
    PostgreSQL's DDL is transactional as it is. Python's sqlite3 module
    begins a transaction only before INSERT/UPDATE/DELETE, so each ALTER
    TABLE before the first of them was committed on its own: an upgrade
    stopped midway (Ctrl-C, kill) left an old store with 0002's column and
    0001's version, which every later open failed on ("duplicate column
    name: stop_reason"). SQLite's DDL is transactional too when the
    transaction is begun by hand: the driver's own handling is switched off
    (AUTOCOMMIT) and BEGIN IMMEDIATE takes the write lock for the whole
    upgrade."""
    if engine.dialect.name != "sqlite":
        with engine.begin() as conn:
            yield conn
        return
    with engine.connect() as conn:
        conn = conn.execution_options(isolation_level="AUTOCOMMIT")
        conn.exec_driver_sql("BEGIN IMMEDIATE")
        try:
            yield conn
        except BaseException:
            if conn.connection.dbapi_connection.in_transaction:   # SQLite ends some failed ones itself
                conn.exec_driver_sql("ROLLBACK")
            raise
        conn.exec_driver_sql("COMMIT")


def unusable(url: str, e: sa.exc.OperationalError, secret_url: str) -> BadInput:
    why = " ".join(str(e.orig).split())   # the driver's hint on a second line: one line
    return BadInput(f"cannot open the store {url}: {mask_secrets(why, secret_url)}")
