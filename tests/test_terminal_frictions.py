"""The terminal's small frictions of a first hour (#38, items 7-14), each
re-tried as the issue wrote it."""
from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest


@pytest.mark.timeout(10)
def test_one_warning_of_several_rows_is_one_line_with_each_rows_count():
    from clusterbench.step_summary import Row
    from clusterbench.warning_fold import step_lines

    busy = "a busy thread was on its CPU less than 95% of the time (shared machine?)"
    one = Row("clock", "1 busy", "MHz", values=[1.0] * 3, sample_warnings=[[busy], [busy], []])
    two = Row("clock", "2 busy", "MHz", values=[1.0] * 3, sample_warnings=[[busy], [busy], [busy]])
    assert step_lines([one, two]) == [f"2 of 3 repetitions (clock 1 busy), 3 of 3 (clock 2 busy): {busy}"]
    three = Row("clock", "3 busy", "MHz", values=[1.0] * 3, sample_warnings=[[busy]] * 3)
    assert step_lines([two, three]) == [f"3 of 3 repetitions: {busy}"]


LONG_TITLE_SUITE = """
description = "one step with a title as long as the quick suite's"

[[steps]]
name = "page cache: buffered write, warm read (what dd shows), a title as long as the quick suite's"
kernel = "seqio"
repeat = 2
params = { dir = "{dir}", file-size = "4m", block-size = "1m", write = "buffered", read = "warm" }
"""


@pytest.mark.timeout(120)
@pytest.mark.parametrize("columns", [None, "80"])
def test_progress_lines_keep_their_figures_whole_when_piped(cbk_bin, store_url, tmp_path, columns):
    """#38 item 7: piped, the quick run's progress was cut at 80 columns ("read warm 26,437.…")."""
    suite = tmp_path / "long.toml"
    suite.write_text(LONG_TITLE_SUITE)
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    env.update(CLUSTERBENCH_CBK=cbk_bin, CLUSTERBENCH_DB=store_url, **({"COLUMNS": columns} if columns else {}))
    p = subprocess.run([sys.executable, "-m", "clusterbench", "run", str(suite), f"--dir={tmp_path}"],
                       capture_output=True, text=True, env=env, timeout=120)
    assert p.returncode == 0, p.stderr
    assert re.search(r"2/2 read warm [\d,]+\.\d MiB/s", p.stderr), p.stderr
    assert "…" not in p.stderr
