from __future__ import annotations

import click

from clusterbench.commands.options import DAY, db_option, utc
from clusterbench.store.opening import open_store


@click.command("history")
@click.option("-o", "--output", required=True, metavar="FILE",
              help="The HTML file to write; a FIFO or a device is written as a stream, - is stdout.")
@click.option("--since", type=DAY, help="Only runs started on or after this UTC date (YYYY-MM-DD[ HH:MM]).")
@db_option
def command(output, since, db_url):
    """Write the store's run history as one self-contained HTML page: runs per
    month, user, host, kernel and suite (outcomes, time used, bytes written),
    the failures with their error line, the longest runs, the store's size,
    and each often-measured figure's trend with its change points.

    \b
    clusterbench history -o history.html
    clusterbench history -o history.html --since 2026-06
    """
    from clusterbench.files import output_target
    from clusterbench.report import check_html_name
    from clusterbench.report.history_page import render

    output_target.check(output)
    check_html_name(output, "-o", "history writes an HTML page", "its page is HTML alone (clusterbench report and export write the others)")
    store = open_store(db_url)
    path = output_target.write(output, render(store, utc(since)))
    click.echo(output_target.written(path), err=True)   # on stderr: with -o -, stdout is the report
