"""The store a user named with --db: a path or a URL, checked before it is
opened. Commands and use cases alike open it through here."""
from __future__ import annotations


def open_store(db_url: str | None, writing: bool = False):
    """The store; writing: the command stores runs (only then may a new
    SQLite store be created)."""
    from clusterbench.errors import BadInput
    from clusterbench.store import Store

    if db_url and "\x00" in db_url:
        raise BadInput("--db: the store's name holds a NUL byte, which no file name or URL can")
    if db_url and "://" not in db_url:
        from pathlib import Path

        from clusterbench.store.sqlite_url import path_url

        db_url = path_url(str(Path(db_url).resolve()))
    store = Store(db_url, writing=writing)
    if not store.read_only:
        store.reap_dead_runs()
    return store


def open_existing_store(db_url: str | None):
    """The store, or None where it is a SQLite file not made yet: what a
    command that stores nothing (import --dry-run) reads, never creating one."""
    import os

    from clusterbench.store.database import default_url, with_driver
    from clusterbench.store.sqlite_url import sqlite_file

    url = db_url or default_url()
    path = url if "://" not in url else sqlite_file(with_driver(url))
    if path is not None and "\x00" not in path and not os.path.lexists(path):
        return None
    return open_store(db_url, writing=False)
