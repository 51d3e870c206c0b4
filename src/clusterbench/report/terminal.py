"""The terminal view of a run: one table per step, warnings under it."""
from __future__ import annotations

from rich.console import Console
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from clusterbench.output.render_text import plain, terminal
from clusterbench.output.figure_digits import at, median_places, number, places, span
from clusterbench.report import table_units
from clusterbench.report.data import extent_text, kernel_command, step_titles
from clusterbench.report.gpu_caption import gpu_caption
from clusterbench.output.unit_symbols import unit_shown
from clusterbench.results.sample import condition_shown
from clusterbench.report.when import started_text


def limit_text(row) -> str:
    """The limit column: the binding ceiling, marked "!" when the figure is above it."""
    if not row.limit:
        return ""
    return ("! " if row.limit_exceeded else "") + row.limit


def shared_interval_words(summary) -> str:
    """The words every row's interval has ("([min, max], n = 5, coverage 94 %)", "(95 % CI)"), said
    once in the column's heading of a printed step table (HTML, Markdown); "" where they differ. In
    every cell they doubled the n column beside them and broke each interval over two lines on A4."""
    kinds = {ci_words(r.stats).partition(" ")[2] for r in summary}
    return kinds.pop() if len(kinds) == 1 else ""


def ci_words(s) -> str:
    """The interval for a printed report, named by its coverage: '(95 % CI)'
    when it reaches 95 %, else said to be the range with its real coverage."""
    if s.ci_low is None or s.n < 2:
        return "-"
    ends = span(s)
    if s.ci_coverage >= 0.95:
        return f"{ends} (95 % CI)"
    if s.ci_low == s.minimum and s.ci_high == s.maximum:
        return f"{ends} ([min, max], n = {s.n}, coverage {s.ci_coverage:.0%})".replace("%", " %")
    return f"{ends} (coverage {s.ci_coverage:.0%})".replace("%", " %")


def ci_text(s) -> str:
    """'lo..hi (95 %)': the interval with its real coverage."""
    if s.ci_low is None or s.n < 2:
        return "-"
    return f"{span(s)} ({s.ci_coverage:.0%})"


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


# How a step's table gives way on a narrow terminal, in order: drop the MB/s
# column (MiB/s stays), let the CI break after its '..' and drop the padding
# at the table's edges, drop the spread columns (min, max, fastest / mean /
# slowest rank, MB/s: the CI and CV stay), and at last let the words (phase, mode,
# unit, limit, headings) fold. A figure is never cut short (…) nor split
# over lines: it is shown whole or not at all.
WHOLE, NO_DECIMAL, CI_LINES, NO_SPREAD, FOLD = range(5)
# The heading of the medians of IMB's t_min, t_avg and t_max (the record's t_min_us, ...: the mean iteration
# time of the fastest rank, of the average over ranks, of the slowest rank), in words as the other headings
RANK_TIMES = "fastest / mean / slowest rank"
# The heading of mpi's bandwidth_mb_s column in a printed report: a second "MB/s" beside the unit's said
# neither whose rate it was nor why it differed from the median's (records.md: one pair's bytes over t_avg)
PAIR_RATE = "MB/s per pair"
PROSE_WIDTH = 20   # the narrowest a column of words (the limit) is drawn before a tier gives way


