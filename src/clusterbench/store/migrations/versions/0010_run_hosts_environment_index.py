"""An index on run_hosts.environment_hash: which runs use an environment.

`prune` asks it of every environment (those no kept run uses go), and
deleting an environment makes SQLite look for run_hosts rows still naming
it (the foreign key); without the index each was a scan of run_hosts, so
`prune --dry-run` on a store of 10,000 runs and 1,450 environments read
run_hosts 1,450 times (7 s, growing with runs x environments).

Revision ID: 0010
Revises: 0009
"""
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index("ix_run_hosts_environment_hash", "run_hosts", ["environment_hash"])


def downgrade() -> None:
    op.drop_index("ix_run_hosts_environment_hash", "run_hosts")
