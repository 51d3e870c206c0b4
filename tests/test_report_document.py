"""The HTML report as a document an integrator hands in unchanged (#38):
what it says at the top, what it hides in notes, what its plots and tables
carry, and how it prints."""
from __future__ import annotations

import json
import re

import pytest


@pytest.mark.timeout(10)
def test_a_footnote_holds_only_the_reason_and_the_values_after_it_stay_in_the_table():
    from clusterbench.environment import summary_block
    from clusterbench.report.footnotes import Footnotes
    from clusterbench.report.html import mark

    env = {
        "host.name": "vm", "os.name": "Debian GNU/Linux 12", "kernel.release": "6.1.0",
        "target./data.fs_type": "ext4", "target./data.source": "/dev/vda", "target./data.mount_point": "/",
        "target./data.mount_options": "rw", "target./data.device": "vda", "target./data.disks": "vda",
        "target./data.model_error": "no such file: /sys/block/vda/device/model",
        "target./data.rotational": False, "target./data.scheduler": "mq-deadline",
        "target./data.write_cache": "write back", "target./data.read_ahead_kb": 128,
        "net.interfaces": "eth0", "net.eth0.speed_mbps_error": "link speed not reported by the driver",
        "net.eth0.mtu": 1400, "net.eth0.operstate": "up", "net.eth0.driver": "virtio_net",
        "cpu.model_error": "no model name, cpu cores", "cpu.cores": 2, "cpu.threads": 2,
        "thp.enabled_error": "no such file", "thp.defrag": "madvise",
    }
    notes = Footnotes()
    cells = {k: notes.text(v, mark) for k, v in summary_block(env)}
    assert "scheduler mq-deadline, write cache write back, read-ahead 128 KiB" in cells["Target /data"]
    assert cells["NIC eth0"].endswith("; MTU 1400, up, driver virtio_net")
    assert "2 cores / 2 threads" in cells["CPU"] and cells["Transparent huge pages"].endswith("; defrag madvise")
    assert set(notes.reasons) == {"no such file: /sys/block/vda/device/model", "link speed not reported by the driver",
                                  "no model name, cpu cores", "no such file"}


@pytest.mark.timeout(120)
def test_randio_latency_percentiles_are_shown_by_show_and_the_report(cli, tmp_path):
    r = cli("run", "randio", f"--dir={tmp_path}", "--file-size=4m", "--runtime=0.2", "--ramp=0",
            "--repeat", "2", "--quiet")
    assert r.status == 0, r.stderr
    show = cli("show", "1")
    assert show.status == 0, show.stderr
    line = next(x for x in show.stdout.splitlines() if x.strip().startswith("latency randread"))
    assert re.search(r"p50 [\d,.]+, p90 [\d,.]+, p99 [\d,.]+, p99\.9 [\d,.]+, p99\.99 [\d,.]+, max [\d,.]+ µs", line), line
    out = tmp_path / "r.html"
    assert cli("report", "1", "-o", str(out)).status == 0
    page = out.read_text()
    assert "<th>latency (µs), median over repetitions</th><th>p50</th><th>p90</th><th>p99</th>" in page
    # and the headline table quotes the p99 beside the IOPS
    assert re.search(r"random read p99 latency, 4 KiB</td><td class=n><span class=\"fig\">[\d,.]+&nbsp;µs", page)


@pytest.mark.timeout(120)
def test_the_random_read_headline_names_the_block_size_it_measured(cli, tmp_path):
    """The headline was named "random read, 4 KiB" whatever randio's --block-size: a 64 KiB run's IOPS
    stood under that name. It states the size, and of several it quotes the 4 KiB one."""
    suite = tmp_path / "two.toml"
    suite.write_text('[[steps]]\nname = "large blocks"\nkernel = "randio"\n'
                     f'params = {{ dir = "{tmp_path}", file-size = "4m", block-size = "64k", runtime = "0.2", ramp = "0" }}\n'
                     '[[steps]]\nname = "small blocks"\nkernel = "randio"\n'
                     f'params = {{ dir = "{tmp_path}", file-size = "4m", runtime = "0.2", ramp = "0" }}\n')
    assert cli("run", "randio", f"--dir={tmp_path}", "--file-size=4m", "--block-size=64k", "--runtime=0.2",
               "--ramp=0", "--repeat", "2", "--quiet").status == 0
    assert cli("run", str(suite), "--repeat", "2", "--quiet").status == 0
    for run, size, step in (("1", "64 KiB", None), ("2", "4 KiB", "small blocks")):
        out = tmp_path / f"r{run}.html"
        assert cli("report", run, "-o", str(out)).status == 0
        page = out.read_text()
        export = json.loads(cli("export", run).stdout)
        (st,) = [x for x in export["runs"][0]["steps"] if step is None or x["name"] == step]
        iops = st["summary"][0]["median"]
        figure = re.search(rf"<td>random read, {size}</td><td class=n><span class=\"fig\">([\d,.]+)&nbsp;IOPS", page)
        assert figure and figure.group(1) == f"{iops:,.0f}", (size, iops)
        assert f"<td>random read p99 latency, {size}</td>" in page
        assert "random read, 4 KiB" not in page or size == "4 KiB"


