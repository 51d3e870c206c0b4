"""A figure with the units readers of other tools expect beside it: MB/s
beside MiB/s (fio, IOR and vendors' sheets use decimal units) and Gbit/s
for a network figure."""
from __future__ import annotations

from clusterbench.output.figure_digits import number

TO_BYTES = {"MiB/s": 2**20, "GiB/s": 2**30, "MB/s": 1e6, "GB/s": 1e9}


def beside(value: float | None, unit: str | None, network: bool = False) -> str:
    """'(1,411 MB/s)' or '(1,411 MB/s, 11.3 Gbit/s)' for a MiB/s figure; '' otherwise."""
    if value is None or unit not in ("MiB/s", "GiB/s"):
        return ""
    per_s = value * TO_BYTES[unit]
    parts = [f"{number(per_s / 1e6)} MB/s"]
    if network:
        parts.append(f"{per_s * 8 / 1e9:.3g} Gbit/s")
    return f"({', '.join(parts)})"
