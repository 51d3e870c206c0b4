"""Runs imported from another tool's output file say from what
("fio 3.33 JSON, file results/a.json"); NULL for runs clusterbench measured.

Revision ID: 0004
Revises: 0003
"""
import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("runs") as batch:
        batch.add_column(sa.Column("imported_from", sa.Text))


def downgrade() -> None:
    with op.batch_alter_table("runs") as batch:
        batch.drop_column("imported_from")
