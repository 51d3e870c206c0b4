"""Output formats for one or more runs: one module per format, one
`render(runs: list[dict]) -> str` each, looked up by name."""
from __future__ import annotations

import importlib

from clusterbench.errors import BadInput

_FORMATS = {
    "json": "clusterbench.report.json_format",
    "csv": "clusterbench.report.csv_format",
    "md": "clusterbench.report.markdown",
    "html": "clusterbench.report.html",
}


def formats() -> list[str]:
    return list(_FORMATS)


def render(fmt: str, runs: list[dict]) -> str:
    try:
        module = importlib.import_module(_FORMATS[fmt])
    except KeyError:
        raise BadInput(f"no such format: '{fmt}' (formats: {', '.join(_FORMATS)})") from None
    return module.render(runs)


def write_report(store, refs: list[str], fmt: str, output, exclude_outliers: bool = False) -> str:
    """Renders runs (and, in HTML with several refs, their comparison) to
    `output`, written whole or not at all."""
    from clusterbench.report.data import load_run
    from clusterbench.safe_write import write_atomically

    ids = list(dict.fromkeys(i for ref in refs for i in store.resolve(ref)))
    runs = [load_run(store, i) for i in ids]
    if fmt == "html":
        from clusterbench import compare
        from clusterbench.report import html

        table = compare.build(store, refs, exclude_outliers) if len(refs) > 1 else None
        configs, points = compare.collect(store, refs)
        names = [c.name for c in configs]
        points = table.points if table else points
        text = html.render(runs, table, points, names)
    else:
        text = render(fmt, runs)
    return str(write_atomically(output, text))
