"""Plots as inline SVG (matplotlib's SVG backend): bar charts with the
median's CI as error bars for comparisons, curves on log axes for sizes."""
from __future__ import annotations

import io
import re

from clusterbench.output.render_text import mathtext
from clusterbench.output.unit_symbols import unit_shown


def _svg(fig) -> str:
    import warnings

    buf = io.StringIO()
    with warnings.catch_warnings():
        # The SVG keeps real text (svg.fonttype "none"), drawn by the browser with its fonts: a
        # character matplotlib's own font lacks (an emoji in a label or step name) is there all the
        # same, and matplotlib's warning, two lines on the user's terminal, said something untrue.
        warnings.filterwarnings("ignore", message=r"Glyph \d+ .* missing from font", category=UserWarning)
        fig.savefig(buf, format="svg", bbox_inches="tight", dpi=300)  # a raster part (a heat map) at print resolution
    import matplotlib.pyplot as plt

    plt.close(fig)
    text = buf.getvalue()
    # inline use: drop the XML prologue and DOCTYPE (its URL is only an identifier, but keep it clean)
    return text[text.index("<svg"):]


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    matplotlib.rcParams["svg.hashsalt"] = "clusterbench"  # stable ids: equal input, equal file
    matplotlib.rcParams["svg.fonttype"] = "none"  # real text: small, selectable, no shared glyph ids
    matplotlib.rcParams["axes.prop_cycle"] = matplotlib.cycler(color=SERIES_COLOURS)
    import matplotlib.pyplot as plt

    return plt


# The series' colours, told apart in a greyscale print too (a procurement document is often printed so):
# matplotlib's first two, blue and orange, print as nearly one grey. Dark, light, then between, by luminance
# (CIE L*: about 25, 75, 55, 40, 88, 10), each also a distinct hue for a colour screen.
SERIES_COLOURS = ["#1f3a5f", "#f0b44c", "#3a9d8f", "#9c4f6e", "#c8d4e3", "#222222"]

# Wide enough to fill the report's text width (75em) at its font size: a plot is read beside its table.
WIDTH_IN = 10.0
HATCH = "///"


def legend_outside(ax, fontsize: float = 8) -> None:
    """Outside the axes, right of them: a legend never covers data."""
    ax.legend(fontsize=fontsize, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0)


def _legend(ax, entries: int) -> None:
    """None for a single series: its title names it."""
    if entries > 1:
        legend_outside(ax)


# Characters of 8 pt tick text per inch of axis. DejaVu Sans averages about 0.55 em a character
# over prose, but a step title's capitals, digits and brackets run wider: at 16, a quick run's
# seqio comparison (7 groups, lines of 18 characters) ran each label into its neighbour's.
CHARS_PER_IN = 14
# A label narrower than this per group is not read: the bars lie down instead, labels beside them.
MIN_LABEL_CHARS = 14
ACROSS_LABEL_CHARS = 45   # lines of a label beside bars drawn across: the axes keep most of the width


def bars(title: str, unit: str, groups: list[str], series: dict[str, list[tuple[float, float, float]]],
         flags: dict[str, list[str | None]] | None = None) -> str:
    """groups along x; one bar per series in each group; values (median,
    ci_low, ci_high). flags: per series and bar, why its figure is not what
    its mode claims (a cache), or None; a flagged bar is hatched and the
    reasons are printed under the plot, in the plot."""
    return _svg(bars_figure(title, unit, groups, series, flags))


