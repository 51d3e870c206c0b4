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

    table = compare.build(open_store(db_url), list(refs), exclude_outliers)
    print_comparison(stdout_console(), table, env_lines)
