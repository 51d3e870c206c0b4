"""What the bench scripts share: finding the cbk to measure, sizes in
cbk's syntax (binary suffixes k, m, g, t), the spread they print, and a
sync before each run."""
from __future__ import annotations

import os
import shutil
import statistics
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def cbk_path(given: str | None) -> str:
    """--cbk, else $CLUSTERBENCH_CBK, else the one beside this Python, the
    CMake build tree's, or the first on PATH."""
    for c in (given, os.environ.get("CLUSTERBENCH_CBK"), str(Path(sys.executable).parent / "cbk"),
              str(REPO / "build" / "cbk"), shutil.which("cbk")):
        if c and os.access(c, os.X_OK):
            return c
    sys.exit("cbk not found: pass --cbk or run scripts/setup.sh")


def size_bytes(text: str) -> int:
    """cbk's size syntax, read by clusterbench's one parser (clusterbench.results.sizes)."""
    try:
        from clusterbench.results.sizes import parse_size
    except ImportError:   # a bench script run with a Python that lacks the package: the source tree's
        sys.path.insert(0, str(REPO / "src"))
        from clusterbench.results.sizes import parse_size
    n = parse_size(text)
    if n is None:
        sys.exit(f"bad size {text}: give bytes with an optional k, m, g or t (e.g. 4k, 1.5g)")
    return n


def spread(xs: list[float]) -> str:
    """(max - min) / median of one tool's figures over the pairs, in %: a ratio
    nearer 1 than the two tools' spreads is a tie."""
    return f"{(max(xs) - min(xs)) / statistics.median(xs) * 100:.0f} %"


def settle() -> None:
    """Writes what is dirty and commits the file systems' journals (a deleted
    file's blocks are freed at the commit), so a run does not pay for what
    the run before it left to write, whichever tool that was."""
    os.sync()
