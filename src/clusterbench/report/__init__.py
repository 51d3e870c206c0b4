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


# what each file name's suffix asks for
SUFFIX_FORMATS = {".pdf": "pdf", ".json": "json", ".csv": "csv", ".md": "md", ".markdown": "md", ".html": "html",
                  ".htm": "html"}
# names of documents no format here writes: `-o report.docx` wrote HTML into it, which Word refused to open,
# and `export -o runs.xlsx` JSON. Other suffixes ("report.2026-12", "-o -") take the command's default.
OTHER_DOCUMENTS = frozenset({".doc", ".docx", ".odt", ".rtf", ".txt", ".text", ".xls", ".xlsx", ".ods", ".tsv",
                             ".png", ".jpg", ".jpeg", ".svg", ".eps", ".ps", ".tex", ".xml", ".yaml", ".yml"})


def suffix_format(path: str) -> tuple[str, str | None]:
    """(the file name's suffix in lower case, the format it names or None)."""
    from pathlib import Path

    suffix = Path(path).suffix.lower()
    return suffix, SUFFIX_FORMATS.get(suffix)


def check_html_name(path: str, option: str, writer: str, instead: str) -> None:
    """Where a command writes HTML alone (`run --report`, `history -o`): a
    name that asks for another format or document is refused, `instead`
    saying what writes it; `--report r.pdf` wrote HTML no PDF reader opens."""
    from clusterbench.errors import BadInput

    suffix, fmt = suffix_format(path)
    if fmt not in (None, "html"):
        raise BadInput(f"{option} {path}: {writer} (a name ending .html); for {fmt.upper()}, {instead}")
    if suffix in OTHER_DOCUMENTS:
        raise BadInput(f"{option} {path}: {writer} (a name ending .html), not a {suffix} file")


def format_of(path: str, default: str = "html", offered: list[str] | None = None, option: str = "-o") -> str:
    """The format a file name asks for by its suffix, else `default`. A
    suffix of another kind of document, or of a format not `offered`, is
    refused naming the ones that are."""
    from clusterbench.errors import BadInput

    offered = offered or formats()
    suffix, fmt = suffix_format(path)
    if (fmt is None and suffix in OTHER_DOCUMENTS) or (fmt is not None and fmt not in offered):
        names = ", ".join(f".{f}" for f in offered)
        raise BadInput(f"{option} {path}: this command writes no {suffix} file; name it {names}, or give --format "
                       f"({'|'.join(offered)}) to write one of those into it"
                       + ("; a PDF is clusterbench report RUN -o FILE.pdf" if suffix == ".pdf" else ""))
    return fmt or default


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
