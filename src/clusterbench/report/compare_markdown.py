"""Markdown: a comparison as GitHub-flavoured tables, with the figures,
units, verdicts, warnings and notes of the HTML report's comparison
(html.py: comparison_section), each row on one line so that it survives a
paste into a wiki or a procurement document. `compare --format md` writes
it and the Markdown report opens with it. The statistics come from
analysis/comparison.py and the shared words from compare_data.py: nothing
is computed or worded anew here."""
from __future__ import annotations

from clusterbench.analysis.comparison import Point, Table
from clusterbench.environment import value_text
from clusterbench.environment.key_words import key_words
from clusterbench.output.counted_text import counted
from clusterbench.output.render_text import markdown as md
from clusterbench.report import table_units
from clusterbench.report.compare_data import (group_text, limit_cell, median_beside, n_after_interval,
                                              outliers_excluded_text, ratio_text, row_units, shared_tails, unit_key,
                                              warning_marks)
from clusterbench.report.footnotes import Footnotes, env_diff_rows
from clusterbench.output import figure_digits
from clusterbench.report.terminal import ci_words
from clusterbench.report.verdict_notes import ReasonNotes
from clusterbench.output.unit_symbols import unit_shown
from clusterbench.results.sample import condition_shown


# Said once over the measurements some configurations made and the others did not
PARTIAL_INTRO = "Not compared, measured by some of the configurations only:"


def table_row(cells: list[str]) -> str:
    """A table row of cells already escaped: md() turns a '|' inside a cell
    into '\\|' and a line break into a space, so no cell splits a row."""
    return "| " + " | ".join(cells) + " |"


def figure_cell(p: Point, config: str, marks: list[int], shown: table_units.ShownUnit | None = None,
                said: str = "") -> str:
    """The HTML's figure cell on one line: the median with the numbers of
    its warnings and MB/s (Gbit/s) beside it; then its interval, named by
    its coverage, and n (once), or the interval alone where the column's heading
    says the rest (`said`, compare_data.shared_tails). shown: the row's unit (compare_data.row_units)."""
    shown = shown or table_units.ShownUnit(p.unit)
    s = shown.summary(p.summary(config))
    extra = median_beside(p, config, shown)
    median = figure_digits.median(s) + "".join(f" !{i}" for i in marks) + (f" {extra}" if extra else "")
    interval = ci_words(s).partition(" ")[0] if said else f"{ci_words(s)}{n_after_interval(s)}"
    return md(f"{median}; {interval}")


def note_mark(number: int) -> str:
    """Where HTML puts a superscript: plain text, as any Markdown renderer shows it."""
    return f" (note {number})"


