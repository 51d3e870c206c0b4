"""HTML: one self-contained file (inline CSS and SVG, no script, nothing
loaded from anywhere), for a browser or to attach to a report."""
from __future__ import annotations

import re
from collections import defaultdict

from clusterbench.output.counted_text import counted
from clusterbench.report import reading_guide, step_table, table_units
from clusterbench.report.summary_html import summary_section
from clusterbench.report.data import Report, extent_text, kernel_command, step_titles
from clusterbench.report.environment_said import same_as_earlier, same_text
from clusterbench.environment import value_text
from clusterbench.environment.key_words import key_words
from clusterbench.importers.no_host import NO_HOST_WORDS
from clusterbench.report.compare_markdown import PARTIAL_INTRO, env_blocks, no_difference_text
from clusterbench.report.compare_data import (group_text, median_beside, n_after_interval, outliers_excluded_text,
                                              ratio_text, row_units, shared_tails, unit_key, warning_marks)
from clusterbench.report.footnotes import Footnotes, env_diff_rows
from clusterbench.report.headline import point_flag
from clusterbench.output import figure_digits
from clusterbench.output.figure_digits import number
from clusterbench.report.terminal import ci_words
from clusterbench.results.sample import condition_shown
from clusterbench.report.verdict_notes import ReasonNotes
from clusterbench.report.when import started_text
from clusterbench.store import run_kinds
from clusterbench.output.unit_symbols import unit_shown

CSS = """
body{font-family:system-ui,sans-serif;margin:2em;max-width:75em;color:#222}
table{border-collapse:collapse;margin:.5em 0 1em;max-width:100%}
th,td{border:1px solid #ccc;padding:.25em .6em;font-size:.9em;overflow-wrap:break-word}
svg{max-width:100%;height:auto} table.wide{width:100%} section.step svg,body>svg{width:100%}
table.step td:nth-child(-n+2){white-space:nowrap}
.meta{color:#555} .summary li{margin:.3em 0} sup{font-size:.7em}
.flag{color:#8a5a00;font-weight:bold} .notes{font-size:.85em}
h2,h3{break-after:avoid}
@page{margin:12mm}
@media print{body{margin:0;max-width:none;font-size:9pt} th,td{font-size:7.5pt;padding:.1em .3em}
 svg,table.headline,table.env,tr,li,dl.guide div{break-inside:avoid} thead{display:table-header-group} section.step{break-inside:avoid-page} h2,h3{break-after:avoid}
 h2+p,h3+p{break-after:avoid}
 a{color:inherit;text-decoration:none}}
td.n,td.cmp{text-align:right;font-variant-numeric:tabular-nums}
th{background:#f2f2f2}
tr.group{break-after:avoid} tr.group th{text-align:left;background:#e4e4e4}
.warn{color:#8a5a00} .faster{color:#0a7a0a;font-weight:bold} .slower{color:#b00;font-weight:bold}
.env td:first-child{font-weight:bold;white-space:nowrap} .env td+td,td code{overflow-wrap:anywhere}
code{background:#f6f6f6;padding:0 .2em} code.cmd>span{display:inline-block}
.fig,td.n{white-space:nowrap} td.ci small{font-size:.85em} td.ok{color:#0a5a0a} tr.flagged td:first-child{border-left:4px solid #8a5a00}
table.headline td:first-child{font-weight:bold}
footer{margin-top:2em;font-size:.85em}
dl.guide dt{font-weight:bold;margin-top:.4em} dl.guide dd{margin-left:1.5em}
td.limit{min-width:13em} td.limit div+div{margin-top:.3em}
table.step td.unit{white-space:nowrap}
@media print{td.limit{min-width:10em}}
"""


# A table's first row of <th> cells: made its <thead>, which a browser repeats
# at the top of every printed page the table runs onto (a bare first row is
# printed once, and a table cut by a page break went on without its headings).
HEAD_ROW = re.compile(r"(<table\b[^>]*>)(<tr><th\b.*?</tr>)", re.S)


def table_heads(html_text: str) -> str:
    return HEAD_ROW.sub(r"\1<thead>\2</thead>", html_text)


