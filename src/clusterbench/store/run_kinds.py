"""What made a run (runs.kind, migration 0007). Code asks for a run's kind,
never for its suite's name: a suite may be called anything."""
from __future__ import annotations

MEASURED = "measured"   # `run` of kernels or a suite
CLUSTER = "cluster"     # `run cluster`: per-node steps (steps.host), the link matrix, scaling
IMPORTED = "imported"   # read from another tool's output (runs.imported_from says which)

KINDS = (MEASURED, CLUSTER, IMPORTED)
