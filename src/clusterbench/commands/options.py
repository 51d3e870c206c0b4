"""Options several subcommands share."""
from __future__ import annotations

import click

db_option = click.option("--db", "db_url", default=None, metavar="URL",
                         help="Results store: an SQLAlchemy URL or a file path "
                              "(default: $CLUSTERBENCH_DB, else results.db in the user's data directory).")


memory_limit_option = click.option(
    "--memory-limit", metavar="SIZE",
    help="Run the kernel's processes in a memory cgroup capped at SIZE (e.g. 1g) on every host, so their page "
         "cache cannot exceed it (as booting with mem= did). Needs root or delegation.")
setting_option = click.option(
    "--setting", "settings", multiple=True, metavar="NAME=VALUE",
    help="Change a system setting for this run and restore it after: a sysctl (vm.dirty_ratio=5), tuned=PROFILE, "
         "governor=, thp=, thp-defrag=, io-scheduler=, read-ahead= (of --dir's disk). Needs root. Repeatable.")


def run_conditions(memory_limit: str | None, settings: tuple[str, ...]):
    """--memory-limit and --setting as one Conditions (clusterbench.conditions), or None."""
    from clusterbench.conditions import spec

    c = spec.Conditions(spec.parse_memory_limit(memory_limit), spec.parse_settings(settings))
    return c or None


def open_store(db_url: str | None, writing: bool = False):
    """The store; writing: the command stores runs (only then may a new
    SQLite store be created)."""
    from clusterbench.store import Store

    if db_url and "://" not in db_url:
        from pathlib import Path

        db_url = f"sqlite:///{Path(db_url).resolve()}"
    store = Store(db_url, writing=writing)
    if not store.read_only:
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
