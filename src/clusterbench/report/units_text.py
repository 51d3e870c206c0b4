"""A figure with the units readers of other tools expect beside it: MB/s
beside MiB/s, GB/s beside GiB/s (fio, IOR and vendors' sheets use decimal
units; the decimal unit of the binary one's size, so a GPU's memory in GiB/s
is not 3,914,000 MB/s beside it) and Gbit/s for a network figure."""
from __future__ import annotations

from clusterbench.output.figure_digits import at

TO_BYTES = {"MiB/s": 2**20, "GiB/s": 2**30, "MB/s": 1e6, "GB/s": 1e9}
DECIMAL_OF = {"MiB/s": "MB/s", "GiB/s": "GB/s"}


def beside(value: float | None, unit: str | None, network: bool = False, decimals: int | None = None) -> str:
    """'(1,411 MB/s)' or '(1,411 MB/s, 11.3 Gbit/s)' for a MiB/s figure, '(3,914 GB/s)' for a GiB/s one; '' otherwise.
    decimals: the places the figure itself is printed with (figure_digits.places), which its
    decimal twin keeps (the two differ by 5 to 7 %): "0.39 MiB/s (0.4069 MB/s)" claimed in
    MB/s two digits its interval had shown meaningless in MiB/s."""
    if value is None or unit not in DECIMAL_OF:
        return ""
    per_s = value * TO_BYTES[unit]
    decimal = DECIMAL_OF[unit]
    parts = [f"{at(per_s / TO_BYTES[decimal], decimals)} {decimal}"]
    if network:
        parts.append(f"{per_s * 8 / 1e9:.3g} Gbit/s")
    return f"({', '.join(parts)})"
