"""The names of a cluster run's cluster-wide steps, which show, report and
compare look for, and the reader's name of a per-node figure. A per-node
step is named after its part ("stream") and the node it ran on is its own
column (steps.host, migration 0006): nothing reads a host back out of a name."""
from __future__ import annotations

import functools
import tomllib
from importlib import resources

LINKS_STEP = "link matrix (mpiGraph shift pattern)"
LINKS_ALONE_STEP = "link matrix (one pair at a time)"   # --links-one-pair
SCALING_PREFIX = "scaling: "


def suite_document() -> dict:
    """run cluster's suite (run/cluster/suite.toml): its parts, their kernels, parameters and titles."""
    return tomllib.loads(resources.files("clusterbench.run.cluster").joinpath("suite.toml").read_text())


@functools.cache
def part_titles() -> dict[str, str]:
    """part -> its title in the suite ("himeno" -> "compute (Himeno)")."""
    return {e["part"]: e["title"] for e in suite_document()["per-node"] if "title" in e}


def figure_name(part: str, kernel: str, key, sweep: str = "") -> str:
    """A per-node figure as the reports name it: the part's title in the
    suite, then the phase (with its size) and the condition, as a suite's
    step names its figures in a single-node report ("disk (E1): write",
    mode fsync): "compute (Himeno), jacobi (time)"; a comma, as the name
    follows a node's "h03: " in the findings. A step of no part the
    suite titles (a part since removed) keeps its kernel's name:
    "himeno jacobi (time)". `sweep`: the point of a part swept by a list
    (--stream.array-size=1m,64m), in words: "memory bandwidth (STREAM),
    array size 1 MiB, copy"."""
    label = key.label
    cond = f" ({key.condition})" if key.condition and key.condition != "n/a" else ""
    title = part_titles().get(part)
    point = f", {sweep}" if sweep else ""
    if title:
        return f"{title}{point}, {label}{cond}"
    return (f"{kernel}{point} {label}{cond}" if label != kernel else f"{kernel}{point}{cond}")


def judged_node_by_node(step) -> bool:
    """A per-node step (its node in steps.host) or the link matrix: what two
    cluster runs' before/after compares node by node and link by link. The
    pooled comparison of configurations leaves them to it: pooled, the 4
    nodes' Himeno was one row of n = 12, h03's fault hidden among its peers."""
    return step.host is not None or step.name in (LINKS_STEP, LINKS_ALONE_STEP)


@functools.cache
def _gpu_parts() -> dict[str, dict]:
    """kernel -> its per-GPU part in the suite (its title)."""
    return {e["kernel"]: e for e in suite_document()["per-gpu"]}


def gpu_figure_name(kernel: str, phase: str, detail: str = "") -> str:
    """A per-GPU figure as the reports name it: its part's title and the
    phase in the kernel's words (the caller's: catalogue.step_phase_words),
    then what sets it apart (detail): "GPU link, host to device (pinned,
    copy engine)", "GPU memory, triad", "GPU to GPU, one way 0>1, peer on".
    A kernel the suite has no part for keeps its name: "gpucopy host to
    device (pinned, copy engine)"."""
    part = _gpu_parts().get(kernel)
    if not part or "title" not in part:
        return f"{kernel} {phase}{detail}"
    return f"{part['title']}, {phase}{detail}"


def steps_text(names: list[str]) -> str:
    """Steps of a cluster run in a few words: "link matrix (mpiGraph shift
    pattern) and 8 scaling steps". The scaling steps are counted, not named:
    a run of 16 nodes has 10 of them, each skipped for the same reason, and
    a line naming each hid the reason at its end."""
    scaling = [n for n in names if n.startswith(SCALING_PREFIX)]
    named = list(dict.fromkeys(n for n in names if not n.startswith(SCALING_PREFIX)))
    if scaling:
        named.append("the scaling step" if len(scaling) == 1 else f"{len(scaling)} scaling steps")
    return named[0] if len(named) == 1 else f"{', '.join(named[:-1])} and {named[-1]}"
