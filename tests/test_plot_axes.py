"""The report's plots are read by their axes: every tick label says the
value it sits at, and no two say the same."""
from __future__ import annotations

import re

import pytest


def tick_numbers(svg: str) -> list[str]:
    """The plot's text elements that are numbers (its tick labels), as written."""
    texts = re.findall(r"<text\b[^>]*>([^<]*)</text>", svg)
    return [t for t in texts if re.fullmatch(r"-?[\d,]+(\.\d+)?", t)]


@pytest.mark.timeout(60)
def test_ticks_of_a_narrow_range_are_distinct_and_say_their_value():
    """E6 on the test cluster: the aggregate of 2 and 4 ranks, 0.1915 and
    0.1913 Gbit/s. The y axis read 0.192, 0.192, 0.191, 0.191, 0.191, ...:
    three significant digits for ticks 0.000025 apart."""
    from clusterbench.report import plots

    svg = plots.curves("sweep of np", "np", "Gbit/s", {"e6": [(2, 0.1915), (4, 0.1913)]})
    y = [t for t in tick_numbers(svg) if t not in ("2", "4")]
    assert len(y) >= 3 and len(set(y)) == len(y), y
    values = [float(t.replace(",", "")) for t in y]
    assert values == sorted(values) and 0.1912 <= values[0] < values[-1] <= 0.1916, y
    steps = {round(b - a, 9) for a, b in zip(values, values[1:])}
    assert len(steps) == 1, y   # evenly spaced, as drawn: each label is its tick's value


@pytest.mark.timeout(60)
def test_ticks_keep_thousands_separators_and_no_needless_decimals():
    from clusterbench.report import plots

    bars = plots.bars("t", "MiB/s", ["write", "read"], {"a": [(1150, 847, 1329), (2429, 1950, 2551)]})
    assert tick_numbers(bars)[:3] == ["0", "500", "1,000"]
    # a log axis (latency over message sizes spanning decades): each tick as it is, 1 and 10, not 1.0 and 10.0
    log = plots.curves("t", "size", "us", {"a": [(8, 1.0), (1024, 2.0), (1 << 20, 80.0)]}, sizes=True)
    assert "1" in tick_numbers(log) and "10" in tick_numbers(log) and "10.0" not in tick_numbers(log)
    small = plots.bars("t", "us", ["8 B", "1 KiB"], {"a": [(0.5, 0.4, 0.6), (1.5, 1.4, 1.6)]})
    assert tick_numbers(small)[:6] == ["0.0", "0.2", "0.4", "0.6", "0.8", "1.0"]   # one decimal each, as the finest needs