def step_table(st: dict, title: str, condition: str | None, decimal: bool, tier: int = WHOLE,
               prose: int = PROSE_WIDTH) -> Table:
    """One step's table at a tier (above), under title (data.step_titles); .min_width_needed says the width it
    needs."""
    caption = f"{kernel_command(st)}, {extent_text(st, fixed_count=False)}"   # a fixed count: n says it
    dropped = decimal and tier >= NO_DECIMAL
    decimal = decimal and not dropped
    ranks = any(r.rank_medians for r in st["summary"]) and st.get("ranks", 1) > 1  # IMB's t_min/t_avg/t_max
    bandwidth = any(r.median_bandwidth_mb_s is not None for r in st["summary"])
    left_out = (["MB/s"] if dropped else []) + (
        ["min", "max"] + ([RANK_TIMES] if ranks else []) + (["MB/s"] if bandwidth else [])
        if tier >= NO_SPREAD else []) + (["CV"] if tier == FOLD else [])
    if left_out:
        caption += f"; {', '.join(dict.fromkeys(left_out))} left out to fit (--width)"
    from clusterbench.conditions.apply import cgroup_caption

    if cgroup_caption(st.get("build")):
        caption += f"\n{cgroup_caption(st.get('build'))}"
    if gpu_caption(st.get("build")):
        caption += f"\n{gpu_caption(st.get('build'))}"
    t = Table(title=terminal(f"{title} [{st['status']}]"), title_justify="left",
              caption="\n".join(terminal(line) for line in caption.split("\n")), caption_justify="left",
              pad_edge=tier < CI_LINES)
    limit = any(r.limit for r in st["summary"])  # which ceiling binds (limits/ceilings.py), when one is known
    # (heading, justify, whole: never broken, figure: a number never folded, spread: left out at NO_SPREAD)
    columns = [("phase", "left", True, False, False)] + (
        [(condition, "left", True, False, False)] if condition else []) + [
        ("n", "right", True, True, False), ("median", "right", True, True, False),
        ("CI of median", "right", False, True, False), ("min", "right", True, True, True),
        ("max", "right", True, True, True), ("CV", "right", True, True, False), ("unit", "left", True, False, False)] + (
        [("median, decimal", "right", True, True, False)] if decimal else []) + (
        [(f"{RANK_TIMES} ({unit_shown('us')})", "right", False, True, True)] if ranks else []) + (
        [("MB/s", "right", True, True, True)] if bandwidth else []) + ([("limit", "left", False, False, False)] if limit else [])

    rows = []
    shown = table_units.of_rows(st["summary"])   # 3,645 GiB/s, not 3,732,681 MiB/s
    for r in st["summary"]:
        u = shown[r.unit]
        s = u.summary(r.stats)
        ci = ci_text(s).replace("..", "..\n") if tier >= CI_LINES else ci_text(s)
        d, dm = places(s), median_places(s)   # interval, min and max to its decimal place; the median 3 digits at least
        cells = [r.label] + ([condition_shown(r.mode)] if condition else []) + [
            str(r.n), at(s.median, dm), ci, at(s.minimum, d), at(s.maximum, d),
            f"{s.cv:.1%}" if s.cv is not None else "-", unit_shown(u.unit)]
        if decimal:
            value, unit = u.beside(r.median_decimal, r.decimal_unit)
            cells.append(f"{at(value, dm)} {unit}" if value is not None else "")   # to the median's places
        if ranks:
            cells.append(" / ".join(number(t) for t in r.rank_medians) if r.rank_medians else "")
        if bandwidth:
            cells.append(number(r.median_bandwidth_mb_s))
        if limit:
            cells.append(limit_text(r))
        rows.append(cells)
    if tier >= NO_SPREAD:
        keep = [i for i, c in enumerate(columns) if not c[4] and not (tier == FOLD and c[0] == "CV")]
        columns = [columns[i] for i in keep]
        rows = [[row[i] for i in keep] for row in rows]
    # box edges, then per column its width, two of padding and a rule (less the edges' padding)
    t.min_width_needed = 1 - (2 if tier >= CI_LINES else 0)
    t.wrapping = []   # (column, its narrowest and its natural width) of the columns that may wrap
    if tier == FOLD:  # the last resort: no padding, the rules alone part the cells
        t.padding = (0, 0)
    for i, (head, justify, whole, figure, _) in enumerate(columns):
        if tier == FOLD and not figure:
            t.add_column(head, justify=justify, overflow="fold")
            continue
        # a whole cell, or (the CI) its longest word: "3,260..5,089" never breaks, "(94%)" may go below
        widest = max((len(row[i]) if whole else max(map(len, row[i].split()), default=0) for row in rows), default=0)
        if tier == FOLD:  # the heading may fold; the figures may not
            t.add_column(head, justify=justify, min_width=widest, overflow="fold")
        else:
            widest = max(widest, len(head) if whole else max(map(len, head.split())))
            if not whole:
                natural = max([len(line) for row in rows for line in row[i].split("\n")] + [len(head)])
                if not figure:   # words (the limit): a few to a line, not one, before a column goes
                    widest = max(widest, min(natural, prose))
            t.add_column(head, justify=justify, no_wrap=whole, min_width=widest)
            if not whole:
                t.wrapping.append((t.columns[-1], widest, natural))
        t.min_width_needed += widest + 3
    for row in rows:
        t.add_row(*row)
    return t


