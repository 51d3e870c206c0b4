"""How a cluster run's steps are named in the store: the names carry the
node a per-node step ran on, so show, report and compare find it again."""
from __future__ import annotations

import re

LINKS_STEP = "link matrix (mpiGraph shift pattern)"
LINKS_ALONE_STEP = "link matrix (one pair at a time)"   # --links-one-pair
SCALING_PREFIX = "scaling: "
_NODE = re.compile(r"^node (?P<host>[^:\s]+): ")


def node_step(host: str, figure: str) -> str:
    return f"node {host}: {figure}"


def node_step_host(name: str) -> str | None:
    m = _NODE.match(name)
    return m.group("host") if m else None
