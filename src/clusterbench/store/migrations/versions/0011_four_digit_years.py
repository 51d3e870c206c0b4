"""Dates stored with a year of fewer than four digits get four.

Before SQLite rows wrote DATETIME text with isoformat (rows_sqlite.py),
they used strftime's %Y, which writes year 1 as '1': `import --date
0001-01-01` stored '1-01-01 00:00:00.000000'. Python's fromisoformat,
which both row layers read such a column with, refuses that text, so one
such run made every list, show, export and report of the store a
traceback. import refuses such dates now; this rewrites the ones stored
before to the text SQLAlchemy writes ('0001-01-01 ...'), keeping the value.
Only SQLite stores: PostgreSQL keeps timestamps typed.

Revision ID: 0011
Revises: 0010
"""
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None

# every DATETIME column at 0010, named here: a later schema.py must not change what this revision did
_DATETIME_COLUMNS = (("environments", "captured"), ("runs", "started"), ("runs", "finished"),
                     ("runs", "imported_at"), ("steps", "started"), ("steps", "finished"))


def upgrade() -> None:
    if op.get_bind().dialect.name != "sqlite":
        return
    for table, column in _DATETIME_COLUMNS:
        # a year of 1 to 3 digits, then '-': zeros in front of it, up to four digits
        op.execute(f"update {table} set {column} = substr('000', 1, 5 - instr({column}, '-')) || {column} "
                   f"where {column} glob '[0-9]-*' or {column} glob '[0-9][0-9]-*' "
                   f"or {column} glob '[0-9][0-9][0-9]-*'")


def downgrade() -> None:
    pass   # a four-digit year is what every earlier revision reads too
