from __future__ import annotations

import click

from clusterbench.commands.options import DAY, db_option, utc
from clusterbench.errors import BadInput
from clusterbench.output.counted_text import counted
from clusterbench.output.date_text import cutoff_text, day_text
from clusterbench.store.opening import open_store


@click.command("prune")
@click.option("--before", type=DAY, help="Delete runs started before this UTC date.")
@click.option("--run", "refs", multiple=True, metavar="ID|LABEL",
              help="Delete this run (an id, or a label: all its runs) instead: a run measured wrong, a file "
                   "imported twice. Repeatable.")
@click.option("--keep-labels", is_flag=True, help="Keep runs that have a label (the configurations named "
                                                  "on purpose); delete only unlabelled ones.")
@click.option("--dry-run", is_flag=True, help="Only say what would be deleted.")
@db_option
def command(before, refs, keep_labels, dry_run, db_url):
    """Delete old runs (--before), or the runs named (--run), with their
    steps and samples, and environments no run uses any more, so a shared
    store does not grow without bound. Runs still running are kept.

    \b
    clusterbench prune --before 2026-01-01 --keep-labels --dry-run
    clusterbench prune --run 42 --dry-run
    """
    if (before is None) == (not refs):
        raise BadInput("give --before DATE (runs older than it) or --run ID|LABEL (those runs), one of them")
    if before is not None:
        _check_before(utc(before))
    store = open_store(db_url)
    if store.read_only and not dry_run:   # say so before counting, not at the first delete
        raise BadInput(f"cannot prune {store.url}: its file system is read-only (--dry-run still counts)")
    run_ids = sorted({i for ref in refs for i in store.resolve(ref)}) if refs else None
    n = store.prune(utc(before) if before else None, run_ids=run_ids, keep_labels=keep_labels, dry_run=dry_run)
    verb = "would delete" if dry_run else "deleted"
    which = f"started before {cutoff_text(before)} (UTC)" if before else "named (" + ", ".join(map(str, run_ids)) + ")"
    click.echo(f"{verb} {counted(n['runs'], 'run')}, {counted(n['steps'], 'step')}, {counted(n['samples'], 'sample')} "
               f"and {counted(n['environments'], 'environment')} {which} from {store.url}"
               + (f"; {counted(n['kept_labelled'], 'labelled run')} kept" if keep_labels else "")
               + (f"; {counted(n['kept_running'], 'run')} still running, kept" if n["kept_running"] else ""))


def _check_before(before) -> None:
    """A date past the day after tomorrow (UTC) deletes every run, as today's would: a typo'd year
    (2999-01) emptied the store. 'Before the day after tomorrow' is the latest: all of tomorrow, where a
    zone ahead of UTC already is."""
    import datetime as dt

    latest = dt.datetime.now(dt.timezone.utc).replace(hour=0, minute=0, second=0, microsecond=0) + dt.timedelta(days=2)
    if before > latest:
        raise BadInput(f"--before {cutoff_text(before)} is in the future: every run started before it, and all would "
                       f"be deleted; give a date up to {day_text(latest)}")
