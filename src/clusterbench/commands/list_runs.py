from __future__ import annotations

import click

from clusterbench.analysis.run_groups import GROUPS
from clusterbench.commands.options import DAY, db_option, utc, width_option
from clusterbench.output.counted_text import counted
from clusterbench.output.date_text import second_text
from clusterbench.report.when import duration_text
from clusterbench.store.opening import open_store

STATUSES = ("ok", "failed", "interrupted", "killed", "running")


@click.command("list")
@click.option("--label", help="Only runs with this label.")
@click.option("--user", help="Only runs started by this user.")
@click.option("--host", help="Only runs started on this host.")
@click.option("--status", type=click.Choice(STATUSES), help="Only runs that ended so (or are still running).")
@click.option("--kernel", help="Only runs with a step of this kernel (e.g. randio).")
@click.option("--since", type=DAY, help="Only runs started on or after this UTC date (YYYY-MM-DD[ HH:MM]).")
@click.option("--until", type=DAY, help="Only runs started before this UTC date.")
@click.option("--by", type=click.Choice(sorted(GROUPS)),
              help="Instead of the runs, one line per month/user/host/...: how many ran, failed or were "
                   "cut short, and how long they took. Counts every matching run (--limit is ignored).")
@click.option("--limit", type=click.IntRange(1), default=50, show_default=True, help="Newest runs listed.")
@db_option
@width_option
def command(label, user, host, status, kernel, since, until, by, limit, db_url):
    """List stored runs, newest first: when, where, by whom, how long, outcome.

    \b
    clusterbench list --status failed --since 2026-11-01
    clusterbench list --by month          # runs per month, failures, time used
    clusterbench list --by user --kernel randio
    """
    from clusterbench.output.console import stdout_console
    from clusterbench.output.whole_columns import print_whole
    from rich.table import Table

    store = open_store(db_url)
    rows = store.list_runs(label, None if by else limit, user=user, host=host, status=status, kernel=kernel,
                           since=utc(since), until=utc(until))
    if not rows:
        click.echo(f"no matching runs in {store.url}")
        return
    if by:
        from clusterbench.analysis.run_groups import summarise
        from clusterbench.output.render_text import terminal

        # the column's meaning goes under the table: in the title it read as if these runs were cut short
        t = Table(title=f"{counted(len(rows), 'run')} by {by}",
                  caption="cut short: interrupted by a signal or killed", caption_justify="left")
        t.add_column(by, overflow="fold")   # a label or a host may be one long word
        for name in ("runs", "ok", "failed", "cut\nshort", "running", "time\nused", "median\nrun"):
            t.add_column(name, justify="right", no_wrap=True)   # a count or '0.6 s' is never broken
        details = store.run_details(utc(since)) if by == "kernel" else None
        for g in summarise(rows, by, details):
            t.add_row(terminal(g.key), str(g.runs), str(g.ok), str(g.failed), str(g.cut_short), str(g.running),
                      duration_text(g.total_s), duration_text(g.median_s))
        print_whole(stdout_console(), t)
        return
    from clusterbench.output.render_text import terminal

    t = Table()
    # an id and a duration never wrap, a date and a time are never broken (output/whole_columns.py); the
    # others wrap between words, and a word longer than the column (a path) folds
    for name in ("id", "label", "status", "started (UTC)", "duration", "host", "user", "batch job", "command"):
        t.add_column(name, no_wrap=name in ("id", "duration"),
                     overflow="ellipsis" if name in ("status", "started (UTC)") else "fold")
    for r in rows:
        dur = duration_text((r.finished - r.started).total_seconds()) if r.finished else "-"
        status = r.status + (" (imported)" if r.imported_from else "")
        command = terminal(r.command or r.imported_from)
        if r.status == "ok" and r.message:   # ok, with a warning: a cluster run whose link matrix was skipped
            status += " (warning)"
            command += f"\nwarning: {terminal(r.message)}"
        t.add_row(str(r.id), terminal(r.label), status, second_text(r.started), dur,
                  terminal(r.host), terminal(r.user), terminal(r.batch_job), command)
    print_whole(stdout_console(), t)