DOCUMENT_SUITE = """
description = "the smallest run with every kind of report content: cache flags, latency, MPI variants"

[[steps]]
name = "disk: durable write, cold read"
kernel = "seqio"
repeat = 3
params = { dir = "{dir}", file-size = "8m", block-size = "1m", write = "fsync", read = "cold" }

[[steps]]
name = "page cache: buffered write, warm read"
kernel = "seqio"
repeat = 3
params = { dir = "{dir}", file-size = "8m", block-size = "1m", write = "buffered", read = "warm" }

[[steps]]
name = "disk: 4 KiB random read"
kernel = "randio"
repeat = 3
params = { dir = "{dir}", file-size = "4m", runtime = "0.2", ramp = "0" }

[[steps]]
name = "MPI: allreduce, library vs recursive doubling"
kernel = "mpi"
np = 2
repeat = 3
requires = ["mpi"]
params = { op = "allreduce", algorithm = ["library", "recursive-doubling"], sizes = "8,1k,32k,1m", volume = "16m" }
"""

# Run in the page by Chromium: every figure (a .fig span, a number cell, a
# phase or mode cell, a GPU's name, a unit and its MB/s) must sit on one line, and nothing may stick out of the
# page sideways (a cut table). The verdict is posted to the frame page (FRAMES).
MEASURE = """<script>
addEventListener('load', () => {
  const wrapped = [];
  for (const el of document.querySelectorAll('.fig, td.n, table.step td:nth-child(-n+2), table.gpus td:first-child, table.step td.unit')) {
    const r = document.createRange(); r.selectNodeContents(el);
    // a second line starts below the bottom of the first (small print on the same line does not)
    const rects = [...r.getClientRects()].filter(x => x.width > 0);
    const firstBottom = Math.min(...rects.map(x => x.bottom));
    if (rects.some(x => x.top >= firstBottom - 1)) wrapped.push(el.textContent.trim());
  }
  const page = document.documentElement.clientWidth;
  const sticking = [...document.querySelectorAll('body > *, section > *')]
    .filter(e => e.getBoundingClientRect().right > page + 1).map(e => e.tagName + ' ' + e.textContent.slice(0, 60));
  const wide = sticking.length > 0;
  parent.postMessage({name: NAME, verdict: {wrapped, wide, sticking, page}}, '*');
});
</script></body>"""

# The frame page: one iframe per page and width, each as wide as the window it stands for and
# tall enough to need no scroll bar; it gathers the pages' verdicts into the DOM Chromium dumps.
# One Chromium for all of them (each start costs 2.5 CPU-s on a 2-core VM).
FRAMES = """<!doctype html><html><body style="margin:0">{frames}<script>
const got = {{}};
addEventListener('message', e => {{
  got[e.data.name] = e.data.verdict;
  if (Object.keys(got).length === {count}) {{
    const out = document.createElement('pre'); out.id = 'verdict';
    out.textContent = JSON.stringify(got);
    document.body.appendChild(out);
  }}
}});
</script></body></html>"""

A4_TEXT_WIDTH_PX = 703   # 210 mm less the 12 mm margins, at 96 px per inch


