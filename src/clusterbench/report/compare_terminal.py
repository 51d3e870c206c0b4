"""The terminal view of a comparison: environment differences first (the
one line that differs often explains the result), then the table."""
from __future__ import annotations

from rich.console import Console
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from clusterbench.analysis.comparison import Table as Comparison
from clusterbench.environment import value_text
from clusterbench.environment.key_words import key_words
from clusterbench.output.counted_text import counted
from clusterbench.output.render_text import plain, terminal
from clusterbench.report import table_units
from clusterbench.report.compare_markdown import env_blocks, no_difference_text
from clusterbench.report.compare_data import limit_cell, outliers_excluded_text, ratio_text, row_units, unit_key
from clusterbench.output.figure_digits import median
from clusterbench.report.terminal import ci_text
from clusterbench.output.unit_symbols import unit_shown
from clusterbench.output.whole_columns import print_whole
from clusterbench.results.sample import condition_shown

VERDICT_STYLE = {"faster": "green", "slower": "red"}


def cell(p, cfg: str, mark: str = "", shown: table_units.ShownUnit | None = None) -> str:
    """shown: the unit the row is shown in (compare_data.row_units); None: the records' unit."""
    s = (shown or table_units.ShownUnit(p.unit)).summary(p.summary(cfg))
    return f"{median(s)} [{ci_text(s)}] n={s.n}" + (f" [yellow]{mark}[/yellow]" if mark else "")


def folding(t: Table) -> Table:
    """A word longer than its column (a path, a long step title) folds onto the next line, never cut with '…'."""
    for c in t.columns:
        c.overflow = "fold"
    return t


def wider_than(t: Table, width: int) -> bool:
    """Whether rich draws the table wider than `width` (and so crops it)."""
    import io

    probe = Console(width=width, file=io.StringIO(), color_system=None)
    with probe.capture() as captured:
        probe.print(folding(t))
    return max((len(line) for line in captured.get().splitlines()), default=0) > width \
        or any(line.startswith("┏") and not line.endswith("┓") for line in captured.get().splitlines())


def print_blocks(console: Console, title: str, names: list[str], rows: list, limits: bool) -> None:
    """The comparison on a terminal too narrow for its table (an 80-column one
    holds no two configurations' medians, CIs, ratio, verdict and limit side by
    side without breaking a figure): per measurement its title, then a line per
    configuration, under each other configuration its ratio to the baseline and
    its verdict, then the limit. Lines wrap between words, under their own
    column, so every figure is whole and a wrapped verdict is not read as a
    configuration."""
    console.print(title, highlight=False)
    for row in rows:
        (_, measurement), (_, mode), (_, unit) = row[:3]
        said = ", ".join(x for x in (mode, unit) if x)
        console.print(Text(measurement + (f" [{said}]" if said else ""), style="bold"))
        grid = Table.grid(padding=(0, 2))
        grid.add_column(no_wrap=True)
        grid.add_column(overflow="fold")
        for i, n in enumerate(names):
            grid.add_row(Text(plain(n)), Text(row[3 + i][1]))
            if i:
                ratio, verdict = row[3 + len(names) + 2 * (i - 1)][1], row[4 + len(names) + 2 * (i - 1)][1]
                style = next((v for k, v in VERDICT_STYLE.items() if verdict.startswith(k)), None)
                # "1.912 x base (+91.2%): faster (p=0.0238)": the table's ratio column, said in words
                versus = f"{ratio.replace(' ', f' x {plain(names[0])} ', 1)}: " if ratio != "-" else ""
                grid.add_row("", Text.assemble(versus, (verdict, style or "")))
        if limits and row[-1][1]:
            grid.add_row("limit", Text(row[-1][1]))
        console.print(Padding(grid, (0, 0, 0, 2), expand=False))


