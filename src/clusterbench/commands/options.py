"""Options several subcommands share."""
from __future__ import annotations

import click

db_option = click.option("--db", "db_url", default=None, metavar="URL",
                         help="Results store: an SQLAlchemy URL or a file path "
                              "(default: $CLUSTERBENCH_DB, else results.db in the user's data directory).")


def open_store(db_url: str | None):
    from clusterbench.store import Store

    if db_url and "://" not in db_url:
        from pathlib import Path

        db_url = f"sqlite:///{Path(db_url).resolve()}"
    store = Store(db_url)
    store.reap_dead_runs()
    return store


def _keep_width(ctx, _param, value):
    from clusterbench.console import WIDTH_KEY

    if value:
        ctx.meta[WIDTH_KEY] = value
    return value


width_option = click.option("--width", type=click.IntRange(40, 1000), default=None, metavar="COLUMNS",
                            expose_value=False, callback=_keep_width,
                            help="Width of the tables in characters (default: the terminal's; 160 when piped, "
                                 "unless $COLUMNS says).")
