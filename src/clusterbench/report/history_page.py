"""The history page: a store's runs as a site's job report shows them (E11,
Galaxy's report server): runs per month, user, host, kernel and suite; the
failures with their error line; the longest runs; the store's size; and the
trend of each figure measured often enough, with its change points. One
self-contained HTML file: inline CSS, inline SVG and a small inline script
for the filter and sortable tables; nothing is fetched.

The filter box hides table rows not containing its text; the page's address
may preset it (history.html#filter=ana) and sort a table
(#sort=TABLE_ID:COLUMN, COLUMN counted from 0, e.g. #sort=longest:4).
"""
from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from clusterbench.analysis import trend_series as trend
from clusterbench.output.date_text import cutoff_text, day_text, minute_text
from clusterbench.output.figure_digits import number
from clusterbench.output.render_text import html as esc  # the one HTML escape: markup and control characters
from clusterbench.analysis.run_groups import run_seconds, summarise
from clusterbench.environment import change_text
from clusterbench.report.compare_data import change_percent_text
from clusterbench.results.sizes import rounded_size_text as format_bytes
from clusterbench.report.when import duration_text
from clusterbench.output.unit_symbols import unit_shown

LONGEST = 20
TREND_MIN_RUNS = 8
TREND_MAX_FIGURES = 12


@dataclass
class RunRow:
    id: int
    started: dt.datetime
    user: str
    host: str
    label: str
    suite: str
    status: str
    seconds: float | None
    kernels: list[str]
    bytes_written: int
    error: str | None


@dataclass
class History:
    """The runs as `list` reads them (store.list_runs, oldest first), what
    their rows do not hold, and the same runs as the page's tables show them."""
    rows: list[Any]
    details: dict[str, dict[int, Any]]
    runs: list[RunRow]


def load_runs(store, since: dt.datetime | None) -> History:
    rows = list(reversed(store.list_runs(since=since)))
    details = store.run_details(since)
    kernels, written, step_error = details["kernels"], details["bytes_written"], details["step_error"]
    out = []
    for r in rows:
        seconds = run_seconds(r.started, r.finished)
        error = r.message or step_error.get(r.id)
        out.append(RunRow(r.id, r.started, r.user or "-", r.host or "-", r.label or "-", r.suite or "-", r.status,
                          seconds, kernels.get(r.id, []), written.get(r.id, 0),
                          error.strip().splitlines()[0] if error and error.strip() else None))
    return History(rows, details, out)


# -- HTML ----------------------------------------------------------------
def _e(x: Any) -> str:
    return esc(x)


def _table(table_id: str, caption: str, head: list[str], rows: list[list[tuple[str, Any]]]) -> str:
    """rows: cells of (shown text, sort key)."""
    th = "".join(f'<th title="sort">{_e(h)}</th>' for h in head)
    body = "\n".join("<tr>" + "".join(f'<td data-sort="{_e(key)}">{_e(text)}</td>' for text, key in row) + "</tr>"
                     for row in rows)
    return (f'<h2 id="h-{table_id}">{_e(caption)}</h2><p class="count" id="count-{table_id}"></p>'
            f'<table id="{table_id}" class="sortable"><thead><tr>{th}</tr></thead><tbody>\n{body}\n</tbody></table>')


def _summary_table(history: History, by: str) -> str:
    """The groups `list --by` prints (run_groups.summarise over the same rows), with the bytes written."""
    head = [by, "runs", "ok", "failed", "cut short", "running", "time used", "bytes written"]
    cells = [[(g.key, g.key), (g.runs, g.runs), (g.ok, g.ok), (g.failed, g.failed), (g.cut_short, g.cut_short),
              (g.running, g.running), (duration_text(g.total_s), -1 if g.total_s is None else g.total_s),
              (format_bytes(g.bytes_written), g.bytes_written)]
             for g in summarise(history.rows, by, history.details)]
    return _table(f"by-{by}", f"Runs per {by}", head, cells)


def _run_cells(r: RunRow) -> list[tuple[str, Any]]:
    started = minute_text(r.started)
    return [(r.id, r.id), (started, started), (r.user, r.user), (r.host, r.host), (r.label, r.label),
            (" ".join(r.kernels) or "-", " ".join(r.kernels)), (r.status, r.status),
            (duration_text(r.seconds), r.seconds if r.seconds is not None else -1)]


RUN_HEAD = ["run", "started (UTC)", "user", "host", "label", "kernels", "status", "duration"]