def bars_figure(title: str, unit: str, groups: list[str], series: dict[str, list[tuple[float, float, float]]],
                flags: dict[str, list[str | None]] | None = None):
    """bars()'s figure. Each group's label is wrapped to the width its group
    has, so labels never run into each other (a comparison's labels are a
    step title and a phase: 60 to 90 characters); where that width is too
    narrow to read (many groups), or there is one group, the bars are drawn
    across, one label a line beside each group. The flag note goes below the tick labels, whatever
    their height."""
    import textwrap

    plt = _plt()
    axis_in = WIDTH_IN * 0.8   # the axes' share of the figure, less the y labels and the legend
    chars = int(axis_in / max(1, len(groups)) * CHARS_PER_IN)
    # one group is drawn across too: standing, its one bar filled the page's width a quarter page high
    across = chars < MIN_LABEL_CHARS or len(groups) == 1
    labels = ["\n".join(textwrap.wrap(mathtext(g), ACROSS_LABEL_CHARS if across else chars, break_on_hyphens=False)) or " "
              for g in groups]
    lines = max((label.count("\n") + 1 for label in labels), default=1)
    if across:   # each group a band as tall as its label's lines (8 pt, 1.2 spacing) and a gap
        band_in = max(0.12 * len(series), 0.15 * lines + 0.12, 0.2 + 0.2 * len(series) if len(groups) == 1 else 0)
        height = 1.2 + len(groups) * band_in
    else:
        height = 3.4 + 0.14 * (lines - 1)
    fig, ax = plt.subplots(figsize=(WIDTH_IN, height))
    if across:   # the axes hold the bands; the title above, the x axis below keep their own inches
        fig.subplots_adjust(top=1 - 0.5 / height, bottom=0.7 / height)
    width = 0.8 / max(1, len(series))
    reasons: list[str] = []
    for i, (name, vals) in enumerate(series.items()):
        xs = [g + (i - (len(series) - 1) / 2) * width for g in range(len(groups))]
        med = [v[0] for v in vals]
        err = [[max(0.0, v[0] - v[1]) for v in vals], [max(0.0, v[2] - v[0]) for v in vals]]
        if across:
            drawn = ax.barh(xs, med, width, xerr=err, capsize=3, label=mathtext(name))
        else:
            drawn = ax.bar(xs, med, width, yerr=err, capsize=3, label=mathtext(name))
        for bar, why in zip(drawn, (flags or {}).get(name, [])):
            if why:
                bar.set_hatch(HATCH)
                bar.set_edgecolor("#8a5a00")
                bar.set_alpha(0.55)
                reasons.append(why)
    medians = [v[0] for vals in series.values() for v in vals]
    log = spans_decades(medians)
    value_label = mathtext(unit_shown(unit) + (", log scale" if log else ""))
    if across:
        ax.set_yticks(range(len(groups)), labels, fontsize=8)
        ax.invert_yaxis()   # the first group on top, as in the table
        ax.xaxis.set_major_formatter(number_ticks())
        ax.set_xlabel(value_label)
    else:
        ax.set_xticks(range(len(groups)), labels, fontsize=8)
        ax.yaxis.set_major_formatter(number_ticks())
        ax.set_ylabel(value_label)
    if log:   # 2 µs beside 1,550 µs: on a linear axis the small bars were a pixel high
        lows = [v[1] if v[1] is not None and v[1] > 0 else v[0] for vals in series.values() for v in vals]
        log_value_axis(ax, medians, "x" if across else "y", floor=min(x for x in lows if x and x > 0))
    ax.set_title(mathtext(title), fontsize=10)
    _legend(ax, len(series))
    if reasons:
        note = "hatched: flagged, not what its mode claims: " + "; ".join(dict.fromkeys(reasons))
        # anchored to the bottom of the x axis' labels: below them, never over them
        ax.annotate(mathtext("\n".join(textwrap.wrap(note, 140))), xy=(0.0, 0.0),
                    xycoords=lambda renderer: ax.xaxis.get_tightbbox(renderer), xytext=(0, -6),
                    textcoords="offset points", fontsize=8, color="#8a5a00", va="top", ha="left",
                    annotation_clip=False)
    return fig


def size_tick(x: float, _pos=None) -> str:
    """A byte count as a tick label: 4 KiB, 1 MiB, 1.5 GiB."""
    from clusterbench.results.sizes import rounded_size_text, size_text

    if x == 0:
        return "0 B"
    return size_text(int(x)) if x >= 1 and x == int(x) else rounded_size_text(x)


def _decimals(x: float) -> int:
    """The fewest decimals that write x as it is (a tick sits on a round number)."""
    for d in range(0, 12):
        if abs(round(x, d) - x) <= 1e-9 * max(1.0, abs(x)):
            return d
    return 12


def number_ticks():
    """A tick formatter of plain numbers with thousands separators (no "1e6"
    offset, no powers of ten) that writes each tick as it is: on a linear
    axis every tick with the decimals the finest of them needs (0.1914,
    0.1915: never two ticks reading "0.191", as a fixed 3 significant
    digits wrote them on a narrow range), on a log axis each with its own
    (0.1, 1, 10)."""
    from matplotlib.ticker import Formatter

    class NumberTicks(Formatter):
        decimals: int | None = None

        def set_locs(self, locs):
            super().set_locs(locs)
            shown = [x for x in locs if x == x and abs(x) != float("inf")]
            self.decimals = max((_decimals(x) for x in shown), default=0)

        def __call__(self, x, pos=None):
            log = self.axis is not None and self.axis.get_scale() == "log"
            d = _decimals(x) if log or self.decimals is None else self.decimals
            return f"{x:,.{d}f}"

    return NumberTicks()


# Bars whose medians span more than this many decades share a log value axis (plots.bars).
LOG_BARS_DECADES = 2.0


def spans_decades(values: list[float], decades: float = LOG_BARS_DECADES) -> bool:
    """Whether the positive values span more than `decades` powers of ten."""
    import math

    shown = [v for v in values if v is not None and v > 0]
    return len(shown) > 1 and math.log10(max(shown) / min(shown)) > decades


