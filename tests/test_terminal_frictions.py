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
