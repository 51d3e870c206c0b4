"""Statistics of repeated measurements. Pure computation: nothing here prints.

Rules (docs/statistics.md explains them for readers):
- Centre: the median; spread: min, max, standard deviation, coefficient of variation.
- Confidence interval of the median from order statistics (distribution-free):
  the narrowest interval [x(j), x(n+1-j)] whose binomial coverage
  P(j <= B <= n-j), B ~ Bin(n, 1/2), reaches the level. Below n = 6 no such
  interval reaches 95 %; then [min, max] is given with its real coverage
  (1 - 2^(1-n)), never a pretended 95 %.
- Outliers: modified Z-score on the median absolute deviation (Iglewicz and
  Hoaglin), |0.6745 (x - median) / MAD|, above a bound that depends on n:
  the one that n normal values pass in 1 % of samples (outlier_bound), never
  below Iglewicz and Hoaglin's 3.5. MAD = 0 is replaced by half the
  values' resolution (the finest decimal they were written with, at most
  1). Outliers are flagged and shown, dropped only on request, and the
  result says so.
- Comparison: two-sided Mann-Whitney U (exact for small samples without ties).
  When the sample sizes cannot reach the significance level at all (3 vs 3
  cannot: the smallest two-sided p is 0.1) the verdict is "undecidable" with
  that reason. A significant difference smaller than the relative threshold
  counts as no difference. Direction comes from the unit.
"""
from __future__ import annotations

import functools
import math
import statistics
from dataclasses import dataclass, field
from enum import Enum

from clusterbench.analysis.outlier_bound_table import BOUNDS, FALSE_ALARM
from clusterbench.results.written_step import resolution

OUTLIER_Z = 3.5        # Iglewicz and Hoaglin's bound: the floor of outlier_bound
CONFIDENCE = 0.95
ALPHA = 0.05
THRESHOLD = 0.02  # relative change below which a significant difference is not reported

# every rate_unit a kernel or an importer writes has its direction here (tests/test_record_schema.py
# checks each kernel's): a unit in neither set makes any significant change "direction unknown", so
# --fail-if slower passes a regression of it
HIGHER_IS_BETTER = {"MiB/s", "MB/s", "GiB/s", "GB/s", "Gbit/s", "Mbit/s", "IOPS", "MFLOPS", "GFLOPS", "ops/s",
                    "MHz", "transactions/s", "files/s", "items/s"}
LOWER_IS_BETTER = {"ns", "us", "ms", "s"}


@dataclass
class Summary:
    n: int
    median: float | None
    mean: float | None
    minimum: float | None
    maximum: float | None
    std: float | None
    cv: float | None
    ci_low: float | None
    ci_high: float | None
    ci_coverage: float | None      # the interval's real coverage probability
    outliers: list[int] = field(default_factory=list)  # indices into the values given
    excluded_outliers: bool = False
    outlier_bound: float = math.inf  # the modified Z a value passed to be an outlier (outlier_bound(n))
    resolution: float | None = None  # the finest step the values were written with (resolution()): no
    # figure is printed finer (output/figure_digits.py): OSU's 4.4 us stays 4.4


def _median(xs: list[float]) -> float:
    s = sorted(xs)
    m = len(s) // 2
    return s[m] if len(s) % 2 else (s[m - 1] + s[m]) / 2


def modified_z(values: list[float]) -> list[float]:
    """|0.6745 (x - median) / MAD| of each value. A MAD of 0 (more than half
    the values equal) is half the values' resolution: a spread too fine for
    the figures to show. (hyperfine's machine epsilon made 9.42 among four
    iperf3 9.41 Gbit/s an outlier, and --exclude-outliers dropped it.)"""
    if not values:
        return []
    med = _median(values)
    mad = _median([abs(v - med) for v in values])
    if mad == 0:
        mad = resolution(values) / 2
    return [0.6745 * (v - med) / mad for v in values]


@functools.lru_cache(maxsize=1024)
def outlier_bound(n: int) -> float:
    """The modified Z above which one of n values is an outlier: the bound n
    normal values pass in FALSE_ALARM of samples (simulated, outlier_bound_table),
    so a step of pure noise shows a flag as rarely at n = 3 as at n = 30.
    Between simulated sizes: linear in log n; above the largest, its bound
    grows as the normal's Bonferroni bound does. inf below 3 values (two
    values are each as far from their median)."""
    if n < 3:
        return math.inf
    if n in BOUNDS:
        return max(OUTLIER_Z, BOUNDS[n])
    sizes = sorted(BOUNDS)
    top = sizes[-1]
    if n > top:
        tail = statistics.NormalDist().inv_cdf
        return BOUNDS[top] + tail(1 - FALSE_ALARM / (2 * n)) - tail(1 - FALSE_ALARM / (2 * top))
    hi = next(s for s in sizes if s > n)
    lo = max(s for s in sizes if s < n)
    w = math.log(n / lo) / math.log(hi / lo)
    return max(OUTLIER_Z, BOUNDS[lo] + w * (BOUNDS[hi] - BOUNDS[lo]))