def _plot(s: trend.Series) -> str:
    """Medians as dots, CIs as vertical bars, change points as dashed lines; x is the run's date."""
    w, h, left, bottom, top, right = 760, 220, 70, 30, 10, 10
    t0 = s.points[0].started.timestamp()
    span = max(s.points[-1].started.timestamp() - t0, 1.0)
    lows = [p.ci_low for p in s.points]
    highs = [p.ci_high for p in s.points]
    ymin, ymax = min(lows), max(highs)
    pad = (ymax - ymin) * 0.05 or abs(ymax) * 0.05 or 1.0
    ymin, ymax = ymin - pad, ymax + pad

    def x(p: trend.Point) -> float:
        return left + (p.started.timestamp() - t0) / span * (w - left - right)

    def y(v: float) -> float:
        return top + (ymax - v) / (ymax - ymin) * (h - top - bottom)

    parts = [f'<svg class="trend" width="{w}" height="{h}" viewBox="0 0 {w} {h}" role="img" '
             f'aria-label="{_e(s.title)}">',
             f'<line x1="{left}" y1="{h - bottom}" x2="{w - right}" y2="{h - bottom}" stroke="#888"/>',
             f'<line x1="{left}" y1="{top}" x2="{left}" y2="{h - bottom}" stroke="#888"/>']
    for v in (ymin + pad, (ymin + ymax) / 2, ymax - pad):
        parts.append(f'<text x="{left - 4}" y="{y(v) + 4:.1f}" text-anchor="end">{number(v)}</text>')
    parts.append(f'<text x="{left}" y="{h - 8}">{_e(day_text(s.points[0].started))}</text>')
    parts.append(f'<text x="{w - right}" y="{h - 8}" text-anchor="end">'
                 f'{_e(day_text(s.points[-1].started))}</text>')
    parts.append(f'<text x="4" y="{top + 10}">{_e(unit_shown(s.unit))}</text>')
    for p in s.points:
        parts.append(f'<line x1="{x(p):.1f}" y1="{y(p.ci_low):.1f}" x2="{x(p):.1f}" y2="{y(p.ci_high):.1f}" '
                     f'stroke="#9bb"/><circle cx="{x(p):.1f}" cy="{y(p.median):.1f}" r="2.5" fill="#236">'
                     f'<title>run {p.run_id} {day_text(p.started)}: {number(p.median)} {_e(unit_shown(s.unit))}</title></circle>')
    for c in s.changes:
        p = s.points[c.index]
        parts.append(f'<line class="change" x1="{x(p):.1f}" y1="{top}" x2="{x(p):.1f}" y2="{h - bottom}" '
                     f'stroke="#c33" stroke-dasharray="4 3"/>')
    parts.append("</svg>")
    return "".join(parts)


def _trend_section(store, since: dt.datetime | None) -> str:
    parts = ['<h2 id="h-trends">Trends</h2>',
             f'<p>Each point is one run that ended ok: the median of its repetitions, the bar its 95 % CI. '
             f'Change points: {_e(trend.METHOD)}, at least {trend.MIN_SEGMENT} runs each side; each lists what '
             f'differs between the environments of the runs either side. Figures measured by at least '
             f'{TREND_MIN_RUNS} runs (at most {TREND_MAX_FIGURES}).</p>']
    shown = 0
    change_rows = []
    for kernel, phase, mode in trend.candidate_figures(store, TREND_MIN_RUNS, since):
        if shown >= TREND_MAX_FIGURES:
            # the page is full: loading the rest read every sample of every other figure a store ever
            # measured (62 figures, 4/5 of the page's time, at 1,000 quick-suite runs) to show none of them
            break
        for s in trend.load(store, kernel, phase, mode, since=since):
            if len(s.points) < TREND_MIN_RUNS or shown >= TREND_MAX_FIGURES:
                continue
            shown += 1
            parts.append(f'<h3 class="figure">{_e(s.title)}</h3>{_plot(s)}')
            for c in s.changes:
                before, after = s.points[c.index - 1], s.points[c.index]
                diff = "; ".join(change_text(k, a, b, "→") for k, a, b in c.env_diff) or "no environment difference"
                date = day_text(after.started)
                growth = c.change if c.change is not None else "Infinity"   # from 0: sorted above every ratio
                change_rows.append([(s.title, s.title), (date, date),
                                    (f"run {before.run_id} → run {after.run_id}", after.run_id),
                                    (f"{number(c.before_median)} → {number(c.after_median)} {unit_shown(s.unit)}", growth),
                                    (change_percent_text(c.change), growth), (f"{c.p_value:.2g}", c.p_value),
                                    (diff, diff)])
    if not shown:
        parts.append(f"<p>No figure was measured by {TREND_MIN_RUNS} runs yet.</p>")
        return "\n".join(parts)
    parts.append(_table("changes", "Change points", ["figure", "date", "between", "median before → after",
                                                     "change", "p", "environment difference"], change_rows))
    return "\n".join(parts)


