"""clusterbench's Mann-Whitney U (analysis/mann_whitney.py) gives scipy's p
(mannwhitneyu, two-sided, its defaults) on the sample sizes and value
patterns repetitions produce: small and large, with and without ties."""
from __future__ import annotations

import math
import random

import pytest

from clusterbench.analysis.mann_whitney import _u_counts, two_sided_p


def cases():
    rng = random.Random(20261128)
    for n1 in (1, 2, 3, 4, 5, 8, 9, 12, 30):
        for n2 in (1, 3, 4, 7, 8, 9, 20):
            for shift in (0.0, 0.5, 3.0):
                a = [rng.gauss(0, 1) for _ in range(n1)]
                b = [rng.gauss(shift, 1) for _ in range(n2)]
                yield a, b
                # ties: values rounded as a coarse timer would give them
                yield [round(x) for x in a], [round(x) for x in b]


def test_p_is_scipys():
    # imported here, not at collection: scipy.stats costs every xdist worker 1-2 CPU-s to import
    from scipy.stats import mannwhitneyu

    checked = 0
    for a, b in cases():
        ours = two_sided_p(a, b)
        theirs = float(mannwhitneyu(a, b, alternative="two-sided").pvalue)
        if math.isnan(theirs):
            assert math.isnan(ours), (a, b)
        else:
            assert ours == pytest.approx(theirs, rel=1e-9, abs=1e-12), (a, b)
        checked += 1
    assert checked == 378


def test_the_exact_distribution_counts_every_ordering():
    for n1, n2 in ((1, 1), (3, 4), (8, 8), (2, 12)):
        counts = _u_counts(n1, n2)
        assert sum(counts) == math.comb(n1 + n2, n1)
        assert counts == counts[::-1]   # U is symmetric about n1*n2/2
    assert _u_counts(2, 2) == (1, 1, 2, 1, 1)


def test_fully_separated_small_samples_give_the_smallest_p():
    assert two_sided_p([1, 2, 3, 4], [5, 6, 7, 8]) == pytest.approx(2 / math.comb(8, 4))
