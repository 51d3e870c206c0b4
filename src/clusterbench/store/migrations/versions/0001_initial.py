"""Initial store: environments, runs, run_hosts, steps, samples.

Revision ID: 0001
Revises:
"""
import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "environments",
        sa.Column("hash", sa.String(64), primary_key=True),
        sa.Column("captured", sa.DateTime(timezone=True), nullable=False),
        sa.Column("data", sa.JSON, nullable=False),
    )
    op.create_table(
        "runs",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("label", sa.String(200)),
        sa.Column("user", sa.String(100)),
        sa.Column("host", sa.String(255)),
        sa.Column("pid", sa.Integer),
        sa.Column("command", sa.Text),
        sa.Column("suite", sa.String(200)),
        sa.Column("started", sa.DateTime(timezone=True), nullable=False),
        sa.Column("finished", sa.DateTime(timezone=True)),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("message", sa.Text),
    )
    op.create_table(
        "run_hosts",
        sa.Column("run_id", sa.Integer, sa.ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("host", sa.String(255), primary_key=True),
        sa.Column("environment_hash", sa.String(64), sa.ForeignKey("environments.hash"), nullable=False),
    )
    op.create_table(
        "steps",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("run_id", sa.Integer, sa.ForeignKey("runs.id", ondelete="CASCADE"), nullable=False, index=True),
        sa.Column("position", sa.Integer, nullable=False),
        sa.Column("name", sa.String(200)),
        sa.Column("kernel", sa.String(100), nullable=False),
        sa.Column("params", sa.JSON, nullable=False),
        sa.Column("launcher", sa.String(50), nullable=False),
        sa.Column("ranks", sa.Integer, nullable=False),
        sa.Column("ranks_per_node", sa.Integer),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("started", sa.DateTime(timezone=True), nullable=False),
        sa.Column("finished", sa.DateTime(timezone=True)),
        sa.Column("build", sa.JSON),
        sa.Column("message", sa.Text),
    )
    op.create_table(
        "samples",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("step_id", sa.Integer, sa.ForeignKey("steps.id", ondelete="CASCADE"), nullable=False, index=True),
        sa.Column("repetition", sa.Integer, nullable=False),
        sa.Column("phase", sa.String(100), nullable=False),
        sa.Column("mode", sa.String(100)),
        sa.Column("value", sa.Float),
        sa.Column("unit", sa.String(50)),
        sa.Column("seconds", sa.Float),
        sa.Column("bytes", sa.BigInteger),
        sa.Column("ops", sa.BigInteger),
        sa.Column("warnings", sa.JSON, nullable=False),
        sa.Column("record", sa.JSON, nullable=False),
    )


def downgrade() -> None:
    for t in ("samples", "steps", "run_hosts", "runs", "environments"):
        op.drop_table(t)
