"""Statistics against known data, and the error rates of the verdicts."""
from __future__ import annotations

import math
import random

import pytest

from clusterbench.analysis import stats
from clusterbench.analysis.stats import Verdict


def test_summary_of_known_sample():
    s = stats.summarize([3.0, 1.0, 2.0, 5.0, 4.0, 6.0, 7.0, 9.0, 8.0, 10.0])
    assert (s.n, s.median, s.minimum, s.maximum, s.mean) == (10, 5.5, 1.0, 10.0, 5.5)
    assert s.std == pytest.approx(math.sqrt(sum((x - 5.5) ** 2 for x in range(1, 11)) / 9))
    # n = 10: [x(2), x(9)] covers 1 - 2*(1+10)/1024 = 0.9785; [x(3), x(8)] only 0.8906
    assert (s.ci_low, s.ci_high) == (2.0, 9.0)
    assert s.ci_coverage == pytest.approx(1 - 22 / 1024)


def test_small_samples_state_the_coverage_they_really_have():
    lo, hi, cov = stats.median_ci([5.0, 1.0, 3.0])
    assert (lo, hi) == (1.0, 5.0) and cov == pytest.approx(0.75)
    lo, hi, cov = stats.median_ci([float(x) for x in range(6)])
    assert (lo, hi) == (0.0, 5.0) and cov == pytest.approx(1 - 2 / 64)
    assert stats.median_ci([]) == (None, None, None)
    assert stats.median_ci([4.0]) == (4.0, 4.0, 0.0)


def test_injected_outlier_is_flagged_not_dropped():
    values = [100.0, 101.0, 99.0, 100.5, 99.5, 100.2, 250.0]
    s = stats.summarize(values)
    assert s.outliers == [6] and s.n == 7 and s.maximum == 250.0
    kept = stats.summarize(values, exclude_outliers=True)
    assert kept.n == 6 and kept.maximum == 101.0 and kept.excluded_outliers


@pytest.mark.parametrize("n, steps, low, high", [
    (3, 20_000, 0.007, 0.013), (4, 20_000, 0.007, 0.013), (5, 20_000, 0.007, 0.013), (6, 20_000, 0.007, 0.013),
    (10, 20_000, 0.007, 0.013), (30, 20_000, 0.007, 0.013),
    (400, 10_000, 0.006, 0.014),   # between two simulated sizes: interpolated
    (2000, 2_000, 0.003, 0.025),   # above the largest: extrapolated (coarse; the old 3.5 flags 60 % of steps)
])
def test_noise_alone_flags_one_step_in_a_hundred_at_any_n(n, steps, low, high):
    """The walk-through of E1-E11 found a flag under almost every n = 3 table: a fixed bound of 3.5
    flags one value or more in 28 % of steps of normal noise at n = 3, 21 % at n = 5, 12 % at n = 10.
    The bound for n is set so that noise alone gives a flag in 1 % of steps; checked here with a seed
    of its own, independent of the simulation that made the table."""
    rng = random.Random(n)
    flagged = sum(bool(stats.outlier_indices([rng.gauss(0, 1) for _ in range(n)])) for _ in range(steps))
    assert low <= flagged / steps <= high, f"n = {n}: {flagged} of {steps} steps flagged"


def test_a_real_outlier_is_flagged_at_three_and_five_values_and_the_rule_says_its_bound():
    """The bound at small n is high (110 at n = 3) but a value apart by orders of the others' spread passes it."""
    assert stats.outlier_indices([100.0, 100.5, 160.0]) == []     # Z = 0.6745 x 59.5 / 0.5 = 80: three values cannot tell
    assert stats.outlier_indices([100.0, 100.1, 190.0]) == [2]    # Z = 606
    assert stats.outlier_indices([100.0, 101.0, 99.0, 100.5, 300.0]) == [4]
    assert stats.outlier_indices([100.0, 101.0, 99.0, 100.5, 104.0]) == []   # Z = 4.7: past 3.5, common in noise at n = 5
    s = stats.summarize([100.0, 101.0, 99.0, 100.5, 300.0])
    assert s.outlier_bound == stats.outlier_bound(5) > 3.5
    assert stats.outlier_rule(5) == f"modified Z-score > {stats.outlier_bound(5):.1f} at n = 5"
    assert stats.outlier_bound(2) == math.inf and stats.outlier_indices([1.0, 1e9]) == []
    # sizes the table does not hold lie between their neighbours; beyond it the bound keeps growing
    assert stats.outlier_bound(100) >= stats.outlier_bound(110) >= stats.outlier_bound(120)
    assert stats.outlier_bound(1000) < stats.outlier_bound(2000) < stats.outlier_bound(10**5) < 6
    # a comparison's samples have several sizes: each one's bound is stated
    assert stats.outlier_rules([5, 5, 10, 2]) == "modified Z-score > 18.6 at n = 5, > 6.9 at n = 10"
    assert stats.outlier_rules([2, 1]) == "no outlier test below 3 values"
    assert "n = 3 to 20" in stats.outlier_rules([3, 5, 10, 20])


