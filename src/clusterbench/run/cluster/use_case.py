"""The use case of `clusterbench run cluster` (docs/cluster.md): check the
request, run it, show it, write its report. commands/run.py parses."""
from __future__ import annotations

import shlex
import sys

import click

from clusterbench.errors import BadInput
from clusterbench.store.redact import mask_secrets


# Why each option of `run` that a cluster run does not take is refused, and
# what to do instead (the first given is said: one line).
PLACEMENT = ("run cluster places its ranks itself (one node per per-node step, one rank per node for the links, "
             "1 and all cores per node for scaling) and picks the launcher the nodes came with")
SETTING_HERE = ("this host only (its journal, here, restores it), and run cluster measures its nodes, "
                "other hosts")
REFUSALS = {
    "np": f"{PLACEMENT}: drop --np",
    "ppn": f"{PLACEMENT}: drop --ppn",
    "launcher": f"{PLACEMENT}: drop --launcher",
    "gpus_per_rank": f"{PLACEMENT}, and gives each GPU of a node a launch of its own: drop --gpus-per-rank",
    "settings": f"--setting changes {SETTING_HERE}: set it on every node before the run, or drop --setting",
    "settings_ab": (f"--setting-a/--setting-b change {SETTING_HERE}: run the cluster once per setting made on every "
                    "node, then clusterbench compare the two runs"),
    "mpi_algorithm": ("run cluster measures the MPI library's own choice of collective algorithms: drop "
                      "--mpi-algorithm (compare algorithms with clusterbench run mpi --hostfile FILE --np N "
                      "--mpi-algorithm ...)"),
}


def refuse(refused: dict) -> None:
    """BadInput for the first refused option given."""
    for name, value in refused.items():
        if value:
            raise BadInput(REFUSALS[name])


def run_cluster(cat, extra: dict[str, str], *, hostfile, repeat, oversubscribe, label, quiet, db_url,
                report_path_for, refused: dict, step_timeout_s: float | None = None, auto=None,
                conditions=None, straggler, start_timeout_s: float) -> None:
    """report_path_for(store_url, run_id): where the HTML report goes;
    refused: the options of `run` a cluster run does not take (refuse);
    conditions: --memory-limit, applied on every node;
    straggler: --stall-floor and --stall-factor (a StragglerRule)."""
    from clusterbench.run.cluster import execute as cluster

    refuse(refused)
    req = cluster.request(extra, hostfile=hostfile, repeat=repeat, oversubscribe=oversubscribe, label=label,
                          command=mask_secrets(shlex.join(["clusterbench", *sys.argv[1:]])),
                          step_timeout_s=step_timeout_s, auto=auto, conditions=conditions,
                          straggler=straggler, start_timeout_s=start_timeout_s)
    cluster.check_conditions(req)   # a refused memory limit: exit 2 before the store is opened
    # what only a run needs, imported once the request is accepted
    from clusterbench.store.opening import open_store
    from clusterbench.output.console import stdout_console
    from clusterbench.errors import MeasurementFailed
    from clusterbench.run.progress import Progress
    from clusterbench.report.cluster_terminal import print_cluster
    from clusterbench.report.data import load_run
    from clusterbench.run.measure import stops_said

    store = open_store(db_url, writing=True)
    with stops_said(store):
        try:
            run_id = cluster.execute(store, cat, req, Progress(enabled=not quiet))
        except MeasurementFailed as e:
            if not quiet:
                print_cluster(stdout_console(), load_run(store, e.run_id))
            raise
        if not quiet:
            print_cluster(stdout_console(), load_run(store, run_id))
        click.echo(f"stored as run {run_id} in {store.url}")
    from clusterbench.report import write_report

    path = report_path_for(store.url, run_id)
    click.echo(f"report: {write_report(store, [str(run_id)], 'html', path)}")
