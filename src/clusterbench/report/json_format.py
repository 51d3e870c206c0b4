"""JSON: the runs with every raw sample, for scripts."""
from __future__ import annotations

import dataclasses
import json


def _plain(o):
    if dataclasses.is_dataclass(o):
        d = dataclasses.asdict(o)
        d.update(n=o.n, median=o.median, min=o.minimum, max=o.maximum)
        return d
    raise TypeError(f"cannot write {type(o).__name__} as JSON")


def render(runs: list[dict]) -> str:
    return json.dumps({"schema": 1, "runs": runs}, indent=1, default=_plain, allow_nan=False) + "\n"
