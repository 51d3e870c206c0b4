"""One state, one name (#34): a write into the page cache is "buffered"
whichever kernel or importer measured it. pario and the IOR importers said
"cached" before; a store written then reads back "buffered" once migrated
(0008), so its runs compare with new ones and with seqio's."""
from __future__ import annotations

import pytest
import sqlalchemy as sa

from conftest import store_at, store_rows

PARIO_WARNING = ("cached: timed until the last write returned (data handed to the file system), "
                 "before fsync and close")


def _pario_record(mode: str, warnings: list[str]) -> dict:
    """A measurement record as pario wrote it before 0008 (docs/records.md's shape)."""
    return {"schema": 1, "type": "measurement", "kernel": "pario", "repetition": 0, "phase": "write", "mode": mode,
            "sweep_key": None, "qualifiers": [], "ranks": 2, "bytes": 4194304, "ops": 16, "seconds": 0.01,
            "rate": 400.0, "rate_unit": "MiB/s", "warnings": warnings, "fsync": "end"}


@pytest.mark.both_stores
def test_a_store_with_cached_writes_reads_back_buffered_after_the_upgrade(store_url):
    from clusterbench.store import Store

    engine = store_at(store_url, "0007")
    samples = sa.table("samples", sa.column("step_id", sa.Integer), sa.column("repetition", sa.Integer),
                       sa.column("phase", sa.String), sa.column("mode", sa.String), sa.column("value", sa.Float),
                       sa.column("unit", sa.String), sa.column("warnings", sa.JSON), sa.column("record", sa.JSON))
    with engine.begin() as conn:
        conn.execute(sa.text("insert into runs (started, status) values ('2025-01-01', 'ok')"))
        conn.execute(sa.text("insert into steps (run_id, position, kernel, params, launcher, ranks, status, started) "
                             "values (1, 0, 'pario', '{}', 'mpiexec', 2, 'ok', '2025-01-01')"))
        fsync = _pario_record("fsync", [])
        for mode, warnings, record in (("cached", [PARIO_WARNING], _pario_record("cached", [PARIO_WARNING])),
                                       ("fsync", [], fsync),
                                       ("cold", ["a read's own warning"], dict(fsync, phase="read", mode="cold"))):
            conn.execute(samples.insert().values(step_id=1, repetition=0, phase=record["phase"], mode=mode,
                                                 value=400.0, unit="MiB/s", warnings=warnings, record=record))
    store = Store(store_url)   # migrates to the head
    write, synced, read = store.samples_of(1)
    assert (write.mode, write.condition) == ("buffered", "buffered")
    assert write.record["mode"] == "buffered"
    assert write.warnings == write.record["warnings"] == [PARIO_WARNING.replace("cached:", "buffered:", 1)]
    # the other states are as they were
    assert [(s.mode, s.condition, s.warnings) for s in (synced, read)] == [
        ("fsync", "fsync", []), ("cold", "cold", ["a read's own warning"])]
    assert store_rows(store_url, "select count(*) from samples where mode = 'cached'") == [(0,)]
    assert store_rows(store_url, "select version_num from alembic_version") == [("0012",)]


def test_no_component_names_a_write_state_cached():
    """The vocabulary the record schema and Sample accept has no "cached"."""
    import json

    from clusterbench.results.sample import CACHE_MODES
    from conftest import REPO

    schema = json.loads((REPO / "src" / "clusterbench" / "schemas" / "record.schema.json").read_text())
    modes = json.dumps(schema)
    assert "cached" not in CACHE_MODES and '"cached"' not in modes and "buffered" in CACHE_MODES
