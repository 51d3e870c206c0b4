"""How many digits a report prints (output/figure_digits.py, docs/statistics.md
"How figures are rounded"): a median and its interval share one decimal
place, set by the interval's half-width rounded to 2 significant digits; a
significant trailing zero stays (4.40); no figure is printed finer than its
tool wrote it (1.5 stays 1.5, never 1.50); a figure without an interval
keeps 4 significant digits; JSON and CSV keep every digit.

The figures are real OSU latency files imported into a private store, and
the golden runs (tests/golden/runs.jsonl, real cbk records)."""
from __future__ import annotations

import csv
import io
import json
import re

import pytest

from clusterbench.analysis.stats import summarize
from clusterbench.output import figure_digits

# OSU 7.4 osu_latency's shape; 8 B written with tenths (as a tool that writes
# three figures does), 128 B with hundredths, six repetitions per configuration
LATENCY = "# OSU MPI Latency Test v7.4\n# Datatype: MPI_CHAR.\n# Size       Avg Latency(us)\n8 {eight}\n128 {one28}\n"
RUNS = {"a": [("1.5", "4.40"), ("1.6", "4.41"), ("1.5", "4.39"), ("1.7", "4.40"), ("1.5", "4.42"), ("1.6", "4.38")],
        "b": [("1.8", "4.50"), ("1.9", "4.52"), ("1.8", "4.49"), ("2.0", "4.50"), ("1.8", "4.51"), ("1.9", "4.48")]}


@pytest.fixture
def osu_store(cli, tmp_path):
    for label, runs in RUNS.items():
        for i, (eight, one28) in enumerate(runs):
            f = tmp_path / f"osu-{label}{i}.txt"
            f.write_text(LATENCY.format(eight=eight, one28=one28))
            r = cli("import", str(f), "--label", label, "--host", "h", "--date", f"2026-01-{i + 1 + 10 * (label == 'b'):02d}")
            assert r.status == 0, r.stderr
    return cli


def test_a_significant_trailing_zero_stays_and_no_figure_is_finer_than_its_tool_wrote_it(osu_store, tmp_path):
    table = osu_store("compare", "a", "b").stdout
    assert "4.40 [4.38..4.42 (97%)] n=6" in table       # hundredths matter: 4.40, not 4.4
    assert "4.50 [4.48..4.52 (97%)] n=6" in table
    assert "1.6 [1.5..1.7 (97%)] n=6" in table          # median 1.55 of tenths: not 1.55 beside 1.50..1.70
    assert "1.9 [1.8..2.0 (97%)] n=6" in table
    md = osu_store("compare", "a", "b", "--format", "md").stdout
    # the interval's words once, in the step's row above its figures (compare_data.shared_tails)
    assert "; intervals (95 % CI), n = 6** |" in md
    assert "| 4.40; 4.38..4.42 | 4.50; 4.48..4.52 |" in md
    assert "| 1.6; 1.5..1.7 | 1.9; 1.8..2.0 |" in md
    for name in ("r.md", "r.html"):
        assert osu_store("report", "a", "b", "-o", str(tmp_path / name)).status == 0
    report_md = (tmp_path / "r.md").read_text()
    assert "| 4.40; 4.38..4.42 |" in report_md
    html = (tmp_path / "r.html").read_text()
    assert '<span class="fig">4.40</span>' in html and '<span class="fig">4.38..4.42</span>' in html
    assert '<span class="fig">1.6</span>' in html and '<span class="fig">1.5..1.7</span>' in html
    assert '"fig">1.55' not in html and "1.50..1.70" not in html


def test_json_and_csv_keep_every_digit_the_text_rounds(osu_store):
    doc = json.loads(osu_store("compare", "a", "b", "--format", "json").stdout)
    eight = next(p for p in doc["points"] if "8 B" in p["title"])
    assert eight["results"]["a"]["median"] == 1.55        # printed 1.6
    rows = list(csv.DictReader(io.StringIO(osu_store("compare", "a", "b", "--format", "csv").stdout)))
    assert {r["median_baseline"] for r in rows} == {"1.55", "4.4"}
    assert {r["ci_high"] for r in rows} == {"2.0", "4.52"}


def test_one_repetition_keeps_four_significant_digits_no_finer_or_coarser_than_its_tool_wrote_it(osu_store):
    """OSU wrote 4.40: the import kept the float 4.4, and one repetition printed 4.4 beside
    figures of two decimals; the record keeps the step OSU printed (rate_step)."""
    out = osu_store("show", "1").stdout
    row = next(line for line in out.splitlines() if "128 B" in line)
    assert re.search(r"│\s+1 │\s+4\.40 │\s+- │\s+4\.40 │\s+4\.40 │", row), row
    row = next(line for line in out.splitlines() if "8 B" in line and "128 B" not in line)
    assert re.search(r"│\s+1 │\s+1\.5 │\s+- │\s+1\.5 │\s+1\.5 │", row), row   # written in tenths


def _decimals(figure: str) -> int:
    return len(figure.split(".")[1]) if "." in figure else 0


def test_every_median_in_the_golden_reports_shares_its_intervals_decimals(tmp_path):
    from test_golden_reports import fill_store
    from clusterbench.report import render
    from clusterbench.report.data import Report
    from clusterbench.store import Store

    url = f"sqlite:///{tmp_path / 'golden.db'}"
    fill_store(url)
    store = Store(url)
    checked = 0
    texts = [render("md", Report.of(store, ["base", "tuned"])), render("md", Report.of(store, ["2"]))]
    for text in texts:
        # "median; lo..hi (" (a comparison's cell) and "| median | lo..hi |" (a step's row: its words in the heading)
        for m in re.finditer(r"([\d,]+(?:\.\d+)?)(?: !\d*)?(?: \([\d,.]+ MB/s\))?(?:;| \|) ([\d,.]+)\.\.([\d,.]+) [(|]", text):
            median, low, high = m.groups()
            assert _decimals(median) == _decimals(low) == _decimals(high), m.group(0)
            checked += 1
    assert checked > 40
    assert all("2.249 | 2.208..2.290 |" in text for text in texts)   # tuned's pingpong 1 KiB: a significant zero


@pytest.mark.parametrize("values, median, span", [
    ([9.41, 9.41, 9.41, 9.41, 9.41, 9.41], "9.41", "9.41..9.41"),   # no width: 4 significant digits
    ([45237.0, 44000.0, 46800.0, 45100.0, 47000.0, 43900.0], "45,168", "43,900..47,000"),  # never into the integers
    ([1.0004, 1.0996, 1.05, 1.02, 1.08, 1.01], "1.035", "1.000..1.100"),  # half-width 0.0496: 0.050, 3 places
    ([1.0, 1.1992, 1.06, 1.02, 1.08, 1.01], "1.04", "1.00..1.20"),    # half-width 0.0996 rounds to 0.10: 2 places
])
def test_the_rule_on_summaries(values, median, span):
    s = summarize(values)
    assert (figure_digits.median(s), figure_digits.span(s)) == (median, span)
