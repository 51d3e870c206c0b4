"""Output formats for one or more runs: one module per format, each with
`render(report: Report) -> str` (report/data.py), looked up by name. A
format takes what it needs from the report: the runs, and the comparison
of the configurations (html, md) and their sweeps (html), computed when
first asked."""
from __future__ import annotations

from clusterbench.extensions.registry import Registry
from clusterbench.report.data import Report

FORMATS = Registry("format", [
    ("json", "clusterbench.report.json_format"),
    ("csv", "clusterbench.report.csv_format"),
    ("md", "clusterbench.report.markdown"),
    ("html", "clusterbench.report.html"),
])


def text_formats() -> list[str]:
    """The formats `export` writes to a terminal or a pipe."""
    return FORMATS.names()


def formats() -> list[str]:
    return [*FORMATS.names(), "pdf"]  # pdf: the html format printed by Chromium (report/pdf.py)


def format_of(path: str) -> str:
    """The format a file name asks for by its suffix (.pdf .json .csv .md), else html."""
    from pathlib import Path

    return {".pdf": "pdf", ".json": "json", ".csv": "csv", ".md": "md"}.get(Path(path).suffix.lower(), "html")


def render(fmt: str, report: Report | list[dict]) -> str:
    module = FORMATS.load(fmt)
    return module.render(report if isinstance(report, Report) else Report(report))


def write_report(store, refs: list[str], fmt: str, output, exclude_outliers: bool = False,
                 link_bits_per_s: float | None = None, made_by: str | None = None, option: str = "-o") -> str:
    """Renders runs (and, with several refs, their comparison where the
    format shows one) to `output` (files/output_target.py: a file whole or not at
    all, a pipe or device as a stream); pdf is the html format printed by
    Chromium. option: how the user named output, for its errors."""
    from clusterbench.files import output_target

    output_target.check(output, option)   # before the rendering, which may take a while
    report = Report.of(store, refs, exclude_outliers, link_bits_per_s, made_by)
    if fmt == "pdf":
        from clusterbench.report.pdf import html_to_pdf

        return output_target.write(output, html_to_pdf(render("html", report)), option)
    return output_target.write(output, render(fmt, report), option)
