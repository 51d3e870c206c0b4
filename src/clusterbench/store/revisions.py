"""The store schema's revisions, read from the migration files' text.

Every command opening a store asks whether it is at the newest revision;
asking Alembic means importing its runtime and executing every migration
module (0.15 s, more than the rest of the store together). The answer is
two assignments per file (`revision = "0004"`, `down_revision = "0003"`),
so they are parsed with `ast` here, and Alembic is imported only to
migrate. tests/test_adaptive_and_migrations.py checks the answers equal
Alembic's, so the two readings cannot drift apart.
"""
from __future__ import annotations

import ast
import functools
from pathlib import Path

MIGRATIONS = Path(__file__).parent / "migrations"


def _assigned(path: Path) -> dict[str, object]:
    """The module-level constant assignments of a migration file."""
    found: dict[str, object] = {}
    for node in ast.parse(path.read_text(encoding="utf-8"), str(path)).body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            try:
                found[node.targets[0].id] = ast.literal_eval(node.value)
            except ValueError:
                pass  # not a constant: not one of the revision fields
    return found


@functools.cache
def parents(migrations: Path = MIGRATIONS) -> dict[str, tuple[str, ...]]:
    """revision -> the revisions it follows (down_revision: none, one or a merge's several)."""
    out: dict[str, tuple[str, ...]] = {}
    for path in sorted((migrations / "versions").glob("*.py")):
        fields = _assigned(path)
        if "revision" not in fields:
            continue
        down = fields.get("down_revision")
        out[str(fields["revision"])] = () if down is None else (down,) if isinstance(down, str) else tuple(down)
    return out


def known(migrations: Path = MIGRATIONS) -> set[str]:
    return set(parents(migrations))


def head(migrations: Path = MIGRATIONS) -> str:
    """The newest revision: the one no other follows."""
    followed = {p for ps in parents(migrations).values() for p in ps}
    heads = sorted(set(parents(migrations)) - followed)
    if len(heads) != 1:
        raise RuntimeError(f"the store migrations in {migrations} have {len(heads)} heads ({', '.join(heads)}), "
                           "not one: a packaging defect")
    return heads[0]
