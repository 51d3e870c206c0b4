"""Markdown: the tables a person pastes into a wiki, a blog post or a
procurement document. It opens with the HTML report's title and headline
figures (summary_markdown.py); a report of several configurations then
gives their comparison, the HTML report's figures and words (compare_markdown.py);
one of two cluster runs first gives the second against the first, as
`compare` prints it (cluster_before_after.py)."""
from __future__ import annotations

from clusterbench.output.render_text import markdown as md
from clusterbench.output.render_text import markdown_code
from clusterbench.report import compare_markdown, reading_guide, step_table
from clusterbench.report.data import Report, extent_text, kernel_command, step_titles
from clusterbench.report.footnotes import Footnotes
from clusterbench.report.when import started_text
from clusterbench.results.warning_fold import step_lines
from clusterbench.output.figure_digits import number
from clusterbench.store import run_kinds
from clusterbench.output.unit_symbols import unit_shown


def step_table_lines(table: step_table.StepTable) -> list[str]:
    """A step's table (report/step_table.py) in Markdown: the HTML's columns and cells, a flag as " !",
    an interval's coverage words and the MB/s beside a unit after the figure."""
    align = {step_table.FIGURE: "---:", step_table.INTERVAL: "---:"}
    out = ["| " + " | ".join(md(c.heading) for c in table.columns) + " |",
           "|" + "|".join(align.get(c.kind, "---") for c in table.columns) + "|"]
    for row in table.rows:
        out.append("| " + " | ".join(md(" ".join(filter(None, (cell.text, cell.note)))) + (" !" if cell.flagged else "")
                                     for cell in row) + " |")
    return out


def latency_table(st: dict) -> list[str]:
    """The latency percentiles the records carry (randio, tcp rr), as show and HTML print them under the step."""
    from clusterbench.report import latency

    found = latency.of_step(st)
    if not found:
        return []
    names = list(dict.fromkeys(n for p in found for n, _ in p.values_us))
    out = ["", f"| latency ({unit_shown('us')}), median over repetitions | " + " | ".join(names) + " |",
           "|---|" + "---:|" * len(names)]
    for p in found:
        values = dict(p.values_us)
        out.append(f"| {md(p.label)} | " + " | ".join(number(values.get(n)) for n in names) + " |")
    return out


def pair_table(st: dict) -> list[str]:
    """E6: each TCP pair beside its link, as show and HTML print them under the step (its row is their aggregate)."""
    from clusterbench.report import pairs

    found = pairs.of_step(st)
    if not found:
        return []
    return ["", f"{pairs.TITLE[0].upper()}{pairs.TITLE[1:]}:", "",
            "| " + " | ".join(pairs.HEADINGS) + " |", "|---|---:|---|---:|---|---:|",
            *[f"| {md(p.phase)} | {p.pair} | {md(p.server_host)} -> {md(p.client_host)} | {number(p.gbit_per_s)} "
              f"| {p.link} | {p.of_link} |" for p in found]]


def comparison_lines(report: Report, notes: Footnotes) -> list[str]:
    """The configurations' comparison, or why there is none, as the HTML report says it."""
    if report.comparison is not None:   # first: computing it is what sets no_comparison
        return compare_markdown.comparison_lines(report.comparison, notes) + [""]
    if report.no_comparison:
        return ["## No comparison", "", f"{md(report.no_comparison)}: each run is shown on its own.", ""]
    return []


def render(report: Report) -> str:
    from clusterbench.report.summary_markdown import opening_lines
    from clusterbench.report.environment_said import same_as_earlier, same_text

    notes = Footnotes()
    out = opening_lines(report, notes)
    before_after = report.before_after
    if before_after is not None:   # two cluster runs: node by node first; pooled, h03's fault hid among its peers
        from clusterbench.report.cluster_markdown import before_after_lines

        out += before_after_lines(before_after)
    out += comparison_lines(report, notes)
    said_before = same_as_earlier(report.runs)
    for run in report.runs:
        if run.get("kind") == run_kinds.CLUSTER:   # the nodes side by side and what was found, as HTML has them
            from clusterbench.report.cluster_markdown import section

            out += section(run)
        out.append(f"## Run {run['id']}{' (' + md(run['label']) + ')' if run['label'] else ''}: {run['status']}\n")
        if run.get("message"):   # why it failed, or its warning ("part of the suite skipped: ...")
            out.append(f"{md(run['message'])}\n")
        # an imported run may know no host, user or command: said as unknown, not as "by : ``"
        out.append(started_text(run) + (f" on {md(run['host'])}" if run["host"] else "")
                   + (f" by {md(run['user'])}" if run["user"] else "")
                   + (f": {markdown_code(run['command'])}" if run["command"] else "") + "\n")
        if run.get("imported_from"):
            out.append(f"Imported from {md(run['imported_from'])}.\n")
        if len(run["environments"]) > 1:   # a cluster run, or a run over --hosts
            from clusterbench.report.cluster_markdown import environment_lines

            out += environment_lines(run, notes)   # the same on every host once, then what differs
        else:
            for host, env in run["environments"].items():
                from clusterbench.environment import summary_block
                from clusterbench.report.compare_markdown import note_mark

                # as the HTML's: "not available (note 3)", the reason under Notes, as the systems table has it
                out.append(f"### Test environment: {md(host)}\n")
                if run["id"] in said_before:
                    out += [same_text(said_before[run["id"]]), ""]
                    continue
                out += [f"- **{md(k)}**: {md(notes.text(v, note_mark))}" for k, v in summary_block(env)]
                out.append("")
        titles = step_titles(run["steps"])
        for st in run["steps"]:
            out.append(f"### {md(titles[st['id']])}: {st['status']}\n")
            out.append(f"{markdown_code(kernel_command(st))}, {md(extent_text(st))}\n")
            from clusterbench.conditions.apply import cgroup_caption

            if cgroup_caption(st.get("build")):
                out.append(cgroup_caption(st.get("build")) + "\n")
            from clusterbench.report.gpu_caption import gpu_caption

            if gpu_caption(st.get("build")):   # a line each: the devices, and a shared GPU said once
                out += [md(line) + "\n" for line in gpu_caption(st.get("build")).splitlines()]
            if st["message"]:
                out.append(f"> {md(st['message'])}\n")
            if not st["summary"]:   # skipped, or failed before a figure: its message says why, no empty table
                continue
            out += step_table_lines(step_table.of_step(st))
            out += latency_table(st) + pair_table(st)
            # folded over the rows as HTML and show fold them: listed raw, cpufreq's two rows gave two
            # lines "clock 4,052-4,080 MHz is 1.56-1.57x ..." and "clock 4,051-4,136 MHz ..." naming neither row
            out += [""] + [f"- warning: {md(w)}" for w in step_lines(st["summary"])]
            out.append("")
    out += reading_guide.markdown_lines("\n".join(out)) + compare_markdown.notes_lines(notes)
    return "\n".join(out) + "\n"
