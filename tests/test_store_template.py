"""A new SQLite store is a copy of the template store the migrations made
(store/template.py): it must be the store a migration in place makes, made
without SQLAlchemy or Alembic once the template exists, and made by
migrating where no template can be kept."""
from __future__ import annotations

import sqlite3
import subprocess
import sys

from clusterbench.store import revisions, template
from clusterbench.store.database import Store


def _schema(path) -> tuple[list, list]:
    c = sqlite3.connect(path)
    try:
        objects = c.execute("select type, name, tbl_name, sql from sqlite_master order by type, name").fetchall()
        return objects, c.execute("select version_num from alembic_version").fetchall()
    finally:
        c.close()


def test_a_copied_store_is_the_store_a_migration_makes(tmp_path, monkeypatch):
    copied = Store(f"sqlite:///{tmp_path / 'copied.db'}")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "not-a-directory"))
    (tmp_path / "not-a-directory").write_text("a file: no cache directory can be made here\n")
    assert template.template() is None
    migrated = Store(f"sqlite:///{tmp_path / 'migrated.db'}")   # migrated in place: the path without a template
    del copied, migrated
    objects, version = _schema(tmp_path / "copied.db")
    assert version == [(revisions.head(),)] and any(o[1] == "samples" for o in objects)
    assert (objects, version) == _schema(tmp_path / "migrated.db")
    c = sqlite3.connect(tmp_path / "copied.db")
    try:
        assert c.execute("pragma journal_mode").fetchone() == ("wal",)
    finally:
        c.close()


def test_once_the_template_exists_a_new_store_imports_neither_sqlalchemy_nor_alembic(tmp_path):
    Store(f"sqlite:///{tmp_path / 'first.db'}")   # makes the template if this session has none yet
    probe = ("import sys; from clusterbench.store.database import Store; "
             f"s = Store({('sqlite:///' + str(tmp_path / 'second.db'))!r}); "
             "s.begin_run(label=None, command='x', suite=None); "
             "print(sorted(m for m in ('sqlalchemy', 'alembic') if m in sys.modules))")
    p = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    assert p.stdout.split() == ["[]"]
    assert Store(f"sqlite:///{tmp_path / 'second.db'}").run(1).command == "x"


def test_a_store_another_first_run_made_meanwhile_is_not_overwritten(tmp_path):
    path = tmp_path / "s.db"
    Store(f"sqlite:///{path}").begin_run(label="kept", command="x", suite=None)
    assert template.fill(str(path)) is False
    assert Store(f"sqlite:///{path}").run(1).label == "kept"


def test_a_changed_migration_names_another_template(tmp_path, monkeypatch):
    before = template._digest()
    versions = tmp_path / "migrations" / "versions"
    versions.mkdir(parents=True)
    for f in (revisions.MIGRATIONS / "versions").glob("*.py"):
        (versions / f.name).write_bytes(f.read_bytes())
    monkeypatch.setattr(revisions, "MIGRATIONS", tmp_path / "migrations")
    assert template._digest() == before
    last = sorted(versions.glob("*.py"))[-1]
    last.write_text(last.read_text() + "\n# changed\n")
    assert template._digest() != before
