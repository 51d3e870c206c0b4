from __future__ import annotations

import click

from clusterbench.commands.options import DAY, db_option, utc
from clusterbench.errors import BadInput
from clusterbench.store.opening import open_store


@click.command("prune")
@click.option("--before", required=True, type=DAY, help="Delete runs started before this UTC date.")
@click.option("--keep-labels", is_flag=True, help="Keep runs that have a label (the configurations named "
                                                  "on purpose); delete only unlabelled ones.")
@click.option("--dry-run", is_flag=True, help="Only say what would be deleted.")
@db_option
def command(before, keep_labels, dry_run, db_url):
    """Delete old runs with their steps and samples, and environments no run
    uses any more, so a shared store does not grow without bound. Runs still
    running are kept.

    \b
    clusterbench prune --before 2026-01-01 --keep-labels --dry-run
    """
    store = open_store(db_url)
    if store.read_only and not dry_run:   # say so before counting, not at the first delete
        raise BadInput(f"cannot prune {store.url}: its file system is read-only (--dry-run still counts)")
    n = store.prune(utc(before), keep_labels=keep_labels, dry_run=dry_run)
    verb = "would delete" if dry_run else "deleted"
    click.echo(f"{verb} {n['runs']} runs, {n['steps']} steps, {n['samples']} samples and "
               f"{n['environments']} environments started before {before:%Y-%m-%d} from {store.url}"
               + (" (labelled runs kept)" if keep_labels else ""))
