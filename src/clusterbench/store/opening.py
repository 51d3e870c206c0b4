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

        db_url = f"sqlite:///{Path(db_url).resolve()}"
    store = Store(db_url, writing=writing)
    if not store.read_only:
        store.reap_dead_runs()
    return store
