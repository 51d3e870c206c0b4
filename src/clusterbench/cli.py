"""The clusterbench command line. This module only parses and dispatches:
each subcommand lives in clusterbench/commands/ and is imported when used,
so `clusterbench --help` stays instant."""
from __future__ import annotations

import gc
import sys

import click

from clusterbench.extensions.registry import Registry

COMMANDS = Registry("command", [
    ("kernels", "clusterbench.commands.kernels", "List the kernels cbk offers and their parameters."),
    ("run", "clusterbench.commands.run", "Run a kernel or a suite and store the results."),
    ("ior", "clusterbench.commands.ior", "Run an IOR command line (IOR's options) with the pario kernel."),
    ("mdtest", "clusterbench.commands.mdtest", "Run an mdtest command line (mdtest's options) with the metadata kernel."),
    ("import", "clusterbench.commands.import_files", "Import IOR, mdtest, fio, iperf3, iperf 2, netperf, dd, OSU, IMB, Himeno and STREAM output files as runs."),
    ("list", "clusterbench.commands.list_runs", "List stored runs."),
    ("show", "clusterbench.commands.show", "Show a run's results: a table per step."),
    ("compare", "clusterbench.commands.compare", "Compare configurations (labels or runs) with statistics."),
    ("report", "clusterbench.commands.report", "Write a report (HTML with plots, PDF, Markdown, CSV, JSON)."),
    ("export", "clusterbench.commands.export", "Export runs as JSON, CSV, Markdown or HTML."),
    ("history", "clusterbench.commands.history", "Write the run history as an HTML page (per month/user/host...)."),
    ("trend", "clusterbench.commands.trend", "A figure over time, with its change points."),
    ("prune", "clusterbench.commands.prune", "Delete runs started before a date, or the runs named."),
    ("env", "clusterbench.commands.environment", "Describe this machine, or diff two runs' environments."),
    ("clean", "clusterbench.commands.clean", "Undo what killed runs left: settings, memory cgroups, benchmark files in DIR."),
    ("testbed", "clusterbench.commands.testbed", "A cluster of test hosts on this machine (up, exec, down)."),
])


def one_line(e: click.UsageError) -> click.UsageError:
    """The same error without click's usage block: bad input is one line
    (and exit status 2) everywhere, with where to look for help. A bare
    `clusterbench` still prints the help it asked for."""
    if isinstance(e, click.exceptions.NoArgsIsHelpError):
        return e
    where = f" (see: {e.ctx.command_path} --help)" if e.ctx is not None else ""
    from clusterbench.output.render_text import plain as plain_text

    plain = click.UsageError(plain_text(e.format_message().rstrip(".")) + where)
    plain.exit_code = e.exit_code
    return plain


def stopped_outside_a_command(stop: KeyboardInterrupt) -> click.exceptions.Exit:
    """A stop before any command is under way (while clusterbench sets its
    streams up, or reads its own options: --version runs cbk and mpiexec):
    click's answer was "Aborted!" and exit 1, or a traceback."""
    from clusterbench.launch.stop_signals import leaving, signal_name

    click.echo(f"clusterbench: interrupted by {signal_name(stop)}", err=True)
    return click.exceptions.Exit(leaving(stop))


def stopped(ctx: click.Context, stop: KeyboardInterrupt) -> click.exceptions.Exit:
    """A command a stop signal ended: one line, exit 128 + the signal's number."""
    from clusterbench.launch.stop_signals import leaving, signal_name

    command = " ".join(filter(None, (ctx.command_path, ctx.invoked_subcommand)))
    click.echo(f"{command}: interrupted by {signal_name(stop)}", err=True)
    return click.exceptions.Exit(leaving(stop))


