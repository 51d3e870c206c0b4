"""The two-sided Mann-Whitney U test, as scipy.stats.mannwhitneyu computes
it with its defaults (method "auto", continuity correction), in pure Python.

Importing scipy.stats costs about a second of CPU, and `compare`, `report`
and `--fail-if` each need this one test, on a handful of repetitions:
tests/test_mann_whitney.py checks every p against scipy's.

scipy's rules, kept: ranks averaged over ties; U is the larger of U1 and
n1*n2 - U1, its survival function doubled and clipped to 1; the exact null
distribution when one sample has at most 8 values and nothing is tied, else
the normal approximation with the tie correction and a continuity correction
of 0.5.
"""
from __future__ import annotations

import functools
import math
from collections import Counter

EXACT_MAX_N = 8   # scipy: exact unless both samples are larger, or values tie


def _average_ranks(values: list[float]) -> list[float]:
    order = sorted(range(len(values)), key=values.__getitem__)
    ranks = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2 + 1   # ranks i+1 .. j+1, averaged
        i = j + 1
    return ranks


@functools.lru_cache(maxsize=64)
def _u_counts(n1: int, n2: int) -> tuple[int, ...]:
    """How many of the C(n1+n2, n1) orderings give each U = 0 .. n1*n2."""
    # counts[m][u] for m values of the first sample among the values so far:
    # add the next value to the first sample (it beats every second-sample
    # value already placed) or to the second
    counts = [[0] * (n1 * n2 + 1) for _ in range(n1 + 1)]
    counts[0][0] = 1
    for placed in range(1, n1 + n2 + 1):
        for m in range(min(n1, placed), 0, -1):
            seconds = placed - m   # second-sample values below this one
            if seconds > n2:       # more second-sample values than it has
                counts[m] = [0] * (n1 * n2 + 1)
                continue
            row, below = counts[m], counts[m - 1]
            for u in range(n1 * n2, seconds - 1, -1):
                row[u] += below[u - seconds]
        if placed > n2:            # every value so far in the second sample: too many
            counts[0] = [0] * (n1 * n2 + 1)
    return tuple(counts[n1])


def _exact_sf(u: float, n1: int, n2: int) -> float:
    """P(U >= u) under the null hypothesis."""
    counts = _u_counts(n1, n2)
    at_least = sum(counts[math.ceil(u):])
    return at_least / math.comb(n1 + n2, n1)


def _normal_sf(u: float, n1: int, n2: int, ties: list[int]) -> float:
    n = n1 + n2
    tie_term = sum(t ** 3 - t for t in ties)
    s = math.sqrt(n1 * n2 / 12 * ((n + 1) - tie_term / (n * (n - 1))))
    if s == 0:
        return math.nan
    z = (u - n1 * n2 / 2 - 0.5) / s
    return 0.5 * math.erfc(z / math.sqrt(2))


def two_sided_p(a: list[float], b: list[float]) -> float:
    """The p of a against b, both non-empty lists of finite numbers."""
    n1, n2 = len(a), len(b)
    ranks = _average_ranks([*a, *b])
    u1 = sum(ranks[:n1]) - n1 * (n1 + 1) / 2
    u = max(u1, n1 * n2 - u1)
    ties = [t for t in Counter([*a, *b]).values() if t > 1]
    if (n1 > EXACT_MAX_N and n2 > EXACT_MAX_N) or ties:
        p = 2 * _normal_sf(u, n1, n2, ties)
    else:
        p = 2 * _exact_sf(u, n1, n2)
    return min(max(p, 0.0), 1.0)