@pytest.mark.parametrize("values, flagged", [
    ([], []), ([1.0], []), ([1.0, 2.0], []), ([7.0, 7.0, 7.0, 7.0], []),
    # MAD = 0: the spread is below what the figures show; half their last decimal stands for it
    ([7.0, 7.0, 7.0, 7.0, 8.0], []), ([7.0, 7.0, 7.0, 7.0, 70.0], [4]),
    ([9.41, 9.41, 9.41, 9.41, 9.42], []), ([9.41, 9.41, 9.41, 9.41, 9.9], [4]),
    ([100.0, 100.0, 100.0, 100.0, 1000.0], [4]),   # a resolution of at most 1, whatever the zeros
])
def test_modified_z_edge_cases(values, flagged):
    assert stats.outlier_indices(values) == flagged
    assert all(math.isfinite(z) for z in stats.modified_z(values))


def test_rounded_figures_imported_five_times_keep_every_value_when_outliers_are_excluded():
    """iperf3 prints 3 figures: four runs at 9.41 Gbit/s and one at 9.42 have a MAD of 0. With the
    machine epsilon for it (hyperfine's rule) 9.42 had a modified Z of 2e13, was flagged, and
    --exclude-outliers dropped it from the median and the test."""
    assert stats.resolution([9.41, 9.4, 9.41]) == pytest.approx(0.01)
    assert stats.resolution([7.0, 35000.0]) == 1 and stats.resolution([1234.5678901234567]) < 1e-12
    kept = stats.summarize([9.41, 9.41, 9.42, 9.41, 9.41], exclude_outliers=True)
    assert kept.n == 5 and kept.outliers == [] and kept.maximum == 9.42


def test_verdict_direction_follows_the_unit():
    a, b = [100, 101, 99, 100, 102], [110, 111, 109, 112, 110]
    assert stats.compare(a, b, "MiB/s").verdict is Verdict.FASTER
    assert stats.compare(a, b, "us").verdict is Verdict.SLOWER
    assert stats.compare(a, b, "widgets").verdict is Verdict.CHANGED
    c = stats.compare(a, b, "MiB/s")
    assert c.ratio == pytest.approx(110 / 100) and c.p < 0.05


def test_a_metadata_rate_has_a_direction_and_its_regression_fails_the_gate():
    """metadata and mdtest imports rate in items/s, which was in neither direction set: a file-create
    rate halved read "changed (direction unknown)" and --fail-if slower let it pass."""
    from clusterbench.analysis import compare_gate
    from clusterbench.analysis.comparison import Config, Point, Table
    from clusterbench.results.sample import SampleKey

    before, after = [10_500.0, 10_400.0, 10_600.0, 10_450.0, 10_550.0], [5_200.0, 5_250.0, 5_150.0, 5_300.0, 5_100.0]
    assert stats.direction("items/s") == 1
    assert stats.compare(before, after, "items/s").verdict is Verdict.SLOWER
    assert stats.compare(after, before, "items/s").verdict is Verdict.FASTER
    point = Point("mdtest", "metadata", {}, SampleKey("file-create", None, "items/s", None),
                  values={"old": before, "new": after})
    table = Table([Config("old", [1]), Config("new", [2])], [point], [], [])
    (line,) = compare_gate.failing(table, "slower", 5.0)
    # medians 10,500 and 5,200 items/s: 5,200 / 10,500 - 1 = -50.5 %; the exact p of 5 vs 5 apart is 2/252
    assert line == "new vs old: mdtest: file-create: slower (p=0.00794), -50.5%"


def test_too_few_repetitions_are_undecidable_not_significant():
    c = stats.compare([1.0, 1.0, 1.0], [2.0, 2.0, 2.0], "MiB/s")
    assert c.verdict is Verdict.UNDECIDABLE and "3 vs 3" in c.reason
    assert "do not overlap" in c.reason and "not a result" in c.reason
    assert "the CIs overlap" in stats.compare([1.0, 2.0, 3.0], [2.5, 3.5, 4.0], "MiB/s").reason
    assert stats.compare([], [1.0], "s").verdict is Verdict.UNDECIDABLE
    # one value is no interval: no "CIs (0%, 0% coverage) do not overlap" hint from intervals never there
    for a, b in (([1.0], [2.0]), ([1.0], [1.0]), ([1.0, 1.1, 1.2], [5.0])):
        reason = stats.compare(a, b, "MiB/s").reason
        assert "CIs" not in reason and reason.endswith("one value is no interval: nothing to overlap"), reason


