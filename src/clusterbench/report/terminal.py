"""The terminal view of a run: one table per step, warnings under it."""
from __future__ import annotations

from rich.console import Console
from rich.table import Table

from clusterbench.report.data import params_text, step_title


def _num(v: float | None) -> str:
    if v is None:
        return "-"
    return f"{v:,.4g}" if abs(v) < 100 else f"{v:,.0f}"


def ci_text(s) -> str:
    """'lo..hi (95 %)': the interval with its real coverage."""
    if s.ci_low is None or s.n < 2:
        return "-"
    return f"{_num(s.ci_low)}..{_num(s.ci_high)} ({s.ci_coverage:.0%})"


def print_run(console: Console, run: dict) -> None:
    label = f" ({run['label']})" if run["label"] else ""
    job = f" in batch job {run['batch_job']}" if run.get("batch_job") else ""
    console.print(f"[bold]run {run['id']}{label}[/bold]: {run['status']}, {run['started']} on {run['host']}{job}"
                  + (f": {run['message']}" if run["message"] else ""))
    for st in run["steps"]:
        caption = f"{st['kernel']} {params_text(st)}, {st['ranks']} rank(s)"
        if st.get("stop_reason") and not st["stop_reason"].startswith("fixed"):
            caption += f"; repetition stopped by {st['stop_reason']}"
        from clusterbench.conditions.apply import cgroup_caption

        if cgroup_caption(st.get("build")):
            caption += f"\n{cgroup_caption(st.get('build'))}"
        t = Table(title=f"{step_title(st)} [{st['status']}]", title_justify="left",
                  caption=caption, caption_justify="left")
        # the decimal column (MB/s beside MiB/s) only where some row has one: an empty column costs width
        decimal = any(r.median_decimal is not None for r in st["summary"])
        for col, just in (("phase", "left"), ("mode (cache)", "left"), ("n", "right"), ("median", "right"),
                          ("CI of median", "right"), ("min", "right"), ("max", "right"), ("CV", "right"),
                          ("unit", "left")) + ((("median, decimal", "right"),) if decimal else ()):
            t.add_column(col, justify=just)
        for r in st["summary"]:
            s = r.stats
            cells = [r.label, r.mode or "", str(r.n), _num(s.median), ci_text(s), _num(s.minimum), _num(s.maximum),
                     f"{s.cv:.1%}" if s.cv is not None else "-", r.unit or ""]
            if decimal:
                cells.append(f"{_num(r.median_decimal)} {r.decimal_unit}" if r.median_decimal is not None else "")
            t.add_row(*cells)
        console.print(t)
        if st["message"]:
            console.print(f"  [red]{st['message']}[/red]")
        for w in dict.fromkeys(w for r in st["summary"] for w in r.all_warnings()):
            console.print(f"  [yellow]warning:[/yellow] {w}")
        console.print()