def esc(v) -> str:
    from clusterbench.output.render_text import html as render_html

    return render_html(v)


def mark(number: int) -> str:
    return f'<sup><a href="#note{number}">{number}</a></sup>'


def env_block(env: dict, notes: Footnotes) -> list[str]:
    from clusterbench.environment import summary_block

    rows = "".join(f"<tr><td>{esc(k)}</td><td>{notes.text(esc(v), mark)}</td></tr>" for k, v in summary_block(env))
    return [f'<table class="env">{rows}</table>']


def ci_cell(s, said: str = "") -> str:
    """The interval whole on one line, its coverage in words beside it, wrapping only between words;
    only the interval where its words are `said` (in the column's heading)."""
    words = ci_words(s)
    span, sep, rest = words.partition(" ")
    if said and rest == said:
        return f'<span class="fig">{esc(span)}</span>'
    rest = rest.replace(" %", "&nbsp;%").replace("n = ", "n&nbsp;=&nbsp;")
    return f'<span class="fig">{esc(span)}</span>' + (f" <small>{rest}</small>" if sep else "")



def step_table_html(table: step_table.StepTable) -> list[str]:
    """A step's table (report/step_table.py) in HTML: a figure right-aligned, a flag's "!" beside the
    median, an interval's coverage words in small type, the MB/s beside its unit."""
    heads = "".join(f"<th>{esc(c.heading)}</th>" for c in table.columns)
    out = [f'<table class="step"><tr>{heads}</tr>']
    for row in table.rows:
        cells = []
        for column, cell in zip(table.columns, row):
            if column.kind == step_table.FIGURE:
                flag = '&nbsp;<span class="flag">!</span>' if cell.flagged else ""
                cells.append(f"<td class=n>{esc(cell.text)}{flag}</td>")
            elif column.kind == step_table.INTERVAL:
                words = esc(cell.note).replace(" %", "&nbsp;%").replace("n = ", "n&nbsp;=&nbsp;")
                cells.append(f'<td class=ci><span class="fig">{esc(cell.text)}</span>'
                             + (f" <small>{words}</small>" if cell.note else "") + "</td>")
            elif column.kind == step_table.UNIT:
                cells.append(f'<td class="unit">{unit_cell_text(cell.text, cell.note)}</td>')
            elif column.kind == step_table.LIMIT:
                cells.append(f'<td class="limit">{esc(cell.text)}</td>')
            else:
                cells.append(f"<td>{esc(cell.text)}</td>")
        out.append("<tr>" + "".join(cells) + "</tr>")
    return out + ["</table>"]


def unit_cell_text(unit_text: str, beside_text: str) -> str:
    return esc(unit_text) + (f' <span class="fig">{esc(beside_text)}</span>' if beside_text else "")


def unit_cell(unit: str | None, beside_text: str) -> str:
    return unit_cell_text(unit_shown(unit), beside_text)


def latency_rows(st: dict) -> list[str]:
    """Latency percentiles the records carry (randio, tcp rr), as a table under the step's."""
    from clusterbench.report import latency

    found = latency.of_step(st)
    if not found:
        return []
    names = list(dict.fromkeys(n for p in found for n, _ in p.values_us))
    out = [f"<table><tr><th>latency ({unit_shown('us')}), median over repetitions</th>"
           + "".join(f"<th>{esc(n)}</th>" for n in names) + "</tr>"]
    for p in found:
        values = dict(p.values_us)
        out.append(f"<tr><td>{esc(p.label)}</td>" + "".join(f"<td class=n>{number(values.get(n))}</td>" for n in names)
                   + "</tr>")
    return out + ["</table>"]


def pair_rows(st: dict) -> list[str]:
    """E6: each TCP pair's median rate beside its link's nominal rate (the step's row is the aggregate)."""
    from clusterbench.report import pairs

    rows = [f"<tr><td>{esc(p.phase)}</td><td class=n>{p.pair}</td><td>{esc(p.server_host)} &rarr; "
            f"{esc(p.client_host)}</td><td class=n>{number(p.gbit_per_s)}</td><td>{esc(p.link)}</td>"
            f"<td class=n>{p.of_link}</td></tr>" for p in pairs.of_step(st)]
    if not rows:
        return []
    return ["<p>Each pair (the row above is their aggregate):</p><table><tr><th>phase</th><th>pair</th>"
            "<th>server &rarr; client</th><th>Gbit/s (median)</th><th>link</th><th>of link</th></tr>", *rows,
            "</table>"]


