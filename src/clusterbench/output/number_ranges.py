"""Whole numbers as the runs they form, "2, 4-6": ranks that said nothing,
runs an import stored; one rule for every list a person reads."""
from __future__ import annotations


def ranges_text(numbers: list[int]) -> str:
    """[2, 4, 5, 6] -> "2, 4-6" (in the order given: a run of consecutive numbers is one item)."""
    runs: list[list[int]] = []
    for n in numbers:
        if runs and n == runs[-1][1] + 1:
            runs[-1][1] = n
        else:
            runs.append([n, n])
    return ", ".join(f"{a}" if a == b else f"{a}-{b}" for a, b in runs)
