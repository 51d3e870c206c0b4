"""The digits a report's figure keeps, read back from the rendered Markdown and HTML
(output/figure_digits.py; docs/statistics.md, "How figures are rounded"): a median keeps 3
significant digits however wide its interval, and no figure shows more places than the tool
that measured it printed, a converted unit (OSU's MB/s stored as MiB/s) included."""
from __future__ import annotations

from pathlib import Path

import pytest

from test_markdown_comparison import Tables, rendered

FIXTURES = Path(__file__).parent / "fixtures" / "import"


def step_rows(page: Tables, first_cell: str) -> list[dict[str, str]]:
    """The rows of the step table that has a row starting with first_cell, as heading -> cell."""
    table = next(t for t in page.tables if any(row[:1] == [first_cell] for row in t[1:]))
    return [dict(zip(table[0], row)) for row in table[1:]]


def report_pages(cli, tmp_path, *targets: str) -> dict[str, Tables]:
    pages = {}
    for name in ("r.md", "r.html"):
        r = cli("report", *targets, "-o", str(tmp_path / name))
        assert r.status == 0, r.stderr
    pages["md"] = rendered((tmp_path / "r.md").read_text())
    pages["html"] = Tables((tmp_path / "r.html").read_text())
    return pages


def places(figure: str) -> int:
    number = figure.split()[0].rstrip("!").replace(",", "")
    return len(number.split(".")[1]) if "." in number else 0


@pytest.mark.timeout(120)
def test_a_median_keeps_three_significant_digits_beside_a_very_wide_interval(cli, store_url, tmp_path):
    """4.43 µs among 1.00 and 100.00: the interval's half-width (49.5) allows no decimal, and the
    median read "4", a figure that had lost what was measured."""
    from clusterbench.store import Store

    store = Store(store_url)
    run = store.begin_run(label="wide", command="test", suite=None)
    step = store.begin_step(run, position=0, name="mpi", kernel="mpi", params={"op": "pingpong"}, launcher="local",
                            ranks=2, ranks_per_node=None)
    for i, v in enumerate((1.0, 4.43, 100.0)):
        store.add_sample(step, {"repetition": i, "phase": "pingpong", "mode": "n/a", "rate": v, "rate_unit": "us",
                                "size_bytes": 8}, [])
    store.finish_step(step, "ok")
    store.finish_run(run, "ok")
    for fmt, page in report_pages(cli, tmp_path, "wide").items():
        (row,) = step_rows(page, "pingpong 8 B")
        assert row["median"] == "4.43", (fmt, row)
        assert (row["min"], row["max"]) == ("1", "100"), (fmt, row)   # the spread stays coarse
        interval = next(v for k, v in row.items() if k.startswith("interval of the median"))
        assert interval.startswith("1..100"), (fmt, row)


@pytest.mark.timeout(120)
def test_an_osu_bandwidth_shows_no_more_places_than_osu_printed(cli, tmp_path):
    """osu_bw prints MB/s to hundredths (0.08); stored as MiB/s (0.0762939...) its one repetition
    read 0.07629 MiB/s (0.08 MB/s median): digits OSU never measured."""
    r = cli("import", str(FIXTURES / "osu-7.4-bw.txt"), "--label", "osu", "--host", "h")
    assert r.status == 0, r.stderr
    for fmt, page in report_pages(cli, tmp_path, "osu").items():
        rows = step_rows(page, "bandwidth 1 B")
        assert len(rows) == 17
        for row in rows:
            for figure in (row["median"], row["min"], row["max"]):
                assert places(figure) <= 2, (fmt, row)
        first = rows[0]
        assert first["median"] == "0.08" and "0.08 MB/s" in first["unit"], (fmt, first)
