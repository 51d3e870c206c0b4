"""The HTML report in a real browser: loads, draws its plots, needs nothing from the network."""
from __future__ import annotations

import json
import re
import shutil
import subprocess

import pytest

CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync",
                  "--enable-logging=stderr", "--v=0"]


def page_requests(net_log) -> list[str]:
    """URLs the page itself asked for, from Chromium's NetLog. The browser's own
    background traffic (update and account checks it makes despite the flags)
    is not the page's: only requests made on behalf of the file:// page count."""
    log = json.loads(net_log.read_text())
    start = log["constants"]["logEventTypes"]["URL_REQUEST_START_JOB"]
    return [e["params"]["url"] for e in log["events"]
            if e["type"] == start and str(e.get("params", {}).get("network_isolation_key", "")).startswith("file://")
            and not e["params"]["url"].startswith(("file:", "data:"))]


def dump_dom(chromium, page, profile, net_log):
    return subprocess.run([chromium, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", f"--log-net-log={net_log}",
                           "--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=120)


@pytest.mark.timeout(180)
def test_html_report_loads_self_contained_with_plots_and_units(cli, tmp_path):
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if not chromium:
        pytest.skip("chromium is not installed (scripts/apt-packages.txt lists it)")
    for label in ("a", "b"):
        assert cli("run", "null", "--seconds=0.002", "--repeat", "5", "--label", label, "--quiet").status == 0
    mpi = cli("run", "mpi", "--np", "2", "--op=pingpong", "--sizes=8,1k,32k", "--repeat", "5", "--label", "a",
              "--quiet")
    assert mpi.status == 0, mpi.stderr
    out = tmp_path / "report.html"
    r = cli("report", "a", "b", "-o", str(out))
    assert r.status == 0, r.stderr
    text = out.read_text()
    # self-contained: nothing to fetch, no script
    assert not re.search(r"""(src|href)\s*=\s*["'](?!#)""", text)
    assert "<script" not in text and "<link" not in text and "@import" not in text
    assert not re.search(r"url\((?!#)", text)
    assert "Comparison, baseline a" in text and text.count("<svg") >= 3  # bars, run bars, size curve

    profile = tmp_path / "profile"
    shot = tmp_path / "report.png"
    # the network check can fail: a page loading from loopback is caught
    control = tmp_path / "control.html"
    control.write_text('<html><body><img src="http://127.0.0.1:9/x.png"></body></html>')
    assert dump_dom(chromium, control, tmp_path / "control-profile", tmp_path / "control.json").returncode == 0
    assert page_requests(tmp_path / "control.json") == ["http://127.0.0.1:9/x.png"]
    dom = dump_dom(chromium, out, profile, tmp_path / "net.json")
    assert dom.returncode == 0, dom.stderr[-2000:]
    assert page_requests(tmp_path / "net.json") == []
    assert "CONSOLE" not in dom.stderr, dom.stderr
    assert dom.stdout.count("<svg") >= 1 and "<path" in dom.stdout
    assert "MiB/s" in dom.stdout and "interval of the median" in dom.stdout and "Test environment" in dom.stdout
    shot_run = subprocess.run([chromium, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", "--window-size=1200,1600",
                               f"--screenshot={shot}", out.as_uri()], capture_output=True, text=True, timeout=120)
    assert shot_run.returncode == 0 and shot.stat().st_size > 10_000


SWEEP_SUITE = """
description = "null kernel over a byte sweep: the smallest real sweep there is"

[[steps]]
kernel = "null"
repeat = 4
params = { seconds = "0.001", bytes = ["64k", "1m", "16m"] }
"""


@pytest.mark.timeout(240)
def test_pdf_report_of_a_sweep_comparison_reads_as_a_document(cli, tmp_path):
    """report -o r.pdf: A4 pages from Chromium with the title, the summary
    sentences, log axes with byte ticks and no raw collector error."""
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if not chromium or not shutil.which("pdftotext"):
        pytest.skip("chromium and poppler-utils are needed (scripts/apt-packages*.txt list them)")
    suite = tmp_path / "sweep.toml"
    suite.write_text(SWEEP_SUITE)
    for label in ("a", "b"):
        r = cli("run", str(suite), "--label", label, "--quiet", "--report-dir", str(tmp_path))
        assert r.status == 0, r.stderr
    html, pdf = tmp_path / "r.html", tmp_path / "r.pdf"
    assert cli("report", "a", "b", "-o", str(html)).status == 0
    r = cli("report", "a", "b", "-o", str(pdf))
    assert r.status == 0, r.stderr
    assert pdf.read_bytes().startswith(b"%PDF")
    info = subprocess.run(["pdfinfo", str(pdf)], capture_output=True, text=True, check=True).stdout
    assert "(A4)" in info
    text = subprocess.run(["pdftotext", "-layout", str(pdf), "-"], capture_output=True, text=True, check=True).stdout
    assert "Performance comparison: a vs b" in text and "Systems compared" in text and "Summary" in text
    assert "comparisons show no significant difference" in text or "is faster than" in text \
        or "is slower than" in text or "cannot be decided" in text  # a sentence made from the data
    body, _, notes = text.rpartition("Notes")
    # a reason the environment gave is a footnote, never a cell value
    assert "no such file" not in body and "_error" not in body and "not available" in body
    assert "not available: " in notes
    page = html.read_text()
    # the sweep is drawn on a log axis labelled in bytes as people read them
    svg_text = " ".join(re.findall(r"<text[^>]*>([^<]*)</text>", page))
    assert "64 KiB" in svg_text and "16 MiB" in svg_text and "1e6" not in svg_text
    assert "95 % CI" in page or "coverage" in page
    assert "MB/s" in page  # decimal beside binary


LINES_OF_EACH_COMMAND = """<script>
window.addEventListener("load", () => {
  const out = [];
  for (const code of document.querySelectorAll("code")) {
    const lines = []; let top = null, line = "";
    const walker = document.createTreeWalker(code, NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      for (let i = 0; i < n.length; i++) {
        const r = document.createRange(); r.setStart(n, i); r.setEnd(n, i + 1);
        const rects = r.getClientRects();
        if (!rects.length) { line += n.data[i]; continue; }
        const t = Math.round(rects[0].top);
        if (top !== null && t > top + 2) { lines.push(line); line = ""; }
        top = t; line += n.data[i];
      }
    }
    lines.push(line); out.push(lines);
  }
  const pre = document.createElement("pre"); pre.id = "lines"; pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
});
</script>"""


@pytest.mark.timeout(180)
def test_a_runs_command_line_breaks_only_between_its_arguments(cli, tmp_path):
    """The run's command in the HTML report (and the PDF printed from it)
    wrapped wherever the browser may break a line, after any hyphen: "--"
    alone at a line's end with "report /tmp/r.html" on the next, "--db" on
    one line and its URL on the next. Measured in Chromium: each line of
    each code span, as laid out in a page narrowed to make them wrap."""
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if not chromium:
        pytest.skip("chromium is not installed (scripts/apt-packages.txt lists it)")
    r = cli("run", "null", "--seconds=0.001", "--repeat", "2", "--label", "a-long-label-to-wrap", "--quiet",
            "--report", str(tmp_path / "run-report.html"))
    assert r.status == 0, r.stderr
    page = tmp_path / "measured.html"
    page.write_text((tmp_path / "run-report.html").read_text().replace(
        "</body>", "<style>body{max-width:24em}</style>" + LINES_OF_EACH_COMMAND + "</body>"))
    dom = dump_dom(chromium, page, tmp_path / "profile", tmp_path / "net.json")
    assert dom.returncode == 0, dom.stderr[-2000:]
    found = re.search(r'<pre id="lines">(.*?)</pre>', dom.stdout, re.S)
    assert found, dom.stdout[-2000:]
    commands = [lines for lines in json.loads(found.group(1).replace("&quot;", '"').replace("&amp;", "&"))
                if lines[0].startswith("clusterbench run")]
    assert commands, found.group(1)
    for lines in commands:
        assert len(lines) > 2, lines   # the page is narrow enough to break it
        assert "".join(lines).startswith("clusterbench run null --seconds=0.001 --repeat 2 --label")
        assert any("--label a-long-label-to-wrap" in line for line in lines), lines   # not broken at its hyphens
        for line in lines[:-1]:
            last = line.split()[-1]
            assert not last.endswith("--"), lines
            assert last not in ("--repeat", "--label", "--report"), lines   # an option without its value
