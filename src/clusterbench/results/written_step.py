"""The step a figure was written with: the finest decimal of its values, or
of the figure a tool printed and the value was converted from. The reports
print a figure no finer than that (output/figure_digits.py); a sample
reads its own (Sample.printed_step), the statistics a set's (stats.summarize)."""
from __future__ import annotations

from decimal import Decimal


def resolution(values: list[float]) -> float:
    """The finest step the values were written with, at most 1: 9.41 and
    9.4 give 0.01, 7.0 gives 1, a computed 1234.5678901234567 about 1e-13.
    Figures imported from a tool's text are rounded (iperf3 to 3 figures,
    OSU to 0.01 us); no spread below that step can show in them."""
    exponents = [Decimal(repr(float(v))).normalize().as_tuple().exponent for v in values]
    return 10.0 ** min([0, *(e for e in exponents if isinstance(e, int))])


def twin_resolution(value: float, printed: float) -> float:
    """The resolution of a value converted from a figure a tool printed (OSU's 0.08 MB/s stored as
    0.0763 MiB/s): the printed figure's, in the value's unit. The conversion's float hides it."""
    return resolution([printed]) * abs(value / printed) if printed else 0.0
