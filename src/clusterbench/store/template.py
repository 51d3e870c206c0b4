"""A new SQLite store is a copy of a template store, not a migration.

Making a store by running every migration imports SQLAlchemy and Alembic
and executes each revision: 0.75 s of a first `run`'s 1.15 s. The result is
the same every time for the same migration files, so it is made once per
user and set of migrations, in the user's cache directory, by the real
migrations (engine.migrate), and each new store gets its pages with SQLite's
backup API. The template's name holds a digest of the migration files, so
a changed migration makes a new template. Where no template can be made
(no writable cache directory), the store is migrated as before.
tests/test_store_template.py checks a copied store equals a migrated one.
"""
from __future__ import annotations

import contextlib
import hashlib
import os
import sqlite3
from pathlib import Path

from clusterbench.errors import BadInput
from clusterbench.files.cache_folder import cache_folder
from clusterbench.store import revisions


def _digest() -> str:
    """Of every migration file's bytes: the template is what they make."""
    h = hashlib.sha256()
    for path in sorted((revisions.MIGRATIONS / "versions").glob("*.py")):
        h.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()[:16]


def _is_current(path: Path) -> bool:
    try:
        conn = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True)
        try:
            rows = conn.execute("select version_num from alembic_version").fetchall()
        finally:
            conn.close()
    except sqlite3.Error:
        return False
    return rows == [(revisions.head(),)]


def _build(path: Path) -> None:
    """Migrates a private file and renames it into place: two builders at
    once each rename a whole template."""
    from clusterbench.store.engine import make_engine, migrate
    from clusterbench.store.sqlite_url import path_url

    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        url = path_url(str(tmp))
        engine = make_engine(url, str(tmp), read_only=False)
        try:
            migrate(engine, str(tmp), url)
        finally:
            engine.dispose()
        conn = sqlite3.connect(tmp)
        try:
            conn.execute("PRAGMA journal_mode=DELETE")   # one file, nothing in a -wal beside it
        finally:
            conn.close()
        os.replace(tmp, path)
    finally:
        for leftover in (tmp, Path(f"{tmp}-wal"), Path(f"{tmp}-shm"), Path(f"{tmp}-journal")):
            with contextlib.suppress(OSError):
                leftover.unlink()


def template() -> Path | None:
    """The template store of these migrations, made if missing; None where
    none can be made."""
    path = cache_folder() / f"store-template-{revisions.head()}-{_digest()}.db"
    if _is_current(path):
        return path
    from sqlalchemy.exc import SQLAlchemyError

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        _build(path)
    except (OSError, sqlite3.Error, SQLAlchemyError, BadInput):
        return None   # the store is migrated in place, which says any real fault itself
    return path if _is_current(path) else None


def fill(database: str) -> bool:
    """Gives a new store (no file yet) the template's pages;
    False where there is no template (the caller migrates). Call it under
    the store's migration lock."""
    if os.path.lexists(database):   # another first run made it meanwhile
        return False
    source = template()
    if source is None:
        return False
    src = sqlite3.connect(f"{source.as_uri()}?mode=ro", uri=True)
    try:
        dst = sqlite3.connect(database)
        try:
            src.backup(dst)
            dst.execute("PRAGMA journal_mode=WAL")   # as every store (engine._sqlite_pragmas)
        finally:
            dst.close()
    except sqlite3.Error:
        # a full disk mid-copy: no half-made store left (the file was not there before)
        for made in (database, f"{database}-wal", f"{database}-shm"):
            with contextlib.suppress(OSError):
                os.unlink(made)
        raise
    finally:
        src.close()
    return True
