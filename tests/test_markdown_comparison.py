"""The Markdown report of several configurations carries the HTML report's
comparison: the same medians, intervals, n, units beside, ratios, verdicts
with their reasons, limits, numbered warnings and notes, and the statement
of --exclude-outliers, as GitHub-flavoured tables whose every row keeps its
columns (an integrator pastes it into a procurement document).

The store holds the golden runs (tests/golden/runs.jsonl: real cbk records
of seqio, randio, mpi, stream, cpufreq, tcp and himeno, "base" and "tuned"
about 10 % apart)."""
from __future__ import annotations

import html
import re
from html.parser import HTMLParser

import pytest
import sqlalchemy as sa
from markdown_it import MarkdownIt

from test_golden_reports import ENV_BASE, fill_store
from clusterbench.output.unit_symbols import unit_shown

PIPE_LABEL = "tu|ned"            # a label and a step name with a pipe: escaped, the row keeps its columns
PIPE_STEP = "disk | E1"


class Tables(HTMLParser):
    """Every <table> of an HTML text as rows of cell texts (a <br> kept as a
    line break), the items of every <ol>, in order, and the lettered verdict
    reasons under a table (report/verdict_notes.py) by the table's index: the
    HTML's <ol class="notes reasons">, the Markdown's "(a) ..." paragraphs."""

    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tables: list[list[list[str]]] = []
        self.ordered: list[str] = []
        self.reasons: dict[int, list[str]] = {}
        self._cell: list[str] | None = None
        self._item: list[str] | None = None
        self._in_ol = 0
        self._reasons_of: int | None = None
        self._paragraph: list[str] | None = None
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        if tag == "table":
            self.tables.append([])
        elif tag == "tr":
            self.tables[-1].append([])
        elif tag in ("td", "th"):
            self._cell = []
        elif (tag == "br" and self._cell is not None) or (tag == "div" and self._cell):   # a div: a line of its own
            self._cell.append("\n")
        elif tag == "ol":
            self._in_ol += 1
            if ("class", "notes reasons") in attrs:
                self._reasons_of = len(self.tables) - 1
        elif tag == "li" and self._in_ol:
            self._item = []
        elif tag == "p":
            self._paragraph = []

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            self.tables[-1][-1].append("".join(self._cell).replace("\xa0", " ").strip())
            self._cell = None
        elif tag == "li" and self._item is not None:
            self.ordered.append("".join(self._item).replace("\xa0", " ").strip())
            if self._reasons_of is not None:
                self.reasons.setdefault(self._reasons_of, []).append(self.ordered[-1])
            self._item = None
        elif tag == "ol":
            self._in_ol -= 1
            self._reasons_of = None
        elif tag == "p" and self._paragraph is not None:
            if m := re.fullmatch(r"\(([a-z]+)\) (.+)", "".join(self._paragraph).strip(), re.S):
                self.reasons.setdefault(len(self.tables) - 1, []).append(m.group(2))
            self._paragraph = None

    def handle_data(self, data):
        for part in (self._cell, self._item, self._paragraph):
            if part is not None:
                part.append(data)


def comparison_table(tables: list[list[list[str]]]) -> list[list[str]]:
    found = [t for t in tables if t and t[0][:1] == ["measurement"] and "verdict (p)" in t[0]]
    assert len(found) == 1, [t[0] for t in tables]
    return found[0]


def whole_verdicts(page: Tables) -> list[list[str]]:
    """The comparison table (HTML, or Markdown as drawn) with each verdict's
    lettered reason written back into its cell ("undecidable (a)" and note a:
    "undecidable: reason"), as the analysis words it."""
    table = comparison_table(page.tables)
    reasons = page.reasons.get(page.tables.index(table), [])
    verdict = table[0].index("verdict (p)")

    def whole(m: re.Match) -> str:
        return ": " + reasons[ord(m.group(1)) - ord("a")]

    return [table[0]] + [[re.sub(r" \(([a-z])\)$", whole, c) if i == verdict else c for i, c in enumerate(row)]
                         for row in table[1:]]


def rendered(markdown: str) -> Tables:
    """The Markdown as a GFM renderer draws it (markdown-it: CommonMark with tables)."""
    return Tables(MarkdownIt("commonmark").enable("table").render(markdown))


