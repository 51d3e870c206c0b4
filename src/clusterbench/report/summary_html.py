"""The HTML report's summary: the headline table (report/headline.py) an
integrator quotes, then what is flagged, once each, then the sentences
made from the data (report/summary.py)."""
from __future__ import annotations

from clusterbench.output.counted_text import counted
from clusterbench.report import headline, summary
from clusterbench.analysis.cluster.findings import run_summary
from clusterbench.report.data import Report
from clusterbench.report.verdict_notes import ReasonNotes
from clusterbench.store import run_kinds
from clusterbench.output.render_text import html as esc
from clusterbench.output.figure_digits import at
from clusterbench.output.unit_symbols import unit_shown


def _value(v: float | None, unit: str, beside: str = "", decimals: int | None = None) -> str:
    return f'<span class="fig">{at(v, decimals)}&nbsp;{esc(unit_shown(unit))}</span>' + (f" <small>{esc(beside)}</small>" if beside else "")


def run_headlines(run: dict) -> list[str]:
    figures = headline.figures(run)
    if not figures:
        return [f"<p>{esc(headline.none_text(run))}</p>"]
    rows = [f'<tr{" class=flagged" if f.flagged else ""}><td>{esc(f.name)}</td>'
            f"<td class=n>{_value(f.median, f.unit, f.beside, f.places)}</td><td>{esc(f.limit) or '-'}</td>"
            f'<td class="{"warn" if f.flagged else "ok" if f.verdict.startswith("ok") else ""}">{esc(f.verdict)}</td></tr>' for f in figures]
    return ['<table class="headline wide"><tr><th>headline figure (median)</th><th>value</th><th>limit</th>'
            "<th>verdict</th></tr>", *rows, "</table>"]


def flagged_list(steps: list[headline.FlaggedStep], cluster: bool = False) -> list[str]:
    if not steps:
        return [f"<p>{esc(headline.nothing_flagged(cluster))}</p>"]
    items = "".join(f"<li><b>{esc(s.title)}</b>: {esc('; '.join(s.reasons))}</li>" for s in steps)
    count = sum(s.figures for s in steps)
    return [f"<h3>Flagged ({count}): not what their mode claims, or measured under a warning</h3>",
            f'<ul class="summary">{items}</ul>']


def compared_headlines(report: Report) -> list[str]:
    table = report.comparison
    names = table.names
    found = headline.compared(table, report.runs)
    if not found:
        return []
    head = "".join(f"<th>{esc(n)}</th>" for n in names)
    head += "".join(f"<th>{esc(n)}/{esc(names[0])}</th><th>verdict</th>" for n in names[1:])
    rows = []
    reasons = ReasonNotes()
    for c in found:
        # a flag's reason lettered, said once under the table: in each cell, beside each configuration's
        # figure, it widened the figure columns until the figure's name stood in a column of five lines
        cells = "".join(f"<td class=n>{_value(c.medians[n], c.unit, decimals=c.places.get(n))}"
                        + (f'&nbsp;<span class="flag">!</span>&nbsp;<sup>({reasons.letter(c.flags[n])})</sup>'
                           if c.flags[n] else "")
                        + "</td>" for n in names)
        cells += "".join(f"<td class=n>{f'{c.ratio[n]:.3f}' if c.ratio[n] is not None else '-'}</td>"
                         f"<td>{reasons.cell(c.verdict[n], c.reasons.get(n))}</td>" for n in names[1:])
        rows.append(f"<tr><td>{esc(c.name)}</td>{cells}</tr>")
    return [f'<table class="headline wide"><tr><th>headline figure (median)</th>{head}</tr>', *rows, "</table>",
            *reasons.html()]


def summary_section(report: Report) -> list[str]:
    out = ["<h2>Summary</h2>"]
    if report.before_after is not None:   # two cluster runs: the verdict, then each run's findings, not a pooled node
        out.append(f'<p class="summary">{esc(report.before_after.opening)}</p>')
    elif report.comparison is not None:
        out += compared_headlines(report)
        out.append('<ul class="summary">' + "".join(f"<li>{esc(t)}</li>"
                                                     for t in summary.sentences(report.comparison)) + "</ul>")
        steps = summary.flagged_by_step(report.comparison)
        return out + (flagged_list(steps) if steps else [])
    for run in report.runs:
        if len(report.runs) > 1:
            out.append(f"<h3>Run {run['id']}{' (' + esc(run['label']) + ')' if run['label'] else ''}</h3>")
        rows = sum(len(st["summary"]) for st in run["steps"])
        if run.get("kind") == run_kinds.CLUSTER:   # the nodes judged side by side, not one node's figures
            said = run_summary(run)
            if said.found:   # a finding a line: as one paragraph they ran to ten lines of semicolons
                out.append(f'<p class="summary">{esc(said.head)} Found:</p>')
                out.append('<ul class="summary">' + "".join(f"<li>{esc(f)}</li>" for f in said.found) + "</ul>")
            else:
                out.append(f'<p class="summary">{esc(said.head)} {esc(said.nothing)}</p>')
        else:
            out += run_headlines(run)
        out.append(f"<p>{counted(rows, 'figure')} in {counted(len(run['steps']), 'step')}, run status {esc(run['status'])}; "
                   "every figure is in its step's table below.</p>")
        out += flagged_list(headline.flagged_by_step(run), run.get("kind") == run_kinds.CLUSTER)
    return out
