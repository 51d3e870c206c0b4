"""The systems a report measured, as the HTML (html.py) and Markdown
(summary_markdown.py) reports open with them: per configuration its runs,
and the hosts of a run whose one-line environment (CPU, memory, OS) is the
same in one row, as a cluster run's test environment says them once: 16
nodes were 16 rows of one line; and the runs of one configuration whose
hosts and lines are the same, as one row: a label's seqio, stream and mpi
runs were 3 rows of one line. Both formats take the rows from here and
only escape and lay them out; the Markdown report had no such table, and a
second copy of the grouping would have drifted from the HTML's."""
from __future__ import annotations

from dataclasses import dataclass

from clusterbench.report.data import Report
from clusterbench.store import run_kinds


@dataclass(frozen=True)
class SystemRow:
    configuration: str     # the label or run id as given ("base"), or the run's id with one configuration
    runs: list[dict]       # the configuration's runs with these hosts and this line, in its order
    hosts: list[str]       # as shown, not escaped: "login1 (launched the run, not a node)" for the launching host
    line: str              # the hosts' environment in one line; "unavailable: why" for a value not read


def one_line(env: dict) -> str:
    """A system in one line: CPU, memory, OS (an imported run: what its file stated)."""
    from clusterbench.environment.report_block import summary_line

    return summary_line(env)


def launching_only(run: dict, host: str) -> str:
    """' (launched the run, not a node)' for the host a cluster run was started from when no
    node: beside its nodes in "System measured" it read as one more node measured."""
    if run.get("kind") != run_kinds.CLUSTER:
        return ""
    from clusterbench.analysis.cluster.analysis import nodes
    from clusterbench.report.cluster_environment import LAUNCHED_ONLY

    return "" if host in nodes(run) else LAUNCHED_ONLY


def run_ids(row: SystemRow) -> str:
    """"1, 2, 3, 7": the runs of one row."""
    return ", ".join(str(run["id"]) for run in row.runs)


def heading(report: Report) -> str:
    return "Systems compared" if report.comparison is not None else "System measured"


def rows(report: Report) -> list[SystemRow]:
    """A row per configuration, hosts and environment line, in the order
    captured: the hosts of a run with one line share a row, and so do the
    runs of a configuration with the same hosts and lines."""
    from clusterbench.report.html import config_runs

    out = []
    for name, runs in config_runs(report).items():
        rows_of: dict[tuple, SystemRow] = {}
        for run in runs:
            alike: dict[str, list[str]] = {}
            for host, env in run["environments"].items():
                alike.setdefault(one_line(env), []).append(host + launching_only(run, host))
            for line, hosts in alike.items():
                row = rows_of.setdefault((tuple(hosts), line), SystemRow(name, [], hosts, line))
                row.runs.append(run)
        out += rows_of.values()
    return out


def runs_heading(found: list[SystemRow]) -> str:
    """'runs' where a row holds several, else 'run'."""
    return "runs" if any(len(r.runs) > 1 for r in found) else "run"


def hosts_heading(found: list[SystemRow]) -> str:
    """'hosts' where a row holds several, else 'host'."""
    return "hosts" if any(len(r.hosts) > 1 for r in found) else "host"
