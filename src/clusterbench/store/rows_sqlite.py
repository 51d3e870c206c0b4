"""Row access to a SQLite store file through the standard library's sqlite3,
for commands that only add and read runs (`run`, `import`): SQLAlchemy's
import costs 0.15-0.2 s, the largest part of what a run adds around cbk
(docs/design.md).

It writes what SQLAlchemy writes for the same values (tests/test_store_rows.py
checks the two give equal tables): JSON columns as json.dumps text (None as
'null'), DATETIME columns as 'YYYY-MM-DD HH:MM:SS.ffffff' wall-clock text. It
learns which columns are which from the file's own table definitions (PRAGMA
table_info), so the schema is written once, in schema.py and the migrations.
Used only on a store already at the head revision (store/database.py)."""
from __future__ import annotations

import contextlib
import datetime as dt
import itertools
import json
import sqlite3
import threading
from collections import namedtuple
from typing import Any, Iterable, Iterator


def datetime_text(v: dt.datetime) -> str:
    """'YYYY-MM-DD HH:MM:SS.ffffff' wall-clock text, as SQLAlchemy writes it:
    strftime's %Y wrote year 1 as '1', which fromisoformat refused, so one
    run imported with --date 0001-01-01 made every list, show and report of
    the store a traceback."""
    return v.replace(tzinfo=None).isoformat(sep=" ", timespec="microseconds")


class SqliteRows:
    def __init__(self, path: str):
        # autocommit: each statement its own transaction, as each Store write is one
        self._conn = sqlite3.connect(path, timeout=60, isolation_level=None, check_same_thread=False)
        for pragma in ("journal_mode=WAL", "busy_timeout=60000", "foreign_keys=ON"):
            self._conn.execute(f"PRAGMA {pragma}")
        # one connection; a cluster run's waiter threads share it. Reentrant: a stop (Ctrl-C, SIGTERM)
        # raised in contextlib's __enter__ after _cursor's generator took the lock leaves it taken until
        # the generator is collected, and the traceback that keeps it alive is the one whose handler
        # closes the step: a plain lock hung that handler for good (run seqio stopped by SIGTERM, found
        # with py-spy: the main thread waiting in _cursor under finish_step)
        self._lock = threading.RLock()
        self._columns: dict[str, dict[str, str]] = {}
        self._row_types: dict[str, type] = {}

    def close(self) -> None:
        self._conn.close()   # the last connection checkpoints the -wal file and removes it

    def _types(self, table: str) -> dict[str, str]:
        if table not in self._columns:
            # the row type first: a stop between the two left _columns[table] without its row type,
            # and every later select on the table raised KeyError
            columns = {r[1]: r[2].upper() for r in self._conn.execute(f'PRAGMA table_info("{table}")')}
            self._row_types[table] = namedtuple(f"{table}_row", list(columns))
            self._columns[table] = columns
        return self._columns[table]

    def _encode(self, table: str, values: dict) -> dict:
        types = self._types(table)
        unknown = set(values) - set(types)
        if unknown:
            raise KeyError(f"no column {', '.join(sorted(unknown))} in table {table}")
        out = {}
        for k, v in values.items():
            if types[k] == "JSON":
                v = json.dumps(v)
            elif types[k] == "DATETIME" and isinstance(v, dt.datetime):
                v = datetime_text(v)
            out[k] = v
        return out

    def _decode(self, table: str, row: tuple, names: list[str]):
        types = self._types(table)
        values = []
        for name, v in zip(names, row):
            if v is not None and types[name] == "JSON":
                v = json.loads(v)
            elif v is not None and types[name] == "DATETIME":
                v = dt.datetime.fromisoformat(v)
            values.append(v)
        return self._row_types[table](*values)

    @contextlib.contextmanager
    def _cursor(self) -> Iterator[sqlite3.Cursor]:
        with self._lock:
            cur = self._conn.cursor()
            try:
                yield cur
            finally:
                cur.close()

    def _insert(self, verb: str, table: str, values: dict) -> int:
        with self._cursor() as cur:
            return self._insert_with(cur, verb, table, values)

    def _insert_with(self, cur: sqlite3.Cursor, verb: str, table: str, values: dict) -> int:
        v = self._encode(table, values)
        cur.execute(f'{verb} INTO "{table}" ({_names(v)}) VALUES ({", ".join("?" * len(v))})', list(v.values()))
        return cur.lastrowid

    @contextlib.contextmanager
    def transaction(self) -> Iterator[SqliteWrites]:
        """Several writes as one transaction: all of them land or none (an
        imported run). BEGIN IMMEDIATE takes the write lock first, so another
        writer makes this one wait (busy_timeout) at the start, not fail at
        the commit with half its work done."""
        with self._cursor() as cur:
            cur.execute("BEGIN IMMEDIATE")
            try:
                yield SqliteWrites(self, cur)
            except BaseException:
                if self._conn.in_transaction:   # SQLite rolls back by itself after some failures (a full disk)
                    cur.execute("ROLLBACK")
                raise
            cur.execute("COMMIT")

    def insert(self, table: str, values: dict) -> int:
        return self._insert("INSERT", table, values)

    def insert_absent(self, table: str, values: dict) -> None:
        """Inserts unless a row with the same primary key is there (written meanwhile by another run)."""
        self._insert("INSERT OR IGNORE", table, values)

    def update(self, table: str, where: dict, values: dict) -> None:
        v, w = self._encode(table, values), self._encode(table, where)
        sets = ", ".join(f'"{k}" = ?' for k in v)
        with self._cursor() as cur:
            cur.execute(f'UPDATE "{table}" SET {sets} WHERE {_conditions(w)}', [*v.values(), *w.values()])

    def select(self, table: str, where: dict, order_by: str | None = None) -> list[Any]:
        with self._cursor() as cur:
            return self._select_with(cur, table, where, order_by)

    def _select_with(self, cur: sqlite3.Cursor, table: str, where: dict, order_by: str | None) -> list[Any]:
        names = list(self._types(table))
        w = self._encode(table, where)
        order = f' ORDER BY "{order_by}"' if order_by else ""
        rows = cur.execute(f'SELECT {_names(names)} FROM "{table}" '
                           f'WHERE {_conditions(w)}{order}', list(w.values())).fetchall()
        return [self._decode(table, r, names) for r in rows]


