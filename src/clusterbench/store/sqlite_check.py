"""What a SQLite store path holds, checked before anything writes to it.

clusterbench writes only to its own store. Before a connection is made (a
connection switches the file to WAL mode; a migration adds tables), the
file is read directly and read-only:

- missing: a new store is made only by a command that stores (run, ior,
  mdtest) and only when the parent directory exists (a mistyped path is
  refused, no directory tree is made); the default store in the user's data
  directory is the one exception, its directory is made. A command that
  only reads refuses a missing store, the default one included: a look
  before the first run, or a mistyped path, leaves no file or directory;
- empty, not SQLite (text, random bytes), unreadable or truncated: refused;
- SQLite with tables but no `alembic_version`: another program's database,
  refused (its own `runs` table included);
- an `alembic_version` clusterbench does not know: a newer clusterbench's
  store, refused;
- on a read-only file system: opened read-only (immutable: nothing can
  change it), no lock file, no migration, no write (list, show, export,
  report, compare work);
- another user's store (one this user may not write): opened read-only,
  following its owner's writer through the -wal and -shm files where they
  are there to read, immutable only where they are not (no writer).

Each refusal is one line (BadInput, exit status 2) and leaves the file as
it was.
"""
from __future__ import annotations

import fcntl
import os
import sqlite3
from dataclasses import dataclass
from pathlib import Path

from clusterbench.errors import BadInput
from clusterbench.files.sqlite_header import SQLITE_MAGIC
from clusterbench.store import revisions
from clusterbench.store.sqlite_reader import ReaderConnection


@dataclass(frozen=True)
class Target:
    path: Path
    exists: bool
    read_only: bool  # on a read-only file system, or not writable by this user
    revision: str | None  # alembic_version of an existing store
    immutable: bool = True  # a read-only store read without locks or -wal: no writer when it was checked


def _read_only_fs(path: Path) -> bool:
    try:
        return bool(os.statvfs(path).f_flag & os.ST_RDONLY)
    except OSError:
        return False


def _writable(path: Path) -> bool:
    """Whether this process may write path (a directory: make files in it), by its effective ids."""
    return os.access(path, os.W_OK | (os.X_OK if path.is_dir() else 0), effective_ids=True)


def _head(path: Path, database: str) -> tuple[bytes, bool]:
    """The file's first bytes, and whether a -wal file holds pages not yet
    in it (a live writer, or one killed before a checkpoint)."""
    try:
        with open(path, "rb") as f:
            head = f.read(len(SQLITE_MAGIC))
    except OSError as e:
        raise BadInput(f"cannot read the store {os.fsdecode(path)}: {e.strerror}") from None
    # stat once: the last connection of another process removes the file at close
    try:
        pending = os.stat(f"{database}-wal").st_size > 0
    except FileNotFoundError:
        pending = False
    return head, pending


def _writer_files_readable(database: str) -> bool:
    """Whether the -wal and -shm files of a live (or killed) writer are there
    for this user to read. A read-only connection then reads the store as
    SQLite's readers do (a read-only -shm is read, SQLite 3.22+), seeing the
    commits in the -wal; without them only immutable can open a WAL file
    that this user may not write beside."""
    return all(os.access(f"{database}{suffix}", os.R_OK, effective_ids=True) for suffix in ("-wal", "-shm"))


def _schema(uri: str) -> tuple[set[str], str | None]:
    """The tables and the alembic_version of the database at a SQLite URI."""
    conn = sqlite3.connect(uri, uri=True, factory=ReaderConnection)
    try:
        tables = {r[0] for r in conn.execute("select name from sqlite_master where type = 'table'")}
        revision = None
        if "alembic_version" in tables:
            rows = conn.execute("select version_num from alembic_version").fetchall()
            revision = rows[0][0] if len(rows) == 1 else None
        return tables, revision
    finally:
        conn.close()


