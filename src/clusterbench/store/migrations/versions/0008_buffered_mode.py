"""One name for one write state (#34): pario and the IOR importers called a
write into the page cache "cached", seqio and randio "buffered". From now on
all say "buffered"; stored samples are renamed here, so an old pario or IOR
write compares key by key with a new one and with seqio's.

The mode lives in three places of a sample row: the mode column (the mode
column's text, Sample.condition: the mode first, then any qualifiers), the
raw record's "mode" (what Sample.mode is read from), and pario's warning
"cached: timed until ..." (in the warnings column and the record's copy),
plus a limit check's "this cached write measures memory" that was stored
with the run's warnings.

Revision ID: 0008
Revises: 0007
"""
import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None

OLD, NEW = "cached", "buffered"

_samples = sa.table("samples", sa.column("id", sa.Integer), sa.column("mode", sa.String),
                    sa.column("warnings", sa.JSON), sa.column("record", sa.JSON))


def _condition(text: str) -> str:
    return NEW + text[len(OLD):]


def _warning(text):
    if not isinstance(text, str):
        return text
    if text.startswith(OLD + ": "):
        text = NEW + text[len(OLD):]
    return text.replace(f"this {OLD} write ", f"this {NEW} write ")


def _warnings(texts):
    return [_warning(t) for t in texts] if isinstance(texts, list) else texts


def upgrade() -> None:
    conn = op.get_bind()
    # the condition column starts with the mode: "cached" or "cached, <qualifier>"
    chosen = sa.or_(_samples.c.mode == OLD, _samples.c.mode.like(OLD + ",%"))
    changed = []
    for row in conn.execute(sa.select(_samples.c.id, _samples.c.mode, _samples.c.warnings, _samples.c.record)
                            .where(chosen)):
        record = dict(row.record) if isinstance(row.record, dict) else row.record
        if isinstance(record, dict):
            if record.get("mode") == OLD:
                record["mode"] = NEW
            if "warnings" in record:
                record["warnings"] = _warnings(record["warnings"])
        changed.append({"sample_id": row.id, "new_mode": _condition(row.mode),
                        "new_warnings": _warnings(row.warnings), "new_record": record})
    if changed:
        conn.execute(_samples.update().where(_samples.c.id == sa.bindparam("sample_id"))
                     .values(mode=sa.bindparam("new_mode"),
                             warnings=sa.bindparam("new_warnings", type_=sa.JSON),
                             record=sa.bindparam("new_record", type_=sa.JSON)), changed)


def downgrade() -> None:
    pass   # "buffered" is a mode every older clusterbench reads; which rows said "cached" is not kept
