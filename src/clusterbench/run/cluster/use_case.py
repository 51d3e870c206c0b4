"""The use case of `clusterbench run cluster` (docs/cluster.md): check the
request, run it, show it, write its report. commands/run.py parses."""
from __future__ import annotations

import shlex
import sys

import click

from clusterbench.errors import BadInput
from clusterbench.store.redact import mask_secrets


def run_cluster(cat, extra: dict[str, str], *, hostfile, repeat, oversubscribe, label, quiet, db_url,
                report_path_for, refused: dict, step_timeout_s: float | None = None, auto=None) -> None:
    """report_path_for(store_url, run_id): where the HTML report goes."""
    from clusterbench.run.cluster import execute as cluster
    from clusterbench.store.opening import open_store
    from clusterbench.output.console import stdout_console
    from clusterbench.errors import MeasurementFailed
    from clusterbench.run.progress import Progress
    from clusterbench.report.cluster_terminal import print_cluster
    from clusterbench.report.data import load_run

    given = [k.replace("_", "-") for k, v in refused.items() if v]
    if given:
        raise BadInput(f"run cluster chooses ranks, placement and launcher itself: drop --{', --'.join(given)}")
    req = cluster.request(extra, hostfile=hostfile, repeat=repeat, oversubscribe=oversubscribe, label=label,
                          command=mask_secrets(shlex.join(["clusterbench", *sys.argv[1:]])),
                          step_timeout_s=step_timeout_s, auto=auto)
    store = open_store(db_url, writing=True)
    try:
        run_id = cluster.execute(store, cat, req, Progress(enabled=not quiet))
    except MeasurementFailed as e:
        if not quiet:
            print_cluster(stdout_console(), load_run(store, e.run_id))
        raise
    except KeyboardInterrupt:
        click.echo("interrupted: the run is stored as interrupted, with what it measured", err=True)
        sys.exit(130)
    if not quiet:
        print_cluster(stdout_console(), load_run(store, run_id))
    click.echo(f"stored as run {run_id} in {store.url}")
    from clusterbench.report import write_report

    path = report_path_for(store.url, run_id)
    click.echo(f"report: {write_report(store, [str(run_id)], 'html', path)}")
