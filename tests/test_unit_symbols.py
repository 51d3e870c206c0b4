"""Microseconds as a reader sees them: "µs" in every format for people
(show, compare, the Markdown and HTML reports), the records' ASCII "us" in
JSON and CSV, which scripts match (output/unit_symbols.py)."""
from __future__ import annotations

import io

import pytest

from test_golden_reports import fill_store


@pytest.fixture(scope="module")
def golden_store(tmp_path_factory):
    from clusterbench.store import Store

    url = f"sqlite:///{tmp_path_factory.mktemp('units') / 'golden.db'}"
    fill_store(url)
    return Store(url)


def test_people_read_microseconds_as_mu_s_and_scripts_read_us(golden_store):
    from rich.console import Console

    from clusterbench.report import render
    from clusterbench.report.data import Report, load_run
    from clusterbench.report.terminal import print_run

    md = render("md", Report.of(golden_store, ["base"]))
    html = render("html", Report.of(golden_store, ["base"]))
    compared = render("md", Report.of(golden_store, ["base", "tuned"]))
    buf = io.StringIO()
    print_run(Console(file=buf, width=200), load_run(golden_store, golden_store.resolve("base")[0]))
    show = buf.getvalue()
    # the MPI pingpong's unit, its ranks' times and randio's latency percentiles
    assert "| pingpong 8 B | library | 3 | 1,550 |" in md and md.count("| µs |") >= 2, md
    assert "| latency (µs), median over repetitions |" in md
    assert "<th>latency (µs), median over repetitions</th>" in html and "fastest / mean / slowest rank (µs)" in html
    assert "1,550&nbsp;µs" in html   # the headline's MPI latency
    assert "| **MPI pingpong" in compared and "| pingpong 8 B | library | µs |" in compared
    assert "slowest rank (µs)" in show and " µs (median of 3 repetitions)" in show
    for text in (md, html, compared, show):
        assert not any(w in text for w in (" us ", " us)", "(us)", "&nbsp;us", "| us |", " us\n")), text
    # JSON and CSV keep the records' spelling
    assert '"unit": "us"' in render("json", Report.of(golden_store, ["base"]))
    assert ",us," in render("csv", Report.of(golden_store, ["base"]))
