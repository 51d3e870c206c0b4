"""The reports as printed pages, as an integrator hands them to a customer:
what a reader stumbled over in the PDFs of the golden stores (a single-node
comparison, a cluster run, a GPU cluster run, two cluster runs) and of a
real quick run, each checked where it was fixed."""
from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from test_golden_reports import STARTED, fill_store


def rendered(url: str, refs: list[str], monkeypatch, fmt: str = "html") -> str:
    from clusterbench.report import render
    from clusterbench.report.data import Report
    from clusterbench.store import Store

    monkeypatch.setenv("SOURCE_DATE_EPOCH", str(int(STARTED.timestamp())))
    return render(fmt, Report.of(Store(url), refs))


@pytest.fixture(scope="module")
def golden_url(tmp_path_factory) -> str:
    url = f"sqlite:///{tmp_path_factory.mktemp('print') / 'results.db'}"
    fill_store(url)
    return url


def tables_after(page: str, heading: str) -> str:
    start = page.index(heading)
    return page[start:page.index("<h", start + len(heading))]


@pytest.mark.timeout(120)
def test_a_verdicts_reason_is_said_once_under_its_table_not_in_every_row(golden_url, monkeypatch):
    """base vs tuned, 3 repetitions a side: 15 verdicts "undecidable" for one
    reason. The reason (n = 3 vs 3 cannot reach p < 0.05 ...) stood in every
    row's verdict cell, a tower of nine lines a row on A4; now the cell says
    "undecidable (a)" and the reason stands once, as note a, under the table."""
    page = rendered(golden_url, ["base", "tuned"], monkeypatch)
    reason = "n = 3 vs 3 cannot reach p &lt; 0.05 (repeat at least 4 times each)"
    for heading, rows in (("<h2>Summary</h2>", 5), ("<h2>Comparison, baseline base</h2>", 12)):
        section = tables_after(page, heading)
        cells = re.findall(r"<td[^>]*>(undecidable[^<]*)&nbsp;<sup>\((\w)\)</sup></td>", section)
        assert len(cells) >= rows and len({letter for _, letter in cells}) == 1, (heading, cells)
        assert section.count(reason) == 1, heading
        # the letters count the table's notes in order: a flag's reason may hold one before it
        notes = re.findall(r"<li>(.*?)</li>", section[section.index('<ol class="notes reasons" type="a">'):])
        assert notes[ord(cells[0][1]) - ord("a")].startswith(reason), (heading, notes)
    # a verdict with no reason keeps its words and p-value, unmarked
    assert "<td>no significant difference, but base is above the link and tuned is above the link (p=0.151)</td>" in page


def test_a_scaling_plots_time_axis_reads_in_numbers_not_a_power_of_two(monkeypatch):
    """The cluster report's scaling plot of 21 and 41 µs had one y tick, "2⁵"
    (log base 2, matplotlib's default labels): no time could be read off it."""
    from clusterbench.analysis.cluster.analysis import ClusterView
    from clusterbench.report import cluster_html, plots

    drawn = []
    monkeypatch.setattr(plots, "_svg", lambda fig: drawn.append(fig) or "<svg></svg>")
    cluster_html.scaling(ClusterView(hosts=["h01", "h02", "h03", "h04"],
                                     scaling={"allreduce 8 B (1 rank/node)": {2: 21.0, 4: 41.0}}))
    (fig,) = drawn
    try:
        fig.canvas.draw()
        (ax,) = fig.axes
        low, high = ax.get_ylim()
        shown = [t.get_text() for t, y in zip(ax.get_yticklabels(), ax.get_yticks()) if low <= y <= high]
        assert len(shown) >= 2 and all(re.fullmatch(r"[\d,]+(\.\d+)?", t) for t in shown), shown
    finally:
        import matplotlib.pyplot as plt

        plt.close(fig)


@pytest.mark.parametrize("times_us", [(21.0, 41.0), (1.3, 2.9), (15.0, 870.0), (2.0, 9000.0)])
def test_a_scaling_plots_points_lie_between_labelled_ticks(monkeypatch, times_us):
    """Of 21 and 41 µs the axis ran from about 20.5 to 42: labels 30 and 40, the 21 µs
    point below the lowest label, its time not to be read. The axis runs from the
    labelled tick below the fastest time to the one above the slowest."""
    from clusterbench.analysis.cluster.analysis import ClusterView
    from clusterbench.report import cluster_html, plots

    drawn = []
    monkeypatch.setattr(plots, "_svg", lambda fig: drawn.append(fig) or "<svg></svg>")
    fast, slow = times_us
    cluster_html.scaling(ClusterView(hosts=["h01", "h02", "h03", "h04"],
                                     scaling={"allreduce 8 B (1 rank/node)": {2: fast, 4: slow}}))
    (fig,) = drawn
    try:
        fig.canvas.draw()
        (ax,) = fig.axes
        low, high = ax.get_ylim()
        labelled = [y for t, y in zip(ax.get_yticklabels(), ax.get_yticks()) if low <= y <= high and t.get_text()]
        assert min(labelled) <= fast and max(labelled) >= slow, (labelled, times_us)
        assert low < fast and slow < high   # no point on the frame
    finally:
        import matplotlib.pyplot as plt

        plt.close(fig)


