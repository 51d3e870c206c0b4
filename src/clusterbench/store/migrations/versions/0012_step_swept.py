"""A step of a sweep stores which parameters tell it from its siblings
(steps.swept: ["op"], ["block-size", "np"]; [] outside a sweep), as the plan
chose them (run/plan.py, Step.swept), so a report says its name in words
from facts. A step stored before keeps NULL: nothing but its name says what
was swept, and the reports read the name's bracket for it, as they did.

Revision ID: 0012
Revises: 0011
"""
import sqlalchemy as sa
from alembic import op

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("steps") as batch:
        batch.add_column(sa.Column("swept", sa.JSON))


def downgrade() -> None:
    with op.batch_alter_table("steps") as batch:
        batch.drop_column("swept")
