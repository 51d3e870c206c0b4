"""HTML: one self-contained file (inline CSS and SVG, no script, nothing
loaded from anywhere), for a browser or to attach to a report."""
from __future__ import annotations

import html
from collections import defaultdict

from clusterbench.report.data import Report, params_text, step_title
from clusterbench.report.terminal import _num, ci_text, condition_header

CSS = """
body{font-family:system-ui,sans-serif;margin:2em;max-width:75em;color:#222}
table{border-collapse:collapse;margin:.5em 0 1em}
th,td{border:1px solid #ccc;padding:.25em .6em;font-size:.9em}
td.n{text-align:right;font-variant-numeric:tabular-nums}
th{background:#f2f2f2}
.warn{color:#8a5a00} .faster{color:#0a7a0a;font-weight:bold} .slower{color:#b00;font-weight:bold}
.env td:first-child{font-weight:bold;white-space:nowrap}
code{background:#f6f6f6;padding:0 .2em}
"""


def esc(v) -> str:
    return html.escape("" if v is None else str(v))


def env_block(env: dict) -> list[str]:
    from clusterbench.environment import summary_block

    rows = "".join(f"<tr><td>{esc(k)}</td><td>{esc(v)}</td></tr>" for k, v in summary_block(env))
    return [f'<table class="env">{rows}</table>']


def run_section(run: dict) -> list[str]:
    from clusterbench.report import plots

    out = [f"<h2>Run {run['id']}{' (' + esc(run['label']) + ')' if run['label'] else ''}: {esc(run['status'])}</h2>",
           f"<p>{esc(run['started'])} UTC on {esc(run['host'])} by {esc(run['user'])}: <code>{esc(run['command'])}</code></p>"]
    for host, env in run["environments"].items():
        out += [f"<h3>Test environment: {esc(host)}</h3>", *env_block(env)]
    for st in run["steps"]:
        out.append(f"<h3>{esc(step_title(st))}: {esc(st['status'])}</h3>")
        stop = f"; repetition stopped by {esc(st['stop_reason'])}" if st.get("stop_reason") else ""
        out.append(f"<p><code>{esc(st['kernel'])} {esc(params_text(st))}</code>, {st['ranks']} rank(s){stop}</p>")
        from clusterbench.conditions.apply import cgroup_caption

        if cgroup_caption(st.get("build")):
            out.append(f"<p>{esc(cgroup_caption(st.get('build')))}</p>")
        if st["message"]:
            out.append(f'<p class="warn">{esc(st["message"])}</p>')
        condition = condition_header(st["summary"], st["kernel"]) or "mode"
        out.append(f"<table><tr><th>phase</th><th>{esc(condition)}</th><th>n</th><th>median</th><th>CI of median</th>"
                   "<th>min</th><th>max</th><th>CV</th><th>unit</th></tr>")
        for r in st["summary"]:
            s = r.stats
            cv = f"{s.cv:.1%}" if s.cv is not None else "-"
            out.append(f"<tr><td>{esc(r.label)}</td><td>{esc(r.mode)}</td><td class=n>{r.n}</td>"
                       f"<td class=n>{_num(s.median)}</td><td class=n>{esc(ci_text(s))}</td>"
                       f"<td class=n>{_num(s.minimum)}</td><td class=n>{_num(s.maximum)}</td><td class=n>{cv}</td>"
                       f"<td>{esc(r.unit)}</td></tr>")
        out.append("</table>")
        warnings = list(dict.fromkeys(w for r in st["summary"] for w in r.all_warnings()))
        if warnings:
            out.append("<ul>" + "".join(f'<li class="warn">warning: {esc(w)}</li>' for w in warnings) + "</ul>")
        sized = defaultdict(list)  # one curve per measurement swept over sizes
        for r in st["summary"]:
            if r.size_bytes is not None and r.median is not None:
                sized[r.key.curve()].append((float(r.size_bytes), r.median))
        for unit in dict.fromkeys(k.unit for k in sized):
            series = {f"{k.phase} {k.condition or ''}".strip(): pts for k, pts in sized.items() if k.unit == unit}
            if any(len(pts) > 1 for pts in series.values()):
                out.append(plots.curves(step_title(st), "size (bytes)", unit or "", series))
        if not sized and len(st["summary"]) > 0:
            rows = [r for r in st["summary"] if r.median is not None]
            for unit in dict.fromkeys(r.unit for r in rows):
                same = [r for r in rows if r.unit == unit]
                s = [(r.stats.median, r.stats.ci_low, r.stats.ci_high) for r in same]
                out.append(plots.bars(f"{step_title(st)}: median, bars = CI of the median", unit or "",
                                      [f"{r.phase} {r.mode or ''}" for r in same], {f"run {run['id']}": s}))
    return out