def outlier_indices(values: list[float], threshold: float | None = None) -> list[int]:
    """Indices of the outliers: |modified Z| above `threshold`, by default outlier_bound(n)."""
    bound = outlier_bound(len(values)) if threshold is None else threshold
    return [i for i, z in enumerate(modified_z(values)) if abs(z) > bound]


def outlier_rule(n: int) -> str:
    """The rule as a reader sees it: "modified Z-score > 18.6 at n = 5"."""
    bound = outlier_bound(n)
    return f"modified Z-score > {bound:.1f} at n = {n}" if math.isfinite(bound) else f"no outlier test at n = {n}"


def outlier_rules(sizes) -> str:
    """The rule over samples of several sizes (a comparison's): each size's
    bound, "modified Z-score > 18.6 at n = 5, > 6.9 at n = 10"; past three
    sizes, where to read them."""
    tested = sorted({n for n in sizes if math.isfinite(outlier_bound(n))})
    if not tested:
        return "no outlier test below 3 values"
    if len(tested) > 3:
        return (f"modified Z-score above the bound for each sample's n (n = {tested[0]} to {tested[-1]}: "
                "the bound that n values of pure noise pass in 1 % of steps)")
    return "modified Z-score " + ", ".join(f"> {outlier_bound(n):.1f} at n = {n}" for n in tested)


def _binom_coverage(n: int, j: int) -> float:
    """P(j <= B <= n - j) for B ~ Bin(n, 1/2): coverage of [x(j), x(n+1-j)] (1-based)."""
    return sum(math.comb(n, k) for k in range(j, n - j + 1)) / 2 ** n


def median_ci(values: list[float], confidence: float = CONFIDENCE) -> tuple[float | None, float | None, float | None]:
    """(low, high, coverage) of the median from order statistics."""
    n = len(values)
    if n == 0:
        return None, None, None
    s = sorted(values)
    if n == 1:
        return s[0], s[0], 0.0
    best, coverage = _ci_rank(n, confidence)
    return s[best - 1], s[n - best], coverage


