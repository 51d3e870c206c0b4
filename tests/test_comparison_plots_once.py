"""A comparison report draws each figure once: a step's own plot is left out where the comparison's
plot shows its every figure (its run being its configuration's only one), and says where to look.
The quick suite's comparison printed every step's bars again under each run: 21 pages on A4, 14 now."""
from __future__ import annotations

import re

import pytest

from test_golden_reports import fill_store

ELSEWHERE = "Its figures are plotted beside the other configurations' in the comparison above."


def run_sections(page: str) -> dict[str, str]:
    """Each run's part of the page, by its heading ("Run 1 (base): ok")."""
    parts = re.split(r"<h2>(Run \d+ \([^)]*\): \w+)</h2>", page)
    out = dict(zip(parts[1::2], parts[2::2]))
    return {k: v.split('<h2>How to read the figures</h2>')[0] for k, v in out.items()}


def plots(html: str) -> int:
    return html.count("<svg")


@pytest.mark.timeout(240)
def test_a_comparison_draws_a_steps_figures_once(cli, store_url, tmp_path):
    fill_store(store_url)

    def page(*args: str) -> str:
        out = tmp_path / "r.html"
        r = cli("report", *args, "-o", str(out))
        assert r.status == 0, r.stderr
        return out.read_text()

    alone = {name: plots(section) for name, section in run_sections(page("base")).items()}
    (base,) = [name for name in alone if "(base)" in name]
    assert alone[base] > 5
    compared = page("base", "tuned")
    sections = run_sections(compared)
    comparison = compared.split("<h2>Comparison", 1)[1].split("<h2>Run ", 1)[0]
    assert plots(comparison) >= 5
    for name, section in sections.items():
        # every step plot gave way to the comparison's, each step saying where its figures are drawn
        assert plots(section) == 0, name
        assert section.count(ELSEWHERE) == alone[base], name
    # with outliers left out the comparison's figures are not the steps': their plots stay
    excluded = run_sections(page("base", "tuned", "--exclude-outliers"))
    assert all(plots(section) >= alone[base] for section in excluded.values()), {k: plots(v) for k, v in excluded.items()}
