"""A read-only connection to a store whose owner is writing it
(store/sqlite_reader.py): a statement that meets the owner's -shm header
mid-write is run again, as SQLite's own readers do when they may write.

The owner's header write is made to stand still here: a writer process
keeps the store open in WAL mode with its commits in the -wal, and the
test spoils one byte of the first of the -shm header's two copies (they
differ while a writer rewrites them). The reader opens the -shm read-only
(readonly_shm=1, what another user's connection gets), as another user's
connection does."""
from __future__ import annotations

import contextlib
import os
import sqlite3
import subprocess
import sys

import pytest

from clusterbench.store import sqlite_reader
from clusterbench.store.sqlite_reader import ReaderConnection

OWNER = """
import sqlite3, sys
c = sqlite3.connect(sys.argv[1], isolation_level=None)
c.execute('pragma journal_mode=wal')
c.execute('create table t(x)')
c.executemany('insert into t values (?)', [(i,) for i in range(100)])
print('ready', flush=True)
sys.stdin.read()
c.close()
"""


@pytest.fixture
def owner_mid_write(tmp_path):
    """A store its owner holds open, with its -shm header caught mid-write: (URI, heal)."""
    db = tmp_path / "team.db"
    owner = subprocess.Popen([sys.executable, "-c", OWNER, str(db)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             text=True)
    try:
        assert owner.stdout.readline().strip() == "ready"
        fd = os.open(f"{db}-shm", os.O_RDWR)
        try:
            whole = os.pread(fd, 1, 8)   # in the first copy of the header (two of 48 bytes)
            os.pwrite(fd, bytes([whole[0] ^ 0xFF]), 8)
            yield f"file:{db}?mode=ro&readonly_shm=1", lambda: os.pwrite(fd, whole, 8)
        finally:
            os.close(fd)
    finally:
        owner.stdin.close()
        owner.wait(timeout=60)


def count(uri: str, factory=sqlite3.Connection) -> int:
    with contextlib.closing(sqlite3.connect(uri, uri=True, factory=factory)) as conn:
        return conn.execute("select count(*) from t").fetchone()[0]


def test_a_plain_read_only_connection_fails_on_a_header_mid_write(owner_mid_write):
    """What clusterbench's reads of another user's store met, at random, beside its writer."""
    uri, _ = owner_mid_write
    with pytest.raises(sqlite3.OperationalError) as failed:
        count(uri)
    assert failed.value.sqlite_errorname == "SQLITE_READONLY_RECOVERY"
    assert str(failed.value) == "attempt to write a readonly database"


@pytest.mark.parametrize("via", ["connection", "cursor"])
def test_a_statement_that_met_the_header_mid_write_is_run_again(owner_mid_write, monkeypatch, via):
    uri, heal = owner_mid_write
    waits = []

    def owner_done(seconds):   # the owner's write ends during the reader's first wait
        waits.append(seconds)
        heal()
    monkeypatch.setattr(sqlite_reader.time, "sleep", owner_done)
    with contextlib.closing(sqlite3.connect(uri, uri=True, factory=ReaderConnection)) as conn:
        cur = conn.execute if via == "connection" else conn.cursor().execute
        assert cur("select count(*) from t").fetchone() == (100,)   # the owner's commits in its -wal, all of them
    assert len(waits) == 1


def test_a_header_that_stays_spoilt_is_the_error_after_a_second(owner_mid_write, monkeypatch):
    """A writer killed while writing its -shm header: recovery needs its owner; no endless wait."""
    uri, _ = owner_mid_write
    waits = []
    monkeypatch.setattr(sqlite_reader.time, "sleep", waits.append)
    with pytest.raises(sqlite3.OperationalError) as failed:
        count(uri, ReaderConnection)
    assert failed.value.sqlite_errorname == "SQLITE_READONLY_RECOVERY"
    assert 0.9 <= sum(waits) <= 1.1 and len(waits) > 30


def test_other_errors_are_not_retried(tmp_path, monkeypatch):
    waits = []
    monkeypatch.setattr(sqlite_reader.time, "sleep", waits.append)
    with contextlib.closing(sqlite3.connect(tmp_path / "x.db", factory=ReaderConnection)) as conn:
        with pytest.raises(sqlite3.OperationalError, match="no such table"):
            conn.execute("select * from missing")
    assert waits == []
