"""The terminal view of a comparison: environment differences first (the
one line that differs often explains the result), then the table."""
from __future__ import annotations

from rich.console import Console
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from clusterbench.analysis.comparison import Table as Comparison
from clusterbench.output.render_text import plain, terminal
from clusterbench.report.compare_data import limit_cell
from clusterbench.report.terminal import _num, ci_text

VERDICT_STYLE = {"faster": "green", "slower": "red"}


def cell(p, cfg: str, mark: str = "") -> str:
    s = p.summary(cfg)
    return f"{_num(s.median)} [{ci_text(s)}] n={s.n}" + (f" [yellow]{mark}[/yellow]" if mark else "")


def folding(t: Table) -> Table:
    """A word longer than its column (a path, a long step title) folds onto the next line, never cut with '…'."""
    for c in t.columns:
        c.overflow = "fold"
    return t


def print_comparison(console: Console, table: Comparison, env_lines: int = 40) -> None:
    names = [c.name for c in table.configs]
    for d in table.env_diffs:
        t = Table("environment key", terminal(f"{d.base} ({d.host_base})"), terminal(f"{d.other} ({d.host_other})"),
                  title=terminal(f"environment: {d.base} vs {d.other}: {len(d.lines)} difference(s)"),
                  title_justify="left")
        for key, a, b in d.lines[:env_lines]:
            t.add_row(terminal(key), terminal(a), terminal(b))
        if len(d.lines) > env_lines:
            t.add_row(f"... {len(d.lines) - env_lines} more (--env-lines)", "", "")
        console.print(folding(t))
    excluded = ", outliers excluded (modified Z > 3.5)" if table.exclude_outliers else ""
    t = Table(title=f"comparison, baseline {terminal(names[0])}{excluded}", title_justify="left")
    for col in ("measurement", "mode", "unit", *[f"{terminal(n)}: median [CI] n" for n in names]):
        t.add_column(col)
    for n in names[1:]:
        t.add_column(f"{terminal(n)}/{terminal(names[0])}", justify="right")
        t.add_column("verdict (p)")
    limits = any(p.limit(n) for p in table.points for n in names)
    if limits:
        t.add_column("limit")
    notes: list[str] = []  # the warnings of flagged cells, numbered as marked
    for p in table.points:
        cells = []
        for n in names:
            marks = []
            for w in p.warnings(n):
                notes.append(f"{n}, {table.title(p)}: {w}")
                marks.append(f"!{len(notes)}")
            cells.append(cell(p, n, " ".join(marks)))
        row = [terminal(table.title(p)), terminal(p.mode), p.unit or "", *cells]
        for n in names[1:]:
            c = p.versus(names[0], n)
            ratio = f"{c.ratio:.3f} ({c.change:+.1%})" if c.ratio is not None else "-"
            verdict = terminal(p.verdict_text(names[0], n))   # it names the configurations when flagged
            style = VERDICT_STYLE.get(c.verdict.value)
            row += [ratio, f"[{style}]{verdict}[/{style}]" if style else verdict]
        if limits:
            row.append(terminal("; ".join(f"{n}: {limit_cell(lim)}" for n in names if (lim := p.limit(n)))))
        t.add_row(*row)
    console.print(folding(t))
    for i, note in enumerate(notes, 1):
        # plain: rich Text is never markup, but it keeps ESC (the note names a label, a warning a --dir)
        console.print(Padding(Text.assemble((f"!{i} warning:", "yellow"), " ", plain(note)), (0, 0, 0, 2),
                              expand=False))
    from clusterbench.analysis.comparison import sweeps

    for sw in sweeps(table.points):
        st = Table(sw.param, *[f"{terminal(n)} median [CI]" for n in names],
                   title=terminal(f"sweep of {sw.param}: {sw.title} [{sw.unit}]"),
                   title_justify="left")
        for v, p in zip(sw.values, sw.points):
            st.add_row(terminal(v), *[f"{_num(p.summary(n).median)} [{ci_text(p.summary(n))}]" for n in names])
        console.print(folding(st))
    for p in table.partial:
        console.print(terminal(f"  only in {', '.join(n for n in names if n in p.values)}: {table.title(p)} {p.mode or ''}"))
