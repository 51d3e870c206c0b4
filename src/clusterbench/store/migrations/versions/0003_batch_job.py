"""Runs record the batch job they ran in (Slurm, Grid Engine, PBS), if any.

Revision ID: 0003
Revises: 0002
"""
import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("runs") as batch:
        batch.add_column(sa.Column("batch_job", sa.String(100)))


def downgrade() -> None:
    with op.batch_alter_table("runs") as batch:
        batch.drop_column("batch_job")
