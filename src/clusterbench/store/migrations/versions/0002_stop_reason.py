"""Steps record why their repetitions stopped (--repeat auto).

Revision ID: 0002
Revises: 0001
"""
import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("steps") as batch:
        batch.add_column(sa.Column("stop_reason", sa.String(200)))


def downgrade() -> None:
    with op.batch_alter_table("steps") as batch:
        batch.drop_column("stop_reason")
