"""Output formats for one or more runs: one module per format, one
`render(runs: list[dict]) -> str` each, looked up by name."""
from __future__ import annotations

import importlib

from clusterbench.errors import BadInput

_FORMATS = {
    "json": "clusterbench.report.json_format",
    "csv": "clusterbench.report.csv_format",
    "md": "clusterbench.report.markdown",
}


def formats() -> list[str]:
    return list(_FORMATS)


def render(fmt: str, runs: list[dict]) -> str:
    try:
        module = importlib.import_module(_FORMATS[fmt])
    except KeyError:
        raise BadInput(f"no such format: '{fmt}' (formats: {', '.join(_FORMATS)})") from None
    return module.render(runs)
