"""A run named on the command line (show, compare, report, export, prune,
env --diff): its id, or a label. Only ASCII digits within the store's
integers are an id: str.isdigit() took '²' (int() then failed, a traceback)
and '٧' (run 7), and an id past 2**63 - 1 overflowed SQLite's integer."""
from __future__ import annotations

MAX_RUN_ID = 2**63 - 1   # the store's integer column


def run_id_of(ref: str) -> int | None:
    """The run id ref spells, or None where it can only be a label."""
    if not (ref.isascii() and ref.isdigit()):
        return None
    run_id = int(ref)
    return run_id if run_id <= MAX_RUN_ID else None