def test_a_flagged_link_in_the_heat_map_stays_marked_in_a_greyscale_print(tmp_path, monkeypatch):
    """h03's slow links sit at viridis' dark end, whose grey is the red box's
    own: printed in greyscale the box vanished. Each flagged cell's box now
    stands out from the cell in grey, and its figure carries "!"."""
    import numpy as np

    from test_cluster_report import fill_cluster_store

    from clusterbench.analysis.cluster.analysis import analyse, thresholds_of
    from clusterbench.report import cluster_html, plots
    from clusterbench.report.data import Report
    from clusterbench.store import Store

    url = f"sqlite:///{tmp_path / 'results.db'}"
    run = Report.of(Store(url), [str(fill_cluster_store(url))]).runs[0]
    view = analyse(run, **thresholds_of(run))
    drawn = []
    monkeypatch.setattr(plots, "_svg", lambda fig: drawn.append(fig) or "<svg></svg>")
    cluster_html.heat_map(view)
    (fig,) = drawn
    try:
        fig.canvas.draw()
        ax = fig.axes[0]
        marked = sorted(t.get_text() for t in ax.texts if t.get_text().endswith(" !"))
        flagged = [lk for lk in view.links if lk.flagged]
        assert len(flagged) == 6 and marked == ["5.852 !"] * 6, marked
        assert "! = flagged" in ax.get_title()
        rgba = np.asarray(fig.canvas.buffer_rgba())[..., :3].astype(float)
        grey = rgba @ [0.299, 0.587, 0.114]
        height = grey.shape[0]
        for lk in flagged:
            i, j = view.hosts.index(lk.src), view.hosts.index(lk.dst)
            # a row of pixels a quarter cell above the centre: clear of the figure's text, across the box's sides
            (x0, y), (x1, _) = ax.transData.transform([(j - 0.5, i - 0.25), (j + 0.5, i - 0.25)])
            row = grey[height - int(round(y)), int(round(x0)) + 2:int(round(x1)) - 2]
            inside = grey[height - int(round(y)), int(round((x0 + x1) / 2))]
            assert max(abs(row - inside)) > 100, (lk.src, lk.dst, inside, row.min(), row.max())
    finally:
        import matplotlib.pyplot as plt

        plt.close(fig)


@pytest.mark.timeout(300)
def test_a_gpus_name_stays_on_one_line_on_a4(tmp_path, monkeypatch):
    """The per-GPU table at the printed width: "h03 GPU 1" broke into
    "h03 GPU" over "1", a row two lines high for a name."""
    from test_gpu_cluster import gpu_cluster_store
    from test_report_document import A4_TEXT_WIDTH_PX, layout_verdicts

    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if not chromium:
        pytest.skip("chromium is not installed (scripts/apt-packages.txt lists it)")
    _, run_id = gpu_cluster_store(f"sqlite:///{tmp_path / 'results.db'}")
    page = rendered(f"sqlite:///{tmp_path / 'results.db'}", [str(run_id)], monkeypatch)
    assert '<table class="gpus"><thead><tr><th>GPU</th>' in page
    (verdict,) = layout_verdicts(chromium, {"gpu": (page, A4_TEXT_WIDTH_PX, True)}, tmp_path).values()
    assert verdict["wrapped"] == [] and not verdict["wide"], verdict


@pytest.mark.timeout(300)
def test_a_runs_heading_is_printed_on_the_page_of_its_environment(golden_url, tmp_path, monkeypatch):
    """"Run 1 (base): ok" and its start line stood alone at the foot of page 5,
    its test environment on page 6: a heading and the sentence under it are
    kept with what follows them."""
    from clusterbench.report.pdf import html_to_pdf

    if not (shutil.which("chromium") or shutil.which("chromium-browser")) or not shutil.which("pdftotext"):
        pytest.skip("chromium and poppler-utils are needed (scripts/apt-packages*.txt list them)")
    pdf = tmp_path / "compare.pdf"
    pdf.write_bytes(html_to_pdf(rendered(golden_url, ["base", "tuned"], monkeypatch)))
    text = subprocess.run(["pdftotext", "-layout", str(pdf), "-"], capture_output=True, text=True, check=True).stdout
    pages = text.split("\f")
    for heading in ("Run 1 (base): ok", "Run 2 (tuned): ok"):
        (page,) = [p for p in pages if heading in p]
        assert "Test environment: node01" in page[page.index(heading):], heading