def comparison_section(table) -> list[str]:
    from clusterbench.report import plots

    names = [c.name for c in table.configs]
    excluded = ", outliers excluded (modified Z &gt; 3.5)" if table.exclude_outliers else ""
    out = [f"<h2>Comparison, baseline {esc(names[0])}{excluded}</h2>"]
    for d in table.env_diffs:
        out.append(f"<h3>Environment: {esc(d.base)} vs {esc(d.other)} ({len(d.lines)} differences)</h3><table>"
                   f"<tr><th>key</th><th>{esc(d.base)}</th><th>{esc(d.other)}</th></tr>")
        out += [f"<tr><td>{esc(k)}</td><td>{esc(a)}</td><td>{esc(b)}</td></tr>" for k, a, b in d.lines]
        out.append("</table>")
    head = "".join(f"<th>{esc(n)}: median [CI] n</th>" for n in names)
    head += "".join(f"<th>{esc(n)}/{esc(names[0])}</th><th>verdict (p)</th>" for n in names[1:])
    out.append(f"<table><tr><th>measurement</th><th>mode</th><th>unit</th>{head}</tr>")
    for p in table.points:
        cells = "".join(f"<td class=n>{_num(p.summary(n).median)} [{esc(ci_text(p.summary(n)))}] "
                        f"n={p.summary(n).n}</td>" for n in names)
        for n in names[1:]:
            c = p.versus(names[0], n)
            ratio = f"{c.ratio:.3f} ({c.change:+.1%})" if c.ratio is not None else "-"
            verdict = c.verdict.value + (f" (p={c.p:.3g})" if c.p is not None else "") + \
                (f": {c.reason}" if c.reason else "")
            cells += f'<td class=n>{ratio}</td><td class="{c.verdict.value.split()[0]}">{esc(verdict)}</td>'
        out.append(f"<tr><td>{esc(p.step)}: {esc(p.label)}</td><td>{esc(p.mode)}</td><td>{esc(p.unit)}</td>{cells}</tr>")
    out.append("</table>")
    for p in table.partial:
        out.append(f"<p>only in {esc(', '.join(n for n in names if n in p.values))}: {esc(p.step)}: "
                   f"{esc(p.label)} {esc(p.mode)}</p>")
    by_unit = defaultdict(list)
    for p in table.points:
        by_unit[p.unit].append(p)
    for unit, pts in by_unit.items():
        pts = pts[:24]
        series = {n: [(p.summary(n).median, p.summary(n).ci_low, p.summary(n).ci_high) for p in pts] for n in names}
        out.append(plots.bars(f"median per configuration, bars = CI of the median ({unit})", unit or "",
                              [f"{p.step}: {p.label} {p.mode or ''}" for p in pts], series))
    return out


def sweep_section(points, names: list[str]) -> list[str]:
    from clusterbench.comparison import sweeps
    from clusterbench.report import plots

    out = []
    for sw in sweeps(points):
        head = "".join(f"<th>{esc(n)}: median [CI]</th>" for n in names)
        out.append(f"<h3>Sweep of {esc(sw.param)}: {esc(sw.title)}</h3><table><tr><th>{esc(sw.param)}</th>{head}</tr>")
        for v, p in zip(sw.values, sw.points):
            cells = "".join(f"<td class=n>{_num(p.summary(n).median)} [{esc(ci_text(p.summary(n)))}]</td>"
                            for n in names)
            out.append(f"<tr><td>{esc(v)}</td>{cells}</tr>")
        out.append("</table>")
        xs = sw.numeric()
        if xs:
            series = {n: [(x, p.summary(n).median) for x, p in zip(xs, sw.points) if p.summary(n).median is not None]
                      for n in names}
            out.append(plots.curves(f"sweep of {sw.param}", sw.param, sw.unit or "", series))
    return out


def render(report: Report) -> str:
    """The comparison of the report's configurations (two or more), the sweep
    tables of their measured points, then every run."""
    body = ["<h1>clusterbench report</h1>"]
    if report.comparison is not None:
        body += comparison_section(report.comparison)
    if report.points:
        body += sweep_section(report.points, report.config_names)
    for run in report.runs:
        if run.get("suite") == "cluster":
            from clusterbench.report.cluster_html import section

            body += section(run)
        body += run_section(run)
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>clusterbench report</title>"
            f"<style>{CSS}</style></head><body>\n" + "\n".join(body) + "\n</body></html>\n")
