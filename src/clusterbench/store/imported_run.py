"""An imported file's runs written through the store's row layer in one
transaction: all of them land or none. On a current SQLite file that is the
standard library's sqlite3 (rows_sqlite.py), as for `run`'s samples:
SQLAlchemy's import alone was about a tenth of a 100,000-row import's CPU
time (docs/import.md, bench/import_speed).

The file's hash is looked up inside that transaction, after taking a lock
that another import of the same bytes waits for (rows' serialize): two
imports of one file at once take turns, and the second finds the first's
runs. Looked up before the transaction, both found nothing and both stored."""
from __future__ import annotations

import datetime as dt

from clusterbench.store import run_kinds

SAMPLE_COLUMNS = ("step_id", "repetition", "phase", "mode", "value", "unit", "seconds", "bytes", "ops", "warnings",
                  "record")


class AlreadyImported(Exception):
    """The store holds runs of the file's bytes (stored meanwhile by another
    import, where the command's own look-up found none): the runs, oldest first."""

    def __init__(self, runs: list):
        super().__init__(f"already imported as run {runs[0].id}")
        self.runs = runs


def write_file(rows, runs: list[dict], *, captured: dt.datetime, imported_sha256: str | None = None,
               again: bool = False) -> list[int]:
    """The ids of the file's runs, in order. rows: a row layer (SqliteRows,
    AlchemyRows); runs: write_run's arguments, one dict per run; captured:
    when the snapshots are stored, the import's time; imported_sha256: of
    the file's bytes, kept so a later import of them is refused, and looked
    up here (AlreadyImported, nothing written) unless again."""
    with rows.transaction() as w:
        if imported_sha256 is not None and not again:
            w.serialize(f"imported_sha256 {imported_sha256}")
            held = w.select("runs", {"imported_sha256": imported_sha256}, order_by="id")
            if held:
                raise AlreadyImported(held)
        return [write_run(w, captured=captured, imported_sha256=imported_sha256, **run) for run in runs]


def write_run(w, *, label: str | None, command: str | None, host: str | None, started: dt.datetime,
              finished: dt.datetime | None, imported_from: str, imported_steps: list,
              snapshots: dict[str, tuple[str, dict]], captured: dt.datetime,
              imported_sha256: str | None = None) -> int:
    """One run's rows through a transaction's writes w; its id.
    imported_steps: clusterbench.importers.ImportedStep; snapshots: host ->
    (hash, environment snapshot)."""
    run_id = w.insert("runs", {
        "label": label, "user": None, "host": host, "pid": None, "command": command, "suite": None,
        # no end where the file gives none: finished = started said the run took 0 s (list, history)
        "started": started, "finished": finished, "status": "ok", "imported_from": imported_from,
        "kind": run_kinds.IMPORTED, "imported_sha256": imported_sha256, "imported_at": captured})
    for env_hash, env in snapshots.values():
        w.insert_absent("environments", {"hash": env_hash, "captured": captured, "data": env})
    for h, (env_hash, _) in snapshots.items():
        w.insert("run_hosts", {"run_id": run_id, "host": h, "environment_hash": env_hash})
    for position, st in enumerate(imported_steps):
        step_id = w.insert("steps", {
            "run_id": run_id, "position": position, "name": st.name, "kernel": st.kernel, "params": st.params,
            "launcher": "imported", "ranks": st.ranks, "ranks_per_node": st.ranks_per_node, "status": "ok",
            "started": started, "finished": finished, "swept": st.swept})
        w.insert_many("samples", SAMPLE_COLUMNS, (
            (step_id, s.repetition, s.phase, s.condition, s.value, s.unit, s.seconds, s.bytes, s.ops,
             s.warnings, s.record) for s in st.samples))
    return run_id