def layout_verdicts(chromium, pages: dict, tmp_path) -> dict:
    """{name: (page_html, width_px, printed)} -> {name: verdict}, all laid out by one Chromium."""
    import json
    import subprocess

    frames = []
    for name, (page_html, width_px, printed) in pages.items():
        text = page_html.replace("</body>", MEASURE.replace("NAME", json.dumps(name)))
        if printed:  # the print rules, applied on screen at the printed width
            text = text.replace("@media print{", "@media all{")
        page = tmp_path / f"{name}.html"
        page.write_text(text)
        frames.append(f'<iframe src="{page.as_uri()}" scrolling="no" '
                      f'style="display:block;border:0;width:{width_px}px;height:20000px"></iframe>')
    top = tmp_path / "layout-frames.html"
    top.write_text(FRAMES.format(frames="".join(frames), count=len(pages)))
    dom = subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                          f"--user-data-dir={tmp_path / 'profile'}", "--window-size=1400,1000",
                          "--allow-file-access-from-files", "--virtual-time-budget=5000", "--dump-dom",
                          top.as_uri()],
                         capture_output=True, text=True, timeout=120)
    m = re.search(r'<pre id="verdict">(.*?)</pre>', dom.stdout, re.S)
    assert m, dom.stderr[-2000:]
    import html

    return json.loads(html.unescape(m.group(1)))


def environment_reasons(store_url: str) -> set[str]:
    from clusterbench.store import Store

    store = Store(store_url)
    return {str(v).strip() for run in store.list_runs(None, None) for env in store.environments_of(run.id).values()
            for k, v in env.items() if k.endswith("_error")}


@pytest.mark.timeout(600)
def test_single_and_two_run_reports_read_as_documents_on_screen_and_on_paper(cli, tmp_path, store_url):
    """#38: the title names the system; a headline table comes first; a
    footnote holds only a reason; flagged bars are hatched with their reason
    in the plot; no figure wraps and no table is cut at 1400 px and on A4;
    the PDF prints on A4 and Letter."""
    import shutil
    import socket
    import subprocess

    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if not chromium or not shutil.which("pdftotext"):
        pytest.skip("chromium and poppler-utils are needed (scripts/apt-packages*.txt list them)")
    suite = tmp_path / "document.toml"
    suite.write_text(DOCUMENT_SUITE)
    for label in ("a", "b"):
        r = cli("run", str(suite), f"--dir={tmp_path}", "--label", label, "--quiet", "--report-dir", str(tmp_path))
        assert r.status == 0, r.stderr
    single, pair = tmp_path / "single.html", tmp_path / "pair.html"
    assert cli("report", "a", "-o", str(single)).status == 0
    assert cli("report", "a", "b", "-o", str(pair)).status == 0
    host = socket.gethostname()
    reasons = environment_reasons(store_url)
    layouts = {}
    for path, title in ((single, f"Benchmark report: {host} (a), "), (pair, f"Performance comparison: a vs b on {host}, ")):
        page = path.read_text()
        assert f"<h1>{title}" in page and '<span class="fig">20' in page  # the date whole
        # the headline table, before any step's table
        assert page.index('<table class="headline') < page.index("<h2>Comparison" if path == pair else "<h2>Run 1")
        for name in ("durable write (fsync)", "cold read", "random read, 4 KiB", "random read p99 latency, 4 KiB"):
            assert f"<td>{name}</td>" in page
        assert "<footer" in page and "clusterbench report a" in re.sub(r"<[^>]+>", "", page)  # version and command
        # a footnote is a reason the environment gave, nothing more
        notes = re.findall(r'<li id="note\d+">not available: (.*?)</li>', page)
        assert notes and all(html_text(n) in reasons for n in notes), (notes, reasons)
        # a flagged bar is hatched, and the plot says why
        svgs = re.findall(r"<svg\b.*?</svg>", page, re.S)
        flagged = [s for s in svgs if "hatched: flagged" in s]
        assert flagged and all("<pattern" in s for s in flagged)
        for width, printed in ((1400, False), (A4_TEXT_WIDTH_PX, True)):
            layouts[f"{path.stem}-{width}"] = (page, width, printed)
    # no figure wraps and no table sticks out, on screen and at the printed width
    for name, verdict in layout_verdicts(chromium, layouts, tmp_path).items():
        assert verdict["wrapped"] == [] and not verdict["wide"], (name, verdict)
    # the allreduce variants on one plot
    assert "mpi, algorithm library vs recursive-doubling" in single.read_text()

    from clusterbench.report.pdf import html_to_pdf

    for paper, name in (("A4", "A4"), ("letter", "letter")):
        pdf = tmp_path / f"single-{paper}.pdf"
        pdf.write_bytes(html_to_pdf(single.read_text(), paper))
        info = subprocess.run(["pdfinfo", str(pdf)], capture_output=True, text=True, check=True).stdout
        assert f"({name})" in info
        text = subprocess.run(["pdftotext", "-layout", str(pdf), "-"], capture_output=True, text=True,
                              check=True).stdout
        assert f"Benchmark report: {host} (a)" in text and "headline figure" in text


