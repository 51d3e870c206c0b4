"""The one folder clusterbench keeps caches in: $XDG_CACHE_HOME/clusterbench,
else ~/.cache/clusterbench (the version commands' output per boot, the
store template). Stdlib only: the environment snapshot, which runs on
compute nodes, reads it too."""
from __future__ import annotations

import os
from pathlib import Path


def cache_folder() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "clusterbench"