def fitting_table(st: dict, title: str, width: int) -> Table:
    decimal = any(r.median_decimal is not None for r in st["summary"])  # MB/s beside MiB/s
    condition = condition_header(st["summary"], st["kernel"])  # no column for kernels without one (null)
    for prose in (PROSE_WIDTH, 0):   # a column of words a few to a line if any tier allows, else a word a line
        for tier in (WHOLE, NO_DECIMAL, CI_LINES, NO_SPREAD):
            t = step_table(st, title, condition, decimal, tier, prose)
            if t.min_width_needed <= width:
                return share_width(t, width)
    return step_table(st, title, condition, decimal, FOLD)


def share_width(t: Table, width: int) -> Table:
    """Give the columns that may wrap (the CI, the limit) the width the
    others leave, in column order: the CI whole first, the limit's words
    in what remains. rich's own share cut both to the same width, below
    the CI's figures, then widened the CI again: the table came out wider
    than the terminal and was cropped at its edge (the limit's last letters,
    the right border, a caption word)."""
    spare = width - t.min_width_needed
    for column, narrowest, natural in t.wrapping:
        column.max_width = narrowest + min(spare, natural - narrowest)
        spare -= column.max_width - narrowest
    return t


def pair_table(st: dict) -> Table | None:
    """E6: each TCP pair's rate (median over repetitions) beside its link's
    nominal rate; the step's row above is their aggregate."""
    from clusterbench.report import pairs

    found = pairs.of_step(st)
    if not found:
        return None
    t = Table(*pairs.HEADINGS, title=pairs.TITLE, title_justify="left")
    for p in found:
        t.add_row(p.phase, str(p.pair), f"{p.server_host} -> {p.client_host}", number(p.gbit_per_s), p.link, p.of_link)
    return t


def print_run(console: Console, run: dict) -> None:
    label = f" ({terminal(run['label'])})" if run["label"] else ""
    job = f" in batch job {terminal(run['batch_job'])}" if run.get("batch_job") else ""
    console.print(f"[bold]run {run['id']}{label}[/bold]: {run['status']}, {started_text(run)} on {terminal(run['host'])}{job}"
                  + (f": {terminal(run['message'])}" if run["message"] else ""))
    if run.get("imported_from"):
        console.print(Text(f"imported from {plain(run['imported_from'])}", style="cyan"))
        from clusterbench.environment.report_block import summary_line

        # one line, not a dozen "not recorded"; the hosts whose line is the same, once (as the report gives a
        # run over several hosts its environment: report/cluster_environment.py): fio's client/server
        # output over 16 hosts stated one line 16 times
        by_line: dict[str, list[str]] = {}
        for host, env in (run.get("environments") or {}).items():
            by_line.setdefault(summary_line(env), []).append(host)
        for line, hosts in by_line.items():
            console.print(Text(plain(f"{', '.join(hosts)}: {line}"), style="cyan"))
    titles = step_titles(run["steps"])
    for st in run["steps"]:
        if st["status"] == "skipped" and not st["summary"]:
            # nothing ran: no table of no rows under a command line that was never run, just why
            console.print(Text(plain(f"{titles[st['id']]} [skipped]: {st['message'] or ''}")))
            console.print()
            continue
        console.print(fitting_table(st, titles[st["id"]], console.width))
        if st["message"]:
            console.print(Padding(Text(plain(st["message"]), style="red"), (0, 0, 0, 2), expand=False))
        from clusterbench.report import latency

        for p in latency.of_step(st):
            console.print(Padding(Text(latency.line(p)), (0, 0, 0, 2), expand=False))
        pairs = pair_table(st)
        if pairs is not None:
            console.print(Padding(pairs, (0, 0, 0, 2), expand=False))
        from clusterbench.results.warning_fold import step_lines

        for w in step_lines(st["summary"]):
            # indented as a block, so a warning wrapped on a narrow terminal stays under its table
            # plain: rich Text is never markup, but it keeps ESC (a warning quotes a --dir, a label)
            console.print(Padding(Text.assemble(("warning:", "yellow"), " ", plain(w)), (0, 0, 0, 2), expand=False))
        console.print()