@pytest.mark.timeout(120)
def test_a_step_tables_interval_words_are_said_once_in_its_heading(golden_url, monkeypatch):
    """Every interval cell of a step's table said "([min, max], n = 5, coverage 94 %)"
    beside an n column saying 5: on A4 each broke over two lines. Where every row's
    words are the same they stand once, in the column's heading; the cells keep the interval."""
    page = rendered(golden_url, ["base"], monkeypatch)
    table = page[page.index("<h3>disk (E1): ok</h3>"):]
    table = table[:table.index("</table>")]
    assert "<th>interval of the median ([min, max], n = 5, coverage 94 %)</th>" in table
    cells = re.findall(r"<td class=ci>(.*?)</td>", table)
    assert cells == ['<span class="fig">548..1,662</span>', '<span class="fig">342..1,037</span>'], cells


@pytest.mark.timeout(120)
def test_a_comparisons_figure_cell_says_n_once_and_holds_no_empty_line(golden_url, monkeypatch):
    """base vs tuned: every figure cell read "548..1,662 ([min, max], n = 5, coverage
    94 %), n = 5", n twice, and a figure with no MB/s beside it (IOPS, µs) had an
    empty line between median and interval. In HTML and Markdown n is said once."""
    page = rendered(golden_url, ["base", "tuned"], monkeypatch)
    table = tables_after(page, "<h2>Comparison, baseline base</h2>")
    cells = re.findall(r"<td class=cmp>(.*?)</td>", table)
    assert len(cells) == 2 * 17, len(cells)
    # n once: in the cell, or in its step's row with the interval's words where all its cells share them
    groups = re.findall(r'<tr class="group"><th colspan=8>(.*?)</th></tr>', table)
    assert all(c.count("n&nbsp;=&nbsp;") <= 1 for c in cells), cells
    assert all(("n = " in g) != any("n&nbsp;=" in c for c in re.findall(r"<td class=cmp>(.*?)</td>", part))
               for g, part in zip(groups, re.split(r'<tr class="group">', table)[1:])), groups
    assert '<small class="fig"></small>' not in page
    iops = next(c for c in cells if c.startswith('<span class="fig">12,915</span>'))
    assert iops == '<span class="fig">12,915</span><br><small><span class="fig">12,657..13,173</span></small>', iops
    assert "random read; intervals ([min, max], n = 3, coverage 75 %)" in groups
    md = rendered(golden_url, ["base", "tuned"], monkeypatch, "md")
    row = next(line for line in md.splitlines() if line.startswith("| randread |"))
    assert "| 12,915; 12,657..13,173 |" in row, row


@pytest.mark.timeout(300)
def test_a_terms_meaning_is_printed_on_the_page_of_the_term(tmp_path, monkeypatch):
    """The cluster report's "How to read the figures" on A4: "CV" stood at the foot
    of page 5, "coefficient of variation ..." at the top of page 6. Each term is kept
    with its meaning."""
    from test_cluster_report import fill_cluster_store

    from clusterbench.report import reading_guide
    from clusterbench.report.pdf import html_to_pdf

    if not (shutil.which("chromium") or shutil.which("chromium-browser")) or not shutil.which("pdftotext"):
        pytest.skip("chromium and poppler-utils are needed (scripts/apt-packages*.txt list them)")
    url = f"sqlite:///{tmp_path / 'results.db'}"
    page = rendered(url, [str(fill_cluster_store(url))], monkeypatch)
    pdf = tmp_path / "cluster.pdf"
    pdf.write_bytes(html_to_pdf(page))
    text = subprocess.run(["pdftotext", "-layout", str(pdf), "-"], capture_output=True, text=True, check=True).stdout
    pages = [[line.strip() for line in p.splitlines()] for p in text.split("\f")]
    terms = reading_guide.used(page)
    assert [t for t, _ in terms][:4] == ["median", "n", "interval of the median (95 % CI)", "CV"]
    for term, meaning in terms:
        (on,) = [i for i, lines in enumerate(pages) if term in lines]
        assert any(line.startswith(meaning[:40]) for line in pages[on]), (term, on + 1)


