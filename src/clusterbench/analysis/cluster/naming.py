"""The names of a cluster run's cluster-wide steps, which show, report and
compare look for. A per-node step is named after its part ("stream") and
the node it ran on is its own column (steps.host, migration 0006): nothing
reads a host back out of a name."""
from __future__ import annotations

LINKS_STEP = "link matrix (mpiGraph shift pattern)"
LINKS_ALONE_STEP = "link matrix (one pair at a time)"   # --links-one-pair
SCALING_PREFIX = "scaling: "
