"""The reports as a procurement reviewer reads them (HTML, its PDF, and
Markdown): what a reviewer sent back for an integrator to fix by hand, each
checked on the real output of real runs."""
from __future__ import annotations

import re
import shutil
import subprocess

import pytest

BUFFERED = ("seqio", "--file-size=4m", "--block-size=1m", "--write=buffered", "--read=none", "--repeat", "3",
            "--quiet")


def text_of(html_part: str) -> str:
    import html

    return html.unescape(re.sub(r"<[^>]+>", "", html_part))


@pytest.mark.timeout(10)
def test_a_runs_start_is_said_to_the_second_in_utc_whatever_the_store_gave():
    """PostgreSQL gives the stored time with +00:00, SQLite without a zone: both print the same."""
    from clusterbench.report.when import started_text

    for started, finished in (("2026-01-15T09:30:00.123456", "2026-01-15T09:33:00"),
                              ("2026-01-15T09:30:00.123456+00:00", "2026-01-15T09:33:00+00:00"),
                              ("2026-01-15T10:30:00.5+01:00", "2026-01-15T10:33:00+01:00")):
        assert started_text({"started": started, "finished": finished}) == "2026-01-15 09:30:00 UTC (took 3.0 min)"
    assert started_text({"started": "2026-01-15T09:30:00", "finished": None}) == "2026-01-15 09:30:00 UTC"
    assert started_text({"started": None}) == "start not recorded"


@pytest.mark.timeout(10)
def test_a_run_timed_to_the_second_is_not_said_to_have_taken_no_time():
    """An imported IOR run (Began and Finished in the same second, as IOR prints them)
    read "took 0.0 s" in the report: a 2 GiB write and read that took no time."""
    from clusterbench.report.when import started_text

    ior = {"started": "2026-11-23T21:20:52", "finished": "2026-11-23T21:20:52"}
    assert started_text(ior) == "2026-11-23 21:20:52 UTC (took under 1 s)"
    assert started_text({**ior, "finished": "2026-11-23T21:20:55"}) == "2026-11-23 21:20:52 UTC (took about 3 s)"
    # a run timed by the clock to the microsecond keeps its tenths
    assert started_text({"started": "2026-11-23T21:20:52.25", "finished": "2026-11-23T21:20:52.75"}) == \
        "2026-11-23 21:20:52 UTC (took 0.5 s)"