# A shell word: bare characters, quoted strings (shlex.join's '...'), escapes
SHELL_WORD = re.compile(r"""(?:[^\s'"\\]+|'[^']*'|"(?:\\.|[^"\\])*"|\\.)+""")


def command_html(command: str) -> str:
    """A command line as a code span that breaks only between its
    arguments: each word, an option with its value ("--repeat 2") kept as
    one, is a box no line break enters (unless it alone is wider than the
    line). A browser breaks a line after any hyphen: the report's command
    wrapped after "--" ("--" at a line's end, "report /tmp/r.html" on the
    next) and between "--db" and its URL. The text copied is the command
    as stored."""
    words = SHELL_WORD.findall(command)
    if SHELL_WORD.sub("", command).strip():   # not shell words (an unclosed quote): as it is
        return f"<code>{esc(command)}</code>"
    groups: list[str] = []
    for word in words:
        if groups and groups[-1].startswith("-") and " " not in groups[-1] and "=" not in groups[-1] \
                and not word.startswith("-"):
            groups[-1] += " " + word   # an option and its value (or a flag and the word after it: kept whole too)
        else:
            groups.append(word)
    return '<code class="cmd">' + " ".join(f"<span>{esc(g)}</span>" for g in groups) + "</code>"


def run_section(run: dict, notes: Footnotes, plotted_elsewhere: frozenset = frozenset(),
                env_said_in: int | None = None) -> list[str]:
    """plotted_elsewhere: what the comparison's plots show of this run (plotted_in_comparison);
    env_said_in: the earlier run whose test environment reads the same (environment_said)."""
    from clusterbench.report import step_plots

    out = [f"<h2>Run {run['id']}{' (' + esc(run['label']) + ')' if run['label'] else ''}: {esc(run['status'])}</h2>",
           f"<p>{esc(started_text(run))}" + (f" on {esc(run['host'])}" if run["host"] else "")
           + (f" by {esc(run['user'])}" if run["user"] else "")
           + (f": {command_html(run['command'])}" if run["command"] else "") + "</p>"]
    if run.get("message"):   # why it failed, or its warning ("part of the suite skipped: ...")
        out.append(f'<p class="warn">{esc(run["message"])}</p>')
    if run.get("imported_from"):
        out.append(f"<p>Imported from {esc(run['imported_from'])}.</p>")
    if len(run["environments"]) > 1:   # a cluster run, or a run over --hosts
        from clusterbench.report.cluster_html import environment_section

        out += environment_section(run, notes)   # the same on every host once, then what differs
    else:
        for host, env in run["environments"].items():
            out += [f"<h3>Test environment: {esc(host)}</h3>",
                    *([f"<p>{esc(same_text(env_said_in))}</p>"] if env_said_in else env_block(env, notes))]
    plots_after = step_plots.after_step(run["steps"], run["id"], plotted_elsewhere)
    titles = step_titles(run["steps"])
    for st in run["steps"]:
        out.append(f'<section class="step"><h3>{esc(titles[st["id"]])}: {esc(st["status"])}</h3>')
        out.append(f"<p>{command_html(kernel_command(st))}, {esc(extent_text(st))}</p>")
        from clusterbench.conditions.apply import cgroup_caption

        if cgroup_caption(st.get("build")):
            out.append(f"<p>{esc(cgroup_caption(st.get('build')))}</p>")
        from clusterbench.report.gpu_caption import gpu_caption

        if gpu_caption(st.get("build")):
            out += [f"<p>{esc(line)}</p>" for line in gpu_caption(st.get("build")).splitlines()]
        if st["message"]:
            out.append(f'<p class="warn">{esc(st["message"])}</p>')
        if not st["summary"]:   # skipped, or failed before a figure: its message says why, no empty table
            out += plots_after.get(st["id"], []) + ["</section>"]
            continue
        out += step_table_html(step_table.of_step(st))
        out += latency_rows(st)
        out += pair_rows(st)
        from clusterbench.results.warning_fold import step_lines

        warnings = step_lines(st["summary"])
        if warnings:
            out.append("<ul>" + "".join(f'<li class="warn">warning: {esc(w)}</li>' for w in warnings) + "</ul>")
        out += plots_after.get(st["id"], [])
        out.append("</section>")
    return out


