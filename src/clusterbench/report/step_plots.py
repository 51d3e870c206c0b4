"""The plots of a run's steps: a curve over sizes where a step swept them,
else bars of its medians. Steps that differ in one parameter only and sweep
sizes (a suite's list, such as allreduce's library and recursive-doubling
algorithms) share one plot, drawn after the last of them, so the variants
are read against each other. A bar whose figure is flagged (above its
limit: a cache; or warned about a cache) is hatched, with the reason on
the plot, so a plot pasted elsewhere keeps its warning."""
from __future__ import annotations

from collections import defaultdict

from clusterbench.output.unit_symbols import unit_shown
from clusterbench.report import table_units
from clusterbench.report.data import step_titles
from clusterbench.results.sample import condition_shown


def _differing(a: dict, b: dict) -> list[str]:
    return [k for k in dict.fromkeys([*a, *b]) if a.get(k) != b.get(k)]


def variant_groups(steps: list[dict]) -> list[list[dict]]:
    """Consecutive steps of one kernel whose parameters differ in the same single key, together."""
    groups: list[list[dict]] = []
    for st in steps:
        last = groups[-1] if groups else None
        if last and last[0]["kernel"] == st["kernel"] and last[0]["ranks"] == st["ranks"]:
            diff = _differing(last[0]["params"], st["params"])
            if len(diff) == 1 and all(_differing(last[0]["params"], o["params"]) == diff for o in last[1:]):
                last.append(st)
                continue
        groups.append([st])
    return groups


def flag_reason(row) -> str | None:
    """Why a bar must not be read as its mode claims: its limit, or a cache warning."""
    if row.limit_exceeded:
        return row.limit
    from clusterbench.report.headline import short_warning

    cached = [w for w in row.warnings if "cache" in w]
    return short_warning(cached[0], f"{row.label} {condition_shown(row.mode)}") if cached else None


def _sized(group: list[dict]) -> dict:
    sized = defaultdict(list)  # one curve per measurement swept over sizes
    for st in group:
        for r in st["summary"]:
            if r.size_bytes is not None and r.median is not None:
                sized[r.key.curve()].append((float(r.size_bytes), r.median))
    return sized


def group_title(group: list[dict], titles: dict[int, str]) -> str:
    if len(group) == 1:
        return titles[group[0]["id"]]
    key = _differing(group[0]["params"], group[1]["params"])[0]
    return f"{group[0]['kernel']}, {key} {' vs '.join(str(st['params'].get(key)) for st in group)}"


def of_group(group: list[dict], run_id, titles: dict[int, str]) -> list[str]:
    """The SVG plots of one step or of one group of variants."""
    from clusterbench.report import plots

    out = []
    sized = _sized(group)
    title = group_title(group, titles)
    # in the unit the steps' tables show (table_units): 3,645 GiB/s under the table, not 3,732,681 MiB/s
    shown = table_units.of_rows([r for st in group for r in st["summary"]])
    for unit in dict.fromkeys(k.unit for k in sized):
        u = shown[unit]
        series = {f"{k.label} {k.condition or ''}".strip(): [(x, u.value(y)) for x, y in pts]
                  for k, pts in sized.items() if k.unit == unit}
        if any(len(pts) > 1 for pts in series.values()):
            out.append(plots.curves(title, "size", u.unit or "", series, sizes=True))
    if sized:
        return out
    for st in group:
        rows = [r for r in st["summary"] if r.median is not None]
        units = list(dict.fromkeys(r.unit for r in rows))
        for unit in units:
            same = [r for r in rows if r.unit == unit]
            u = shown[unit]
            s = [(u.value(r.stats.median), u.value(r.stats.ci_low), u.value(r.stats.ci_high)) for r in same]
            # a step of several units has a plot each: the link matrix's two were titled alike, told apart by the axis
            of_unit = f" ({unit_shown(u.unit)})" if len(units) > 1 else ""
            out.append(plots.bars(f"{titles[st['id']]}: median, bars = interval of the median{of_unit}", u.unit or "",
                                  [f"{r.label} {condition_shown(r.mode)}".strip() for r in same], {f"run {run_id}": s},
                                  flags={f"run {run_id}": [flag_reason(r) for r in same]}))
    return out


# in place of a step's plot whose every figure a comparison's plot shows (PLOTTED_ELSEWHERE)
PLOTTED_ELSEWHERE = "<p>Its figures are plotted beside the other configurations' in the comparison above.</p>"


def after_step(steps: list[dict], run_id, plotted_elsewhere: frozenset = frozenset()) -> dict[int, list[str]]:
    """Step id -> the plots to show after that step: a group's curves after
    its last step; bars (nothing swept) after each step. plotted_elsewhere: the
    (step name, measurement) a comparison's plots show of this run, the run being its
    configuration's only one; a step all of whose figures are among them is not drawn
    again (a quick suite's comparison printed each step's bars once per run as well:
    21 pages)."""
    out = {}
    titles = step_titles(steps)
    names = [st["name"] for st in steps]

    def elsewhere(group: list[dict]) -> bool:
        """Drawn by of_group (a curve of two sizes or more, else bars), and every figure in the comparison's."""
        sized = _sized(group)
        drawn = any(len(pts) > 1 for pts in sized.values()) if sized else any(
            r.median is not None for st in group for r in st["summary"])
        return drawn and all(names.count(st["name"]) == 1 and st["summary"]
                   and all((st["name"], r.key) in plotted_elsewhere for r in st["summary"] if r.median is not None)
                   for st in group)

    for group in variant_groups(steps):
        if _sized(group):
            out[group[-1]["id"]] = [PLOTTED_ELSEWHERE] if elsewhere(group) else of_group(group, run_id, titles)
        else:
            out.update({st["id"]: [PLOTTED_ELSEWHERE] if elsewhere([st]) else of_group([st], run_id, titles)
                        for st in group})
    return out
