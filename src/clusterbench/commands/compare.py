from __future__ import annotations

import click

from clusterbench.commands.options import Digits, Finite, db_option, link_speed_option, width_option
from clusterbench.extensions.registry import Registry
from clusterbench.store.opening import open_store

# the machine-readable renderings of a comparison; "table" is the terminal's (report/compare_terminal.py)
RENDERERS = Registry("format", [
    ("json", "clusterbench.report.compare_data:render_json", "schemas/comparison.schema.json"),
    ("csv", "clusterbench.report.compare_data:render_csv", "one row per measurement and configuration"),
    ("md", "clusterbench.report.compare_markdown:render", "Markdown tables, as the Markdown report's comparison"),
], extra_choices=("table",))
FORMATS = tuple(RENDERERS.choices())


@click.command("compare")
@click.argument("refs", nargs=-1, required=True)
@click.option("--env-lines", type=Digits(0, unit="lines"), default=40, show_default=True,
              help="At most this many environment differences per host pair (table format).")
@click.option("--exclude-outliers", is_flag=True,
              help="Leave modified-Z outliers out of medians, CIs and tests (the table says so).")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="table", show_default=True,
              help="table for a terminal; json (schemas/comparison.schema.json), csv or md for other tools.")
@click.option("--fail-if", "fail_if", type=click.Choice(("slower", "faster", "different")), default=None,
              help="Exit with status 3 when a configuration is significantly slower (faster, different) than "
                   "the baseline in some measurement: a regression gate for CI pipelines.")
@click.option("--threshold", "threshold_pct", type=Finite(0, unit="%"), default=0.0, show_default=True,
              metavar="PCT", help="With --fail-if: only a change of at least PCT percent counts.")
@link_speed_option
@db_option
@width_option
def command(refs, env_lines, exclude_outliers, fmt, fail_if, threshold_pct, link_speed, db_url):
    """Compare configurations: REFS are labels (all their runs pooled) or run
    ids, the first being the baseline. Prints the environment differences,
    then every matching measurement with medians, CIs, ratio, % change,
    p-value, a verdict and the limit that binds; flagged figures are marked
    and their warnings listed below the table.

    \b
    Examples:
      clusterbench compare nfs-tcp nfs-rdma
      clusterbench compare main pr-42 --format json > cmp.json
      clusterbench compare main pr-42 --fail-if slower --threshold 5
    """
    import sys

    from clusterbench.analysis import comparison as compare
    from clusterbench.analysis import compare_gate
    from clusterbench.output.console import stdout_console
    from clusterbench.errors import BadInput

    if threshold_pct and not fail_if:
        raise BadInput("--threshold applies with --fail-if")
    store = open_store(db_url)
    if len(refs) == 2 and fmt == "table" and not fail_if and _both_cluster_runs(store, refs):
        from clusterbench.report.cluster_compare_terminal import print_cluster_comparison
        from clusterbench.report.data import load_run

        a, b = (load_run(store, store.resolve(r)[0]) for r in refs)
        print_cluster_comparison(stdout_console(), a, b)
        return
    table = compare.build(store, list(refs), exclude_outliers, link_speed)
    if fmt == "table":
        from clusterbench.report.compare_terminal import print_comparison

        print_comparison(stdout_console(), table, env_lines)
    else:
        sys.stdout.write(RENDERERS.load(fmt)(table))
    for line in table.imported:
        # its environment was not recorded: the differences above stop at what its file stated;
        # beside a machine-readable format the note goes to stderr
        click.echo(f"note: {line}; its environment is what the file states, the rest not recorded", err=fmt != "table")
    for line in table.pooled:
        click.echo(f"note: {line}", err=fmt != "table")
    if fail_if:
        found = compare_gate.failing(table, fail_if, threshold_pct)
        for line in found:
            click.echo(f"--fail-if {fail_if}: {line}", err=True)
        if found:
            sys.exit(compare_gate.GATE_EXIT)


def _both_cluster_runs(store, refs) -> bool:
    """Two cluster runs (clusterbench run cluster) compare node by node and link by link."""
    from clusterbench.store import run_kinds

    return all(store.run(store.resolve(r)[0]).kind == run_kinds.CLUSTER for r in refs)
