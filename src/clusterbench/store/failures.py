"""A store's driver failing under a command (SQLite's "database or disk is
full" or "disk I/O error", a database server gone): one line naming the
store, exit status 1, never a driver's traceback. Bad input to the store
(a URL that does not parse, a server that refuses the connection at open)
stays BadInput, said where the store is opened (store/engine.py)."""
from __future__ import annotations

import contextlib
import sqlite3
import sys
from typing import Iterator

from clusterbench.errors import StoreFailed
from clusterbench.store.redact import mask_secrets

# what a person can do about the driver's words
_HINTS = {"disk I/O error": " (a full or failing disk?)", "database or disk is full": " (free space and run again)",
          "database disk image is malformed": " (read while its owner began writing it? try again)"}


@contextlib.contextmanager
def store_failures(shown_url: str, secret_url: str, *, refusals: bool = False) -> Iterator[None]:
    """refusals: a write the store refused (a constraint, a trigger, a
    server's own check) is one line too: an import's transaction, where
    such a refusal ends the command and leaves nothing stored."""
    try:
        yield
    except sqlite3.OperationalError as e:
        raise failed(shown_url, str(e), secret_url) from None
    except sqlite3.DatabaseError as e:
        if refusals or _immutable(secret_url):
            raise failed(shown_url, str(e), secret_url) from None
        raise
    except Exception as e:
        sa = sys.modules.get("sqlalchemy")   # imported only by a store that needed it
        if sa is not None and isinstance(e, sa.exc.OperationalError if not refusals else sa.exc.DBAPIError):
            raise failed(shown_url, str(e.orig), secret_url) from None
        if sa is not None and isinstance(e, sa.exc.DatabaseError) and _immutable(secret_url):
            raise failed(shown_url, str(e.orig), secret_url) from None
        raise


def _immutable(secret_url: str) -> bool:
    """Read as immutable (sqlite_check.py): no writer when it was opened, but
    one that began since and checkpointed rewrote pages under the read."""
    return "immutable=1" in secret_url


def failed(shown_url: str, why: str, secret_url: str) -> StoreFailed:
    why = " ".join(why.split())   # a driver's hint on a second line: one line
    return StoreFailed(f"the store {shown_url}: {mask_secrets(why, secret_url)}{_HINTS.get(why, '')}")


class Guarded:
    """A rows object (rows_sqlite, rows_alchemy) whose every operation's
    driver failure is one line (store_failures)."""

    def __init__(self, rows, shown_url: str, secret_url: str):
        self.rows, self._urls = rows, (shown_url, secret_url)

    def __getattr__(self, name):
        attr = getattr(self.rows, name)
        if not callable(attr):
            return attr

        def guarded(*args, **kwargs):
            with store_failures(*self._urls):
                return attr(*args, **kwargs)
        return guarded
