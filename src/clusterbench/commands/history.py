from __future__ import annotations

from pathlib import Path

import click

from clusterbench.commands.options import DAY, db_option, open_store, utc
from clusterbench.errors import BadInput


@click.command("history")
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False), help="The HTML file to write.")
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
    from clusterbench.history_page import render
    from clusterbench.safe_write import write_atomically

    if not Path(output).resolve().parent.is_dir():
        raise BadInput(f"-o {output}: no such directory {Path(output).resolve().parent}")
    store = open_store(db_url)
    path = write_atomically(output, render(store, utc(since)))
    click.echo(f"wrote {path}")