@pytest.mark.timeout(180)
def test_markdown_report_opens_with_title_headlines_and_a_start_time_with_its_zone(cli, tmp_path):
    """The Markdown report began at a run's tables (or the comparison), with the
    start as '2026-12-06T19:39:09.790301': no title, no headline figures, no zone."""
    fsync = ("seqio", f"--dir={tmp_path}", "--file-size=4m", "--write=fsync", "--read=none", "--repeat", "3",
             "--quiet")
    assert cli("run", *BUFFERED, f"--dir={tmp_path}", "--label", "a").status == 0
    assert cli("run", *fsync, "--label", "a").status == 0
    assert cli("run", *fsync, "--label", "b").status == 0
    single, pair = tmp_path / "a.md", tmp_path / "ab.md"
    assert cli("report", "a", "-o", str(single)).status == 0
    assert cli("report", "a", "b", "-o", str(pair)).status == 0
    text = single.read_text()
    lines = text.splitlines()
    assert lines[0].startswith("# Benchmark report: ") and lines[2] == "## System measured"
    assert lines.index("## System measured") < lines.index("## Summary")
    assert "Flagged (1): not what their mode claims" in text
    assert "write buffered: timed until the data reached the page cache" in text
    started = next(x for x in lines if " by " in x and "`clusterbench run seqio" in x)
    assert re.match(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC \(took [\d.]+ (s|min)\) on ", started), started
    two = pair.read_text().splitlines()
    assert two[0].startswith("# Performance comparison: a vs b on ")
    head = two.index("| headline figure (median) | a | b | b/a | verdict |")
    assert two[head + 2].startswith("| durable write (fsync) | ") and " MiB/s | " in two[head + 2]
    assert two.index("## Summary") < head < two.index("## Comparison, baseline a")


@pytest.mark.timeout(180)
def test_a_compared_figure_flagged_by_a_warning_says_why_in_the_summary_and_the_plot(cli, tmp_path):
    """The comparison's summary said "write (buffered): flagged (a and b)", and
    the plot drew the figure as a plain bar: only a ceiling was said or hatched."""
    for label in ("a", "b"):
        assert cli("run", *BUFFERED, f"--dir={tmp_path}", "--label", label).status == 0
    out, md = tmp_path / "r.html", tmp_path / "r.md"
    assert cli("report", "a", "b", "-o", str(out)).status == 0
    assert cli("report", "a", "b", "-o", str(md)).status == 0
    page = out.read_text()
    flagged = text_of(re.search(r"<h3>Flagged \(\d+\)[^<]*</h3>\s*<ul[^>]*>(.*?)</ul>", page, re.S).group(1))
    assert "write (buffered): timed until the data reached the page cache (a and b)" in flagged, flagged
    assert "flagged (a" not in flagged
    headline = re.search(r'<table class="headline.*?</table>', page, re.S)
    assert headline is None or "!</span> <small>flagged<" not in headline.group(0)
    svgs = re.findall(r"<svg\b.*?</svg>", page[page.index("<h2>Comparison"):page.index("<h2>Run 1")], re.S)
    hatched = [s for s in svgs if "hatched: flagged" in s]
    assert hatched and "timed until the data reached the page cache" in text_of(hatched[0]).replace("\n", " ")
    assert "write (buffered): timed until the data reached the page cache (a and b)" in md.read_text()


@pytest.mark.timeout(10)
def test_an_imported_files_warning_is_flagged_with_its_reason_not_its_source():
    from clusterbench.report.headline import short_warning

    assert short_warning("imported from IOR: IOR does not empty the page cache before reading (pario does)",
                         "read cold") == "IOR does not empty the page cache before reading (pario does)"


@pytest.mark.timeout(180)
def test_mpi_headlines_name_their_message_size_and_a_spread_matches_the_table(cli, tmp_path):
    """"MPI latency, smallest message" never said which size; a verdict said
    "CV 46 %" over a table that said 45.6%."""
    r = cli("run", "mpi", "--np", "2", "--op=pingpong,bw", "--sizes=8,1k", "--repeat", "3", "--quiet")
    assert r.status == 0, r.stderr
    out = tmp_path / "r.html"
    assert cli("report", "1", "-o", str(out)).status == 0
    page = out.read_text()
    assert "<td>MPI latency, 8 B (smallest message)</td>" in page
    assert "<td>MPI bandwidth, 1 KiB (largest message)</td>" in page
    # every CV a verdict quotes is one the step tables print
    table_cvs = set(re.findall(r"<td class=n>(\d+\.\d)%</td>", page))
    for cv in re.findall(r"CV ([\d.]+) % over", page):
        assert cv in table_cvs, (cv, table_cvs)


@pytest.mark.timeout(180)
def test_a_skipped_step_and_equal_environments_print_no_table_without_rows(cli, tmp_path, machine_settings_steady):
    # the settings held: a second copy of the suite set vm.dirty_bytes between runs a and b, and their
    # environments differed by it (2 differences) where the test wants none
    suite = tmp_path / "s.toml"
    suite.write_text('[[steps]]\nname = "nothing"\nkernel = "null"\nrepeat = 2\nparams = { seconds = "0.001" }\n\n'
                     '[[steps]]\nname = "needs a GPU"\nkernel = "null"\nrequires = ["gpu"]\n'
                     'params = { seconds = "0.001" }\n')
    for label in ("a", "b"):
        r = cli("run", str(suite), "--label", label, "--quiet", "--report-dir", str(tmp_path))
        assert r.status == 0, r.stderr
    out, md = tmp_path / "r.html", tmp_path / "r.md"
    assert cli("report", "a", "b", "-o", str(out)).status == 0
    assert cli("report", "a", "b", "-o", str(md)).status == 0
    page = out.read_text()
    skipped = page[page.index("<h3>needs a GPU"):]
    skipped = skipped[:skipped.index("</section>")]
    assert ": skipped</h3>" in skipped and "<table" not in skipped
    for table in re.findall(r"<table\b.*?</table>", page, re.S):
        assert re.search(r"<tr>\s*<td", table), table[:200]
    assert "do not differ in any key captured" in page
    lines = md.read_text().splitlines()
    for i, line in enumerate(lines):   # a Markdown table's heading row is followed by a row of its own
        if re.match(r"\|(-+:?\|)+$", line):
            assert i + 1 < len(lines) and lines[i + 1].startswith("| "), lines[i - 1]


@pytest.mark.timeout(300)
def test_a_table_cut_by_a_printed_page_repeats_its_headings(cli, tmp_path):
    """The step tables' heading row was a plain first row: printed, a table
    that ran onto a second page went on there without its headings."""
    from pathlib import Path

    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if not chromium or not shutil.which("pdftotext"):
        pytest.skip("chromium and poppler-utils are needed (scripts/apt-packages*.txt list them)")
    imb = Path(__file__).parent / "fixtures" / "import" / "imb-2021.3-mpi1.txt"
    assert cli("import", "--host", "n1", "--date", "2026-01-15 09:30", str(imb)).status == 0
    out = tmp_path / "r.html"
    assert cli("report", "1", "-o", str(out)).status == 0
    page = out.read_text()
    assert '<table class="step"><thead><tr><th>phase</th>' in page
    assert not re.search(r"<table\b[^>]*><tr><th", page)   # no heading row left outside a <thead>
    # a wide, short page: the 24-row pingpong table runs over two (a small page is scaled, not cut)
    short = tmp_path / "short.html"
    short.write_text(page.replace("</head>", "<style>@page{size:297mm 90mm}</style></head>", 1))
    pdf = tmp_path / "short.pdf"
    subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                    "--disable-background-networking", "--disable-component-update", "--disable-sync",
                    "--no-pdf-header-footer", f"--user-data-dir={tmp_path / 'profile'}", f"--print-to-pdf={pdf}",
                    short.as_uri()], capture_output=True, timeout=120, check=True)
    pages = subprocess.run(["pdftotext", "-layout", str(pdf), "-"], capture_output=True, text=True,
                           check=True).stdout.split("\f")
    with_rows = [p for p in pages if re.search(r"pingpong \d+ [KMG]?i?B\s+library", p)]
    assert len(with_rows) >= 2, len(pages)
    for p in with_rows:
        assert re.search(r"phase\s+algorithm\s+n\s+median", p), p