def _cell(p, n: str, notes_of_cell: list[int], shown: table_units.ShownUnit, said: str = "") -> str:
    """shown: the unit of the comparison's row (compare_data.row_units); said: the interval's words
    and n, where the column's heading says them for every cell (compare_data.shared_tails)."""
    s = shown.summary(p.summary(n))
    extra = median_beside(p, n, shown)
    marks = "".join(f'&nbsp;<span class="flag">!{i}</span>' for i in notes_of_cell)
    extra = f'<br><small class="fig">{esc(extra)}</small>' if extra else ""   # no empty line under an IOPS figure
    if said:
        interval = f'<span class="fig">{esc(ci_words(s).partition(" ")[0])}</span>'
    else:
        interval = ci_cell(s) + n_after_interval(s).replace(" = ", "&nbsp;=&nbsp;")
    return f'<td class=cmp><span class="fig">{figure_digits.median(s)}{marks}</span>{extra}<br><small>{interval}</small></td>'


PLOT_MOST_GROUPS = 24   # a comparison plot's measurements at most: more are no longer read


def comparison_plot_points(table) -> dict[tuple, list]:
    """(kernel, unit) -> the points its comparison plot shows: one plot per kernel and unit, as on one
    MiB/s axis a disk's GiB/s hid the MPI and memory bars beside it."""
    by_kernel_unit = defaultdict(list)
    for p in table.points:
        by_kernel_unit[(p.kernel, p.unit)].append(p)
    return {k: pts[:PLOT_MOST_GROUPS] for k, pts in by_kernel_unit.items()}


def plotted_in_comparison(table) -> dict[int, frozenset]:
    """Run id -> the (step name, measurement) the comparison's plots show of it, for each run that is its
    configuration's only one: its step plots would draw those figures again. None with outliers
    excluded, where the comparison's figures are not the step's."""
    if table.exclude_outliers:
        return {}
    only = {c.name: c.run_ids[0] for c in table.configs if len(c.run_ids) == 1}
    out: dict[int, set] = {}
    for pts in comparison_plot_points(table).values():
        for p in pts:
            for name in p.values:
                if name in only:
                    out.setdefault(only[name], set()).add((p.step, p.key))
    return {run_id: frozenset(keys) for run_id, keys in out.items()}