def markdown_cell(html_cell: str) -> str:
    """What the Markdown cell must read for an HTML comparison cell: its
    lines on one line (a figure cell: 'median !marks (MB/s); interval, n';
    a limit cell: one configuration after another, ';' between)."""
    lines = html_cell.split("\n")
    if len(lines) == 3:   # median with marks / the units beside (may be empty) / interval and n
        median, beside, interval = (line.strip() for line in lines)
        return f"{median}{' ' + beside if beside else ''}; {interval}"
    return "; ".join(line.strip() for line in lines)


def table_blocks(markdown: str) -> list[list[str]]:
    """The Markdown's tables as their source lines."""
    blocks: list[list[str]] = []
    previous = ""
    for line in markdown.splitlines():
        if line.startswith("|"):
            if not previous.startswith("|"):
                blocks.append([])
            blocks[-1].append(line)
        previous = line
    return blocks


def columns(line: str) -> int:
    """A GFM row's cells: its pipes not escaped by a backslash, less one."""
    return len(re.findall(r"(?<!\\)\|", line)) - 1


def copy_run(store, run_id: int, label: str, env: dict) -> None:
    """run_id's steps and samples again as run `label`, on a machine whose environment is `env`."""
    from clusterbench import environment

    new = store.begin_run(label=label, command=f"copy of run {run_id}", suite=None, user="golden")
    store.link_host(new, "node01", store.add_environment(env, environment.snapshot_hash(env)))
    for st in store.steps_of(run_id):
        sid = store.begin_step(new, position=st.position, name=st.name, kernel=st.kernel, params=st.params,
                               launcher=st.launcher, ranks=st.ranks, ranks_per_node=st.ranks_per_node)
        for s in store.samples_of(st.id):
            store.add_sample(sid, s, list(s.warnings))
        store.finish_step(sid, "ok")
    store.finish_run(new, "ok")


@pytest.fixture
def golden_store(tmp_path):
    """The golden runs, "tuned" relabelled with a pipe and the seqio step named with one."""
    from clusterbench.store import Store

    url = f"sqlite:///{tmp_path / 'results.db'}"
    fill_store(url)
    store = Store(url)
    with store.engine.begin() as c:
        c.execute(sa.text("UPDATE runs SET label=:new WHERE label='tuned'"), {"new": PIPE_LABEL})
        c.execute(sa.text("UPDATE steps SET name=:new WHERE name='disk (E1)'"), {"new": PIPE_STEP})
    return store


