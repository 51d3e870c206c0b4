"""The first 16 bytes of every SQLite database file: how the store's own
checks (store/sqlite_check.py) and an output path's (files/output_target.py,
which never replaces a database) tell one, whatever its name."""
from __future__ import annotations

SQLITE_MAGIC = b"SQLite format 3\x00"
