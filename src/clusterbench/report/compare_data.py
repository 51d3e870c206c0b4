"""A comparison as plain data (schemas/comparison.schema.json): what
`compare --format json` writes and the CSV format flattens. Every number
with its CI, p-value, verdict, warnings and limit, and the environment
differences. Also the words every view of a comparison shares (the limit
cell, the ratio, the outliers-excluded statement), written once here."""
from __future__ import annotations

import json
from pathlib import Path

from clusterbench.analysis import stats
from clusterbench.analysis.comparison import Point, Table
from clusterbench.output.render_text import csv_cell
from clusterbench.report import table_units
from clusterbench.report.footnotes import Footnotes
from clusterbench.report.units_text import beside
from clusterbench.output.figure_digits import median_places

SCHEMA_FILE = Path(__file__).resolve().parent.parent / "schemas" / "comparison.schema.json"
SCHEMA_VERSION = 1


def _side(p: Point, config: str) -> dict:
    s = p.summary(config)
    c = p.limit(config)
    return {"n": s.n, "median": s.median, "min": s.minimum, "max": s.maximum, "cv": s.cv,
            "ci_low": s.ci_low, "ci_high": s.ci_high, "ci_coverage": s.ci_coverage,
            "values": p.values.get(config, []), "warnings": p.warnings(config),
            "limit": c.text if c else None, "limit_exceeded": bool(c and c.exceeded), "flag": p.flag(config)}


def limit_cell(limit) -> str:
    """A configuration's binding ceiling as the limit column shows it in every
    format: "!" first when the figure is above it (docs/limits.md)."""
    return ("! " if limit.exceeded else "") + limit.text


def n_after_interval(s) -> str:
    """', n = 8' after a configuration's interval in a comparison's figure cell, where the
    interval's words (terminal.ci_words) do not already say n: "548..1,662 ([min, max],
    n = 5, coverage 94 %), n = 5" said it twice in every cell of a short run."""
    from clusterbench.report.terminal import ci_words

    if ci_words(s) == "-":   # one value: "-, n = 1" beside the cell's dash, "intervals , n = 1" over a step
        return f" (none: n = {s.n})"
    return "" if "n = " in ci_words(s) else f", n = {s.n}"


def interval_tail(s) -> str:
    """What follows the interval in a configuration's figure cell: its words and n,
    "([min, max], n = 5, coverage 94 %)", "(95 % CI), n = 8", "(none: n = 1)"."""
    from clusterbench.report.terminal import ci_words

    return (ci_words(s).partition(" ")[2] + n_after_interval(s)).strip()


def shared_tails(table) -> dict[str, str]:
    """Per step group of the table (Table.group), the interval_tail every figure cell of its rows
    has, said once in the group's row ("disk (E1); intervals ([min, max], n = 5, coverage 94 %)");
    "" where they differ. In every cell it took two of a cell's four lines on A4, and a quick
    run's comparison table ran to three pages, as the step tables did before they said it once."""
    tails: dict[str, set] = {}
    for p in table.points:
        tails.setdefault(table.group(p), set()).update(interval_tail(p.summary(n)) for n in table.names)
    return {group: found.pop() if len(found) == 1 else "" for group, found in tails.items()}


def group_text(group: str, tail: str) -> str:
    """A step group's row: its title, and the interval words its cells leave to it."""
    return f"{group}; intervals {tail}" if tail else group


def ratio_text(c: stats.Comparison) -> str:
    """Another configuration's median over the baseline's as every view
    shows it, "1.089 (+8.9%)"; "-" when there is no ratio."""
    return f"{c.ratio:.3f} ({c.change:+.1%})" if c.ratio is not None else "-"


def change_percent_text(change: float | None) -> str:
    """A change point's change as trend and the history page say it,
    "-30.8 %"; "from a median of 0" where there is no ratio, as the
    regression gate says (analysis/compare_gate.py)."""
    return f"{change * 100:+.1f} %" if change is not None else "from a median of 0"


def outliers_excluded_text(table: Table) -> str:
    """What a comparison made with --exclude-outliers says of itself: the
    rule that chose the outliers (analysis/stats.py; its bound depends on
    each sample's size), so that a change of the rule changes every report's
    statement."""
    return f"outliers excluded ({stats.outlier_rules(_sizes(table))})"


def _sizes(table: Table) -> list[int]:
    """How many values each configuration has at each point, before any is left out."""
    return [len(v) for p in table.points for v in p.values.values()]


def row_units(table: Table) -> dict[tuple[str, str | None], table_units.ShownUnit]:
    """Per step and unit, the one unit its rows are shown in for every configuration, as that step's own
    table chooses it (report/table_units.py): 122,519 MiB/s beside 134,771 reads 119.6 GiB/s beside 131.6,
    and every row of that step in MiB/s steps with them, so its rows read down as in `show`.
    Look a row up with unit_key. The JSON and CSV keep the records' unit and value."""
    figures: dict[tuple[str, str | None], list] = {}
    for p in table.points:
        figures.setdefault(unit_key(p), []).extend(p.summary(n) for n in table.names if n in p.values)
    return {key: table_units.of_summaries(key[1], summaries) for key, summaries in figures.items()}