def html_text(s: str) -> str:
    import html

    return html.unescape(re.sub(r"<[^>]+>", "", s)).strip()


@pytest.mark.timeout(120)
def test_a_flagged_figure_says_why_not_which_figure_it_is(cli, tmp_path):
    """A single run's report flagged seqio's buffered write "write buffered:
    buffered write", and E8's pario writes "write buffered: buffered": the
    clause before the warning's colon, which only names the figure. The
    reason after it is what the reader needs: timed until the page cache."""
    from clusterbench.analysis.step_summary import Row
    from clusterbench.report.headline import short_warning

    r = cli("run", "seqio", f"--dir={tmp_path}", "--file-size=4m", "--write=buffered", "--read=none",
            "--repeat", "2", "--quiet")
    assert r.status == 0, r.stderr
    out = tmp_path / "r.html"
    assert cli("report", "1", "-o", str(out)).status == 0
    page = out.read_text()
    flagged = re.search(r"<h3>Flagged \(\d+\)[^<]*</h3>\s*<ul[^>]*>(.*?)</ul>", page, re.S).group(1)
    items = re.sub(r"<[^>]+>", "", flagged)
    assert "write buffered: timed until the data reached the page cache" in items, items
    assert "write buffered: buffered write" not in items

    pario = "3 of 3 repetitions: buffered: timed until the last write returned (data handed to the file system), " \
            "before fsync and close"
    row = Row("write", "buffered", "MiB/s", values=[1.0] * 3, sample_warnings=[[pario.split(": ", 1)[1]]] * 3)
    assert short_warning(row.warnings[0], "write buffered") == \
        "timed until the last write returned (data handed to the file system)"
    # a clause that says something of its own is kept as it was
    assert short_warning("3 of 3 repetitions: likely cache effect: the data read (8 MiB) fits in free memory",
                         "read cold") == "likely cache effect"
    assert short_warning("oversubscribed: a node runs more ranks than it has online CPUs", "pingpong 8 B library") \
        == "oversubscribed"


@pytest.mark.timeout(30)
def test_why_a_steps_repetitions_stopped_reads_as_a_sentence_not_the_stored_kind():
    """Every step of an HTML report read "1 rank(s); repetition stopped by
    fixed: 5 repetitions", and --repeat auto's "repetition stopped by ci: 95 %
    CI within 3.1% of the median (target 5%) after 7": the stored kind
    (fixed, ci, max-repeat) printed as if it were a word."""
    from clusterbench.report.data import stop_text
    from clusterbench.results.sample import SampleKey
    from clusterbench.run.plan import AutoRepeat
    from clusterbench.run.step_engine import auto_stop

    key = SampleKey("write", "fsync", "MiB/s", None)
    tight = {key: [100.0, 100.5, 99.8, 100.2, 100.1, 99.9, 100.3]}
    loose = {key: [100.0, 180.0, 40.0, 150.0, 60.0, 120.0, 90.0]}
    reasons = [auto_stop(AutoRepeat(), tight, 7, 1.0), auto_stop(AutoRepeat(max_repeat=7), loose, 7, 1.0),
               auto_stop(AutoRepeat(max_seconds=10), loose, 7, 12.0)]
    texts = [stop_text(r) for r in reasons]
    assert re.fullmatch(r"stopped when the 95 % CI was within \d\.\d% of the median \(target 5%\), "
                        r"after 7 repetitions", texts[0]), texts[0]
    assert texts[1] == "stopped at --max-repeat: 7 repetitions (CI target 5% not reached)"
    assert texts[2] == "stopped at --max-time: 12 s after 7 repetitions (CI target 5% not reached)"
    assert stop_text("fixed: 5 repetitions") == "5 repetitions"
    assert not any(t.startswith(("repetition stopped by", "fixed", "ci:", "max-")) for t in texts)


SWEEP_SUITE = """
description = "a null step swept over its byte count"

[[steps]]
name = "null sweep"
kernel = "null"
repeat = 2
params = { seconds = 0.001, bytes = ["1m", "2m", "4m"] }
"""


