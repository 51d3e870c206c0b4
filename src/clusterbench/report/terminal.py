"""The terminal view of a run: one table per step, warnings under it."""
from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

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


def _choice_parameters(kernel: str) -> dict[str, tuple[str, ...]]:
    """The kernel's choice parameters (name -> choices) from cbk --describe; none without cbk."""
    from clusterbench import catalogue
    from clusterbench.errors import BadInput

    try:
        k = catalogue.load().kernels.get(kernel)
    except BadInput:
        return {}
    return {p.name: p.choices for p in k.params if p.choices} if k else {}


def condition_header(rows, kernel: str) -> str | None:
    """The mode column's heading, named after what it holds in this step
    (cache, algorithm, busy cpus, ...); None when no row has a condition.
    An older record's mode text that is a value of one of the kernel's
    choice parameters (mpi's library, ring) is named after that parameter."""
    names = list(dict.fromkeys(n for r in rows for n in r.condition))
    if "mode" in names:
        texts = {r.mode for r in rows if "mode" in r.condition}
        named = [p for p, choices in _choice_parameters(kernel).items() if texts <= set(choices)]
        if len(named) == 1:
            names[names.index("mode")] = named[0]
    return " / ".join(n.replace("_", " ") for n in names) or None


def gpu_caption(build: dict | None) -> str | None:
    """The GPUs each rank saw (the run record's gpu_devices, per rank; null:
    every device visible), with the rank's host when the step spans hosts;
    None when no rank was bound (no GPU binding, or an older record)."""
    devices = (build or {}).get("gpu_devices") or []
    if not any(d is not None for d in devices):
        return None
    hosts = (build or {}).get("hosts") or []
    on_host = len(set(hosts)) > 1 and len(hosts) == len(devices)
    parts = [f"rank {r}" + (f" on {hosts[r]}" if on_host else "") + f": {'all' if d is None else d}"
             for r, d in enumerate(devices)]
    return "GPUs seen: " + "; ".join(parts)


# How a step's table gives way on a narrow terminal, in order: drop the MB/s
# column (MiB/s stays), let the CI break after its '..' and drop the padding
# at the table's edges, and at last let every cell fold. A cell is never cut
# short (…) and a line never cropped: a figure is shown whole or not at all.
WHOLE, NO_DECIMAL, CI_LINES, FOLD = range(4)


def step_table(st: dict, condition: str | None, decimal: bool, tier: int = WHOLE) -> Table:
    """One step's table at a tier (above); .min_width_needed says the width it needs."""
    caption = f"{st['kernel']} {params_text(st)}, {st['ranks']} rank(s)"
    if st.get("stop_reason") and not st["stop_reason"].startswith("fixed"):
        caption += f"; repetition stopped by {st['stop_reason']}"
    dropped = decimal and tier >= NO_DECIMAL
    decimal = decimal and not dropped
    if dropped:
        caption += "; MB/s left out to fit (--width)"
    from clusterbench.conditions.apply import cgroup_caption

    if cgroup_caption(st.get("build")):
        caption += f"\n{cgroup_caption(st.get('build'))}"
    if gpu_caption(st.get("build")):
        caption += f"\n{gpu_caption(st.get('build'))}"
    t = Table(title=escape(f"{step_title(st)} [{st['status']}]"), title_justify="left",
              caption=escape(caption), caption_justify="left", pad_edge=tier < CI_LINES)
    columns = [("phase", "left", True)] + ([(condition, "left", True)] if condition else []) + [
        ("n", "right", True), ("median", "right", True), ("CI of median", "right", False), ("min", "right", True),
        ("max", "right", True), ("CV", "right", True), ("unit", "left", True)] + (
        [("median, decimal", "right", True)] if decimal else [])
    rows = []
    for r in st["summary"]:
        s = r.stats
        ci = ci_text(s).replace("..", "..\n") if tier >= CI_LINES else ci_text(s)
        cells = [r.label] + ([r.mode or ""] if condition else []) + [
            str(r.n), _num(s.median), ci, _num(s.minimum), _num(s.maximum),
            f"{s.cv:.1%}" if s.cv is not None else "-", r.unit or ""]
        if decimal:
            cells.append(f"{_num(r.median_decimal)} {r.decimal_unit}" if r.median_decimal is not None else "")
        rows.append(cells)
    # box edges, then per column its width, two of padding and a rule (less the edges' padding)
    t.min_width_needed = 1 - (2 if tier >= CI_LINES else 0)
    for i, (head, justify, whole) in enumerate(columns):
        if tier == FOLD:
            t.add_column(head, justify=justify, overflow="fold")
            continue
        # a whole cell, or (the CI) its longest word: "3,260..5,089" never breaks, "(94%)" may go below
        widest = max((len(row[i]) if whole else max(map(len, row[i].split())) for row in rows), default=0)
        widest = max(widest, len(head) if whole else max(map(len, head.split())))
        t.add_column(head, justify=justify, no_wrap=whole, min_width=widest)
        t.min_width_needed += widest + 3
    for row in rows:
        t.add_row(*row)
    return t


def fitting_table(st: dict, width: int) -> Table:
    decimal = any(r.median_decimal is not None for r in st["summary"])  # MB/s beside MiB/s
    condition = condition_header(st["summary"], st["kernel"])  # no column for kernels without one (null)
    for tier in (WHOLE, NO_DECIMAL, CI_LINES):
        t = step_table(st, condition, decimal, tier)
        if t.min_width_needed <= width:
            return t
    return step_table(st, condition, decimal, FOLD)


def print_run(console: Console, run: dict) -> None:
    label = f" ({run['label']})" if run["label"] else ""
    job = f" in batch job {run['batch_job']}" if run.get("batch_job") else ""
    console.print(f"[bold]run {run['id']}{label}[/bold]: {run['status']}, {run['started']} on {run['host']}{job}"
                  + (f": {run['message']}" if run["message"] else ""))
    for st in run["steps"]:
        console.print(fitting_table(st, console.width))
        if st["message"]:
            console.print(Padding(Text(st["message"], style="red"), (0, 0, 0, 2), expand=False))
        for w in dict.fromkeys(w for r in st["summary"] for w in r.all_warnings()):
            # indented as a block, so a warning wrapped on a narrow terminal stays under its table
            console.print(Padding(Text.assemble(("warning:", "yellow"), " ", w), (0, 0, 0, 2), expand=False))
        console.print()
