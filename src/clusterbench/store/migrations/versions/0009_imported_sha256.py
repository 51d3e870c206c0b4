"""An imported run remembers the file it was read from by content: the
SHA-256 of the file's bytes as read, and when it was imported, so `import`
refuses a file the store already holds (its samples pooled twice would
double n and narrow every CI) and can say which run and since when.

Runs imported before this revision have neither: nothing to compare, so a
file imported before is not refused against them.

Revision ID: 0009
Revises: 0008
"""
import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("runs") as batch:
        batch.add_column(sa.Column("imported_sha256", sa.String(64)))
        batch.add_column(sa.Column("imported_at", sa.DateTime(timezone=True)))
    # each file given is looked up before anything is stored: no scan of every run per file
    op.create_index("ix_runs_imported_sha256", "runs", ["imported_sha256"])


def downgrade() -> None:
    op.drop_index("ix_runs_imported_sha256", "runs")
    with op.batch_alter_table("runs") as batch:
        batch.drop_column("imported_at")
        batch.drop_column("imported_sha256")
