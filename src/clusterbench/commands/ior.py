"""`clusterbench ior IOR-ARGS...`: run an IOR command line as pario.

The line is translated by clusterbench.ior_args (a leading `mpiexec -n N`
gives the ranks), then run and stored through the same path as
`clusterbench run pario ...`; after our table it prints IOR's familiar
summary (report/ior_summary.py).
"""
from __future__ import annotations

import shlex
import sys

import click

from clusterbench.commands.options import db_option, memory_limit_option, open_store, run_conditions, setting_option
from clusterbench.errors import BadInput
from clusterbench.launch import help_text as launcher_help


@click.command("ior", context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False})
@click.option("--np", "ranks", type=click.IntRange(1), default=None,
              help="MPI ranks (or give them with a leading `mpiexec -n N`).")
@click.option("--ppn", type=click.IntRange(1), default=None, help="Ranks per node.")
@click.option("--hostfile", type=click.Path(exists=True, dir_okay=False), help="Host file for the MPI launcher.")
@click.option("--launcher", help=launcher_help())
@click.option("--oversubscribe", is_flag=True, help="Allow more ranks than cores (Open MPI needs it said).")
@click.option("--label", help="Name of the configuration measured.")
@memory_limit_option
@setting_option
@click.option("--quiet", is_flag=True, help="No progress bar and no tables.")
@db_option
@click.argument("ior_args", nargs=-1, type=click.UNPROCESSED)
def command(ranks, ppn, hostfile, launcher, oversubscribe, label, memory_limit, settings, quiet, db_url, ior_args):
    """Run an IOR command line with the pario kernel and store it.

    Paste the IOR options (a leading `mpiexec -n N IOR` is understood);
    our options come first.

    \b
    Examples:
      clusterbench ior mpiexec -n 36 IOR -a MPIIO -b 4g -t 4m -i 1 -F -o /gluster/output
      clusterbench ior --np 4 -a POSIX -b 64m -t 1m -F -C -e -o /scratch/test
    """
    from clusterbench import catalogue
    from clusterbench.ior_args import translate
    from clusterbench.measure import absolute_paths, execute_and_show
    from clusterbench.plan import expand
    from clusterbench.report.data import load_run
    from clusterbench.report.ior_summary import ior_figures, summary_lines
    from clusterbench.runner import RunRequest

    t = translate(list(ior_args))
    if ranks and t.ranks and ranks != t.ranks:
        raise BadInput(f"--np {ranks} and the launcher's -n {t.ranks} disagree")
    ranks = ranks or t.ranks or 1
    ppn = ppn or t.ranks_per_node
    # IOR -i repeats inside one launch: clusterbench's repeat (cbk --repetitions)
    params = dict(t.params)
    repeat = int(params.pop("repetitions", "1"))
    cat = catalogue.load()
    kernel = cat.kernel("pario")  # BadInput when cbk was built without MPI
    cat.check_params(kernel, params)
    if not quiet:
        click.echo("pario " + " ".join(f"--{k}={v}" for k, v in t.params.items()) + f"  (ranks {ranks})")
        for note in t.notes:
            click.echo("note: " + note)
    steps = expand("pario", params, repeat=repeat, ranks=ranks, ranks_per_node=ppn, launcher=launcher,
                   name="ior " + shlex.join(ior_args))
    steps, targets = absolute_paths(steps, cat)
    req = RunRequest(steps, label, shlex.join(["clusterbench", *sys.argv[1:]]), None, targets, hostfile,
                     oversubscribe, run_conditions(memory_limit, settings))
    from clusterbench.conditions.apply import check

    check(req.conditions, req)  # refused before the store is opened
    store = open_store(db_url)
    run_id = execute_and_show(store, cat, req, quiet)
    run = load_run(store, run_id)
    if not quiet:
        step = run["steps"][0]
        for line in summary_lines(ior_figures(step["samples"]), params, ranks, ppn):
            click.echo(line)
    click.echo(f"stored as run {run_id} in {store.url}")