def lightness(hex_colour: str) -> float:
    """CIE L* of an sRGB colour: what a greyscale print keeps of it."""
    r, g, b = (int(hex_colour[i:i + 2], 16) / 255 for i in (1, 3, 5))
    y = sum(w * (c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4)
            for w, c in zip((0.2126, 0.7152, 0.0722), (r, g, b)))
    return 116 * y ** (1 / 3) - 16 if y > 0.008856 else 903.3 * y


@pytest.mark.timeout(180)
def test_comparison_plots_are_one_per_kernel_and_their_series_differ_in_grey(cli, tmp_path):
    """One MiB/s plot held a disk's figures beside null's, so the smaller bars were slivers; and
    its two series, matplotlib's blue and orange, printed as two greys 19 L* apart."""
    for label in ("a", "b"):
        assert cli("run", "null", "--seconds=0.05", "--repeat", "3", "--quiet", "--label", label).status == 0
        assert cli("run", *BUFFERED, f"--dir={tmp_path}", "--label", label).status == 0
    assert cli("report", "a", "b", "-o", str(tmp_path / "r.html")).status == 0
    page = (tmp_path / "r.html").read_text()
    comparison = page.split("Comparison, baseline a", 1)[1].split("<h2>Run ", 1)[0]
    plots = re.findall(r"<svg\b.*?</svg>", comparison, re.S)
    titles = sorted(t for svg in plots for t in re.findall(r">([a-z]+): median per configuration", svg))
    assert titles == ["null", "seqio"], titles
    fills = [re.findall(r'<path d="M [^"]*z\s*"[^>]*?style="fill: (#[0-9a-f]{6})', svg) for svg in plots]
    series = sorted({f for found in fills for f in found})
    assert len(series) >= 2, fills
    greys = sorted(lightness(c) for c in series[:2])
    assert greys[1] - greys[0] >= 30, (series, greys)


@pytest.mark.timeout(180)
def test_the_report_ends_with_what_its_figures_and_marks_mean(cli, tmp_path):
    """CV, p99 and the E-codes were never explained on the page a reviewer reads."""
    assert cli("run", *BUFFERED, f"--dir={tmp_path}", "--label", "a").status == 0
    assert cli("report", "a", "-o", str(tmp_path / "r.html")).status == 0
    assert cli("report", "a", "-o", str(tmp_path / "r.md")).status == 0
    page = (tmp_path / "r.html").read_text()
    guide = page.split("<h2>How to read the figures</h2>", 1)[1].split("</dl>", 1)[0]
    terms = re.findall(r"<dt>(.*?)</dt>", guide)
    # the tables have CV and a flagged buffered write; no limit column (no device ceiling known for a
    # buffered write here), no latency percentile, no E-code: those are not explained
    assert terms == ["median", "n", "interval of the median (95 % CI)", "CV", "flagged, !, a hatched bar"], terms
    assert "Mann-Whitney" not in guide   # one run: no verdict to explain
    md = (tmp_path / "r.md").read_text()
    # the Markdown tables have the HTML's CV column (report/step_table.py): explained there too, as "Flagged (1)" is
    assert "## How to read the figures" in md and "- **flagged, !, a hatched bar**: " in md and "- **CV**: " in md
    assert md.index("## How to read the figures") > md.index("## Run ")


