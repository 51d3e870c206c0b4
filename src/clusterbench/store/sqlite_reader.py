"""The SQLite connection of a store read read-only (another user's store,
sqlite_check.py says when), which its owner may be writing meanwhile.

Such a connection reads the owner's -shm file but may not write it. Where a
read begins while the owner's commit or checkpoint is rewriting the -shm
header, SQLite cannot take the write lock to re-read the header, as a
reader that may write does, and answers SQLITE_READONLY_RECOVERY ("attempt
to write a readonly database"): one statement in a few hundred beside a
checkpointing writer (tests/test_unprivileged_user.py). The owner's lock is
held for microseconds, so the statement is run again after a short wait;
an -shm that stays unreadable for a second (a writer killed while writing
it, whose recovery needs write access) is the one-line error it was."""
from __future__ import annotations

import sqlite3
import time

# the extended codes of a -shm met mid-write, or not yet initialised by a writer that is opening it
_MID_WRITE = frozenset({"SQLITE_READONLY_RECOVERY", "SQLITE_READONLY_CANTINIT"})
_WAITS = [0.001] * 10 + [0.01] * 20 + [0.05] * 14   # 1 s in all, most retries at once


class _RetryingCursor(sqlite3.Cursor):
    def execute(self, sql, parameters=()):
        # A read transaction begins at a statement's first step, which execute takes; once it
        # has begun its snapshot is fixed, so fetches after it never meet the header again
        for wait in [*_WAITS, None]:
            try:
                return super().execute(sql, parameters)
            except sqlite3.OperationalError as e:
                if wait is None or getattr(e, "sqlite_errorname", None) not in _MID_WRITE:
                    raise
            time.sleep(wait)


class ReaderConnection(sqlite3.Connection):
    """sqlite3.connect(..., factory=ReaderConnection): every cursor, and the
    connection's own execute, runs a statement again where it met the
    owner's -shm mid-write."""

    def cursor(self, factory=_RetryingCursor):
        return super().cursor(factory)

    def execute(self, sql, parameters=()):
        return self.cursor().execute(sql, parameters)   # the C execute makes a plain cursor