@pytest.mark.timeout(120)
def test_runs_compared_by_their_ids_are_named_run_and_label_not_by_a_bare_number(golden_url, monkeypatch, cbk_bin):
    """`report 1 2`: the title read "1 vs 2", the columns "1", "2" and "2/1" (a
    fraction), the verdicts "but 1 is above the link and 2 is above the link".
    Each run given by its id is "run 1 (base)" in every part of the report, and
    in `compare`'s table and JSON."""
    import json
    import os
    import sys

    md = rendered(golden_url, ["1", "2"], monkeypatch, "md")
    assert md.startswith("# Performance comparison: run 1 (base) vs run 2 (tuned) on node01, 2026-01-15\n"), md[:100]
    assert "| headline figure (median) | run 1 (base) | run 2 (tuned) | run 2 (tuned)/run 1 (base) | verdict |" in md
    assert "but run 1 (base) is above the link and run 2 (tuned) is above the link" in md
    assert "## Comparison, baseline run 1 (base)\n" in md and "| 2/1 |" not in md
    html = rendered(golden_url, ["1", "2"], monkeypatch)
    assert "<tr><td>run 1 (base)</td><td class=n>1</td><td>node01</td>" in html   # Systems compared
    # a label is named as given, a run by id beside it as run and label
    assert rendered(golden_url, ["base", "2"], monkeypatch, "md").startswith(
        "# Performance comparison: base vs run 2 (tuned) on node01")
    env = dict(os.environ, CLUSTERBENCH_CBK=cbk_bin, CLUSTERBENCH_DB=golden_url)
    p = subprocess.run([sys.executable, "-m", "clusterbench", "compare", "1", "2", "--format", "json"],
                       capture_output=True, text=True, env=env, timeout=120)
    assert p.returncode == 0, p.stderr
    data = json.loads(p.stdout)
    assert data["configs"] == [{"name": "run 1 (base)", "runs": [1]}, {"name": "run 2 (tuned)", "runs": [2]}]


@pytest.mark.timeout(120)
@pytest.mark.parametrize("cluster", [False, True])
def test_the_markdown_test_environment_says_not_available_with_a_note_as_the_html_does(cluster, tmp_path, monkeypatch):
    """The Markdown report's systems table said "DIMM layout not available (note 1)",
    its test environment under it "DIMM layout unavailable: dmidecode not installed
    (not on PATH)": two words and the collector's text in one document. The block
    (one host's, and a cluster's the same on every host) numbers the reason as the
    HTML's does, under Notes, and is titled "Test environment" as there."""
    import test_cluster_report
    from test_golden_reports import ENV_BASE

    from clusterbench import environment
    from clusterbench.results.sample import Sample
    from clusterbench.store import Store

    reason = "dmidecode not installed (not on PATH)"
    env = {**ENV_BASE, "memory.dimms_error": reason, "tuned.profile_error": "no such file /etc/tuned/active_profile"}
    del env["tuned.profile"]
    url = f"sqlite:///{tmp_path / 'results.db'}"
    if cluster:
        monkeypatch.setattr(test_cluster_report, "ENV_BASE", env)
        run_id = test_cluster_report.fill_cluster_store(url)
    else:
        store = Store(url)
        run_id = store.begin_run(label="one", command="clusterbench run himeno", suite=None, user="test")
        store.link_host(run_id, "node01", store.add_environment(env, environment.snapshot_hash(env)))
        step = store.begin_step(run_id, position=0, name="himeno", kernel="himeno", params={}, launcher="local",
                                ranks=1, ranks_per_node=None)
        for rep in range(3):
            store.add_sample(step, Sample.from_record({"phase": "jacobi", "mode": "time", "rate": 600.0 + rep,
                                                       "rate_unit": "MFLOPS", "repetition": rep}), [])
        store.finish_step(step, "ok")
        store.finish_run(run_id, "ok")
    md = rendered(url, [str(run_id)], monkeypatch, "md")
    block = md[md.index("### Test environment: "):]
    block = block[:block.index("\n### ", 1)]
    assert "- **Memory**: 32 GiB; DIMM layout not available (note 1)" in block, block
    assert "- **Tuned profile**: not available (note 2)" in block, block
    assert "unavailable" not in md
    notes = md[md.index("## Notes"):]
    assert f"1. not available: {reason}\n2. not available: no such file /etc/tuned/active_profile\n" in notes, notes
    html = rendered(url, [str(run_id)], monkeypatch)
    assert 'DIMM layout not available<sup><a href="#note1">1</a></sup>' in html
    assert '<td>not available<sup><a href="#note2">2</a></sup></td>' in html


def test_the_hosts_of_a_run_with_one_environment_line_share_one_row(tmp_path, monkeypatch):
    """"System measured" of a cluster run gave each host a row of the same
    line (CPU, memory, OS): 16 nodes, 16 rows before the summary. Hosts whose
    line is the same share a row; a host whose line differs keeps its own."""
    from test_cluster_report import fill_cluster_store

    url = f"sqlite:///{tmp_path / 'results.db'}"
    page = rendered(url, [str(fill_cluster_store(url))], monkeypatch)
    systems = page[page.index("<h2>System measured</h2>"):]
    systems = systems[:systems.index("</table>")]
    assert systems.count("<tr>") == 2 and "<th>hosts</th>" in systems, systems   # the heading and one row
    assert "<td>h01, h02, h03, h04, login1 (launched the run, not a node)</td>" in systems

    import test_cluster_report

    monkeypatch.setitem(test_cluster_report.GOVERNOR, "h04", {"cpu.model": "Other CPU"})   # h04 another machine
    url = f"sqlite:///{tmp_path / 'other.db'}"
    page = rendered(url, [str(fill_cluster_store(url))], monkeypatch)
    systems = page[page.index("<h2>System measured</h2>"):]
    systems = systems[:systems.index("</table>")]
    assert "<td>h01, h02, h03, login1 (launched the run, not a node)</td>" in systems and "<td>h04</td>" in systems


