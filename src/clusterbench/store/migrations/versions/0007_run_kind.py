"""What kind of run a run is: "measured" (`run` of kernels or a suite),
"cluster" (`run cluster`: per-node steps, the link matrix, scaling) or
"imported" (read from another tool's output). Up to 0006 a cluster run
was known only by its suite's name and an imported run by imported_from;
both are read here once, and from now on the kind is stored.

Revision ID: 0007
Revises: 0006
"""
import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None

_runs = sa.table("runs", sa.column("id", sa.Integer), sa.column("suite", sa.String),
                 sa.column("imported_from", sa.Text), sa.column("kind", sa.String))


def upgrade() -> None:
    with op.batch_alter_table("runs") as batch:
        batch.add_column(sa.Column("kind", sa.String(20), nullable=False, server_default="measured"))
    conn = op.get_bind()
    conn.execute(_runs.update().where(_runs.c.imported_from.is_not(None)).values(kind="imported"))
    conn.execute(_runs.update().where(_runs.c.suite == "cluster", _runs.c.imported_from.is_(None))
                 .values(kind="cluster"))


def downgrade() -> None:
    with op.batch_alter_table("runs") as batch:
        batch.drop_column("kind")