def comparison_section(table, notes: Footnotes) -> list[str]:
    from clusterbench.report import plots

    names = table.names
    excluded = f", {esc(outliers_excluded_text(table))}" if table.exclude_outliers else ""
    out = [f"<h2>Comparison, baseline {esc(names[0])}{excluded}</h2>"]
    said = shared_tails(table)
    head = "".join(f"<th>{esc(n)}: median</th>" for n in names)
    head += "".join(f"<th>{esc(n)}/{esc(names[0])}</th><th>{esc(table.verdict_heading(n))}</th>" for n in names[1:])
    limits = any(p.limit(n) for p in table.points for n in names)
    out.append(f'<table class="wide"><tr><th>measurement</th><th>mode</th><th>unit</th>{head}'
               + ("<th>limit</th>" if limits else "") + "</tr>")
    warnings = Footnotes()
    reasons = ReasonNotes()
    units = row_units(table)
    columns = 3 + 3 * len(names) - 2 + (1 if limits else 0)
    group = None
    for p in table.points:
        u = units[unit_key(p)]   # one unit per step and unit: 119.6 GiB/s, not 122,519 MiB/s
        if table.group(p) != group:   # the step's title once, across the table, over its rows
            group = table.group(p)
            out.append(f'<tr class="group"><th colspan={columns}>{esc(group_text(group, said[group]))}</th></tr>')
        cells = ""
        for n in names:
            cells += _cell(p, n, warning_marks(table, p, n, warnings), u, said[group])
        for n in names[1:]:
            c = p.versus(names[0], n)
            cells += (f'<td class=n>{ratio_text(c)}</td><td class="{c.verdict.value.split()[0].strip(",")}">'
                      f"{reasons.cell(p.verdict_text(names[0], n), c.reason)}</td>")
        if limits:   # as wide as a limit's words need: beside nowrap figures and a wide verdict it fell to a word a line
            cells += '<td class="limit">' + "".join(f"<div>{esc(n)}: {'<b>!</b> ' if lim.exceeded else ''}{esc(lim.text)}</div>"
                                                   for n in names if (lim := p.limit(n))) + "</td>"
        out.append(f"<tr><td>{esc(p.label)}</td><td>{esc(condition_shown(p.mode))}</td><td>{esc(unit_shown(u.unit))}</td>{cells}</tr>")
    out.append("</table>")
    out += reasons.html()
    if warnings.reasons:
        out.append('<ol class="notes">' + "".join(f'<li class="warn">warning: {esc(w)}</li>' for w in warnings.reasons)
                   + "</ol>")
    if table.partial:   # one list: a paragraph each, twelve of them ran down half an A4 page
        out.append(f"<p>{esc(PARTIAL_INTRO)}</p><ul class=\"partial\">" + "".join(
            f"<li>only in {esc(', '.join(n for n in names if n in p.values))}: {esc(f'{table.title(p)} {condition_shown(p.mode)}'.rstrip())}</li>"
            for p in table.partial) + "</ul>")
    for line in table.imported:
        out.append(f"<p>note: {esc(line)}; its environment is what the file states, the rest not recorded</p>")
    out += [f"<p>note: {esc(line)}</p>" for line in table.pooled]
    for (kernel, unit), pts in comparison_plot_points(table).items():
        # one axis unit for the plot, as its rows' figures are shown (a larger one where they need it)
        u = table_units.of_summaries(unit, [p.summary(n) for p in pts for n in names if n in p.values])
        series = {n: [(s.median, s.ci_low, s.ci_high) for p in pts for s in [u.summary(p.summary(n))]] for n in names}
        # every flagged bar hatched with its reason, as its table cell is marked: a warning too, not only a ceiling
        flags = {n: [point_flag(p, n) for p in pts] for n in names}
        out.append(plots.bars(f"{kernel}: median per configuration, bars = interval of the median ({unit_shown(u.unit)})",
                              u.unit or "", [f"{table.title(p)} {condition_shown(p.mode)}".strip() for p in pts], series, flags=flags))
    for d, alike in env_blocks(table.env_diffs):
        if alike:   # said, not a table of headings over no rows
            out.append(f"<h3>Environment: {esc(d.base)} vs {esc(d.other)}</h3><p>{esc(no_difference_text(alike))}</p>")
            continue
        out.append(f"<h3>Environment: {esc(d.base)} vs {esc(d.other)} ({counted(len(d.lines), 'difference')})</h3><table>"
                   f"<tr><th>key</th><th>{esc(d.base)} ({esc(d.host_base)})</th>"
                   f"<th>{esc(d.other)} ({esc(d.host_other)})</th></tr>")
        for key, a, b, why_a, why_b in env_diff_rows(d.lines):
            va = f"not available{mark(notes.number(why_a))}" if why_a else esc(value_text(key, a))
            vb = f"not available{mark(notes.number(why_b))}" if why_b else esc(value_text(key, b))
            out.append(f"<tr><td>{esc(key_words(key))}</td><td>{va}</td><td>{vb}</td></tr>")
        out.append("</table>")
    return out


