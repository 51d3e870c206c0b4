"""How many digits a figure is printed with, in every human-facing format
(terminal, Markdown, HTML, the summary's sentences); JSON and CSV keep
full precision. docs/statistics.md ("How figures are rounded") says it for readers.

The rule is the metrology convention (GUM 7.2.6, ISO 80000-1 annex B):
- a figure with an interval: the uncertainty, the interval's half-width,
  is rounded to 2 significant digits, and the median, the interval's ends
  (and the row's min and max) are printed to that decimal place, trailing
  zeros kept: 4.40 when the interval says hundredths matter. pyperf prints
  mean and std to one precision the same way (format_timedeltas);
- never finer than the values were written with (analysis/stats.py
  resolution): OSU's 4.4, written so, stays 4.4;
- never into the integer digits: 45,237 stays 45,237, not 45,200 (a
  rounded integer's trailing zeros cannot say they are not significant);
- a median keeps 3 significant digits however wide its interval (median_places): 4.43 beside
  1..100 read "4", a figure that had lost what was measured; the interval stays coarse;
- a rate beside a median (MB/s beside MiB/s): the median's places;
- a figure without an interval (one repetition, a percentile): 4 significant digits, whole numbers from 100 on, as
  the reports always printed; 1,234.5678 MiB/s reads 1,235; never finer than it was written (OSU's
  0.08 MB/s, stored as 0.0763 MiB/s, reads 0.08, not 0.07629).
"""
from __future__ import annotations

import math

SIGNIFICANT_UNCERTAINTY = 2   # digits of the uncertainty kept (GUM 7.2.6: "at most two")
SIGNIFICANT_MEDIAN = 3        # digits a median keeps however wide its interval
NUMBER_SIGNIFICANT = 4        # number(): digits of a figure without an interval, below 100


def number(v: float | None) -> str:
    """A figure without an interval: 4 significant digits below 100, whole from 100."""
    if v is None:
        return "-"
    return f"{v:,.{NUMBER_SIGNIFICANT}g}" if abs(v) < 100 else f"{v:,.0f}"


def two_digits(v: float) -> str:
    """A share or duration said in a sentence, to 2 significant digits below 100, whole from 100:
    Python's :.2g wrote 150 as "1.5e+02" (a stalled node's "median 1.5e+02 s")."""
    return f"{v:.2g}" if abs(v) < 100 else f"{v:,.0f}"


def as_given(v: float) -> str:
    """A number an option was given (seconds, a factor), as a person writes it: :g wrote
    --step-timeout 1000000 as "1e+06 s"; 15 digits hold every option's range and drop float noise."""
    return f"{v:.15g}"


def _written_places(s) -> int | None:
    """The places the values were written with (results/written_step.resolution), None for a computed figure's 1e-13."""
    written = getattr(s, "resolution", None)
    return max(0, -round(math.log10(written))) if written else None


def _significant_places(v: float, digits: int) -> int:
    """The places that give v `digits` significant digits, none into the integer digits."""
    if v == 0 or not math.isfinite(v):
        return 0
    return max(0, digits - 1 - math.floor(math.log10(abs(v))))


def places(s) -> int | None:
    """The decimal places a Summary's interval (and its min and max) are printed with;
    None without an interval of some width (then number() applies), unless the values were
    written coarser than number() prints: OSU's 0.08 MB/s, stored as 0.0763 MiB/s, keeps 2."""
    if s is None:
        return None
    written = _written_places(s)
    half_width = (s.ci_high - s.ci_low) / 2 if s.n >= 2 and None not in (s.ci_low, s.ci_high) else 0.0
    if not (half_width > 0 and math.isfinite(half_width)):
        if written is None or s.median is None:
            return None
        shown = 0 if abs(s.median) >= 100 else _significant_places(s.median, NUMBER_SIGNIFICANT)
        return written if written < shown else None
    exponent = math.floor(math.log10(half_width))
    keep = SIGNIFICANT_UNCERTAINTY - 1 - exponent
    if round(half_width, keep) >= 10.0 ** (exponent + 1):   # 0.0996 rounds to 0.10: one place fewer
        keep -= 1
    if written is not None:   # no finer than the values were given with (1e-13 for a computed figure)
        keep = min(keep, written)
    return max(0, keep)


def median_places(s) -> int | None:
    """The places a Summary's median (and the MB/s beside it) is printed with: its interval's,
    or more where that leaves it fewer than 3 significant digits (never finer than written)."""
    d = places(s)
    if d is None or s.median is None:
        return d
    keep = _significant_places(s.median, SIGNIFICANT_MEDIAN)
    written = _written_places(s)
    return max(d, keep if written is None else min(keep, written))


def derived_places(v: float | None, s) -> int | None:
    """The places of a figure in proportion to a Summary's median (the MB/s per pair a pingpong's
    median time gives): the median's relative half-width carried over to it, rounded as places()
    rounds, 3 significant digits at least, never finer than number(); None without an interval.
    At number()'s 4 digits, 0.005162 MB/s stood beside 1,550 µs known to +-2 %."""
    if v is None or not math.isfinite(v) or v == 0 or s is None or not s.median or s.n < 2 \
            or None in (s.ci_low, s.ci_high) or not s.ci_high > s.ci_low:
        return None   # no spread to carry (one value, as IMB printed it: 0.84, not 0.840)
    half_width = abs(v) * (s.ci_high - s.ci_low) / 2 / abs(s.median)
    keep = SIGNIFICANT_UNCERTAINTY - 1 - math.floor(math.log10(half_width))
    keep = max(keep, _significant_places(v, SIGNIFICANT_MEDIAN))
    return max(0, min(keep, _significant_places(v, NUMBER_SIGNIFICANT) if abs(v) < 100 else 0))


def at(v: float | None, decimals: int | None) -> str:
    """v to the decimal places of its interval (places()), else as number()."""
    if v is None:
        return "-"
    if decimals is None:
        return number(v)
    return f"{v:,.{decimals}f}"


def median(s) -> str:
    """A Summary's median at its interval's places, 3 significant digits at least: '28.2' beside
    '26.2..38.1', '4.43' beside '1..100'."""
    return at(s.median, median_places(s))


def span(s) -> str:
    """A Summary's interval, 'lo..hi', at the places its width allows."""
    d = places(s)
    return f"{at(s.ci_low, d)}..{at(s.ci_high, d)}"