def test_the_markdown_report_groups_the_hosts_of_one_environment_line_as_the_html_does(tmp_path, monkeypatch):
    """The Markdown report had no "System measured" at all; it has the
    HTML's, from the same rows: hosts whose line is the same share a row,
    a host whose line differs keeps its own."""
    import test_cluster_report
    from test_cluster_report import fill_cluster_store

    def systems(url: str) -> str:
        text = rendered(url, [str(fill_cluster_store(url))], monkeypatch, "md")
        found = text[text.index("## System measured\n"):]
        return found[:found.index("## Summary")]

    alike = systems(f"sqlite:///{tmp_path / 'results.db'}")
    assert "| run | hosts | environment |" in alike, alike
    rows = [line for line in alike.splitlines() if line.startswith("| 1 |")]
    assert rows == ["| 1 | h01, h02, h03, h04, login1 (launched the run, not a node) | "
                    "1 x Example CPU 9000, 8 cores / 16 threads; 32 GiB; DIMM layout not available; "
                    "Debian GNU/Linux 12, kernel 6.1.0-18-amd64 |"], alike
    monkeypatch.setitem(test_cluster_report.GOVERNOR, "h04", {"cpu.model": "Other CPU"})   # h04 another machine
    other = systems(f"sqlite:///{tmp_path / 'other.db'}")
    rows = [line.split(" | ")[1] for line in other.splitlines() if line.startswith("| 1 |")]
    assert rows == ["h01, h02, h03, login1 (launched the run, not a node)", "h04"], other