def comparison_lines(table: Table, notes: Footnotes) -> list[str]:
    """The comparison table, its numbered warnings, the measurements only
    some configurations made, imported runs, and the environment
    differences (a value not read: "not available" and a note in `notes`)."""
    names = table.names
    excluded = f", {outliers_excluded_text(table)}" if table.exclude_outliers else ""
    out = [f"## Comparison, baseline {md(names[0])}{md(excluded)}", ""]
    limits = any(p.limit(n) for p in table.points for n in names)
    # (heading, right-aligned): figures and ratios to the right, as the HTML's td.cmp and td.n
    said = shared_tails(table)
    head = [("measurement", False), ("mode", False), ("unit", False), *[(f"{n}: median", True) for n in names]]
    for n in names[1:]:
        head += [(f"{n}/{names[0]}", True), (table.verdict_heading(n), False)]
    if limits:
        head.append(("limit", False))
    out += [table_row([md(h) for h, _ in head]), "|" + "".join("---:|" if right else "---|" for _, right in head)]
    warnings = Footnotes()
    reasons = ReasonNotes()   # a verdict's reason lettered, said once under the table, as the HTML's
    units = row_units(table)
    group = None
    for p in table.points:
        u = units[unit_key(p)]   # one unit per step and unit: 119.6 GiB/s, not 122,519 MiB/s
        if table.group(p) != group:   # the step once, its rows under it, as the HTML's
            group = table.group(p)
            out.append(table_row([f"**{md(group_text(group, said[group]))}**"] + [""] * (len(head) - 1)))
        cells = [md(p.label), md(condition_shown(p.mode)), md(unit_shown(u.unit))]
        for n in names:
            cells.append(figure_cell(p, n, warning_marks(table, p, n, warnings), u, said[group]))
        for n in names[1:]:
            c = p.versus(names[0], n)
            cells += [md(ratio_text(c)), reasons.markdown_cell(p.verdict_text(names[0], n), c.reason)]
        if limits:
            cells.append(md("; ".join(f"{n}: {limit_cell(lim)}" for n in names if (lim := p.limit(n)))))
        out.append(table_row(cells))
    out += reasons.markdown()
    if warnings.reasons:
        out += [""] + [f"{i}. warning: {md(w)}" for i, w in enumerate(warnings.reasons, 1)]
    if table.partial:   # one list, as the HTML's
        out += ["", PARTIAL_INTRO, ""] + [f"- only in {md(', '.join(n for n in names if n in p.values))}: "
                                          f"{md(table.title(p))} {md(condition_shown(p.mode))}".rstrip() for p in table.partial]
    for line in table.imported:
        out += ["", f"note: {md(line)}; its environment is what the file states, the rest not recorded"]
    out += [line for note in table.pooled for line in ("", f"note: {md(note)}")]
    for d, alike in env_blocks(table.env_diffs):
        if alike:   # said, not a table of headings over no rows
            out += ["", f"### Environment: {md(d.base)} vs {md(d.other)}", "", md(no_difference_text(alike))]
            continue
        out += ["", f"### Environment: {md(d.base)} vs {md(d.other)} ({counted(len(d.lines), 'difference')})", "",
                table_row(["key", f"{md(d.base)} ({md(d.host_base)})", f"{md(d.other)} ({md(d.host_other)})"]),
                "|---|---|---|"]
        for key, a, b, why_a, why_b in env_diff_rows(d.lines):
            va = f"not available{note_mark(notes.number(why_a))}" if why_a else md(value_text(key, a))
            vb = f"not available{note_mark(notes.number(why_b))}" if why_b else md(value_text(key, b))
            out.append(table_row([md(key_words(key)), va, vb]))
    return out


def env_blocks(diffs: list) -> list[tuple]:
    """The environment differences as the reports give them: (diff, None)
    for one with lines, (first, every diff without a line of that pair of
    configurations) once, where the first of them stood: two cluster runs
    of 5 hosts had 5 blocks saying "do not differ", one per host."""
    alike: dict[tuple[str, str], list] = {}
    for d in diffs:
        if not d.lines:
            alike.setdefault((d.base, d.other), []).append(d)
    out, said = [], set()
    for d in diffs:
        if d.lines:
            out.append((d, None))
        elif (d.base, d.other) not in said:
            said.add((d.base, d.other))
            out.append((d, alike[(d.base, d.other)]))
    return out


def no_difference_text(alike: list) -> str:
    d = alike[0]
    if len(alike) == 1:
        return (f"The environments recorded for {d.base} ({d.host_base}) and {d.other} ({d.host_other}) "
                "do not differ in any key captured.")
    hosts = ", ".join(a.host_base if a.host_base == a.host_other else f"{a.host_base} vs {a.host_other}"
                      for a in alike)
    return (f"The environments recorded for {d.base} and {d.other} do not differ in any key captured "
            f"on any of {len(alike)} hosts, each against itself: {hosts}.")


def notes_lines(notes: Footnotes) -> list[str]:
    """The numbered reasons a value was not available, as the HTML's Notes."""
    if not notes.reasons:
        return []
    return ["", "## Notes", "", *[f"{i}. not available: {md(r)}" for i, r in enumerate(notes.reasons, 1)]]


def render(table: Table) -> str:
    """`compare --format md`: the comparison and its notes."""
    notes = Footnotes()
    return "\n".join(comparison_lines(table, notes) + notes_lines(notes)) + "\n"