def test_flagged_figures_are_listed_so_names_with_commas_stay_apart_and_a_whole_step_is_said_once():
    """A GPU step flags each row by the same warning: its 156 names in one line,
    joined by ", " though each had commas of its own ("host to device 8 B pinned,
    copy, host to device 16 B pinned, copy, ...")."""
    from clusterbench.analysis.step_summary import Row
    from clusterbench.report.headline import flagged_by_step

    def row(phase, size, mode, warning=None):
        return Row(phase, mode, "MiB/s", size, values=[1.0], sample_warnings=[[warning] if warning else []],
                   sample_repetitions=[0])

    test_runtime = "measured by a cbk built on the test runtime: host memory stood in for the GPU"
    every = [row("h2d", 8 << k, m, test_runtime) for m in ("pinned, copy", "pageable, copy") for k in range(3)]
    some = [row("h2d", 8, "pinned, copy", "slow"), row("h2d", 16, "pinned, copy", "slow"), row("h2d", 32, "pinned, copy")]
    plain = [row("seq_write", None, "fsync", "slow"), row("seq_read", None, "cold", "slow"), row("seq_read", None, "warm")]
    # one GPU's link out of range at 12 sizes of one curve, and 2 of another: the 12 as their range
    link = "GPU 3's PCIe link is x8 of its x16: host copies are capped at 15.8 GB/s per direction"
    curve = [row("h2d", 8 << k, "pinned, copy", link) for k in range(12)] + \
        [row("d2h", 8 << k, "pinned, copy", link) for k in range(2)] + [row("d2h", 1 << 30, "pinned, copy")]
    # flagged at 3 sizes with one between them that is not: no range that reads as every size in it
    gaps = [row("h2d", 8 << k, "pinned, copy", None if k == 2 else link) for k in range(5)]
    run = {"steps": [{"id": i, "position": i, "name": n, "kernel": "gpucopy", "summary": rows} for i, (n, rows) in
                     enumerate((("all", every), ("some", some), ("plain", plain), ("curve", curve), ("gaps", gaps)))]}
    assert [(s.title, s.reasons, s.figures) for s in flagged_by_step(run)] == [
        ("all", ["every figure (6): measured by a cbk built on the test runtime"], 6),   # the warning, short
        ("some", ["h2d 8 B pinned, copy; h2d 16 B pinned, copy: slow"], 2),
        ("plain", ["seq write fsync, seq read cold: slow"], 2),
        ("curve", ["h2d pinned, copy at 8 B .. 16 KiB (12 figures); d2h 8 B pinned, copy; d2h 16 B pinned, copy: "
                   "GPU 3's PCIe link is x8 of its x16"], 14),
        ("gaps", ["h2d pinned, copy at 4 of its sizes from 8 B to 128 B (4 figures): GPU 3's PCIe link is x8 of its x16"], 4)]


def test_an_outlier_warning_gives_its_value_in_the_tables_unit_and_the_guide_explains_its_rule():
    """A quick run's pingpong table in µs had under it "outlier by modified Z-score > 110.5
    at n = 3 (...): 717 us": the records' ASCII spelling, and a bound of 110.5 no part of
    the report explained."""
    from clusterbench.analysis.step_summary import Row
    from clusterbench.report import reading_guide

    row = Row("pingpong", "library", "us", 1024, values=[17.0, 18.0, 717.0], sample_warnings=[[], [], []],
              sample_repetitions=[0, 1, 2])
    warning = row.all_warnings()[-1]
    assert warning == "outlier by modified Z-score > 110.5 at n = 3 (pingpong 1 KiB library): 717 µs; kept in median, min and max"
    terms = dict(reading_guide.used(f"- warning: {warning}"))
    assert "at n = 3, 110.5, because three values say little" in terms["outlier by modified Z-score > b at n = k"]
    assert "outlier by modified Z-score > b at n = k" not in dict(reading_guide.used("write fsync 3 258 MiB/s"))


