"""The value an imported run's snapshot holds for what its file did not state
("imported from OSU 7.4 text: not recorded"), and the test for it: two
imports' snapshots differ in every such key by their formats' names alone,
which is no difference of the machines (env --diff, compare)."""
from __future__ import annotations

_PREFIX, _SUFFIX = "imported from ", ": not recorded"


def reason(source: str) -> str:
    return f"{_PREFIX}{source}{_SUFFIX}"


def is_unrecorded(value: object) -> bool:
    return isinstance(value, str) and value.startswith(_PREFIX) and value.endswith(_SUFFIX)


def lacks(value: object) -> bool:
    """Absent from a snapshot, or stated there as not recorded by an import."""
    return value is None or is_unrecorded(value)
