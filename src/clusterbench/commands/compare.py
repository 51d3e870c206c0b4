from __future__ import annotations

import click

from clusterbench.commands.options import db_option, open_store, width_option


@click.command("compare")
@click.argument("refs", nargs=-1, required=True)
@click.option("--env-lines", type=click.IntRange(0), default=40, show_default=True,
              help="At most this many environment differences per host pair.")
@click.option("--exclude-outliers", is_flag=True,
              help="Leave modified-Z outliers out of medians, CIs and tests (the table says so).")
@db_option
@width_option
def command(refs, env_lines, exclude_outliers, db_url):
    """Compare configurations: REFS are labels (all their runs pooled) or run
    ids, the first being the baseline. Prints the environment differences,
    then every matching measurement with medians, CIs, ratio, % change,
    p-value and a verdict."""
    from clusterbench.console import stdout_console

    from clusterbench import comparison as compare
    from clusterbench.report.compare_terminal import print_comparison

    store = open_store(db_url)
    if len(refs) == 2 and _both_cluster_runs(store, refs):
        from clusterbench.report.cluster_compare_terminal import print_cluster_comparison
        from clusterbench.report.data import load_run

        a, b = (load_run(store, store.resolve(r)[0]) for r in refs)
        print_cluster_comparison(stdout_console(), a, b)
        return
    table = compare.build(store, list(refs), exclude_outliers)
    print_comparison(stdout_console(), table, env_lines)


def _both_cluster_runs(store, refs) -> bool:
    """Two cluster runs (clusterbench run cluster) compare node by node and link by link."""
    return all(store.run(store.resolve(r)[0]).suite == "cluster" for r in refs)