def sweep_section(points, names: list[str]) -> list[str]:
    from clusterbench.analysis.comparison import sweeps
    from clusterbench.report import plots

    out = []
    for sw in sweeps(points):
        head = "".join(f"<th>{esc(n)}: median [CI]</th>" for n in names)
        out.append(f"<h3>Sweep of {esc(sw.param)}: {esc(sw.title)}</h3><table><tr><th>{esc(sw.param)}</th>{head}</tr>")
        for v, p in zip(sw.values, sw.points):
            cells = "".join(f"<td class=n>{figure_digits.median(p.summary(n))}"
                            f"{' <span class=flag>!</span>' if p.flag(n) else ''} [{esc(ci_words(p.summary(n)))}]</td>"
                            for n in names if n in p.values)
            out.append(f"<tr><td>{esc(v)}</td>{cells}</tr>")
        out.append("</table>")
        xs = sw.numeric()
        if xs:
            series = {n: [(x, p.summary(n).median) for x, p in zip(xs, sw.points)
                                                      if p.summary(n).median is not None] for n in names}
            out.append(plots.curves(f"sweep of {sw.param}", sw.param, sw.unit or "", series,
                                    sizes=all(v >= 1024 for v in xs) or sw.param.endswith(("size", "bytes"))))
    return out


def system_name(runs: list[dict]) -> str:
    """The system a set of runs measured: its host, or its first host and how many more."""
    # a run's host may be NULL (a run stored by hand or by a tool before hosts were recorded): not a name
    hosts = list(dict.fromkeys(h for r in runs for h in (r["environments"] or {r["host"]: None}) if h))
    if NO_HOST_WORDS in hosts:   # said in full in each run's line; in a title, briefly
        hosts = [h for h in hosts if h != NO_HOST_WORDS] + ["a host not given"]
    if len(hosts) <= 2:
        return " and ".join(hosts) or "no host recorded"
    return f"{hosts[0]} and {len(hosts) - 1} other hosts"


def nodes_text(run: dict) -> str:
    """A cluster run's nodes: '4 nodes, h01, h02, h03, h04', '16 nodes, n001, n002 and 14 more'."""
    from clusterbench.analysis.cluster.analysis import nodes

    found = nodes(run)
    named = ", ".join(found) if len(found) <= 4 else f"{found[0]}, {found[1]} and {len(found) - 2} more"
    return f"{counted(len(found), 'node')}, {named}"


def measured_dates(runs: list[dict]) -> str:
    started = sorted(r["started"][:10] for r in runs if r["started"])
    if not started:
        return "no run started"
    return started[0] + (f" to {started[-1]}" if started[-1] != started[0] else "")


def config_runs(report: Report) -> dict[str, list[dict]]:
    """Each configuration (label or run id as given) with its runs."""
    groups: dict[str, list[dict]] = {}
    if not report.refs:
        return {str(r["id"]): [r] for r in report.runs}
    for ref, name in zip(report.refs, report.config_names):
        ids = set(report.store.resolve(ref)) if report.store is not None else set()
        groups[name] = [r for r in report.runs if r["id"] in ids or str(r["id"]) == ref]
    return groups


def title_of(report: Report) -> str:
    """The system measured (host, or hosts of each configuration), the labels and the dates."""
    when = measured_dates(report.runs)
    if report.comparison is not None:
        groups = config_runs(report)
        if all(r.get("kind") == run_kinds.CLUSTER for r in report.runs):
            # their nodes, as one cluster run's title has them: not "h01 and 4 other hosts", the launch host first
            what, on = "Cluster comparison", "of"
            systems = {n: " and ".join(dict.fromkeys(nodes_text(r) for r in runs)) for n, runs in groups.items()}
        else:
            what, on = "Performance comparison", "on"
            systems = {n: system_name(runs) for n, runs in groups.items()}
        if len(set(systems.values())) == 1:
            return f"{what}: {' vs '.join(groups)} {on} {next(iter(systems.values()))}, {when}"
        return f"{what}: {' vs '.join(f'{n} ({h})' for n, h in systems.items())}, {when}"
    labels = list(dict.fromkeys(r["label"] for r in report.runs if r["label"]))
    named = f" ({', '.join(labels)})" if labels else ""
    if len(report.runs) == 1 and report.runs[0].get("kind") == run_kinds.CLUSTER:
        # its nodes, not every snapshot: the host it was launched from is no node ("h01 and 4 other hosts" of 4)
        return f"Cluster report of {nodes_text(report.runs[0])}{named}, {when}"
    return f"Benchmark report: {system_name(report.runs)}{named}, {when}"