def print_comparison(console: Console, table: Comparison, env_lines: int = 40) -> None:
    names = [c.name for c in table.configs]
    for d, alike in env_blocks(table.env_diffs):
        if alike:   # said, as the Markdown and HTML say it, not a table of headings over no rows
            console.print(Text(terminal(f"environment: {d.base} vs {d.other}: {no_difference_text(alike)}")))
            continue
        t = Table("environment key", terminal(f"{d.base} ({d.host_base})"), terminal(f"{d.other} ({d.host_other})"),
                  title=terminal(f"environment: {d.base} vs {d.other}: {counted(len(d.lines), 'difference')}"),
                  title_justify="left")
        for key, a, b in d.lines[:env_lines]:
            t.add_row(terminal(key_words(key)), terminal(value_text(key, a)), terminal(value_text(key, b)))
        if len(d.lines) > env_lines:
            t.add_row(f"... {len(d.lines) - env_lines} more (--env-lines)", "", "")
        print_whole(console, folding(t))   # a heading's words whole on a narrow terminal ('environmen|t key')
    excluded = f", {terminal(outliers_excluded_text(table))}" if table.exclude_outliers else ""
    title = f"comparison, baseline {terminal(names[0])}{excluded}"
    heads = ["measurement", "mode", "unit", *[f"{terminal(n)}: median [CI] n" for n in names]]
    ratios = set()   # the ratio columns, right-justified
    for n in names[1:]:
        ratios.add(len(heads))
        heads += [f"{terminal(n)}/{terminal(names[0])}", table.verdict_heading(n)]
    limits = any(p.limit(n) for p in table.points for n in names)
    if limits:
        heads.append("limit")
    notes: list[str] = []  # the warnings of flagged cells, numbered as marked
    rows = []   # per point: the cells, each as (markup, its plain text)
    units = row_units(table)
    for p in table.points:
        u = units[unit_key(p)]   # one unit per step and unit: 119.6 GiB/s, not 122,519 MiB/s
        cells = []
        for n in names:
            marks = []
            for w in p.warnings(n):
                notes.append(f"{n}, {table.title(p)}: {w}")
                marks.append(f"!{len(notes)}")
            cells.append((cell(p, n, " ".join(marks), u), cell(p, n, shown=u) + (" " + " ".join(marks) if marks else "")))
        row = [(terminal(table.title(p)), plain(table.title(p))), (terminal(condition_shown(p.mode)), plain(condition_shown(p.mode))),
               (unit_shown(u.unit), unit_shown(u.unit)), *cells]
        for n in names[1:]:
            c = p.versus(names[0], n)
            ratio = ratio_text(c)
            verdict = plain(p.verdict_text(names[0], n))   # it names the configurations when flagged
            style = VERDICT_STYLE.get(c.verdict.value)
            row += [(ratio, ratio), (f"[{style}]{terminal(verdict)}[/{style}]" if style else terminal(verdict), verdict)]
        if limits:
            text = plain("; ".join(f"{n}: {limit_cell(lim)}" for n in names if (lim := p.limit(n))))
            row.append((terminal(text), text))
        rows.append(row)
    # a table whose every word fits its column; narrower than that, each measurement as a block of lines
    shown = [Text.from_markup(h).plain for h in heads]
    words = [max([len(w) for r in rows for w in r[i][1].split()] + [len(w) for w in shown[i].split()])
             for i in range(len(heads))]
    spare = console.width - (sum(words) + 3 * len(heads) + 1)
    if spare >= 0:
        t = Table(title=title, title_justify="left")
        for i, head in enumerate(heads):
            t.add_column(head, justify="right" if i in ratios else "left", min_width=words[i])
        for row in rows:
            t.add_row(*(markup for markup, _ in row))
        if wider_than(t, console.width):
            # rich's share cut a column below its longest word, then widened it again: the table
            # would be cropped at the terminal's edge. Each column its longest word, and a share
            # of what is left by what it lacks of its longest cell.
            lacks = [max([len(r[i][1]) for r in rows] + [len(shown[i])]) - words[i] for i in range(len(heads))]
            for column, word, lack in zip(t.columns, words, lacks):
                column.max_width = word + min(lack, spare * lack // max(1, sum(lacks)))
        console.print(folding(t))
    else:
        print_blocks(console, title, names, rows, limits)
    for i, note in enumerate(notes, 1):
        # plain: rich Text is never markup, but it keeps ESC (the note names a label, a warning a --dir)
        console.print(Padding(Text.assemble((f"!{i} warning:", "yellow"), " ", plain(note)), (0, 0, 0, 2),
                              expand=False))
    from clusterbench.analysis.comparison import sweeps

    for sw in sweeps(table.points):
        # one unit for the whole sweep, so its values read down a column
        u = table_units.of_summaries(sw.unit, [p.summary(n) for p in sw.points for n in names if n in p.values])
        st = Table(sw.param, *[f"{terminal(n)} median [CI]" for n in names],
                   title=terminal(f"sweep of {sw.param}: {sw.title} [{unit_shown(u.unit)}]"),
                   title_justify="left")
        for v, p in zip(sw.values, sw.points):
            st.add_row(terminal(v), *[f"{median(s)} [{ci_text(s)}]" for n in names
                                      for s in [u.summary(p.summary(n))]])
        console.print(folding(st))
    for p in table.partial:
        console.print(terminal(f"  only in {', '.join(n for n in names if n in p.values)}: {table.title(p)} {condition_shown(p.mode)}".rstrip()))
