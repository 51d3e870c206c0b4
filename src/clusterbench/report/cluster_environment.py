"""The test environment of a run over several hosts (a cluster run, or a
`run mpi` / `run tcp` over --hosts or an allocation), as the Markdown
(markdown.py, cluster_markdown.py) and HTML (html.py, cluster_html.py)
reports both give it: the lines of the environment block
(environment.summary_block) that are the same on every host once, then
only the lines that differ, in the shape `env --diff` and the cluster
section's keys have (analysis.cluster env_differences: line | text on most
hosts | hosts that differ). One block per host repeated a near-identical
block five times for 4 nodes and the launching host, and a reader had to
compare them line by line to find the one that differs."""
from __future__ import annotations

from dataclasses import dataclass

from clusterbench.analysis.cluster.analysis import EnvDifference, env_differences, is_cluster_run, nodes


# beside the host a cluster run was launched from, where it is no node (systems_measured.launching_only too)
LAUNCHED_ONLY = " (launched the run, not a node)"


@dataclass
class ClusterEnvironment:
    hosts: list[str]                   # every host with a snapshot, the launching host too
    launching: list[str]               # those of them that launched a cluster run and are no node
    same: list[tuple[str, str]]        # (line, text) the same on every host
    differ: list[EnvDifference]        # key = the line's name, most = its text on most hosts


def _lines(host: str, env: dict) -> dict[str, str]:
    from clusterbench.environment import summary_block

    # a Host line that is only the host's name differs on every host and says nothing the hosts' list does not
    return {k: v for k, v in summary_block(env) if not (k == "Host" and v == host)}


def cluster_environment(run: dict) -> ClusterEnvironment:
    envs = run["environments"]
    lines = {h: _lines(h, e) for h, e in envs.items()}
    differ = env_differences(lines) if len(lines) > 1 else []
    differing = {d.key for d in differ}
    first = next(iter(lines.values()), {})
    # a cluster run knows its nodes (its per-node steps' hosts); a run over --hosts launched from one of
    # them or from a login node stores a snapshot of each alike, and none is said to be no node
    measured = nodes(run) if is_cluster_run(run) else list(envs)
    return ClusterEnvironment(list(envs), [h for h in envs if h not in measured],
                              [(k, v) for k, v in first.items() if k not in differing], differ)


def hosts_text(c: ClusterEnvironment) -> str:
    """'h01, h02, h03, h04 and login1 (launched the run, not a node)', as "System measured" marks it."""
    names = [h + LAUNCHED_ONLY if h in c.launching else h for h in c.hosts]
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"