@pytest.mark.timeout(60)
@pytest.mark.parametrize("exclude_outliers", [False, True], ids=["all-samples", "exclude-outliers"])
def test_the_markdown_comparison_carries_the_html_comparisons_figures_cell_for_cell(golden_store, exclude_outliers):
    from clusterbench.report import render
    from clusterbench.report.data import Report
    from clusterbench.output.figure_digits import at, median, places
    from clusterbench.report.terminal import ci_words

    refs = ["base", PIPE_LABEL]
    report = Report.of(golden_store, refs, exclude_outliers)
    markdown = render("md", report)
    page = Tables(render("html", report))
    drawn = rendered(markdown)
    # each verdict's reason lettered once under the table in both, the same letters for the same reasons
    assert [r[6] for r in comparison_table(drawn.tables)] == [r[6] if len(r) > 1 else "" for r in comparison_table(page.tables)]
    (md_reasons, html_reasons) = (t.reasons[t.tables.index(comparison_table(t.tables))] for t in (drawn, page))
    assert md_reasons == html_reasons and any(r.startswith("n = 3 vs 3 cannot reach p < 0.05") for r in md_reasons)
    md_rows, html_rows = whole_verdicts(drawn), whole_verdicts(page)
    # a step's title once above its rows: the HTML's one cell across the table, the Markdown's first of a row
    html_rows = [r + [""] * (len(html_rows[0]) - 1) if len(r) == 1 else r for r in html_rows]
    from clusterbench.report.compare_data import group_text, shared_tails

    said = shared_tails(report.comparison)
    # a group's row says its title and the interval words its cells leave to it
    groups = {group_text(g, said[g]): g for g in {report.comparison.group(p) for p in report.comparison.points}}

    # the same header and, row for row, the same cells: the HTML's lines on one line
    assert md_rows[0] == html_rows[0]
    assert len(md_rows) == len(html_rows) == len(report.comparison.points) + 1 + len(groups)
    for md_row, html_row in zip(md_rows[1:], html_rows[1:]):
        assert md_row == [markdown_cell(c) for c in html_row]

    # and the analysis layer's figures, with their units, are what the cells say
    from clusterbench.report.compare_data import n_after_interval, row_units, unit_key

    table = report.comparison
    names = table.names
    units = row_units(table)   # a step's figures in a larger unit where they need it (report/table_units.py)
    by_title, group = {}, None
    for r in md_rows[1:]:
        if r[0] in groups and not any(r[1:]):
            group = groups[r[0]]
        else:
            by_title[(f"{group}: {r[0]}", r[1])] = r
    for p in table.points:
        row = by_title[(table.title(p), p.mode)]
        u = units[unit_key(p)]
        assert row[2] == unit_shown(u.unit)   # as people read it: µs for the records' us
        for i, n in enumerate(names):
            s = u.summary(p.summary(n))
            assert row[3 + i].startswith(median(s))   # at its interval's decimals
            # n once: ci_words says it below n = 6; the words once in the group's row where its cells share them
            interval = ci_words(s).partition(" ")[0] if said[table.group(p)] else f"{ci_words(s)}{n_after_interval(s)}"
            assert row[3 + i].endswith(f"; {interval}")
            # the decimal twin to the median's own places (report/units_text.py)
            if u.unit == "MiB/s":
                assert f"({at(s.median * 2**20 / 1e6, places(s))} MB/s)" in row[3 + i]
            if u.unit == "GiB/s":
                assert f"({at(s.median * 2**30 / 1e9, places(s))} GB/s)" in row[3 + i]
        c = p.versus(names[0], names[1])
        assert row[5] == f"{c.ratio:.3f} ({c.change:+.1%})"
        assert row[6] == p.verdict_text(names[0], names[1])
    verdicts = [r[6] for r in md_rows[1:]]
    assert any(v.startswith("undecidable: n = 3 vs 3 cannot reach p < 0.05") for v in verdicts)
    assert (f"{PIPE_STEP}: write", "fsync") in by_title and names == ["base", PIPE_LABEL]

    # the numbered warnings below the table are the HTML's, in the same order
    assert [w for w in drawn.ordered if w.startswith("warning: ")] == \
        [w for w in page.ordered if w.startswith("warning: ")]
    # 12 warnings in the cells, 8 texts: clock 1 busy and 2 busy share theirs (compare_data.warning_marks)
    assert sum(w.startswith("warning: ") for w in drawn.ordered) == 8


@pytest.mark.timeout(60)
def test_every_row_of_every_markdown_table_has_its_headers_column_count(golden_store):
    """A '|' in a label or step name is escaped; no cell holds a line break."""
    from clusterbench.report import render
    from clusterbench.report.data import Report

    markdown = render("md", Report.of(golden_store, ["base", PIPE_LABEL]))
    blocks = table_blocks(markdown)
    assert len(blocks) >= 3   # the comparison, its environment differences, a step's table
    for block in blocks:
        assert re.fullmatch(r"\|( ?:?-+:? ?\|)+", block[1]), block[1]
        assert {columns(line) for line in block} == {columns(block[0])}, block
    comparison = next(b for b in blocks if b[0].startswith("| measurement |"))
    steps = [line for line in comparison if line.startswith("| **")]   # each step once, above its rows
    assert columns(comparison[0]) == 8 and len(comparison) == 2 + 17 + len(steps) and len(steps) == 7, steps
    assert "tu\\|ned: median" in comparison[0]
    assert any(line.startswith("| **disk \\| E1") and line.endswith("** |" + "  |" * 7) for line in comparison), comparison


