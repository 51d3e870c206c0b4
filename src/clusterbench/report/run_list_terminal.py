"""`list`'s table of runs, fitted to the terminal. Below about 72 columns
its nine columns could not all keep their words whole, and the table was
drawn wider than the terminal, which wrapped every line. As `ps` leaves out
what it has no room for, columns are left out whole (GIVE_WAY), never cut,
and the caption names them: `--width` or `show ID` gives them back."""
from __future__ import annotations

from typing import Any, Iterator

from rich.console import Console
from rich.table import Table

from clusterbench.analysis.run_groups import run_seconds
from clusterbench.output.date_text import second_text
from clusterbench.output.render_text import terminal
from clusterbench.output.whole_columns import print_first_fitting
from clusterbench.report.when import duration_text

COLUMNS = ("id", "label", "status", "started (UTC)", "duration", "host", "user", "batch job", "command")
# The order the columns give way in: who and where first (a batch job, a user, a host), then how long,
# then the command line (the tallest cell); the label last. A column no listed run fills (a batch job
# outside a batch system) goes before all of them: it shows nothing. id, status and start never go:
# they name a run for `show` and say how it went; with them alone a run fits 40 columns.
GIVE_WAY = ("batch job", "user", "host", "duration", "command", "label")


def cells(r: Any) -> dict[str, str]:
    """A store.list_runs row as the columns' texts."""
    status = r.status + (" (imported)" if r.imported_from else "")
    warning = ""
    if r.status == "ok" and r.message:   # ok, with a warning: a cluster run whose link matrix was skipped
        status += " (warning)"
        warning = f"warning: {terminal(r.message)}"
    return {"id": str(r.id), "label": terminal(r.label), "status": status, "started (UTC)": second_text(r.started),
            "duration": duration_text(run_seconds(r.started, r.finished)),
            "host": terminal(r.host), "user": terminal(r.user), "batch job": terminal(r.batch_job),
            "command": terminal(r.command or r.imported_from), "warning": warning}


def _table(rows: list[dict[str, str]], left_out: list[str]) -> Table:
    """An ok run's warning is said under its command; with the command left
    out, under the table with the run's id (it went with the column, and
    only "ok (warning)" was left)."""
    below = [f"{', '.join(left_out)} left out to fit (--width)"] if left_out else []
    if "command" in left_out:
        below += [f"run {row['id']}: {row['warning']}" for row in rows if row["warning"]]
    t = Table(caption="\n".join(below) or None, caption_justify="left")
    shown = [name for name in COLUMNS if name not in left_out]
    # an id and a duration never wrap, a date and a time are never broken (output/whole_columns.py); the
    # others wrap between words, and a word longer than the column (a path) folds
    for name in shown:
        t.add_column(name, no_wrap=name in ("id", "duration"),
                     overflow="ellipsis" if name in ("status", "started (UTC)") else "fold")
    for row in rows:
        t.add_row(*(row[name] + (f"\n{row['warning']}" if name == "command" and row["warning"] else "")
                    for name in shown))
    return t


def layouts(rows: list[dict[str, str]]) -> Iterator[Table]:
    """The table with every column, then with one more left out at each step (GIVE_WAY, empty ones first)."""
    empty = [name for name in GIVE_WAY if not any(row[name].strip() for row in rows)]
    order = empty + [name for name in GIVE_WAY if name not in empty]
    for n in range(len(order) + 1):
        yield _table(rows, order[:n])


def print_runs(console: Console, runs: list[Any]) -> None:
    print_first_fitting(console, layouts([cells(r) for r in runs]))


GROUP_COLUMNS = ("runs", "ok", "failed", "cut short", "running", "time used", "median run")
# `list --by`'s columns give way in this order: what is still running (a count of now, not of the
# history), the median, the runs cut short, the time used; the group, its runs, ok and failed stay
GROUP_GIVE_WAY = ("running", "median run", "cut short", "time used")
CUT_SHORT_NOTE = "cut short: interrupted by a signal or killed"


def group_cells(g: Any) -> dict[str, str]:
    """A run_groups.Group as the columns' texts."""
    return {"runs": str(g.runs), "ok": str(g.ok), "failed": str(g.failed), "cut short": str(g.cut_short),
            "running": str(g.running), "time used": duration_text(g.total_s), "median run": duration_text(g.median_s)}


def _group_table(title: str, by: str, groups: list[Any], left_out: list[str]) -> Table:
    # the column's meaning goes under the table: in the title it read as if these runs were cut short
    notes = ([CUT_SHORT_NOTE] if "cut short" not in left_out else []) + (
        [f"{', '.join(left_out)} left out to fit (--width)"] if left_out else [])
    t = Table(title=title, caption="\n".join(notes), caption_justify="left")
    t.add_column(by, overflow="fold")   # a label or a host may be one long word
    shown = [name for name in GROUP_COLUMNS if name not in left_out]
    for name in shown:
        # a count or '0.6 s' is never broken; a two-word heading takes two lines
        t.add_column(name.replace(" ", "\n"), justify="right", no_wrap=True)
    for g in groups:
        texts = group_cells(g)
        t.add_row(terminal(g.key), *(texts[name] for name in shown))
    return t


def print_groups(console: Console, title: str, by: str, groups: list[Any]) -> None:
    """`list --by`: a line per group (run_groups.summarise), fitted as the runs' table is."""
    print_first_fitting(console, (_group_table(title, by, groups, list(GROUP_GIVE_WAY[:n]))
                                  for n in range(len(GROUP_GIVE_WAY) + 1)))