def unit_key(p: Point) -> tuple[str, str | None]:
    return (p.step, p.unit)


def warning_marks(table: Table, p: Point, config: str, notes: Footnotes) -> list[int]:
    """The note numbers of a comparison cell's warnings, a text numbered once:
    clock 1 busy and clock 2 busy of one configuration share its warnings'
    words, and each row took new numbers for them (20 notes, 8 of them
    repeats, under a quick run's comparison)."""
    return [notes.number(f"{config}, {table.title(p)}: {w}") for w in p.warnings(config)]


def median_beside(p: Point, config: str, shown: table_units.ShownUnit | None = None) -> str:
    """MB/s beside a configuration's MiB/s median, and Gbit/s for a figure
    measured over a link: '(593 MB/s)', '' for other units. shown: the unit
    the row's median is shown in (row_units); None: the records' unit."""
    first = p.first.get(config)
    shown = shown or table_units.ShownUnit(p.unit)
    s = shown.summary(p.summary(config))
    return beside(s.median, shown.unit, first is not None and first.link_bits_per_s is not None, median_places(s))


def _versus(p: Point, base: str, other: str) -> dict:
    c = p.versus(base, other)
    return {"config": other, "ratio": c.ratio, "change": c.change, "p": c.p, "test": c.test,
            "verdict": c.verdict.value, "reason": c.reason or None, "verdict_text": p.verdict_text(base, other)}


def as_dict(table: Table) -> dict:
    names = table.names
    return {
        "schema": SCHEMA_VERSION,
        "baseline": names[0],
        "configs": [{"name": c.name, "runs": c.run_ids} for c in table.configs],
        "exclude_outliers": table.exclude_outliers,
        # which values were left out: the rule, its bound per sample size (null when none were)
        "outlier_rule": stats.outlier_rules(_sizes(table)) if table.exclude_outliers else None,
        "points": [{
            "title": table.title(p), "step": p.step, "kernel": p.kernel, "params": p.params,
            "measurement": p.label, "mode": p.mode, "unit": p.unit,
            "results": {n: _side(p, n) for n in names},
            "comparisons": [_versus(p, names[0], n) for n in names[1:]],
        } for p in table.points],
        "partial": [{"title": table.title(p), "mode": p.mode, "unit": p.unit,
                     "in": [n for n in names if n in p.values]} for p in table.partial],
        "environment_differences": [{
            "base": d.base, "other": d.other, "host_base": d.host_base, "host_other": d.host_other,
            "lines": [{"key": k, "base": a, "other": b} for k, a, b in d.lines],
        } for d in table.env_diffs],
        "imported": table.imported,   # "NAME: run 5 imported from fio 3.33 JSON, ...": its environment not recorded
        "pooled_environments": table.pooled,   # "NAME: its 2 runs ran in 2 different environments ...": pooled
    }


def render_json(table: Table) -> str:
    return json.dumps(as_dict(table), indent=1, allow_nan=False, default=str) + "\n"


# One CSV row per point and compared configuration: the baseline's figures
# beside the other's, so a spreadsheet filter on verdict finds regressions.
CSV_COLUMNS = ["measurement", "mode", "unit", "baseline", "config", "median_baseline", "ci_low_baseline",
               "ci_high_baseline", "n_baseline", "median", "ci_low", "ci_high", "ci_coverage", "n", "ratio", "change",
               "p", "verdict", "limit_baseline", "limit", "warnings_baseline", "warnings"]


def csv_rows(table: Table) -> list[list]:
    base = table.names[0]
    out = []
    for p, point in zip(table.points, as_dict(table)["points"]):
        b = point["results"][base]
        limit_b = limit_cell(lim) if (lim := p.limit(base)) else ""
        for c in point["comparisons"]:
            o = point["results"][c["config"]]
            limit_o = limit_cell(lim) if (lim := p.limit(c["config"])) else ""
            out.append([point["title"], point["mode"] or "", point["unit"] or "", base, c["config"],
                        b["median"], b["ci_low"], b["ci_high"], b["n"], o["median"], o["ci_low"], o["ci_high"],
                        o["ci_coverage"], o["n"], c["ratio"], c["change"], c["p"], c["verdict_text"],
                        limit_b, limit_o, " | ".join(b["warnings"]), " | ".join(o["warnings"])])
    return out


def render_csv(table: Table) -> str:
    import csv
    import io

    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(CSV_COLUMNS)
    # user strings (labels, step names) as text a spreadsheet never evaluates
    w.writerows([csv_cell(c) if isinstance(c, str) else c for c in row] for row in csv_rows(table))
    return buf.getvalue()


def schema() -> dict:
    return json.loads(SCHEMA_FILE.read_text())
