from __future__ import annotations

import click

from clusterbench.commands.options import db_option, link_speed_option, open_store, width_option


@click.command("show")
@click.argument("runs", nargs=-1, required=True)
@link_speed_option
@db_option
@width_option
def command(runs, link_speed, db_url):
    """Show runs (ids or labels): per step median, min, max, n, unit, cache mode, the limit that binds
    (docs/limits.md) and warnings."""
    from clusterbench.console import stdout_console

    from clusterbench.report.data import load_run
    from clusterbench.report.terminal import print_run

    store = open_store(db_url)
    console = stdout_console()
    for ref in runs:
        for run_id in store.resolve(ref):
            print_run(console, load_run(store, run_id, link_speed))
