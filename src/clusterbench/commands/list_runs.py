from __future__ import annotations

import click

from clusterbench.analysis.run_groups import GROUPS
from clusterbench.commands.options import DAY, Digits, db_option, utc, width_option
from clusterbench.output.counted_text import counted
from clusterbench.store.opening import open_store

STATUSES = ("ok", "failed", "interrupted", "killed", "running")


@click.command("list")
@click.option("--label", help="Only runs with this label.")
@click.option("--user", help="Only runs started by this user.")
@click.option("--host", help="Only runs started on this host (its name in any case).")
@click.option("--status", type=click.Choice(STATUSES), help="Only runs that ended so (or are still running).")
@click.option("--kernel", help="Only runs with a step of this kernel (e.g. randio); a name neither cbk nor a stored run "
                   "knows is refused (exit 2).")
@click.option("--since", type=DAY, help="Only runs started on or after this UTC date (YYYY-MM-DD[ HH:MM]).")
@click.option("--until", type=DAY, help="Only runs started before this UTC date (after --since).")
@click.option("--by", type=click.Choice(sorted(GROUPS)),
              help="Instead of the runs, one line per month/user/host/...: how many ran, failed or were "
                   "cut short, and how long they took. Counts every matching run (--limit is ignored).")
@click.option("--limit", type=Digits(1, unit="runs"), default=50, show_default=True, help="Newest runs listed.")
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

    if since and until and since >= until:   # no run can start in between: it said "no matching runs"
        from clusterbench.output.date_text import cutoff_text

        raise click.BadParameter(f"--since {cutoff_text(utc(since))} is not before --until {cutoff_text(utc(until))}: "
                                 "no run can start in between", param_hint="'--until'")
    store = open_store(db_url)
    if kernel:   # a misspelt kernel is refused, as trend refuses it: "no matching runs" read as none ran
        from clusterbench.analysis.figure_names import cbk_kernel_names, refuse_unknown_kernel

        refuse_unknown_kernel(store, kernel, cbk_kernel_names())
    rows = store.list_runs(label, None if by else limit, user=user, host=host, status=status, kernel=kernel,
                           since=utc(since), until=utc(until))
    if not rows:
        named = {"label": label, "user": user, "host": host}
        click.echo(_nothing_matched(store, named, status, kernel, since, until))
        return
    if by:
        from clusterbench.analysis.run_groups import summarise
        from clusterbench.report.run_list_terminal import print_groups

        details = store.run_details(utc(since)) if by == "kernel" else None
        print_groups(stdout_console(), f"{counted(len(rows), 'run')} by {by}", by, summarise(rows, by, details))
        return
    from clusterbench.report.run_list_terminal import print_runs

    print_runs(stdout_console(), rows)


def _nothing_matched(store, named: dict, status, kernel, since, until) -> str:
    """The empty answer with the filters that made it, and a label, user or host no run has at all
    named with those the store holds: 'no matching runs' alone left `--host VM` (runs on vm) a riddle."""
    from clusterbench.output.date_text import cutoff_text
    from clusterbench.output.render_text import plain
    from clusterbench.store.queries import same_host

    given = [f"{k} {v}" for k, v in (*named.items(), ("status", status), ("kernel", kernel)) if v]
    given += [f"{k} {cutoff_text(utc(v))}" for k, v in (("since", since), ("until", until)) if v]
    text = "no matching runs" + (f" ({', '.join(given)})" if given else "") + f" in {store.url}"
    for column, value in named.items():
        if value:
            held = store.run_values(column)
            if not any(same_host(value, h) if column == "host" else value == h for h in held):
                shown = ", ".join(held[:10]) + (f", ... ({len(held)})" if len(held) > 10 else "")
                text += f"; no run has {column} {value!r} ({column}s: {shown or 'none'})"
    return plain(text)
