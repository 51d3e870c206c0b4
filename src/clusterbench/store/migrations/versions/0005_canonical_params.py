"""Step parameters in their canonical text (plan_params): a store written
before it holds parameters as typed ("1024k", "1M", "yes"); each is read
by its type in `cbk --describe` and written as the plan now writes it
("1m", "true"), so old and new runs are the same measurement where their
values are equal. A kernel this cbk does not describe (or no cbk at all)
keeps its text: nothing here guesses a parameter's type.

Revision ID: 0005
Revises: 0004
"""
import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None

_steps = sa.table("steps", sa.column("id", sa.Integer), sa.column("kernel", sa.String),
                  sa.column("params", sa.JSON))


def upgrade() -> None:
    from clusterbench.results.params import canonical, kernel_of

    conn = op.get_bind()
    kernels: dict = {}
    changed = []
    for row in conn.execute(sa.select(_steps.c.id, _steps.c.kernel, _steps.c.params)):
        if not isinstance(row.params, dict):
            continue
        if row.kernel not in kernels:
            kernels[row.kernel] = kernel_of(row.kernel)
        new = canonical(kernels[row.kernel], row.params)
        if new != row.params:
            changed.append({"step_id": row.id, "new_params": new})
    if changed:
        conn.execute(_steps.update().where(_steps.c.id == sa.bindparam("step_id"))
                     .values(params=sa.bindparam("new_params", type_=sa.JSON)), changed)


def downgrade() -> None:
    pass   # the canonical text is text cbk takes: an older clusterbench reads and runs it as it is
