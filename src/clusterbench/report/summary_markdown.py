"""The Markdown report's opening, as the HTML report's (summary_html.py):
its title (the system, the labels and the dates measured) and the headline
figures with their limits and verdicts. A Markdown report that opened on
the full comparison table left the integrator to write the title and pick
the figures a procurement document quotes by hand."""
from __future__ import annotations

from clusterbench.output.render_text import markdown as md
from clusterbench.report import headline
from clusterbench.report.compare_markdown import table_row
from clusterbench.analysis.cluster.findings import run_summary
from clusterbench.report.data import Report
from clusterbench.report.footnotes import Footnotes
from clusterbench.report.verdict_notes import ReasonNotes
from clusterbench.store import run_kinds
from clusterbench.output.figure_digits import at
from clusterbench.output.unit_symbols import unit_shown


def _value(v: float | None, unit: str, decimals: int | None = None) -> str:
    return md(f"{at(v, decimals)} {unit_shown(unit)}".strip())


def _bracketed(text: str) -> str:
    """A figure's companion as HTML sets it small: '(906 MB/s)', '(p50 143 us)'."""
    return text if text.startswith("(") else f"({text})"


def flagged_lines(steps: list[headline.FlaggedStep], cluster: bool = False) -> list[str]:
    """Every flagged figure once, under its step, as the HTML summary lists them."""
    if not steps:
        return [md(headline.nothing_flagged(cluster)), ""]
    count = sum(s.figures for s in steps)
    return [f"Flagged ({count}): not what their mode claims, or measured under a warning:", "",
            *[f"- **{md(s.title)}**: {md('; '.join(s.reasons))}" for s in steps], ""]


def run_headlines(run: dict) -> list[str]:
    figures = headline.figures(run)
    if not figures:
        return [md(headline.none_text(run))]
    rows = [table_row([md(f.name), _value(f.median, f.unit, f.places) + (f" {md(_bracketed(f.beside))}" if f.beside else ""),
                       md(f.limit) or "-", md(f.verdict)]) for f in figures]
    return [table_row(["headline figure (median)", "value", "limit", "verdict"]), "|---|---:|---|---|", *rows]


def compared_headlines(report: Report) -> list[str]:
    names = report.comparison.names
    found = headline.compared(report.comparison, report.runs)
    if not found:
        return []
    head = [md(n) for n in names] + [x for n in names[1:] for x in (md(f"{n}/{names[0]}"), "verdict")]
    rows = []
    reasons = ReasonNotes()   # a flag's and a verdict's reason lettered, said once under the table, as the HTML's
    for c in found:
        cells = [_value(c.medians[n], c.unit, c.places.get(n)) + (f" ! ({reasons.letter(c.flags[n])})" if c.flags[n] else "")
                 for n in names]
        cells += [x for n in names[1:] for x in (f"{c.ratio[n]:.3f}" if c.ratio[n] is not None else "-",
                                                 reasons.markdown_cell(c.verdict[n], c.reasons.get(n)))]
        rows.append(table_row([md(c.name), *cells]))
    return [table_row(["headline figure (median)", *head]), "|---|" + "---:|" * len(names) + "---:|---|" * (len(names) - 1),
            *rows, *reasons.markdown()]


def systems_lines(report: Report, notes: Footnotes) -> list[str]:
    """The HTML's "System measured" (systems_measured.py): hosts whose
    environment line is the same share a row; a value not read is "not
    available" with its note, as the HTML's."""
    from clusterbench.report import systems_measured
    from clusterbench.report.compare_markdown import note_mark

    several = report.comparison is not None
    rows = systems_measured.rows(report)
    head = (["configuration"] if several else []) + [systems_measured.runs_heading(rows),
                                                    systems_measured.hosts_heading(rows), "environment"]
    return [f"## {systems_measured.heading(report)}", "", table_row(head),
            "|" + ("---|" if several else "") + "---:|---|---|",
            *(table_row(([md(r.configuration)] if several else []) + [systems_measured.run_ids(r), md(", ".join(r.hosts)),
                                                                       md(notes.text(r.line, note_mark))])
              for r in rows), ""]


def opening_lines(report: Report, notes: Footnotes) -> list[str]:
    """The title, the systems measured and the summary, as the HTML report opens."""
    from clusterbench.report.html import title_of

    out = [f"# {md(title_of(report))}", "", *systems_lines(report, notes), "## Summary", ""]
    if report.before_after is not None:   # two cluster runs: the verdict, then each run's findings, not a pooled node
        out += [md(report.before_after.opening), ""]
    elif report.comparison is not None:
        from clusterbench.report import summary

        steps = summary.flagged_by_step(report.comparison)
        # what the data say, as the HTML's list under its table: the Markdown gave the table alone,
        # without "No measurement differs significantly from base" or the environment difference
        said = [f"- {md(t)}" for t in summary.sentences(report.comparison)]
        return out + compared_headlines(report) + [""] + said + [""] + (flagged_lines(steps) if steps else [])
    for run in report.runs:
        if len(report.runs) > 1:
            out += [f"### Run {run['id']}{' (' + md(run['label']) + ')' if run['label'] else ''}", ""]
        if run.get("kind") == run_kinds.CLUSTER:   # the nodes judged side by side, not one node's figures
            said = run_summary(run)
            out += [md(f"{said.head} Found:"), "", *(f"- {md(f)}" for f in said.found)] if said.found else \
                [md(f"{said.head} {said.nothing}")]
        else:
            out += run_headlines(run)
        out += [""] + flagged_lines(headline.flagged_by_step(run), run.get("kind") == run_kinds.CLUSTER)
    return out
