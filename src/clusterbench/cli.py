"""The clusterbench command line. This module only parses and dispatches:
each subcommand lives in clusterbench/commands/ and is imported when used,
so `clusterbench --help` stays instant."""
from __future__ import annotations

import importlib

import click

COMMANDS = {
    "kernels": ("clusterbench.commands.kernels", "List the kernels cbk offers and their parameters."),
    "run": ("clusterbench.commands.run", "Run a kernel or a suite and store the results."),
    "ior": ("clusterbench.commands.ior", "Run an IOR command line (IOR's options) with the pario kernel."),
    "list": ("clusterbench.commands.list_runs", "List stored runs."),
    "show": ("clusterbench.commands.show", "Show a run's results: a table per step."),
    "compare": ("clusterbench.commands.compare", "Compare configurations (labels or runs) with statistics."),
    "report": ("clusterbench.commands.report", "Write a report (HTML with plots, Markdown, CSV, JSON)."),
    "export": ("clusterbench.commands.export", "Export runs as JSON, CSV or Markdown."),
    "env": ("clusterbench.commands.env", "Describe this machine, or diff two runs' environments."),
    "clean": ("clusterbench.commands.clean", "Undo what killed runs left changed (settings, memory cgroups)."),
}


class LazyGroup(click.Group):
    def list_commands(self, ctx):
        return list(COMMANDS)

    def get_command(self, ctx, name):
        if name not in COMMANDS:
            return None
        return importlib.import_module(COMMANDS[name][0]).command

    def format_commands(self, ctx, formatter):
        with formatter.section("Commands"):
            formatter.write_dl([(name, help_) for name, (_, help_) in COMMANDS.items()])


def _version(ctx, _param, value):
    if not value or ctx.resilient_parsing:
        return
    from clusterbench import __version__

    try:
        from clusterbench import catalogue

        cat = catalogue.load()
        mpi = f"MPI built in: {cat.mpi_library}" if cat.mpi else "MPI not built in"
        click.echo(f"clusterbench {__version__}, cbk {cat.version} ({cat.cbk}), {mpi}")
    except click.ClickException as e:
        click.echo(f"clusterbench {__version__}, cbk unavailable: {e.message}")
    ctx.exit()


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--version", is_flag=True, callback=_version, expose_value=False, is_eager=True,
              help="Show versions of clusterbench and cbk, and whether MPI is built in.")
def cli():
    """clusterbench: measure disks, file systems, networks, MPI and compute
    of a cluster, keep every result with its machine's description, and
    compare configurations.

    Start with: clusterbench run quick
    """
    # a run killed with -9 left settings changed or a cgroup behind: undo that first
    from clusterbench.conditions.journal import replay_stale

    replay_stale()


def main():
    cli(prog_name="clusterbench")
