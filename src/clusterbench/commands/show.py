from __future__ import annotations

import click

from clusterbench.commands.options import db_option, link_speed_option, width_option
from clusterbench.store.opening import open_store


@click.command("show")
@click.argument("runs", nargs=-1, required=True)
@click.option("--threshold", metavar="FRACTION", default=None,
              help="Cluster runs: flag a node this far from the median (10% or 0.1; default: the run's own, else 10 %).")
@click.option("--link-threshold", metavar="FRACTION", default=None,
              help="Cluster runs: flag a link this far below its reference, its class's best link or --link-speed (default: the run's own, else 25 %).")
@link_speed_option
@db_option
@width_option
def command(runs, threshold, link_threshold, link_speed, db_url):
    """Show runs (ids or labels): per step median, min, max, n, unit, cache mode, the limit that binds
    (docs/limits.md) and warnings; a cluster run as docs/cluster.md shows it."""
    from clusterbench.output.console import stdout_console

    from clusterbench.analysis.cluster.analysis import is_cluster_run, parse_fraction
    from clusterbench.report.data import load_run
    from clusterbench.report.terminal import print_run

    # read before any run: `--threshold abc` was refused only where a cluster run came to be shown
    threshold = threshold and parse_fraction(threshold, "threshold")
    link_threshold = link_threshold and parse_fraction(link_threshold, "link-threshold")
    store = open_store(db_url)
    console = stdout_console()
    # each run once, as report takes them ("show 5 5", or a label and an id of one run, showed it twice);
    # every ref resolved first, so a bad one is refused before any run is printed
    for run_id in dict.fromkeys(i for ref in runs for i in store.resolve(ref)):
        run = load_run(store, run_id, link_speed)
        if is_cluster_run(run):
            from clusterbench.report.cluster_terminal import print_cluster

            print_cluster(console, run, threshold, link_threshold, link_speed)
        else:
            print_run(console, run)