class SqliteWrites:
    """The writes of one transaction (SqliteRows.transaction)."""

    def __init__(self, rows: SqliteRows, cur: sqlite3.Cursor):
        self._rows, self._cur = rows, cur

    def insert(self, table: str, values: dict) -> int:
        return self._rows._insert_with(self._cur, "INSERT", table, values)

    def insert_absent(self, table: str, values: dict) -> None:
        self._rows._insert_with(self._cur, "INSERT OR IGNORE", table, values)

    def select(self, table: str, where: dict, order_by: str | None = None) -> list[Any]:
        """Read inside the transaction: after its BEGIN IMMEDIATE, so it sees
        every commit before this one and none can come until it ends."""
        return self._rows._select_with(self._cur, table, where, order_by)

    def serialize(self, name: str) -> None:
        """Nothing to take: BEGIN IMMEDIATE holds the file's one write lock
        for the whole transaction, so every other writer already waits."""

    def insert_many(self, table: str, columns: tuple[str, ...], rows: Iterable[tuple]) -> None:
        """Rows of `columns`' values, by executemany, BATCH_ROWS at a time
        (not all of them held at once, encoded). A batch is encoded a column
        at a time, whole, before SQLite takes it: a per-row encoder in Python,
        or encoding while SQLite inserts (each evicting the other's working
        set), cost more than SQLAlchemy's import saved on a 100,000-row
        import (bench/import_speed)."""
        types = self._rows._types(table)
        unknown = set(columns) - set(types)
        if unknown:
            raise KeyError(f"no column {', '.join(sorted(unknown))} in table {table}")
        encoders = [(i, _json_column if types[c] == "JSON" else _datetime_column) for i, c in enumerate(columns)
                    if types[c] in ("JSON", "DATETIME")]
        sql = f'INSERT INTO "{table}" ({_names(columns)}) VALUES ({", ".join("?" * len(columns))})'
        rows = iter(rows)
        while batch := list(itertools.islice(rows, BATCH_ROWS)):
            values = list(zip(*batch))
            for i, encode in encoders:
                values[i] = encode(values[i])
            self._cur.executemany(sql, zip(*values))


BATCH_ROWS = 10_000
# json.dumps with its defaults, one call less per value
_dumps = json.JSONEncoder().encode


def _json_column(values: tuple) -> list:
    """Each value as _encode writes a JSON column (json.dumps); a column of
    empty lists (every imported sample's warnings) without the encoder."""
    if not any(values) and set(map(type, values)) == {list}:
        return ["[]"] * len(values)
    return list(map(_dumps, values))


def _datetime_column(values: tuple) -> list:
    return [_datetime_text(v) for v in values]


def _datetime_text(v):
    return datetime_text(v) if isinstance(v, dt.datetime) else v


def _names(columns) -> str:
    return ", ".join(f'"{c}"' for c in columns)


def _conditions(where: dict) -> str:
    return " AND ".join(f'"{k}" = ?' for k in where) or "1"
