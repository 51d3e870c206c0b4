"""The terminal view of a comparison: environment differences first (the
one line that differs often explains the result), then the table."""
from __future__ import annotations

from rich.console import Console
from rich.table import Table

from clusterbench.comparison import Table as Comparison
from clusterbench.report.terminal import _num, ci_text

VERDICT_STYLE = {"faster": "green", "slower": "red"}


def cell(p, cfg: str) -> str:
    s = p.summary(cfg)
    return f"{_num(s.median)} [{ci_text(s)}] n={s.n}"


def print_comparison(console: Console, table: Comparison, env_lines: int = 40) -> None:
    names = [c.name for c in table.configs]
    for d in table.env_diffs:
        t = Table("environment key", f"{d.base} ({d.host_base})", f"{d.other} ({d.host_other})",
                  title=f"environment: {d.base} vs {d.other}: {len(d.lines)} difference(s)", title_justify="left")
        for key, a, b in d.lines[:env_lines]:
            t.add_row(key, "" if a is None else str(a), "" if b is None else str(b))
        if len(d.lines) > env_lines:
            t.add_row(f"... {len(d.lines) - env_lines} more (--env-lines)", "", "")
        console.print(t)
    excluded = ", outliers excluded (modified Z > 3.5)" if table.exclude_outliers else ""
    t = Table(title=f"comparison, baseline {names[0]}{excluded}", title_justify="left")
    for col in ("measurement", "mode", "unit", *[f"{n}: median [CI] n" for n in names]):
        t.add_column(col)
    for n in names[1:]:
        t.add_column(f"{n}/{names[0]}", justify="right")
        t.add_column("verdict (p)")
    for p in table.points:
        row = [f"{p.step}: {p.label}", p.mode or "", p.unit or "", *[cell(p, n) for n in names]]
        for n in names[1:]:
            c = p.versus(names[0], n)
            ratio = f"{c.ratio:.3f} ({c.change:+.1%})" if c.ratio is not None else "-"
            verdict = c.verdict.value + (f" (p={c.p:.3g})" if c.p is not None else "")
            if c.reason:
                verdict += f": {c.reason}"
            style = VERDICT_STYLE.get(c.verdict.value)
            row += [ratio, f"[{style}]{verdict}[/{style}]" if style else verdict]
        t.add_row(*row)
    console.print(t)
    from clusterbench.comparison import sweeps

    for sw in sweeps(table.points):
        st = Table(sw.param, *[f"{n} median [CI]" for n in names], title=f"sweep of {sw.param}: {sw.title} [{sw.unit}]",
                   title_justify="left")
        for v, p in zip(sw.values, sw.points):
            st.add_row(v, *[f"{_num(p.summary(n).median)} [{ci_text(p.summary(n))}]" for n in names])
        console.print(st)
    for p in table.partial:
        console.print(f"  only in {', '.join(n for n in names if n in p.values)}: {p.step}: {p.label} {p.mode or ''}")
