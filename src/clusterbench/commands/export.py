from __future__ import annotations

import click

from clusterbench.commands.options import db_option
from clusterbench.report import text_formats
from clusterbench.store.opening import open_store


@click.command("export")
@click.argument("runs", nargs=-1, required=True)
@click.option("--format", "fmt", type=click.Choice(text_formats()), default=None,
              help="Output format (default: from the -o file's suffix, .json .csv .md .html, else json; another "
                   "document's suffix, such as .xlsx or .pdf, is refused).")
@click.option("-o", "--output", metavar="FILE",
              help="File to write (default: stdout); a FIFO or a device is written as a stream, - is stdout.")
@db_option
def command(runs, fmt, output, db_url):
    """Export runs (ids or labels) with every raw sample."""
    from clusterbench.report import render
    from clusterbench.report.data import Report
    from clusterbench.files import output_target

    output_target.check(output or output_target.STDOUT)   # a closed stdout too: refused before the work
    if fmt is None:   # `-o runs.csv` wrote JSON into it
        from clusterbench.report import format_of

        fmt = format_of(output, default="json", offered=text_formats()) if output else "json"
    store = open_store(db_url)
    # as `report` makes it: the Markdown of several labels opens with their comparison (or why there is none)
    text = render(fmt, Report.of(store, list(runs)))
    if output:
        output_target.write(output, text)
        click.echo(output_target.written(output), err=True)
    else:
        click.echo(text, nl=False)