def check(database: str, *, writing: bool, make_parent: bool) -> Target:
    if "\x00" in database:
        raise BadInput("the store path holds a NUL byte, which no file name can")
    path = Path(database)
    shown = os.fsdecode(path)
    try:
        os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        pass
    except OSError as e:   # a name too long, a loop of links, a directory we may not search
        raise BadInput(f"cannot use the store path {shown}: {e.strerror}") from None
    if not path.exists():
        if not writing:
            # an empty store made here would only answer "no runs", and stay behind
            hint = ("the first `clusterbench run` creates it; --db or $CLUSTERBENCH_DB names another" if make_parent
                    else "a run creates one; check the path or --db")
            raise BadInput(f"no store at {shown} ({hint})")
        if not path.parent.is_dir():
            if not make_parent:
                raise BadInput(f"cannot create a store at {shown}: directory {os.fsdecode(path.parent)} does not exist")
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as e:
                raise BadInput(f"cannot create the store's directory for {shown}: {e.strerror}") from None
        if writing and not _writable(path.parent):
            # a new store is a file, its lock file and SQLite's -wal and -shm beside it: found at the
            # lock file, a shared directory of another user's was a PermissionError traceback
            raise BadInput(f"cannot create a store at {shown}: directory {os.fsdecode(path.parent)} is not writable "
                           f"by this user{' (read-only file system)' if _read_only_fs(path.parent) else ''}; "
                           "give --db a path in a directory of yours")
        return Target(path, False, False, None)
    if not path.is_file():
        raise BadInput(f"{shown} is not a file, so not a clusterbench store")
    lock = Path(f"{database}.lock")
    if lock.exists():
        # another first run may be creating this store right now (its lock
        # file is made before the database file): wait for its migration
        # (shared: nothing is written). SQLite commits each CREATE TABLE at
        # once, so mid-migration the file can hold an empty alembic_version.
        try:
            with open(lock, "rb") as f:
                fcntl.flock(f, fcntl.LOCK_SH)
        except OSError:
            pass  # another user's lock we cannot read: nothing to wait on that we could see
    head, in_use = _head(path, database)
    if not head and not in_use:
        raise BadInput(f"{shown} is an empty file, not a clusterbench store (remove it, or give another --db)")
    if head and head != SQLITE_MAGIC:
        raise BadInput(f"{shown} is not an SQLite database, so not a clusterbench store")
    read_only_fs = _read_only_fs(path.parent)
    # another user's store (a team's, published read-only), or one in a directory this user may not
    # write, where SQLite cannot make its -wal and -shm files: read as on a read-only file system
    # (every read of it failed with "attempt to write a readonly database", exit 1)
    not_writable = not read_only_fs and not (_writable(path) and _writable(path.parent))
    read_only = read_only_fs or not_writable
    # Read as immutable (no -shm or -wal file made, no lock taken) unless a
    # -wal file holds commits: then as a reader, to see them. Another user's
    # store being written is read as a reader too: an immutable read of a file
    # that a checkpoint rewrites meanwhile read torn pages ("database disk
    # image is malformed", counts of rows that never were) and ignored every
    # commit still in the -wal (a run in progress was not listed).
    # (on a read-only file system nothing writes: immutable, as before)
    live = not read_only_fs and (_writer_files_readable(database) if not_writable else in_use)
    base = f"{path.resolve().as_uri()}?mode=ro"
    try:
        try:
            tables, revision = _schema(base if live else base + "&immutable=1")
        except sqlite3.Error:
            if not live:
                raise
            # its writer closed meanwhile (checkpointed, -wal removed), or a killed writer's -shm
            # needs a recovery this user cannot write: what the file holds is all there is
            live = False
            tables, revision = _schema(base + "&immutable=1")
    except sqlite3.Error as e:
        raise BadInput(f"{shown} is not a readable SQLite database ({e}), so not usable as a store") from None
    if "alembic_version" not in tables:
        listed = ", ".join(sorted(tables)[:5]) + (", ..." if len(tables) > 5 else "")
        raise BadInput(f"{shown} is another program's SQLite database (tables: {listed or 'none'}); "
                       f"clusterbench stores only in its own")
    if revision is None:
        raise BadInput(f"{shown} has a store schema table but no version in it (its creation was interrupted?); "
                       f"remove it if it holds nothing you need, or give another --db")
    if revision not in revisions.known():
        raise BadInput(f"{shown} holds store schema {revision!r}, which this clusterbench does not know "
                       f"(written by a newer version?): use that version")
    if read_only and writing:
        why = ("its file system is read-only" if read_only_fs else
               ("this user may not write it" if not _writable(path) else
                "this user may not write its directory, where SQLite keeps its journal")
               + "; give --db a store of yours")
        raise BadInput(f"cannot store in {shown}: {why}")
    return Target(path, True, read_only, revision, immutable=not live)