def test_a_headline_figure_of_one_repetition_is_not_called_ok():
    """An imported fio or STREAM file holds one figure: its headline's verdict read
    "ok: no warning (no limit known)" as a figure of 5 agreeing repetitions does,
    though nothing was known of its spread."""
    from clusterbench.analysis.step_summary import Row
    from clusterbench.report.headline import verdict

    one = Row("randread", "direct", "IOPS", None, values=[33516.0], sample_warnings=[[]], sample_repetitions=[0])
    assert verdict(one) == ("one repetition only: its spread is unknown", False)
    five = Row("randread", "direct", "IOPS", None, values=[33516.0, 33600.0, 33400.0, 33550.0, 33500.0],
               sample_warnings=[[]] * 5, sample_repetitions=list(range(5)))
    assert verdict(five) == ("ok: no warning (no limit known)", False)


def test_a_runs_test_environment_the_same_as_an_earlier_runs_is_printed_once(cli, tmp_path):
    """Two labels of six runs on one machine: each run printed the same eighteen
    environment lines, twelve times on A4. A run whose lines are all an earlier
    run's points to it; the first keeps its lines, in HTML and Markdown alike."""
    import re

    for label in ("a", "a", "b"):
        assert cli("run", "null", "--seconds=0.01", "--repeat", "1", "--label", label, "--quiet").status == 0
    html_path, md_path = tmp_path / "r.html", tmp_path / "r.md"
    assert cli("report", "a", "b", "-o", str(html_path)).status == 0
    assert cli("report", "a", "b", "-o", str(md_path)).status == 0
    page = html_path.read_text()
    after = re.findall(r"<h3>Test environment: [^<]*</h3>\s*(<table class=\"env\">|<p>[^<]*</p>)", page)
    assert after == ['<table class="env">', "<p>Every line the same as run 1&#x27;s, above.</p>",
                     "<p>Every line the same as run 1&#x27;s, above.</p>"], after
    text = md_path.read_text()
    after = re.findall(r"### Test environment: .*\n\n(.*)\n", text)
    assert len(after) == 3 and after[0].startswith("- **"), after
    assert after[1:] == ["Every line the same as run 1's, above."] * 2, after


def test_a_comparison_of_single_values_says_they_have_no_interval_in_words(cli, tmp_path):
    """Two imported dd transcripts, one direct read each: the step's row read "dd read (iflag
    direct); intervals , n = 1", a stray comma where the interval's words were,
    and a cell "1,206; -, n = 1". It says there is none, and why."""
    from pathlib import Path

    imports = Path(__file__).parent / "fixtures" / "import"
    for label, name in (("old", "dd-9.1-transcript.txt"), ("new", "dd-9.1-time-transcript.txt")):
        r = cli("import", "--label", label, "--host", "n01", "--date", "2026-01-15 09:30", str(imports / name))
        assert r.status == 0, r.stderr
    html_path, md_path = tmp_path / "r.html", tmp_path / "r.md"
    assert cli("report", "old", "new", "-o", str(html_path)).status == 0
    assert cli("report", "old", "new", "-o", str(md_path)).status == 0
    groups = re.findall(r'<tr class="group"><th colspan=\d+>([^<]*)</th></tr>', html_path.read_text())
    assert groups and all(g.endswith("; intervals (none: n = 1)") for g in groups), groups
    rows = [line for line in md_path.read_text().splitlines() if line.startswith("| **") and "intervals" in line]
    assert rows and all("; intervals (none: n = 1)**" in row for row in rows), rows


def test_the_summarys_environment_sentence_names_the_key_in_words(cli, tmp_path):
    """Two imported dd transcripts, of hosts n01 and n02: the summary said "The
    environments of old and new differ in 2 keys, first host.name: n01 vs n02",
    the store's spelling, above a table that names it "host name"."""
    from pathlib import Path

    imports = Path(__file__).parent / "fixtures" / "import"
    for label, host, name in (("old", "n01", "dd-9.1-transcript.txt"), ("new", "n02", "dd-9.1-time-transcript.txt")):
        r = cli("import", "--label", label, "--host", host, "--date", "2026-01-15 09:30", str(imports / name))
        assert r.status == 0, r.stderr
    out = tmp_path / "r.html"
    assert cli("report", "old", "new", "-o", str(out)).status == 0
    summary = out.read_text()
    summary = summary[summary.index("<h2>Summary</h2>"):summary.index("<h2>Comparison")]
    (sentence,) = [text_of(li) for li in re.findall(r"<li>(The environments[^<]*)</li>", summary)]
    assert ", first host name: n01 vs n02." in sentence and "host.name" not in sentence, sentence