class LazyGroup(click.Group):
    def list_commands(self, ctx):
        return COMMANDS.names()

    def get_command(self, ctx, name):
        if name not in COMMANDS:
            return None
        return COMMANDS.load(name).command

    def resolve_command(self, ctx, args):
        name = args[0] if args else ""
        if name not in COMMANDS and not name.startswith("-") and not ctx.resilient_parsing:
            raise click.UsageError(str(COMMANDS.unknown(name)))
        return super().resolve_command(ctx, args)

    # every parse error, of this group or of a subcommand, passes through one of these two
    def make_context(self, *args, **kwargs):
        try:
            return super().make_context(*args, **kwargs)
        except click.UsageError as e:
            raise one_line(e) from None
        except KeyboardInterrupt as e:
            raise stopped_outside_a_command(e) from None

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except click.UsageError as e:
            raise one_line(e) from None
        except KeyboardInterrupt as e:
            # click's own answer is "Aborted!" and exit 1, the status of a failure
            raise stopped(ctx, e) from None

    def format_commands(self, ctx, formatter):
        with formatter.section("Commands"):
            formatter.write_dl([(name, help_) for name, help_ in COMMANDS.items()])


def _version(ctx, _param, value):
    if not value or ctx.resilient_parsing:
        return
    from clusterbench import __version__

    try:
        from clusterbench import catalogue

        cat = catalogue.load()
    except click.ClickException as e:
        click.echo(f"clusterbench {__version__}, cbk unavailable: {e.message}")
        ctx.exit()
    from clusterbench.environment import mpi_consistency
    from clusterbench.launch.mpiexec import find_mpiexec

    click.echo(f"clusterbench {__version__}, cbk {cat.version} ({cat.cbk})")
    built_with = (cat.mpi_built_with or "unknown (cbk predates mpi_built_with)") if cat.mpi else None
    lines, warnings = mpi_consistency.report(built_with, cat.mpi_compiler, cat.mpi_library,
                                             find_mpiexec(cat.cbk) if cat.mpi else None)
    for line in lines:
        click.echo(line)
    if cat.features is not None:   # a build without OpenMP runs Himeno and stream on one thread
        on = [name for name, built in cat.features.items() if built]
        off = [name for name, built in cat.features.items() if not built]
        click.echo(f"Built in: {', '.join(on) or 'none'}" + (f"; left out: {', '.join(off)}" if off else ""))
    gpu_left_out = set(cat.left_out_of_family(catalogue.GPU).values())
    if gpu_left_out:   # a CPU-only build and a CUDA one printed the same
        click.echo(f"GPU kernels: not built in ({'; '.join(sorted(gpu_left_out))})")
    elif (cat.features or {}).get("gpu_test_runtime"):   # a test build must not pass for a GPU one
        click.echo("GPU kernels: built in on the test runtime: host memory stands in for a GPU, nothing is measured "
                   "on one (docs/gpu.md)")
    elif any(k.family == catalogue.GPU for k in cat.kernels.values()):
        click.echo("GPU kernels: built in")
    for w in warnings:
        click.echo(f"warning: {w}", err=True)
    ctx.exit()


def _store_for_every_command(ctx, _param, value):
    """`clusterbench --db URL list` as `clusterbench list --db URL`: the
    store given before the subcommand is the default of its own --db."""
    if value is not None:
        ctx.default_map = {name: {"db_url": value} for name in COMMANDS}
    return value


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--version", is_flag=True, callback=_version, expose_value=False, is_eager=True,
              help="Show versions of clusterbench and cbk, and whether MPI is built in.")
@click.option("--db", metavar="URL", expose_value=False, callback=_store_for_every_command,
              help="Results store for the command that follows (as its own --db, which wins when both are given).")
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
    try:
        from clusterbench.output.narrow_encoding import spell_what_the_encoding_lacks
        from clusterbench.output.reader_gone import keep_writing_when_the_reader_leaves

        spell_what_the_encoding_lacks()   # before the wrapping: it reconfigures Python's own streams
        keep_writing_when_the_reader_leaves()
        from clusterbench.launch.stop_signals import dropped_from_now, stop_as_ctrl_c

        stop_as_ctrl_c()
    except KeyboardInterrupt as stop:
        sys.exit(stopped_outside_a_command(stop).exit_code)
    try:
        try:
            cli(prog_name="clusterbench")
        except SystemExit as done:
            from clusterbench.output.reader_gone import exit_status

            sys.exit(exit_status(done.code))
    finally:
        dropped_from_now()
        # What is left at exit is only freed: the interpreter's last collections walked SQLAlchemy's
        # object graph for 40 ms of every command (#24). What must be closed is closed explicitly
        # (the store's connections at exit, store/database.py), not by those collections.
        gc.freeze()
