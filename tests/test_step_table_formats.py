"""A step's table carries the same columns and cells in the Markdown report as in the HTML one (one
model, report/step_table.py, two renderers): the Markdown lacked the CV, the ranks' times and the
rate per pair, and said its MB/s otherwise. Both read back from the rendered files."""
from __future__ import annotations

from pathlib import Path

import pytest

from test_golden_reports import fill_store
from test_markdown_comparison import Tables, rendered

FIXTURES = Path(__file__).parent / "fixtures" / "import"


def step_tables(page: Tables) -> list[list[list[str]]]:
    return [t for t in page.tables if t and t[0][:1] == ["phase"] and "median" in t[0]]


@pytest.mark.timeout(180)
def test_every_step_table_has_the_same_columns_and_cells_in_markdown_as_in_html(cli, store_url, tmp_path):
    fill_store(store_url)
    # IMB prints each size's fastest, mean and slowest rank: the column the Markdown left out
    assert cli("import", str(FIXTURES / "imb-2021.3-mpi1.txt"), "--label", "imb", "--host", "h").status == 0
    for targets in (("2",), ("imb",)):
        for name in ("r.md", "r.html"):
            r = cli("report", *targets, "-o", str(tmp_path / name))
            assert r.status == 0, r.stderr
        html = step_tables(Tables((tmp_path / "r.html").read_text()))
        markdown = step_tables(rendered((tmp_path / "r.md").read_text()))
        assert len(html) == len(markdown) > 0, targets
        for h, m in zip(html, markdown):
            assert m == h, (targets, m[0], h[0])
        headings = {c for t in html for c in t[0]}
        assert "CV" in headings, headings
        if targets == ("imb",):
            assert "fastest / mean / slowest rank (µs)" in headings, headings
