"""Markdown: the tables a person pastes into a wiki or a blog post."""
from __future__ import annotations

from clusterbench.output.render_text import markdown as md
from clusterbench.output.render_text import markdown_code
from clusterbench.report.data import Report, params_text, step_title
from clusterbench.report.terminal import ci_words, limit_text


def _num(v: float | None) -> str:
    if v is None:
        return "-"
    return f"{v:,.4g}" if abs(v) < 100 else f"{v:,.0f}"


def render(report: Report) -> str:
    out: list[str] = []
    for run in report.runs:
        out.append(f"## Run {run['id']}{' (' + md(run['label']) + ')' if run['label'] else ''}: {run['status']}\n")
        # an imported run may know no host, user or command: said as unknown, not as "by : ``"
        out.append(f"{run['started']}" + (f" on {md(run['host'])}" if run["host"] else "")
                   + (f" by {md(run['user'])}" if run["user"] else "")
                   + (f": {markdown_code(run['command'])}" if run["command"] else "") + "\n")
        if run.get("imported_from"):
            out.append(f"Imported from {md(run['imported_from'])}.\n")
        for host, env in run["environments"].items():
            from clusterbench.environment import summary_block

            out.append(f"### Environment: {md(host)}\n")
            out += [f"- **{md(k)}**: {md(v)}" for k, v in summary_block(env)]
            out.append("")
        for st in run["steps"]:
            out.append(f"### {md(step_title(st))}: {st['status']}\n")
            out.append(f"{markdown_code(st['kernel'] + ' ' + params_text(st))}, {st['ranks']} rank(s)\n")
            from clusterbench.conditions.apply import cgroup_caption

            if cgroup_caption(st.get("build")):
                out.append(cgroup_caption(st.get("build")) + "\n")
            if st["message"]:
                out.append(f"> {md(st['message'])}\n")
            limits = any(r.limit for r in st["summary"])
            out.append("| phase | mode | n | median | interval of the median | min | max | unit |"
                       + (" limit |" if limits else ""))
            out.append("|---|---|---:|---:|---:|---:|---:|---|" + ("---|" if limits else ""))
            for r in st["summary"]:
                unit = r.unit or ""
                if r.median_decimal is not None:
                    unit += f" ({_num(r.median_decimal)} {r.decimal_unit} median)"
                flag = " !" if r.warnings or r.limit_exceeded else ""
                out.append(f"| {md(r.label)} | {md(r.mode)} | {r.n} | {_num(r.median)}{flag} | {ci_words(r.stats)} | "
                           f"{_num(r.minimum)} | {_num(r.maximum)} | {unit} |" + (f" {md(limit_text(r))} |" if limits else ""))
            warnings = [w for r in st["summary"] for w in r.all_warnings()]
            out += [""] + [f"- warning: {md(w)}" for w in dict.fromkeys(warnings)]
            out.append("")
    return "\n".join(out) + "\n"
