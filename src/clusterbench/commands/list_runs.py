from __future__ import annotations

import click

from clusterbench.commands.options import db_option, open_store


@click.command("list")
@click.option("--label", help="Only runs with this label.")
@click.option("--limit", type=click.IntRange(1), default=50, show_default=True)
@db_option
def command(label, limit, db_url):
    """List stored runs, newest first: when, where, by whom, how long, outcome."""
    from rich.console import Console
    from rich.table import Table

    store = open_store(db_url)
    rows = store.list_runs(label, limit)
    if not rows:
        click.echo(f"no runs in {store.url}" + (f" with label {label}" if label else ""))
        return
    t = Table("id", "label", "status", "started (UTC)", "duration", "host", "user", "batch job", "command")
    for r in rows:
        dur = f"{(r.finished - r.started).total_seconds():.1f} s" if r.finished else "-"
        t.add_row(str(r.id), r.label or "", r.status, r.started.strftime("%Y-%m-%d %H:%M:%S"), dur, r.host or "",
                  r.user or "", r.batch_job or "", r.command or "")
    Console().print(t)
