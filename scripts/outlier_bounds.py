"""Derive the modified-Z outlier bound for each sample size, and write it as
src/clusterbench/analysis/outlier_bound_table.py (docs/statistics.md, "Outliers").

The bound for n is the 99th percentile of the largest |0.6745 (x - median) / MAD|
of n independent normal values: on noise that is all noise, one step in 100
then shows a flag, whatever n. A fixed 3.5 flags far more at small n, where
the MAD of a few values is itself noisy (28 % of steps at n = 3, 21 % at n = 5).

    .venv/bin/python scripts/outlier_bounds.py     # about 4 minutes of CPU, 1 GiB of memory

Sizes 3..100 are simulated each (odd and even n differ: an odd n's median is
one of the values, whose deviation of 0 pulls the MAD down); a grid above,
interpolated in log n by the reader. The seed is fixed: the table is the
same on every machine with the same numpy.
"""
from __future__ import annotations

import pathlib

import numpy as np

FALSE_ALARM = 0.01                 # share of all-noise steps with a flag
STEPS = 1_000_000                  # simulated steps per size up to 100
GRID = (120, 150, 200, 300, 500, 700, 1000)
GRID_STEPS = 200_000
SEED = 20261206
TABLE = pathlib.Path(__file__).resolve().parent.parent / "src/clusterbench/analysis/outlier_bound_table.py"


def largest_z(rng: np.random.Generator, n: int, steps: int) -> np.ndarray:
    """The largest |modified Z| of each of `steps` samples of n normal values."""
    out, chunk = [], max(1000, 8_000_000 // n)
    for start in range(0, steps, chunk):
        x = rng.standard_normal((min(chunk, steps - start), n))
        dev = np.abs(x - np.median(x, axis=1, keepdims=True))
        out.append(0.6745 * dev.max(axis=1) / np.median(dev, axis=1))
    return np.concatenate(out)


def bound(rng: np.random.Generator, n: int, steps: int) -> float:
    """The (1 - FALSE_ALARM) quantile, rounded up to 0.01 so the rate stays at or below it."""
    return float(np.ceil(np.quantile(largest_z(rng, n, steps), 1 - FALSE_ALARM) * 100) / 100)


def main() -> None:
    rng = np.random.default_rng(SEED)
    bounds = {n: bound(rng, n, STEPS) for n in range(3, 101)}
    bounds |= {n: bound(rng, n, GRID_STEPS) for n in GRID}
    rows = "\n".join(f"    {n}: {b}," for n, b in bounds.items())
    TABLE.write_text(
        '"""Modified-Z outlier bound per sample size, written by scripts/outlier_bounds.py\n'
        f"(seed {SEED}, {STEPS:,} simulated steps per size up to 100, {GRID_STEPS:,} above):\n"
        f"the largest |modified Z| of n normal values exceeds BOUNDS[n] in {FALSE_ALARM:.0%} of samples.\n"
        'Do not edit by hand; run the script."""\n'
        f"FALSE_ALARM = {FALSE_ALARM}\n"
        f"BOUNDS = {{\n{rows}\n}}\n")
    print(f"wrote {TABLE} ({len(bounds)} sizes)")


if __name__ == "__main__":
    main()
