"""The host a per-node step ran on is a column of its step (`run cluster`
launches each per-node step once per node). A store written before it has
the host packed into the step's name, "node HOST: PART"; those names, in
runs of suite "cluster" (the only runs that wrote them), are split into
host and name here. Every other step's host is NULL: it ran where its
launcher put its ranks, possibly many hosts.

Revision ID: 0006
Revises: 0005
"""
import re

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None

# the name analysis/cluster/naming.py wrote up to 0005, frozen here: the code no longer writes it
_OLD_NODE_NAME = re.compile(r"^node (?P<host>[^:\s]+): (?P<part>.+)$", re.DOTALL)

_runs = sa.table("runs", sa.column("id", sa.Integer), sa.column("suite", sa.String))
_steps = sa.table("steps", sa.column("id", sa.Integer), sa.column("run_id", sa.Integer),
                  sa.column("name", sa.String), sa.column("host", sa.String))


def upgrade() -> None:
    with op.batch_alter_table("steps") as batch:
        batch.add_column(sa.Column("host", sa.String(255)))
    conn = op.get_bind()
    query = (sa.select(_steps.c.id, _steps.c.name).select_from(_steps.join(_runs, _runs.c.id == _steps.c.run_id))
             .where(_runs.c.suite == "cluster", _steps.c.name.like("node %")))
    split = []
    for row in conn.execute(query):
        m = _OLD_NODE_NAME.match(row.name)
        if m:
            split.append({"step_id": row.id, "new_host": m.group("host"), "new_name": m.group("part")})
    if split:
        conn.execute(_steps.update().where(_steps.c.id == sa.bindparam("step_id"))
                     .values(host=sa.bindparam("new_host"), name=sa.bindparam("new_name")), split)


def downgrade() -> None:
    conn = op.get_bind()
    for row in conn.execute(sa.select(_steps.c.id, _steps.c.name, _steps.c.host).where(_steps.c.host.is_not(None))):
        conn.execute(_steps.update().where(_steps.c.id == row.id).values(name=f"node {row.host}: {row.name}"))
    with op.batch_alter_table("steps") as batch:
        batch.drop_column("host")
