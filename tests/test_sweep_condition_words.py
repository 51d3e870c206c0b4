"""The condition a swept count makes (results/sample.py, `_condition`): a real stream thread
sweep stores and reports "best, 1 thread", not "best, 1 threads"."""
from __future__ import annotations

import pytest
import sqlalchemy as sa

from test_markdown_comparison import Tables, rendered


@pytest.mark.timeout(180)
def test_a_thread_sweep_says_one_thread_in_the_store_and_in_both_reports(cli, store_url, tmp_path):
    r = cli("run", "stream", "--threads=2", "--sweep=threads", "--array-size=1m", "--passes=2", "--repeat", "2")
    assert r.status == 0, r.stderr
    modes = {m for (m,) in sa.create_engine(store_url).connect().execute(sa.text("select distinct mode from samples"))}
    assert modes == {"best, 1 thread", "best, 2 threads"}, modes
    for name in ("r.md", "r.html"):
        assert cli("report", "1", "-o", str(tmp_path / name)).status == 0
    for page in (rendered((tmp_path / "r.md").read_text()), Tables((tmp_path / "r.html").read_text())):
        table = next(t for t in page.tables if t and t[0][:1] == ["phase"])
        conditions = {row[1] for row in table[1:]}
        assert conditions == {"best, 1 thread", "best, 2 threads"}, table
