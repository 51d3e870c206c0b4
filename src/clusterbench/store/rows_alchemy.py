"""Row access through SQLAlchemy Core: any store URL (PostgreSQL, a SQLite
store being created or migrated). The same four operations as
rows_sqlite.SqliteRows, each its own short transaction, and the same
transaction of several writes."""
from __future__ import annotations

import contextlib
import hashlib
import itertools
from typing import Any, Iterable, Iterator

import sqlalchemy as sa

from clusterbench.store.schema import metadata


class AlchemyRows:
    def __init__(self, engine: sa.engine.Engine):
        self.engine = engine

    def insert(self, table: str, values: dict) -> int:
        with self.engine.begin() as c:
            return c.execute(metadata.tables[table].insert().values(**values)).inserted_primary_key[0]

    def insert_absent(self, table: str, values: dict) -> None:
        """Inserts unless a row with the same primary key is there (written meanwhile by another run)."""
        t = metadata.tables[table]
        key = {c.name: values[c.name] for c in t.primary_key.columns}
        with self.engine.begin() as c:
            if c.execute(sa.select(*t.primary_key.columns).where(*_conditions(t, key))).first():
                return
            try:
                with c.begin_nested():
                    c.execute(t.insert().values(**values))
            except sa.exc.IntegrityError:
                pass  # stored meanwhile by a concurrent run

    @contextlib.contextmanager
    def transaction(self) -> Iterator[AlchemyWrites]:
        """Several writes as one transaction: all of them land or none (an
        imported file's runs). On SQLite it begins as rows_sqlite's does,
        with the write lock (BEGIN IMMEDIATE): the driver would begin only at
        the first write, so a read before it could miss a commit made
        between the two."""
        with self.engine.begin() as c:
            if c.dialect.name == "sqlite":
                c.exec_driver_sql("BEGIN IMMEDIATE")
            yield AlchemyWrites(c)

    def update(self, table: str, where: dict, values: dict) -> None:
        t = metadata.tables[table]
        with self.engine.begin() as c:
            c.execute(t.update().where(*_conditions(t, where)).values(**values))

    def select(self, table: str, where: dict, order_by: str | None = None) -> list[Any]:
        t = metadata.tables[table]
        q = sa.select(t).where(*_conditions(t, where))
        if order_by:
            q = q.order_by(t.c[order_by])
        with self.engine.connect() as c:
            return c.execute(q).all()


class AlchemyWrites:
    """The writes of one transaction (AlchemyRows.transaction)."""

    # rows per executemany: a batch's parameters are held at once (100,000 samples of an import are not)
    BATCH_ROWS = 10_000

    def __init__(self, c: sa.Connection):
        self._c = c

    def insert(self, table: str, values: dict) -> int:
        return self._c.execute(metadata.tables[table].insert().values(**values)).inserted_primary_key[0]

    def insert_absent(self, table: str, values: dict) -> None:
        t = metadata.tables[table]
        key = {c.name: values[c.name] for c in t.primary_key.columns}
        if self._c.execute(sa.select(*t.primary_key.columns).where(*_conditions(t, key))).first():
            return
        try:
            with self._c.begin_nested():   # a failed insert must not abort the whole transaction (PostgreSQL)
                self._c.execute(t.insert().values(**values))
        except sa.exc.IntegrityError:
            pass  # stored meanwhile by a concurrent run

    def insert_many(self, table: str, columns: tuple[str, ...], rows: Iterable[tuple]) -> None:
        insert, rows = metadata.tables[table].insert(), iter(rows)
        while batch := [dict(zip(columns, r)) for r in itertools.islice(rows, self.BATCH_ROWS)]:
            self._c.execute(insert, batch)

    def select(self, table: str, where: dict, order_by: str | None = None) -> list[Any]:
        t = metadata.tables[table]
        q = sa.select(t).where(*_conditions(t, where))
        return self._c.execute(q.order_by(t.c[order_by]) if order_by else q).all()

    def serialize(self, name: str) -> None:
        """Makes every other transaction that serializes on `name` wait until
        this one ends. PostgreSQL: a transaction-scoped advisory lock on a
        key derived from the name (reads after it, each a statement of its
        own under READ COMMITTED, see what the previous holder committed).
        SQLite: transaction() took the file's write lock already."""
        if self._c.dialect.name == "postgresql":
            self._c.execute(sa.text("select pg_advisory_xact_lock(:key)"), {"key": advisory_key(name)})


def advisory_key(name: str) -> int:
    """A signed 64-bit key for pg_advisory_xact_lock: the name's SHA-256,
    prefixed so no other clusterbench lock (the migrations' fixed key) meets it."""
    digest = hashlib.sha256(f"clusterbench serialize {name}".encode()).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


def _conditions(t: sa.Table, where: dict) -> list:
    return [t.c[k] == v for k, v in where.items()]