@pytest.mark.timeout(60)
def test_a_chromium_that_hangs_is_stopped_with_every_process_it_started_and_said_in_one_line(tmp_path, monkeypatch):
    """subprocess.run's timeout killed the browser alone (its renderer and
    GPU processes stayed) and raised TimeoutExpired: a traceback."""
    import os
    import signal
    import time

    from clusterbench.errors import MeasurementFailed
    from clusterbench.report import pdf

    started = tmp_path / "child.pid"
    fake = tmp_path / "chromium"
    fake.write_text(f"#!/bin/sh\nsleep 300 &\necho $! > {started}\nexec sleep 300\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setattr(pdf, "TIMEOUT_S", 2)
    with pytest.raises(MeasurementFailed) as failed:
        pdf.html_to_pdf("<html><head></head><body>x</body></html>")
    assert "did not print the report to PDF within 2 s and was stopped" in str(failed.value)
    child = int(started.read_text())
    for _ in range(100):   # SIGKILL is delivered at once; the zombie is reaped by init
        try:
            os.kill(child, 0)
        except ProcessLookupError:
            break
        if open(f"/proc/{child}/stat").read().split(")")[-1].split()[0] == "Z":
            break
        time.sleep(0.05)
    else:
        os.kill(child, signal.SIGKILL)
        pytest.fail("the browser's child outlived it")


@pytest.mark.timeout(120)
def test_a_runs_flagged_count_is_the_figures_it_names_not_its_reasons(golden_url, monkeypatch):
    """Run base flags four figures under two reasons ("write fsync, read cold: above the
    link"; "clock 1 busy, clock 2 busy: ..."): its summary said "Flagged (2)" above four
    names (a quick run: "Flagged (4)" above six), a count a reader checks and finds wrong."""
    md = rendered(golden_url, ["base"], monkeypatch, "md")
    assert "Flagged (4): not what their mode claims" in md
    assert "- **disk (E1)**: write fsync, read cold: cache: above the 1 Gbit/s link" in md
    html = rendered(golden_url, ["base"], monkeypatch)
    assert "<h3>Flagged (4): not what their mode claims" in html


@pytest.mark.timeout(120)
def test_a_comparisons_warning_said_alike_for_two_rows_is_one_note(golden_url, monkeypatch):
    """base vs tuned: clock 1 busy and clock 2 busy carry the same two warnings per
    configuration; the notes under the table said each twice (12 notes, 4 repeats),
    numbered apart, so a reader looked up two notes to find one text."""
    md = rendered(golden_url, ["base", "tuned"], monkeypatch, "md")
    notes = re.findall(r"^\d+\. warning: (.*)$", md, re.M)
    assert len(notes) == len(set(notes)) == 8, notes
    assert "| clock | 1 busy | MHz | 3,571 !5 !6;" in md and "| clock | 2 busy | MHz | 3,621 !5 !6;" in md
    html = rendered(golden_url, ["base", "tuned"], monkeypatch)
    notes = re.findall(r'<li class="warn">warning: (.*?)</li>', html.split('<ol class="notes">', 1)[1].split("</ol>", 1)[0])
    assert len(notes) == len(set(notes)) == 8, notes


@pytest.mark.timeout(120)
def test_a_figures_decimal_twin_is_printed_to_the_figures_own_places(golden_url, monkeypatch):
    """The MB/s (GB/s) beside a MiB/s (GiB/s) median took 4 significant digits of its own:
    "119.6 GiB/s (128 GB/s)" beside "82.1 GiB/s (88.13 GB/s)", and a quick run's
    "0.39 MiB/s (0.4069 MB/s)", two digits its interval had shown meaningless. The
    twin now keeps the median's decimal places, in step tables and comparisons alike."""
    md = rendered(golden_url, ["base"], monkeypatch, "md")
    assert "| copy | best, 2 threads | 3 | 119.6 | 117.3..122.0 | 117.3 | 122.0 | 2.0% | GiB/s (128.5 GB/s) |" in md
    assert "| add | best, 2 threads | 3 | 82.1 | 80.4..83.7 | 80.4 | 83.7 | 2.0% | GiB/s (88.1 GB/s) |" in md
    html = rendered(golden_url, ["base"], monkeypatch)
    assert re.search(r"<td class=n>82\.1</td>.*?GiB/s <span class=\"fig\">\(88\.1 GB/s\)</span>", html)
    compared = rendered(golden_url, ["base", "tuned"], monkeypatch, "md")
    assert "| add | best, 2 threads | GiB/s | 82.1 (88.1 GB/s); 80.4..83.7" in compared


@pytest.mark.timeout(120)
def test_every_column_an_mpi_step_table_prints_is_explained_in_how_to_read_the_figures(golden_url, monkeypatch):
    """An MPI pingpong table printed "fastest / mean / slowest rank (µs)" and a second
    "MB/s" beside the unit column's, neither in "How to read the figures": a customer
    could not tell whose rate the second MB/s was, nor why it differed from the median."""
    page = rendered(golden_url, ["base"], monkeypatch)
    table = page[page.index("<h3>MPI pingpong: ok</h3>"):]
    table = table[:table.index("</table>")]
    assert "<th>fastest / mean / slowest rank (µs)</th><th>MB/s per pair</th>" in table
    guide = page.split("<h2>How to read the figures</h2>", 1)[1]
    terms = re.findall(r"<dt>(.*?)</dt>", guide)
    assert "fastest / mean / slowest rank" in terms and "MB/s per pair" in terms, terms
    assert "the figure IMB PingPong and osu_bw print" in guide


@pytest.mark.timeout(120)
def test_a_comparisons_step_title_is_said_once_above_its_rows(golden_url, monkeypatch):
    """Each comparison row began with its step's whole title ("MPI: pingpong latency and
    bandwidth, 2 ranks on this node (E7): pingpong 8 B"), 60 to 100 characters in a
    narrow column: 8 lines a row on A4, a quick run's table four pages long. The title
    stands once across the table; its rows name the measurement alone."""
    page = rendered(golden_url, ["base", "tuned"], monkeypatch)
    table = tables_after(page, "<h2>Comparison, baseline base</h2>")
    group = '<tr class="group"><th colspan=8>disk (E1); intervals ([min, max], n = 5, coverage 94 %)</th></tr>'
    assert table.count(group) == 1
    after = table.split(group, 1)[1]
    assert re.findall(r"<tr><td>(.*?)</td>", after)[:2] == ["write", "read"]
    assert "<td>disk (E1): write</td>" not in table
    md = rendered(golden_url, ["base", "tuned"], monkeypatch, "md")
    lines = md.splitlines()
    step = lines.index("| **disk (E1); intervals (\\[min, max\\], n = 5, coverage 94 %)** |" + "  |" * 7)
    assert lines[step + 1].startswith("| write | fsync | MiB/s | 565 !1 (593 MB/s); ")


@pytest.mark.timeout(120)
def test_a_markdown_step_tables_interval_words_are_said_once_in_its_heading_as_the_htmls(golden_url, monkeypatch):
    """The Markdown step table repeated "([min, max], n = 5, coverage 94 %)" in every row's
    interval, beside an n column saying 5, where the HTML says it once in the heading."""
    md = rendered(golden_url, ["base"], monkeypatch, "md")
    table = md[md.index("### disk (E1): ok"):]
    head, _, first, second = next(b for b in table.split("\n\n") if b.startswith("| phase")).splitlines()[:4]
    assert head == ("| phase | cache | n | median | interval of the median (\\[min, max\\], n = 5, coverage 94 %) | "
                    "min | max | CV | unit | limit |")
    assert first.startswith("| write | fsync | 5 | 565 ! | 548..1,662 | 548 | 1,662 | 63.0% | MiB/s"), first
    assert second.startswith("| read | cold | 5 | 353 ! | 342..1,037 | 342 | 1,037 | 63.0% | MiB/s"), second


@pytest.mark.timeout(120)
def test_a_single_runs_guide_does_not_explain_a_comparisons_verdict(golden_url, monkeypatch):
    """A single run's headline table has a "verdict" column (usable, flagged, ok): its
    guide explained "ratio and verdict" by the Mann-Whitney test of a comparison the
    report does not hold. A comparison's guide still explains it."""
    for fmt in ("md", "html"):
        single = rendered(golden_url, ["base"], monkeypatch, fmt)
        assert "headline figure (median)" in single and "Mann-Whitney" not in single
        assert "Mann-Whitney" in rendered(golden_url, ["base", "tuned"], monkeypatch, fmt)


@pytest.mark.timeout(120)
def test_a_markdown_steps_warnings_are_folded_over_its_rows_as_the_htmls(tmp_path, monkeypatch):
    """A quick run's cpufreq step: each row's warning differs only in its figures. The HTML
    said it once with the range over the rows; the Markdown listed each row's line, two
    near-copies ("clock 4,052-4,080 MHz ..." and "clock 4,051-4,136 MHz ...") naming neither row."""
    from clusterbench.results.sample import Sample
    from clusterbench.store import Store

    url = f"sqlite:///{tmp_path / 'results.db'}"
    store = Store(url)
    run = store.begin_run(label="clock", command="clusterbench run cpufreq", suite=None, user="test")
    step = store.begin_step(run, position=0, name="clock", kernel="cpufreq", params={}, launcher="local", ranks=1,
                            ranks_per_node=None)
    for busy, mhz in ((1, 4057.0), (2, 4097.0)):
        for rep in range(3):
            record = {"phase": "clock", "mode": "n/a", "rate": mhz + rep, "rate_unit": "MHz", "repetition": rep,
                      "sweep_key": "busy_cpus", "busy_cpus": busy, "qualifiers": []}
            store.add_sample(step, Sample.from_record(record),
                             [f"clock {mhz + rep:,.0f} MHz is 1.{56 + busy}x the nominal 2,596 MHz"])
    store.finish_step(step, "ok")
    store.finish_run(run, "ok")
    md = rendered(url, ["clock"], monkeypatch, "md")
    html = rendered(url, ["clock"], monkeypatch)
    md_lines = [line for line in md.splitlines() if line.startswith("- warning: ")]
    html_lines = re.findall(r'<li class="warn">warning: (.*?)</li>', html)
    assert md_lines == [f"- warning: {w}" for w in html_lines] and len(md_lines) == 1, (md_lines, html_lines)
    assert "4,057-4,099 MHz" in md_lines[0], md_lines


@pytest.mark.timeout(120)
def test_a_headline_figure_is_in_the_unit_its_table_shows(golden_url, monkeypatch):
    """The stream sweep's table reads GiB/s (a figure of six integer digits steps the
    column up); its headline read "98,248 MiB/s": the same figure in two units and
    two precisions on one page. The headline takes the table's unit and places."""
    for refs, expected in ((["base"], "| memory bandwidth (triad) | 95.9 GiB/s (103.0 GB/s) |"),
                           (["base", "tuned"], "| memory bandwidth (triad) | 95.9 GiB/s | 105.5 GiB/s | 1.100 |")):
        md = rendered(golden_url, refs, monkeypatch, "md")
        assert expected in md, [line for line in md.splitlines() if "triad" in line]
        assert "| triad | best, 2 threads |" in md and "98,248" not in md


@pytest.mark.timeout(300)
def test_a_step_tables_unit_and_its_decimal_twin_stay_on_one_line_on_a4(golden_url, tmp_path, monkeypatch):
    """A stream or disk table on A4 printed its unit cell "MiB/s (76,726 MB/s)" as
    "MiB/s" over "(76,726 MB/s)", every row two lines high, where the interval's
    heading or a limit column took the width: the unit and its twin are one cell's
    words and stay on one line; the headings wrap instead."""
    from test_report_document import A4_TEXT_WIDTH_PX, layout_verdicts

    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if not chromium:
        pytest.skip("chromium is not installed (scripts/apt-packages.txt lists it)")
    page = rendered(golden_url, ["base", "tuned"], monkeypatch)
    units = re.findall(r'<td class="unit">([^<]*) <span class="fig">\(([\d,.]+ MB/s)\)</span></td>', page)
    assert units, "no step table has a unit cell with its MB/s beside it"
    (verdict,) = layout_verdicts(chromium, {"pair": (page, A4_TEXT_WIDTH_PX, True)}, tmp_path).values()
    assert verdict["wrapped"] == [] and not verdict["wide"], verdict


@pytest.mark.timeout(120)
def test_a_rate_per_pair_is_printed_no_finer_than_the_median_time_it_comes_from(golden_url, monkeypatch):
    """pingpong 8 B at 1,550 µs (1,519..1,581, +-2 %): its MB/s per pair read
    0.005162, four digits where the time it is computed from holds three. It
    carries the median's spread: 0.00516; 1 KiB's 501 stays whole."""
    page = rendered(golden_url, ["base"], monkeypatch)
    text = rendered(golden_url, ["base"], monkeypatch, fmt="md")
    for size, rate in (("8 B", "0.00516"), ("1 KiB", "501")):
        row = re.search(rf"<tr><td>pingpong {size}</td>.*?</tr>", page).group(0)
        assert re.findall(r"<td class=n>([^<]*)</td></tr>", row) == [rate], row
        (line,) = [x for x in text.splitlines() if x.startswith(f"| pingpong {size} | library | 3 |")]
        assert line.rstrip(" |").rsplit("| ", 1)[1] == rate, line


def test_a_rate_per_pair_of_one_value_is_printed_as_its_tool_printed_it(cli, tmp_path):
    """IMB PingPong printed 1 B at 1.19 µs, 0.84 MB/s, one value: the table read
    0.840, a place IMB did not print, once rates carried a median's spread."""
    from pathlib import Path

    imb = Path(__file__).parent / "fixtures" / "import" / "imb-2021.3-mpi1.txt"
    assert cli("import", "--host", "n01", str(imb)).status == 0
    out = tmp_path / "r.md"
    assert cli("report", "1", "-o", str(out)).status == 0
    (line,) = [x for x in out.read_text().splitlines() if x.startswith("| pingpong 1 B | library | 1 |")]
    assert line.rstrip(" |").rsplit("| ", 1)[1] == "0.84", line


@pytest.mark.timeout(120)
def test_a_compared_headlines_flag_reason_is_a_note_under_the_summary_not_in_each_cell(golden_url, monkeypatch):
    """base vs tuned: each flagged headline cell carried its reason beside the figure
    ("1,705 MiB/s ! above the link"), in both configurations' cells; on A4 imported
    IOR reads widened the figure columns until "parallel read (cache: unknown)" stood
    in a column of five lines. The cell keeps "!" and a letter; the reason stands
    once among the table's notes."""
    page = rendered(golden_url, ["base", "tuned"], monkeypatch)
    summary = tables_after(page, "<h2>Summary</h2>")
    table = summary[:summary.index("</table>")]
    marks = re.findall(r'<span class="flag">!</span>&nbsp;<sup>\((\w+)\)</sup>', table)
    assert len(marks) >= 2 and len(set(marks)) == 1, table
    figure_cells = re.findall(r"<td class=n>(.*?)</td>", table)
    assert figure_cells and not [c for c in figure_cells if "above the link" in c], figure_cells
    notes = re.findall(r"<li>(.*?)</li>", summary[summary.index('<ol class="notes reasons"'):])
    assert notes[ord(marks[0]) - ord("a")] == "above the link", notes


def test_a_size_sweep_from_0_bytes_is_plotted_on_a_size_axis_read_in_bytes(cli, tmp_path):
    """IMB PingPong, 0 B to 4 KiB: its plot's size axis was linear, ticked "0.0 B,
    1000 B, 2000 B, 3000 B, 4000 B", and every size up to 256 B stood in one
    clump at its left end. It reads 0 B, then the sizes in doublings as an
    mpi step's plot from 1 B does."""
    from pathlib import Path

    imb = Path(__file__).parent / "fixtures" / "import" / "imb-2021.3-mpi1.txt"
    assert cli("import", "--host", "n01", str(imb)).status == 0
    out = tmp_path / "r.html"
    assert cli("report", "1", "-o", str(out)).status == 0
    page = out.read_text()
    start = page.index("<h3>IMB PingPong np 2: ok</h3>")
    svg = page[page.index("<svg", start):page.index("</svg>", start)]
    labels = re.findall(r"<text[^>]*>([^<]*)</text>", svg)
    assert labels[:labels.index("size")] == ["0 B", "1 B", "4 B", "16 B", "64 B", "256 B", "1 KiB", "4 KiB"], labels


@pytest.mark.timeout(120)
def test_a_markdown_comparisons_summary_says_what_the_htmls_says_under_its_table(golden_url, monkeypatch):
    """base vs tuned: the HTML summary said "No measurement differs significantly
    from base", how many verdicts the repetitions cannot decide and which
    environment difference likely explains the result; the Markdown summary
    gave its headline table alone."""
    import html

    page = rendered(golden_url, ["base", "tuned"], monkeypatch)
    summary = tables_after(page, "<h2>Summary</h2>")
    said = [html.unescape(t) for t in re.findall(r"<li>(.*?)</li>", summary[summary.index('<ul class="summary">'):])]
    text = rendered(golden_url, ["base", "tuned"], monkeypatch, fmt="md")
    part = text[text.index("## Summary"):text.index("## Comparison")]
    bullets = [re.sub(r"\\(.)", r"\1", line[2:]) for line in part.splitlines() if line.startswith("- ")]
    assert said and said[0].startswith("No measurement differs significantly from base"), said
    assert [b for b in bullets if not b.startswith("**")] == said, (said, bullets)
