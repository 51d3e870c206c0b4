from __future__ import annotations

import click

from clusterbench.commands.options import db_option, link_speed_option
from clusterbench.report import formats
from clusterbench.store.opening import open_store


@click.command("report")
@click.argument("refs", nargs=-1, required=True)
@click.option("--format", "fmt", type=click.Choice(formats()), default=None,
              help="Output format (default: from the file name's suffix, .pdf .json .csv .md .html, else html; "
                   "another document's suffix, such as .docx or .txt, is refused). "
                   "pdf prints the html report with headless Chromium, A4.")
@click.option("-o", "--output", required=True, metavar="FILE",
              help="File to write; a FIFO or a device is written as a stream, - is stdout.")
@click.option("--exclude-outliers", is_flag=True, help="In the comparison, leave modified-Z outliers out (stated).")
@link_speed_option
@db_option
def command(refs, fmt, output, exclude_outliers, link_speed, db_url):
    """Write a report of runs (ids or labels). With several labels or runs,
    the HTML and Markdown reports open with their comparison (as clusterbench
    compare), or say why there is none (no measurement they all made). Of
    two cluster runs (before and after a repair) they first give compare's
    verdict and its node by node, GPU by GPU and link by link tables."""
    from clusterbench.report import format_of, write_report

    if fmt is None:
        fmt = format_of(output)
    import shlex

    # the footer's command: what made this content (the output file's name is not part of it)
    made_by = shlex.join(["clusterbench", "report", *refs] + (["--exclude-outliers"] if exclude_outliers else [])
                         + ([f"--link-speed={link_speed / 1e9:g}g"] if link_speed else []))
    path = write_report(open_store(db_url), list(refs), fmt, output, exclude_outliers, link_speed, made_by)
    from clusterbench.files.output_target import written

    click.echo(written(path), err=True)   # on stderr: with -o -, stdout is the report
