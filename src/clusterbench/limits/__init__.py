"""Physical limits: what bounds a figure, and the warnings for figures that
can only have come from a cache or a wrong snapshot. One module per family:

    thresholds.py  every threshold, with the reason for its value
    facts.py       what the rules read from a host's environment snapshot
    ceilings.py    the I/O and network ceilings: the "limit" column and the stored warnings
    netfs_limits.py  the label of a figure on a network mount (link, server disk, client cache)
    gpu_limits.py  PCIe links and GPU memory
    clock.py       a CPU clock against its nominal one
    checks.py      the warnings stored with samples, derived from the above

docs/limits.md gives the method.
"""
from __future__ import annotations

from clusterbench.limits.checks import cross_sample_warnings, sample_warnings

__all__ = ["cross_sample_warnings", "sample_warnings"]