def test_significant_change_below_threshold_is_no_difference():
    a = [100.0, 100.1, 100.2, 100.3, 100.4, 100.5]
    b = [v * 1.01 + 0.6 for v in a]  # clearly separated, about +1.6 %
    c = stats.compare(a, b, "MiB/s")
    assert c.p < 0.05 and c.verdict is Verdict.SAME and "threshold" in c.reason


def test_a_change_from_a_zero_baseline_is_a_change_not_below_the_threshold():
    """A baseline median of 0 (a link down: 0 Gbit/s; an OSU latency printed 0.00 us) has no ratio,
    and the change from it was taken as below the 2 % threshold: "no significant difference"."""
    zero, up = [0.0] * 6, [9.4, 9.41, 9.39, 9.42, 9.4, 9.38]
    c = stats.compare(zero, up, "Gbit/s")
    assert c.p < 0.05 and c.ratio is None and c.verdict is Verdict.FASTER, c
    assert stats.compare(up, zero, "Gbit/s").verdict is Verdict.SLOWER
    assert stats.compare(zero, up, "us").verdict is Verdict.SLOWER
    assert stats.compare(zero, up, "widgets").verdict is Verdict.CHANGED
    # equal medians of 0 with a significant shift elsewhere: no relative change to speak of
    same_median = stats.compare([0.0] * 10, [0.0] * 6 + [5.0] * 5, "Gbit/s")
    assert same_median.p < 0.05 and same_median.verdict is Verdict.SAME and "threshold" in same_median.reason


def test_the_regression_gate_and_the_summary_take_a_change_from_a_zero_baseline():
    from clusterbench.analysis import compare_gate
    from clusterbench.analysis.comparison import Config, Point, Table
    from clusterbench.results.sample import SampleKey

    point = Point("osu latency", "mpi", {}, SampleKey("pingpong", None, "us", 8),
                  values={"old": [0.0] * 6, "new": [5.1, 5.0, 5.2, 5.1, 5.0, 5.1]})
    table = Table([Config("old", [1]), Config("new", [2])], [point], [], [])
    (line,) = compare_gate.failing(table, "slower", 5.0)
    assert line.startswith("new vs old: osu latency") and "slower" in line and "from a median of 0" in line
    # and the report's summary names it first, where it had been left out
    from clusterbench.report import summary

    assert summary.significant(table) == [(point, "new")]
    assert "new is slower than old" in summary.difference_sentence(table, point, "new")


def test_error_rates_over_seeded_trials():
    """10 % apart with 5 % noise, n = 10: called different nearly always;
    same distribution: called different rarely (about alpha)."""
    rng = random.Random(1234)
    detected = false_alarms = 0
    for _ in range(100):
        a = [rng.gauss(100, 5) for _ in range(10)]
        b = [rng.gauss(110, 5) for _ in range(10)]
        same = [rng.gauss(100, 5) for _ in range(10)]
        detected += stats.compare(a, b, "MiB/s").verdict is Verdict.FASTER
        false_alarms += stats.compare(a, same, "MiB/s").verdict in (Verdict.FASTER, Verdict.SLOWER)
    assert detected >= 95, detected
    assert false_alarms <= 10, false_alarms


def _ci_rank_by_sums(n: int, confidence: float, coverages: list[float]) -> tuple[int, float]:
    """The narrowest order-statistic interval's rank and coverage, from each
    j's coverage summed anew (coverages[j - 1], j = 1 .. n // 2)."""
    best = 1
    for j, coverage in enumerate(coverages, start=1):
        if coverage >= confidence:
            best = j
        else:
            break
    return best, stats._binom_coverage(n, best)


def test_the_median_ci_rank_is_the_one_summed_binomials_give_at_every_n():
    for n in range(1, 300):
        # summed once per n, not once per confidence: the sums are most of the test's time
        coverages = [stats._binom_coverage(n, j) for j in range(1, n // 2 + 1)]
        for confidence in (0.0, 0.5, stats.CONFIDENCE, 0.99, 0.999, 1.0):
            assert stats._ci_rank(n, confidence) == _ci_rank_by_sums(n, confidence, coverages), (n, confidence)


def test_the_median_ci_of_thousands_of_pooled_samples_takes_no_binomial_per_rank(monkeypatch):
    """compare of two labels pools every run's samples (3,000 a side on a
    store of 1,000 quick-suite runs): the rank search summed O(n) binomials
    for each of n/2 ranks, and the comparison ran for 9 minutes."""
    combs = []
    real_comb = math.comb

    def counted(n, k):
        combs.append(1)
        return real_comb(n, k)

    monkeypatch.setattr(math, "comb", counted)
    stats._ci_rank.cache_clear()
    values = [float(v) for v in range(400)]   # enough to count; 3,000 took minutes before
    low, high, coverage = stats.median_ci(values)
    assert (low, high) == (179.0, 220.0) and coverage == pytest.approx(0.9598, abs=1e-4)
    assert len(combs) < len(values), len(combs)
