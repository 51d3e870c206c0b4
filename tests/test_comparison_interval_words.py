"""A comparison table says its intervals' words once per step, in the step's row, where all its
figure cells share them; each cell said "2,868..4,994 ([min, max], n = 5, coverage 94 %)", two
of its four lines on A4. Read back from the rendered Markdown and HTML comparison tables."""
from __future__ import annotations

import re

import pytest

from test_golden_reports import fill_store
from test_markdown_comparison import Tables, comparison_table, rendered


@pytest.mark.timeout(180)
def test_a_steps_interval_words_stand_once_in_its_row_not_in_each_figure_cell(cli, store_url, tmp_path):
    fill_store(store_url)
    for name in ("r.md", "r.html"):
        assert cli("report", "base", "tuned", "-o", str(tmp_path / name)).status == 0
    for fmt, page in (("md", rendered((tmp_path / "r.md").read_text())),
                      ("html", Tables((tmp_path / "r.html").read_text()))):
        table = comparison_table(page.tables)
        figures = [i for i, h in enumerate(table[0]) if h.endswith(": median")]
        said, folded = None, 0
        for row in table[1:]:
            if not any(row[1:]):   # a step's row
                m = re.search(r"; intervals (\(.*)$", row[0])
                said = m.group(1) if m else None
                continue
            for i in figures:
                cell = " ".join(row[i].split())
                if said:
                    assert "coverage" not in cell and "CI)" not in cell and "n = " not in cell, (fmt, row[0], cell)
                    folded += 1
                else:
                    assert "coverage" in cell or "CI)" in cell, (fmt, row[0], cell)
        assert folded >= 10, fmt