CSS = """body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222}
table{border-collapse:collapse;margin:.3em 0 1em}td,th{border:1px solid #ccc;padding:2px 8px;text-align:left}
th{background:#eef;cursor:pointer}td[data-sort]{white-space:nowrap}tr.hidden{display:none}
#filterbar{position:sticky;top:0;background:#fff;padding:.4em 0}.count{color:#666;margin:0}
svg.trend text{font-size:11px;fill:#444}"""

# Filter: hides rows that do not contain the text. Sort: click a column head
# (numbers by their data-sort value). The address may preset both.
SCRIPT = r"""
(function(){
  var box=document.getElementById('filter');
  function count(){document.querySelectorAll('table.sortable').forEach(function(t){
    var rows=t.tBodies[0].rows,n=0;for(var i=0;i<rows.length;i++)if(!rows[i].classList.contains('hidden'))n++;
    var c=document.getElementById('count-'+t.id);if(c)c.textContent=n+' of '+rows.length+' rows shown';});}
  function apply(){var q=box.value.toLowerCase();
    document.querySelectorAll('table.sortable tbody tr').forEach(function(r){
      r.classList.toggle('hidden',q!==''&&r.textContent.toLowerCase().indexOf(q)<0);});count();}
  function sortBy(t,col){var body=t.tBodies[0],rows=Array.prototype.slice.call(body.rows);
    var asc=t.dataset.col!==String(col)||t.dataset.dir!=='asc';t.dataset.col=col;t.dataset.dir=asc?'asc':'desc';
    rows.sort(function(a,b){var x=a.cells[col].dataset.sort,y=b.cells[col].dataset.sort;
      var nx=parseFloat(x),ny=parseFloat(y);
      var r=(!isNaN(nx)&&!isNaN(ny)&&String(nx)===x.trim()&&String(ny)===y.trim())?nx-ny:x.localeCompare(y);
      return asc?r:-r;});rows.forEach(function(r){body.appendChild(r);});}
  document.querySelectorAll('table.sortable').forEach(function(t){
    Array.prototype.forEach.call(t.tHead.rows[0].cells,function(th,i){
      th.addEventListener('click',function(){sortBy(t,i);});});});
  box.addEventListener('input',apply);
  var h=new URLSearchParams(location.hash.slice(1));
  if(h.get('filter')!==null){box.value=h.get('filter');box.dispatchEvent(new Event('input'));}
  if(h.get('sort')){var s=h.get('sort').split(':'),t=document.getElementById(s[0]);if(t)sortBy(t,+s[1]);}
  count();
})();
"""


def render(store, since: dt.datetime | None = None, now: dt.datetime | None = None) -> str:
    history = load_runs(store, since)
    rows = history.runs
    now = now or dt.datetime.now(dt.timezone.utc)
    size = store.size_bytes()
    ok = sum(r.status == "ok" for r in rows)
    head = (f"<h1>Run history</h1><p>Store {_e(store.url)}: {len(rows)} runs"
            + (f" since {cutoff_text(since)}" if since else "")
            + (f", {day_text(rows[0].started)} to {day_text(rows[-1].started)}" if rows else "")
            + f"; {ok} ok. Store size {format_bytes(size) if size is not None else 'unknown'}."
            + f" Written {now:%Y-%m-%d %H:%M} UTC. Cut short: interrupted by a signal or killed.</p>")
    bar = ('<div id="filterbar"><label>Filter rows: <input id="filter" type="search" '
           'placeholder="user, host, label, kernel, month, error..."></label></div>')
    failures = [r for r in rows if r.status == "failed"]
    longest = sorted((r for r in rows if r.seconds is not None), key=lambda r: -r.seconds)[:LONGEST]
    body = [head, bar]
    body += [_summary_table(history, by) for by in ("month", "user", "host", "kernel", "suite")]
    body.append(_table("failures", f"Failures ({len(failures)})", RUN_HEAD + ["error"],
                       [_run_cells(r) + [(r.error or "-", r.error or "")] for r in reversed(failures)]))
    body.append(_table("longest", f"Longest runs ({len(longest)})", RUN_HEAD, [_run_cells(r) for r in longest]))
    body.append(_trend_section(store, since))
    return ("<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>clusterbench run history</title>"
            f"<style>{CSS}</style></head><body>\n" + "\n".join(body) + f"\n<script>{SCRIPT}</script></body></html>\n")