def log_value_axis(ax, values: list[float], which: str = "y", floor: float | None = None) -> None:
    """ax's value axis (`which`: "y", or "x" for bars drawn across) on a log
    scale with numbers a reader reads off it: 20, 30, 40 over a narrow range,
    1, 2, 5, 10 ... over a few decades, the decades over more (3 ticks a
    decade over 8 of them ran into each other); never a lone power of 2
    ("2⁵", matplotlib's log-2 default, the only tick of a scaling plot of 20
    to 41 µs). floor: the smallest value to show (a bar's interval's low
    end); the axis starts at the power of ten below it, so a bar from 0 is
    drawn from there, its length still read in decades."""
    import math

    from matplotlib.ticker import LogLocator, NullFormatter

    shown = [v for v in values if v and v > 0]
    decades = math.log10(max(shown) / min(shown)) if shown else 0.0
    subs = range(1, 10) if decades < 1 else (1, 2, 5) if decades <= 3 else (1,)
    axis = ax.xaxis if which == "x" else ax.yaxis
    (ax.set_xscale if which == "x" else ax.set_yscale)("log")
    axis.set_major_locator(LogLocator(base=10, subs=subs))
    axis.set_major_formatter(number_ticks())
    axis.set_minor_formatter(NullFormatter())
    if floor:
        lower = 10.0 ** math.floor(math.log10(floor))
        if which == "x":
            ax.set_xlim(left=lower)
        else:
            ax.set_ylim(bottom=lower)
    elif shown:
        # from a labelled tick below the smallest value to one above the largest: the scaling
        # plot of 21 and 41 µs had ticks 30 and 40 only, its 21 µs point under the last label
        limits = (_tick_beyond(min(shown) / 1.02, subs, -1), _tick_beyond(max(shown) * 1.02, subs, 1))
        (ax.set_xlim if which == "x" else ax.set_ylim)(*limits)


def _tick_beyond(value: float, subs, direction: int) -> float:
    """The log axis' tick (s * 10^e, s in subs) nearest value on its side: below it (-1) or above it (1)."""
    import math

    e = math.floor(math.log10(value))
    ticks = [s * 10.0 ** k for k in (e - 1, e, e + 1) for s in subs]
    return max(t for t in ticks if t <= value) if direction < 0 else min(t for t in ticks if t >= value)


def curves(title: str, xlabel: str, unit: str, series: dict[str, list[tuple[float, float]]],
           sizes: bool = False) -> str:
    """One line per series of (x, median); log axes where x doubles, ticks
    as people read them (4 KiB, 1 MiB; 1,200 MiB/s) with `sizes`, plain
    numbers otherwise."""
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullFormatter

    plt = _plt()
    fig, ax = plt.subplots(figsize=(WIDTH_IN, 3.6))
    for name, pts in series.items():
        pts = sorted(pts)
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=mathtext(name))
    xs = sorted({p[0] for pts in series.values() for p in pts})
    positive = [x for x in xs if x > 0]
    if len(positive) > 1 and all(b >= 1.9 * a for a, b in zip(positive, positive[1:])) and xs[0] >= 0:
        if xs[0] > 0:
            ax.set_xscale("log", base=2)
        else:   # IMB's and OSU's 0 B first: linear up to the smallest size, log beyond (a linear axis read
            # "0.0 B, 1000 B, 2000 B", every size up to 256 B in one clump at its left end)
            ax.set_xscale("symlog", base=2, linthresh=positive[0], linscale=0.5)
        # ticks at the measured x where they are few, else at most MAX_TICKS powers of 2: labels never collide
        ticks = xs if len(xs) <= MAX_TICKS else \
            [0.0] * (xs[0] == 0) + [2.0 ** e for e in _spaced_exponents(positive)]
        ax.xaxis.set_major_locator(FixedLocator(ticks))
        ys = [p[1] for pts in series.values() for p in pts if p[1] and p[1] > 0]
        if ys and max(ys) > 8 * min(ys):  # log y only where the values span about a decade
            log_value_axis(ax, ys)
    if ax.get_yscale() != "log":
        ax.yaxis.set_major_formatter(number_ticks())
    ax.xaxis.set_major_formatter(FuncFormatter(size_tick) if sizes else number_ticks())
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.tick_params(axis="x", labelsize=8)
    ax.set_xlabel(mathtext(xlabel))
    ax.set_ylabel(mathtext(unit_shown(unit)))
    ax.set_title(mathtext(title), fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    _legend(ax, len(series))
    return _svg(fig)


MAX_TICKS = 10


def _spaced_exponents(xs: list[float]) -> list[int]:
    """Powers of 2 over xs' range, every k-th so that at most MAX_TICKS remain."""
    import math

    lo, hi = math.floor(math.log2(xs[0])), math.ceil(math.log2(xs[-1]))
    step = max(1, math.ceil((hi - lo + 1) / MAX_TICKS))
    return list(range(lo, hi + 1, step))


def strip_ids(svg: str) -> str:
    return re.sub(r'\s+id="[^"]*"', "", svg)
