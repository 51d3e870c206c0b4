"""A plain SQLite file URL (sqlite:///path, no query) read and written as
SQLAlchemy's make_url and render_as_string do, without importing SQLAlchemy
(a run's fixed cost, docs/design.md). Anything else is left to SQLAlchemy;
tests/test_store_rows.py checks both agree."""
from __future__ import annotations

from urllib.parse import quote, unquote

PREFIX = "sqlite:///"


def sqlite_file(url: str) -> str | None:
    """The database file of a plain SQLite file URL, else None (a query string,
    a driver, an in-memory database, another backend)."""
    if not url.startswith(PREFIX) or "?" in url:
        return None
    database = unquote(url[len(PREFIX):])
    return database if database and database != ":memory:" else None


def render(database: str) -> str:
    return PREFIX + quote(database, safe=" +/")


def path_url(path: str) -> str:
    """The URL of a store named by its path: quoted, so a '?', '#' or '%xx'
    in it is part of the file's name, not a query or an escape. A path that
    is not UTF-8 (surrogate escapes) cannot be quoted; it is kept as it is,
    for Store to refuse in one line."""
    try:
        return render(path)
    except UnicodeEncodeError:
        return PREFIX + path