def systems_section(report: Report, notes: Footnotes) -> list[str]:
    """The systems measured: per configuration its runs, hosts and one line
    of environment each (one configuration: no configuration column); the
    hosts of a run whose line is the same share one row (systems_measured.py)."""
    from clusterbench.report import systems_measured

    several = report.comparison is not None
    rows = systems_measured.rows(report)
    head = ("<th>configuration</th>" if several else "") + \
        f"<th>{systems_measured.runs_heading(rows)}</th><th>{systems_measured.hosts_heading(rows)}</th>"
    return [f"<h2>{systems_measured.heading(report)}</h2><table>"
            f"<tr>{head}<th>environment</th></tr>",
            *("<tr>" + (f"<td>{esc(r.configuration)}</td>" if several else "") + f"<td class=n>{systems_measured.run_ids(r)}</td>"
              f"<td>{', '.join(esc(h) for h in r.hosts)}</td><td>{notes.text(esc(r.line), mark)}</td></tr>" for r in rows),
            "</table>"]


def footer(report: Report, today) -> str:
    """The version and the command that made the report, for whoever must make it again."""
    from clusterbench import __version__

    made_by = report.made_by or "; ".join(dict.fromkeys(r["command"] for r in report.runs if r["command"]))
    return (f'<footer class="meta"><hr>clusterbench {esc(__version__)}, report of {today:%Y-%m-%d} (UTC)'
            + (f", made by {command_html(made_by)}" if made_by else "")
            + ". Statistics: medians with distribution-free order-statistic intervals, read as "
            "\u201cHow to read the figures\u201d says.</footer>")


def render(report: Report) -> str:
    """Title, date and the systems compared; the executive summary; the
    comparison of the report's configurations (two or more) and the sweep
    tables of their measured points; every run; the footnotes."""
    import os
    from datetime import datetime, timezone

    notes = Footnotes()
    # SOURCE_DATE_EPOCH (reproducible builds): a fixed date for a reproducible report
    epoch = os.environ.get("SOURCE_DATE_EPOCH", "")
    today = datetime.fromtimestamp(int(epoch), timezone.utc) if epoch.isdigit() else datetime.now(timezone.utc)
    title = title_of(report)
    when = esc(measured_dates(report.runs))  # a date never breaks at its hyphens
    heading = esc(title)
    heading = heading[:heading.rindex(when)] + f'<span class="fig">{when}</span>' if when in heading else heading
    body = [f"<h1>{heading}</h1>"]
    body += systems_section(report, notes)
    body += summary_section(report)
    before_after = report.before_after
    if before_after is not None:   # two cluster runs: node by node first; pooled, h03's fault hid among its peers
        from clusterbench.report.cluster_html import before_after_section

        body += before_after_section(before_after)
    plotted = {}
    if report.comparison is not None:
        body += comparison_section(report.comparison, notes)
        plotted = plotted_in_comparison(report.comparison)
    elif report.no_comparison:
        body.append(f"<h2>No comparison</h2><p>{esc(report.no_comparison)}: each run is shown on its own.</p>")
    # a cluster run's scaling steps are its scaling table and plot (cluster_html.py): as sweeps of np,
    # one section per collective and size, they came before what was found across the nodes
    if report.points and not all(r.get("kind") == run_kinds.CLUSTER for r in report.runs):
        body += sweep_section(report.points, report.config_names)
    env_said_in = same_as_earlier(report.runs)
    for run in report.runs:
        if run.get("kind") == run_kinds.CLUSTER:
            from clusterbench.report.cluster_html import section

            body += section(run)
        body += run_section(run, notes, plotted.get(run["id"], frozenset()), env_said_in.get(run["id"]))
    body.append(reading_guide.html_section("\n".join(body)))
    if notes.reasons:
        body += ["<h2>Notes</h2>", '<ol class="notes">' + "".join(
            f'<li id="note{i}">not available: {esc(r)}</li>' for i, r in enumerate(notes.reasons, 1)) + "</ol>"]
    body.append(footer(report, today))
    body = [table_heads(part) for part in body]
    return (f"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{esc(title)}</title>"
            f"<style>{CSS}</style></head><body>\n" + "\n".join(body) + "\n</body></html>\n")