@functools.lru_cache(maxsize=1024)
def _ci_rank(n: int, confidence: float) -> tuple[int, float]:
    """(j, coverage) of the narrowest [x(j), x(n+1-j)] reaching the confidence; depends on n
    only, so a trend over thousands of runs does not sum binomials for each.

    Each j's coverage is P(j <= B <= n - j) = (2^n - 2 sum_{k<j} C(n, k)) / 2^n, the same
    integer over 2^n that _binom_coverage sums, kept as j grows: summing it anew for each j
    took O(n^2) binomials, and a comparison of two labels pooling 3,000 samples each ran
    for minutes (9 minutes on two labels of a store of 1,000 quick-suite runs)."""
    total = 1 << n
    best, best_inside = 1, total - 2   # [x(1), x(n)] when no j reaches the confidence
    inside, comb = total, 1   # inside: 2^n less both tails below j; comb: C(n, j - 1)
    for j in range(1, n // 2 + 1):
        if j > 1:
            comb = comb * (n - j + 2) // (j - 1)
        inside -= 2 * comb
        if inside / total >= confidence:
            best, best_inside = j, inside
        else:
            break
    return best, best_inside / total


def summarize(values: list[float], exclude_outliers: bool = False, written: float | None = None) -> Summary:
    """written: the step the values' source printed (Sample.printed_step: a tool's MB/s converted to
    MiB/s, coarser than the floats show; OSU's 4.40, finer than the float 4.4 shows), the resolution
    the figures are printed to; without it, the values' own (resolution())."""
    values = [float(v) for v in values if v is not None and math.isfinite(v)]
    outliers = outlier_indices(values)
    used = [v for i, v in enumerate(values) if i not in set(outliers)] if exclude_outliers else values
    n = len(used)
    if n == 0:
        return Summary(0, None, None, None, None, None, None, None, None, None, outliers, exclude_outliers,
                       outlier_bound(len(values)))
    mean = sum(used) / n
    std = math.sqrt(sum((v - mean) ** 2 for v in used) / (n - 1)) if n > 1 else None
    lo, hi, cov = median_ci(used)
    return Summary(n, _median(used), mean, min(used), max(used), std,
                   std / mean if std is not None and mean else None, lo, hi, cov, outliers, exclude_outliers,
                   outlier_bound(len(values)), written if written else resolution(used))


def ci_width_ratio(values: list[float]) -> float | None:
    """CI width relative to the median, for adaptive repetition; None while no 95 % CI exists.
    A CI of no width is 0 whatever its median: figures all 0 (a count of errors, a rate
    that stayed 0) ran --repeat auto to --max-repeat and said the target was out of reach."""
    s = summarize(values)
    if s.ci_coverage is None or s.ci_coverage < CONFIDENCE:
        return None
    width = s.ci_high - s.ci_low
    if width == 0:
        return 0.0
    return width / abs(s.median) if s.median else math.inf


class Verdict(str, Enum):
    FASTER = "faster"
    SLOWER = "slower"
    SAME = "no significant difference"
    CHANGED = "changed (direction unknown)"
    UNDECIDABLE = "undecidable"


@dataclass
class Comparison:
    ratio: float | None          # median(b) / median(a)
    change: float | None         # ratio - 1
    p: float | None
    test: str
    verdict: Verdict
    reason: str = ""


def direction(unit: str | None) -> int:
    """+1 when higher is better, -1 when lower is, 0 when unknown."""
    if unit in HIGHER_IS_BETTER:
        return 1
    if unit in LOWER_IS_BETTER:
        return -1
    return 0


def min_two_sided_p(n_a: int, n_b: int) -> float:
    """The smallest two-sided p an exact Mann-Whitney test can give."""
    return min(1.0, 2 / math.comb(n_a + n_b, n_a))


def _overlap_note(a: list[float], b: list[float]) -> str:
    """Information only, never a verdict: with n this small the CIs are
    [min, max] at 75 % coverage (n = 3), and non-overlapping ranges of 3 vs 3
    are the most extreme ordering, p = 0.1, not significant at 0.05."""
    sa, sb = summarize(a), summarize(b)
    if min(len(a), len(b)) < 2:
        # one value is no interval (its "CI" is the value, coverage 0 %; show prints "-"): "the CIs
        # (0%, 0% coverage) do not overlap" read as a hint from intervals that were never there
        return "one value is no interval: nothing to overlap"
    if sa.ci_high < sb.ci_low or sb.ci_high < sa.ci_low:
        return (f"the CIs ({sa.ci_coverage:.0%}, {sb.ci_coverage:.0%} coverage) do not overlap: "
                "a hint worth measuring again, not a result")
    return "the CIs overlap"


def compare(a: list[float], b: list[float], unit: str | None, alpha: float = ALPHA,
            threshold: float = THRESHOLD) -> Comparison:
    """Is b different from a (the baseline)?"""
    a = [float(v) for v in a if v is not None and math.isfinite(v)]
    b = [float(v) for v in b if v is not None and math.isfinite(v)]
    if not a or not b:
        return Comparison(None, None, None, "none", Verdict.UNDECIDABLE, "a side has no values")
    ma, mb = _median(a), _median(b)
    ratio = mb / ma if ma else None
    change = ratio - 1 if ratio is not None else None
    if min_two_sided_p(len(a), len(b)) >= alpha:
        return Comparison(ratio, change, None, "Mann-Whitney U", Verdict.UNDECIDABLE,
                          f"n = {len(a)} vs {len(b)} cannot reach p < {alpha} (repeat at least 4 times each); "
                          + _overlap_note(a, b))
    if len(set(a) | set(b)) == 1:
        return Comparison(ratio, change, 1.0, "Mann-Whitney U", Verdict.SAME, "all values equal")
    from clusterbench.analysis.mann_whitney import two_sided_p

    p = two_sided_p(a, b)
    if p >= alpha:
        return Comparison(ratio, change, p, "Mann-Whitney U", Verdict.SAME)
    # from a baseline median of 0 there is no ratio, but any other median is past every threshold
    if mb == ma or (change is not None and abs(change) < threshold):
        return Comparison(ratio, change, p, "Mann-Whitney U", Verdict.SAME,
                          f"significant but below the {threshold:.0%} threshold")
    d = direction(unit)
    if d == 0:
        return Comparison(ratio, change, p, "Mann-Whitney U", Verdict.CHANGED)
    better = (mb > ma) == (d > 0)
    return Comparison(ratio, change, p, "Mann-Whitney U", Verdict.FASTER if better else Verdict.SLOWER)
