"""The names of a cluster run's cluster-wide steps, which show, report and
compare look for. A per-node step is named after its part ("stream") and
the node it ran on is its own column (steps.host, migration 0006): nothing
reads a host back out of a name."""
from __future__ import annotations

LINKS_STEP = "link matrix (mpiGraph shift pattern)"
LINKS_ALONE_STEP = "link matrix (one pair at a time)"   # --links-one-pair
SCALING_PREFIX = "scaling: "


def judged_node_by_node(step) -> bool:
    """A per-node step (its node in steps.host) or the link matrix: what two
    cluster runs' before/after compares node by node and link by link. The
    pooled comparison of configurations leaves them to it: pooled, the 4
    nodes' Himeno was one row of n = 12, h03's fault hidden among its peers."""
    return step.host is not None or step.name in (LINKS_STEP, LINKS_ALONE_STEP)
