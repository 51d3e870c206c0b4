"""`clusterbench ior IOR-ARGS...`: run an IOR command line as pario.

The line is translated by clusterbench.ior_args (a leading `mpiexec -n N`
gives the ranks; a script file `-f` gives one step per test), run and
stored through the same path as `clusterbench run pario ...`, and IOR's
own output is printed on stdout in the format the line asked for
(clusterbench.ior_output: IOR's text, `-O summaryFormat=JSON` or `CSV`,
or into `-O summaryFile=FILE`), so a script that parses IOR's output
parses ours. clusterbench's notes and the run number go to stderr.
"""
from __future__ import annotations

import os
import shlex
import sys
import time

import click

from clusterbench.commands.options import db_option, memory_limit_option, open_store, run_conditions, setting_option, width_option
from clusterbench.errors import BadInput
from clusterbench.launch import help_text as launcher_help
from clusterbench.safe_write import write_atomically
from clusterbench.store.redact import mask_passwords


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
@click.option("--quiet", is_flag=True, help="No progress bar and no notes; IOR's output only.")
@db_option
@width_option
@click.argument("ior_args", nargs=-1, type=click.UNPROCESSED)
def command(ranks, ppn, hostfile, launcher, oversubscribe, label, memory_limit, settings, quiet, db_url, ior_args):
    """Run an IOR command line with the pario kernel and store it.

    Paste the IOR options (a leading `mpiexec -n N IOR` is understood);
    our options come first. IOR's output goes to stdout.

    \b
    Examples:
      clusterbench ior mpiexec -n 36 IOR -a MPIIO -b 4g -t 4m -i 1 -F -o /gluster/output
      clusterbench ior --np 4 -a POSIX -b 64m -t 1m -F -C -e -o /scratch/test -O summaryFormat=JSON
      clusterbench ior --np 4 -f tests.ior
    """
    from clusterbench import catalogue, ior_output
    from clusterbench.ior_args import translate
    from clusterbench.measure import absolute_paths, execute_and_show
    from clusterbench.plan import expand
    from clusterbench.report.data import load_run
    from clusterbench.runner import RunRequest, preflight

    t = translate(list(ior_args))
    if ranks and t.ranks and ranks != t.ranks:
        raise BadInput(f"--np {ranks} and the launcher's -n {t.ranks} disagree")
    ranks = ranks or t.ranks or 1
    ppn = ppn or t.ranks_per_node
    cat = catalogue.load()
    kernel = cat.kernel("pario")  # BadInput when cbk was built without MPI
    steps = []
    for test in t.tests:
        cat.check_params(kernel, test.params)
        steps += expand("pario", test.params, repeat=test.repetitions, ranks=ranks, ranks_per_node=ppn,
                        launcher=launcher, name=f"ior test {test.id}: " + shlex.join(ior_args))
    steps, targets = absolute_paths(steps, cat)
    req = RunRequest(steps, label, mask_passwords(shlex.join(["clusterbench", *sys.argv[1:]])), None, targets, hostfile,
                     oversubscribe, run_conditions(memory_limit, settings))
    from clusterbench.conditions.apply import check

    # bad input (a missing -o directory, a refused setting) is only its error line: checked before the
    # translation is shown and the store is opened
    check(req.conditions, req)
    preflight(cat, req)
    if not quiet:  # on stderr: stdout is IOR's output alone
        for test in t.tests:
            click.echo(f"test {test.id}: pario " + " ".join(f"--{k}={v}" for k, v in test.params.items())
                       + f" --repetitions={test.repetitions}  (ranks {ranks})", err=True)
        for note in t.notes:
            click.echo("note: " + note, err=True)
    store = open_store(db_url, writing=True)
    began = time.time()
    run_id = execute_and_show(store, cat, req, quiet, show=False)
    finished = time.time()
    run = load_run(store, run_id)
    build = run["steps"][0]["build"] or {}
    uname = os.uname()
    job = ior_output.Job(ranks=ranks, tasks_per_node=build.get("ranks_per_node", ppn or ranks),
                         nodes=build.get("nodes", 1), machine=f"{uname.sysname} {uname.nodename}",
                         platform=f"{uname.nodename}({uname.sysname})", began=began, finished=finished)
    text = ior_output.render(t, job, [step["samples"] for step in run["steps"]])
    if t.summary_file:
        write_atomically(t.summary_file, text)
        click.echo(f"Writing output to {t.summary_file}")
    else:
        click.echo(text, nl=False)
    click.echo(f"stored as run {run_id} in {store.url}", err=True)
