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


def _overlaps(a, b) -> bool:
    return a.x0 < b.x1 and b.x0 < a.x1 and a.y0 < b.y1 and b.y0 < a.y1


COMPARED = ["MPI: pingpong latency and bandwidth, 2 ranks on this node (E7): pingpong 8 B library",
            "MPI: pingpong latency and bandwidth, 2 ranks on this node (E7): pingpong 1 KiB library",
            "MPI: pingpong latency and bandwidth, 2 ranks on this node (E7): pingpong 32 KiB library",
            "MPI: pingpong latency and bandwidth, 2 ranks on this node (E7): pingpong 1 MiB library"]


# the seqio plot of a quick run's comparison: 7 groups, labels wrapped to 18 characters that ran
# into their neighbours ("warm read (what dd" over "warm read (what dd shows): read warm")
QUICK_SEQIO = ["disk: durable write, cold read (E1): write fsync", "disk: durable write, cold read (E1): read cold",
               "disk: O_DIRECT write and read: write direct", "disk: O_DIRECT write and read: read direct",
               "page cache: buffered write, warm read (what dd shows): write buffered",
               "page cache: buffered write, warm read (what dd shows): write buffered+sync",
               "page cache: buffered write, warm read (what dd shows): read warm"]


@pytest.mark.timeout(60)
@pytest.mark.parametrize("groups", [COMPARED, QUICK_SEQIO, [f"page cache: buffered write, warm read (what dd shows): step {i} "
                                                            f"write buffered" for i in range(24)]],
                         ids=["4 long labels", "7 long labels", "24 long labels"])
def test_a_comparisons_bar_labels_never_run_into_each_other_or_the_flag_note(groups):
    """`report a b`: the comparison's plot of four MPI latencies printed its four
    90-character labels on one line each, over one another; with 24 groups the
    slanted labels crossed and the hatched-bar note was printed over them."""
    from clusterbench.report import plots

    series = {name: [(10.0 + i, 9.0 + i, 11.0 + i) for i in range(len(groups))] for name in ("a", "b")}
    flags = {"a": ["page cache"] + [None] * (len(groups) - 1), "b": [None] * len(groups)}
    fig = plots.bars_figure("median per configuration", "us", groups, series, flags)
    renderer = fig.canvas.get_renderer()
    fig.canvas.draw()
    ax = fig.axes[0]
    labels = [t for t in (ax.get_xticklabels() + ax.get_yticklabels()) if t.get_text() and not
              t.get_text().replace(",", "").replace(".", "").isdigit()]
    assert len(labels) == len(groups)
    # every word of each label is shown (wrapped, never cut)
    assert [t.get_text().split() for t in labels] == [g.split() for g in groups]
    boxes = [t.get_window_extent(renderer) for t in labels]
    clashes = [(labels[i].get_text(), labels[j].get_text()) for i in range(len(boxes))
               for j in range(i + 1, len(boxes)) if _overlaps(boxes[i], boxes[j])]
    assert not clashes, clashes[:2]
    (note,) = [t for t in ax.texts if t.get_text().startswith("hatched: flagged")]
    below = note.get_window_extent(renderer)
    assert not [b for b in boxes if _overlaps(below, b)]
    x_labels = [t.get_window_extent(renderer) for t in ax.get_xticklabels() if t.get_text()]
    assert below.y1 <= min(b.y0 for b in x_labels)   # under the x axis' labels, not over them
    import matplotlib.pyplot as plt

    plt.close(fig)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("configs", [["run 1"], ["base", "tuned"]])
def test_a_plot_of_one_figure_is_a_strip_across_not_a_quarter_page(configs):
    """A step with one figure (Himeno, a TCP stream, each node's step of a
    cluster run) drew one standing bar the page's width and 3.4 in high: four
    nodes' Himeno took two A4 pages. One group lies across, a strip under 2 in."""
    from clusterbench.report import plots

    fig = plots.bars_figure("node h01: himeno: median, bars = interval of the median", "MFLOPS", ["jacobi time"],
                            {c: [(601.0 + i, 600.0 + i, 602.0 + i)] for i, c in enumerate(configs)})
    try:
        fig.canvas.draw()
        renderer = fig.canvas.get_renderer()
        assert fig.get_tightbbox(renderer).height <= 2.0, fig.get_tightbbox(renderer).height
        ax = fig.axes[0]
        bars = [p.get_window_extent(renderer) for p in ax.patches]
        assert len(bars) == len(configs) and all(b.width > 5 * b.height for b in bars)   # lying, not standing
        assert [t.get_text() for t in ax.get_yticklabels()] == ["jacobi time"]
    finally:
        import matplotlib.pyplot as plt

        plt.close(fig)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("across", [False, True], ids=["standing", "across"])
def test_bars_spanning_more_than_two_decades_share_a_log_axis_where_the_small_ones_are_read(across):
    """A comparison's MPI latencies, 2 µs at 8 B and 1,550 µs at 1 MiB, on one
    linear axis: the small bars were a pixel high, their intervals invisible.
    Over more than two decades the value axis is logarithmic, says so, and is
    ticked in decades a reader reads off (1, 2, 5, 10 ... 1,000)."""
    from clusterbench.report import plots

    groups = ["pingpong 8 B", "pingpong 1 KiB", "pingpong 32 KiB", "pingpong 1 MiB"] if not across else ["pingpong"]
    medians = [2.0, 3.5, 40.0, 1550.0]
    series = ({"a": [(m, m * 0.95, m * 1.05) for m in medians]} if not across
              else {name: [(m, m * 0.95, m * 1.05)] for name, m in zip("abcd", medians)})
    fig = plots.bars_figure("median per configuration", "us", groups, series)
    try:
        fig.canvas.draw()
        ax = fig.axes[0]
        axis = ax.xaxis if across else ax.yaxis
        assert axis.get_scale() == "log"
        assert axis.get_label().get_text() == "µs, log scale"
        ticks = [t.get_text() for t in axis.get_ticklabels() if t.get_text()]
        assert {"1", "10", "100", "1,000"} <= set(ticks), ticks
        renderer = fig.canvas.get_renderer()
        size = [(p.get_window_extent(renderer).width if across else p.get_window_extent(renderer).height)
                for p in ax.patches]
        # the 2 µs bar is read: a tenth of the 1,550 µs one at least (linear: 1/775 of it)
        assert min(size) >= 0.1 * max(size), size
    finally:
        import matplotlib.pyplot as plt

        plt.close(fig)


@pytest.mark.timeout(60)
def test_bars_within_two_decades_keep_a_linear_axis_from_zero():
    from clusterbench.report import plots

    fig = plots.bars_figure("t", "us", ["a", "b"], {"x": [(2.0, 1.9, 2.1), (150.0, 149.0, 151.0)]})
    try:
        assert fig.axes[0].yaxis.get_scale() == "linear" and fig.axes[0].get_ylim()[0] == 0
        assert fig.axes[0].yaxis.get_label().get_text() == "µs"
    finally:
        import matplotlib.pyplot as plt

        plt.close(fig)
