from __future__ import annotations

import click

from clusterbench.commands.options import DAY, Digits, db_option, utc, width_option
from clusterbench.errors import BadInput
from clusterbench.output.counted_text import counted
from clusterbench.output.date_text import cutoff_text, day_text, minute_text
from clusterbench.store.opening import open_store
from clusterbench.output.unit_symbols import unit_shown


def _figure(text: str) -> tuple[str, str, str | None]:
    parts = text.split(":")
    if len(parts) not in (2, 3) or not all(parts):
        raise BadInput(f"{text}: give the figure as KERNEL:PHASE or KERNEL:PHASE:MODE (e.g. seqio:read:cold)")
    return parts[0], parts[1], parts[2] if len(parts) == 3 else None


@click.command("trend")
@click.argument("figure")
@click.option("--label", help="Only runs with this label.")
@click.option("--host", help="Only this machine's figures: a per-node step's node (run cluster), else the "
                              "host the run started on (any case). Without it, each machine is its own series.")
@click.option("--param", "params", multiple=True, metavar="KEY=VALUE",
              help="Only steps run with this parameter value (repeatable), read by the parameter's type "
                   "(1g = 1024m): e.g. --param file-size=1g; --param sizes=1m picks mpi's 1 MiB messages.")
@click.option("--since", type=DAY, help="Only runs started on or after this UTC date.")
@click.option("--last", type=Digits(0, unit="runs"), default=30, show_default=True,
              help="Runs listed one per line, newest (the segments and change points cover them all).")
@db_option
@width_option
def command(figure, label, host, params, since, last, db_url):
    """A figure over time: one line per run that ended ok (median of its
    repetitions and the interval of the median with its real coverage), and the change points found with
    Pettitt's test, each with what changed in the environment. A figure the
    store never measured (no such kernel, or a phase or mode its runs never
    recorded) is refused (exit 2); filters that leave no run print a line
    saying so (exit 0).

    \b
    clusterbench trend seqio:read:cold --host node01
    clusterbench trend mpi:pingpong --param sizes=1m --label ib
    """
    from rich.table import Table

    from clusterbench.analysis import trend_series as trend
    from clusterbench.environment import change_text
    from clusterbench.report.compare_data import change_percent_text
    from clusterbench.output.console import stdout_console
    from clusterbench.output.whole_columns import print_whole
    from clusterbench.report.terminal import ci_text
    from clusterbench.output.figure_digits import number
    from clusterbench.analysis.stats import _median
    from clusterbench.output.render_text import plain, terminal

    kernel, phase, mode = _figure(figure)
    wanted = {}
    for p in params:
        key, sep, value = p.partition("=")
        if not sep or not key:
            raise BadInput(f"--param {p}: give KEY=VALUE")
        wanted[key.lstrip("-")] = value
    store = open_store(db_url)
    found = trend.load(store, kernel, phase, mode, label=label, host=host, params=wanted, since=utc(since))
    if not found:
        # the store measured the figure (load refuses one it never did): the filters, or no run that ended ok,
        # left nothing; said without them the line read as if the store had never measured it
        given = [f"label {label}" if label is not None else "", f"host {host}" if host is not None else "",
                 *(f"{k}={v}" for k, v in wanted.items()), f"since {cutoff_text(utc(since))}" if since else ""]
        filters = ", ".join(g for g in given if g)
        click.echo(plain(f"no run that ended ok measured {figure}" + (f" ({filters})" if filters else "")
                         + f" in {store.url}"))
        return
    console = stdout_console()
    for s in found:
        starts = {c.index: c for c in s.changes}
        bounds = [0] + sorted(starts) + [len(s.points)]
        seg = Table("from", "to", "runs", f"median of run medians ({unit_shown(s.unit)})", "change",
                    title=f"{terminal(s.title)}: {counted(len(s.points), 'run')}, {counted(len(s.changes), 'change point')}")
        for a, b in zip(bounds, bounds[1:]):
            medians = [p.median for p in s.points[a:b]]
            seg.add_row(day_text(s.points[a].started), day_text(s.points[b - 1].started),
                        str(b - a), number(_median(medians)),
                        change_percent_text(starts[a].change) if a in starts else "")
        print_whole(console, seg)   # a date or a figure never cut to '2026…' on a narrow terminal
        shown = s.points[-last:] if last else []
        first = len(s.points) - len(shown)
        # the interval as `show` writes it: its real coverage, not a nominal 95 %
        t = Table("run", "started (UTC)", "label", "host", f"median ({unit_shown(s.unit)})", "CI of median", "n", "change",
                  title=f"the last {len(shown)} of {counted(len(s.points), 'run')}" if shown else None)
        for column in t.columns[2:4]:
            column.overflow = "fold"   # a label or a host may be one word longer than the column
        for i, p in enumerate(shown, first):
            mark = f"◀ change {change_percent_text(starts[i].change)}" if i in starts else ""
            t.add_row(str(p.run_id), minute_text(p.started), terminal(p.label), terminal(p.host),
                      number(p.median), ci_text(p), str(p.n), mark)
        if shown:
            print_whole(console, t)
        for c in s.changes:
            before, after = s.points[c.index - 1], s.points[c.index]
            click.echo(f"change at {day_text(after.started)} (run {before.run_id} -> run {after.run_id}): median "
                       f"{number(c.before_median)} -> {number(c.after_median)} {unit_shown(s.unit)} ({change_percent_text(c.change)}), "
                       f"p = {c.p_value:.2g}")
            # plain: environment values are read from the machine (host names, paths), not trusted text
            for key, a, b in c.env_diff:
                click.echo(f"    {plain(change_text(key, a, b))}")
            if not c.env_diff:
                click.echo("    environment: no difference")
    click.echo(f"change points: {trend.METHOD}")
