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


def rendered(url: str, refs: list[str], monkeypatch) -> str:
    from clusterbench.report import render
    from clusterbench.report.data import Report
    from clusterbench.store import Store

    monkeypatch.setenv("SOURCE_DATE_EPOCH", str(int(STARTED.timestamp())))
    return render("html", Report.of(Store(url), refs))


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
        cells = re.findall(r"<td[^>]*>(undecidable[^<]*)&nbsp;<sup>\(a\)</sup></td>", section)
        assert len(cells) >= rows, (heading, cells)
        assert section.count(reason) == 1, heading
        note = re.search(r'<ol class="notes reasons" type="a"><li>(.*?)</li>', section)
        assert note and note.group(1).startswith(reason), heading
    # a verdict with no reason keeps its words and p-value, unmarked
    assert "<td>no significant difference, but base is above the link and tuned is above the link (p=0.151)</td>" in page


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