@pytest.mark.timeout(120)
def test_a_sweep_table_of_a_run_given_by_its_id_names_the_run_not_a_bare_number(cli, tmp_path):
    """The report a suite writes (and `report 12`) headed its sweep tables
    "12: median [CI]" and the curve's legend "12": a number over a column of
    numbers. Now "run 12 (label): median [CI]"; a label given stays as given."""
    suite = tmp_path / "sweep.toml"
    suite.write_text(SWEEP_SUITE)
    r = cli("run", str(suite), "--label", "e8", "--quiet", "--report-dir", str(tmp_path))
    assert r.status == 0, r.stderr
    written = re.search(r"report: (\S+\.html)", r.stdout + r.stderr).group(1)
    for page in (open(written).read(), None):
        if page is None:
            out = tmp_path / "r.html"
            assert cli("report", "1", "-o", str(out)).status == 0
            page = out.read_text()
        heads = re.findall(r"<th>([^<]*): median \[CI\]</th>", page)
        assert heads and set(heads) == {"run 1 (e8)"}, heads
    out = tmp_path / "l.html"
    assert cli("report", "e8", "-o", str(out)).status == 0
    assert set(re.findall(r"<th>([^<]*): median \[CI\]</th>", out.read_text())) == {"e8"}


@pytest.mark.timeout(10)
def test_a_snapshot_without_a_mounts_details_leaves_them_out_not_question_marks():
    """A snapshot with a target's file system and device but not its source,
    mount point, options or disks, and a NIC without MTU or state (an older
    capture's): the report read "nfs4 on ? mounted at ? (); device
    server:/export; disk(s) : model ..." and "1000 Mbit/s, MTU ?, ?"."""
    from clusterbench.environment import summary_block

    env = {"target./scratch.fs_type": "nfs4", "target./scratch.device": "server:/export",
           "net.interfaces": "eth0", "net.eth0.speed_mbps": 1000}
    cells = dict(summary_block(env))
    assert cells["Target /scratch"] == ("nfs4; device server:/export; model unavailable; "
                                        "rotational unavailable; scheduler unavailable")
    assert cells["NIC eth0"] == "1,000 Mbit/s"
    assert not any("?" in v or "()" in v for v in cells.values()), cells
    # a full snapshot's line is as before
    env.update({"target./scratch.source": "server:/export", "target./scratch.mount_point": "/scratch",
                "target./scratch.mount_options": "rw,vers=4.2", "target./scratch.disks": "sda",
                "net.eth0.mtu": 9000, "net.eth0.operstate": "up"})
    cells = dict(summary_block(env))
    assert cells["Target /scratch"].startswith("nfs4 on server:/export mounted at /scratch (rw,vers=4.2); "
                                               "device server:/export; disk(s) sda: model unavailable")
    assert cells["NIC eth0"] == "1,000 Mbit/s, MTU 9000, up"


@pytest.mark.timeout(10)
def test_the_systems_line_names_an_item_it_could_not_read():
    """The systems table's line of a snapshot without its OS read "32 GiB; DIMM
    layout not available; not available; kernel not available": which item was
    not available, it did not say. It says "OS not available" (and "CPU ...",
    "memory ..." where those are the item not read)."""
    from clusterbench.environment.report_block import summary_line
    from clusterbench.report.footnotes import Footnotes

    env = {"cpu.model": "Example CPU", "cpu.sockets": 1, "memory.total_bytes": 2**35,
           "os.name_error": "no such file /etc/os-release or /usr/lib/os-release", "kernel.release": "6.1.0"}
    line = Footnotes().text(summary_line(env), lambda n: f"[{n}]")
    assert line == "1 x Example CPU; 32 GiB; DIMM layout not available; OS not available[1]; kernel 6.1.0", line
    env = {"cpu.model_error": "no model name", "memory.total_bytes_error": "no /proc/meminfo", "os.name": "Debian 12",
           "kernel.release": "6.1.0"}
    line = Footnotes().text(summary_line(env), lambda n: f"[{n}]")
    assert line == "CPU not available[1]; memory not available[2]; DIMM layout not available; Debian 12, kernel 6.1.0"


def test_a_labels_runs_are_reported_in_the_order_they_ran(cli, tmp_path):
    """store.resolve gives a label's runs newest first; the report read Run 2 before Run 1."""
    for _ in range(2):
        assert cli("run", "null", "--seconds=0.001", "--repeat", "2", "--label", "nightly", "--quiet").status == 0
    out = tmp_path / "r.md"
    assert cli("report", "nightly", "-o", str(out)).status == 0
    text = out.read_text()
    assert text.index("## Run 1 (nightly)") < text.index("## Run 2 (nightly)"), text