@pytest.mark.timeout(180)
def test_report_exclude_outliers_states_it_in_markdown_as_html_does(cli, store_url, tmp_path):
    """`clusterbench report base tuned --exclude-outliers -o r.md` (the format from the suffix)."""
    from clusterbench.report.compare_data import outliers_excluded_text
    from clusterbench.report.data import Report
    from clusterbench.output.figure_digits import median
    from clusterbench.store import Store

    fill_store(store_url)
    excluded = Report.of(Store(store_url), ["base", "tuned"], exclude_outliers=True).comparison
    statement = outliers_excluded_text(excluded)
    assert "modified Z-score > " in statement and " at n = 5" in statement   # the bound of the samples' size
    for flag in ([], ["--exclude-outliers"]):
        for suffix in ("md", "html"):
            r = cli("report", "base", "tuned", *flag, "-o", str(tmp_path / f"r{len(flag)}.{suffix}"))
            assert r.status == 0, r.stderr
    with_md, with_html = ((tmp_path / f"r1.{s}").read_text() for s in ("md", "html"))
    without_md, without_html = ((tmp_path / f"r0.{s}").read_text() for s in ("md", "html"))
    assert f"## Comparison, baseline base, {statement}\n" in with_md
    assert f"<h2>Comparison, baseline base, {html.escape(statement)}</h2>" in with_html
    assert statement not in without_md and html.escape(statement) not in without_html
    assert "## Comparison, baseline base\n" in without_md

    # the figures are those without the outliers: base's write (one outlier of 5) has n = 4
    write = next(p for p in excluded.points if excluded.title(p) == "disk (E1): write")
    s = write.summary("base")
    assert s.n == 4
    lines = with_md.splitlines()
    step = next(i for i, line in enumerate(lines) if line.startswith("| **disk (E1)** |"))   # the step, then its rows
    row = next(line for line in lines[step:] if line.startswith("| write |"))
    assert f"| {median(s)} !1 (" in row and ", n = 4, coverage 88 %) |" in row
    html_rows = whole_verdicts(Tables(with_html))
    assert whole_verdicts(rendered(with_md)) == [
        [markdown_cell(c) for c in r + [""] * (len(html_rows[0]) - len(r))] for r in html_rows]


@pytest.mark.timeout(60)
def test_a_value_not_read_in_an_environment_difference_is_a_numbered_note_as_in_html(golden_store):
    from clusterbench.report import render
    from clusterbench.report.data import Report

    env = {k: v for k, v in ENV_BASE.items() if k != "cpu.governor"}
    env["cpu.governor_error"] = "no cpufreq | in this VM"
    copy_run(golden_store, golden_store.resolve("base")[0], "vm", env)
    report = Report.of(golden_store, ["base", "vm"])
    markdown = render("md", report)
    assert "| CPU frequency governor | performance | not available (note 1) |" in markdown   # the key in words
    assert markdown.endswith("## Notes\n\n1. not available: no cpufreq \\| in this VM\n")
    drawn, page = rendered(markdown), Tables(render("html", report))
    assert drawn.ordered[-1] == page.ordered[-1] == "not available: no cpufreq | in this VM"


@pytest.mark.timeout(60)
def test_runs_with_nothing_in_common_say_why_there_is_no_comparison_in_markdown_as_in_html(tmp_path):
    from clusterbench.report import render
    from clusterbench.report.data import Report
    from clusterbench.store import Store

    url = f"sqlite:///{tmp_path / 'r.db'}"
    fill_store(url)
    store = Store(url)
    # the golden run 1 cut to its seqio step, run 2 to its stream step: no measurement in common
    cut = "(run_id=1 AND kernel!='seqio') OR (run_id=2 AND kernel!='stream')"
    with store.engine.begin() as c:
        c.execute(sa.text(f"DELETE FROM samples WHERE step_id IN (SELECT id FROM steps WHERE {cut})"))
        c.execute(sa.text(f"DELETE FROM steps WHERE {cut}"))
    report = Report.of(store, ["1", "2"])
    markdown = render("md", report)
    assert report.comparison is None and report.no_comparison
    reason = f"{report.no_comparison}: each run is shown on its own."
    # after the title and each run's headline figures, before the runs
    assert markdown.startswith("# Benchmark report: ")
    assert f"\n## No comparison\n\n{reason}\n" in markdown
    assert markdown.index("\n## Summary") < markdown.index("\n## No comparison") < markdown.index("\n## Run 1 (base)")
    assert "<h2>No comparison</h2><p>" + html.escape(reason) in render("html", report)
    assert "## Run 1 (base)" in markdown and "## Run 2 (tuned)" in markdown
