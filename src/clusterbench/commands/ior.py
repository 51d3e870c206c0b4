"""`clusterbench ior IOR-ARGS...`: run an IOR command line as pario.

The line is translated by clusterbench.tools.ior_args (a leading `mpiexec -n N`
gives the ranks; a script file `-f` gives one step per test), run and
stored through the same path as `clusterbench run pario ...`, and IOR's
own output is printed on stdout in the format the line asked for
(clusterbench.tools.ior_output: IOR's text, `-O summaryFormat=JSON` or `CSV`,
or into `-O summaryFile=FILE`), so a script that parses IOR's output
parses ours. clusterbench's notes and the run number go to stderr.
"""
from __future__ import annotations

import os
import shlex
import time

import click

from clusterbench.files import output_target
from clusterbench.commands.options import run_conditions, tool_line_options
from clusterbench.store.opening import open_store
from clusterbench.store.storable import step_name


@click.command("ior", context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False})
@tool_line_options("ior", quiet_help="No progress bar and no notes; IOR's output only.")
def command(ranks, ppn, hostfile, launcher, oversubscribe, label, memory_limit, settings, quiet, db_url, args):
    """Run an IOR command line with the pario kernel and store it.

    Paste the IOR options (a leading `mpiexec -n N IOR` is understood);
    our options come first. IOR's output goes to stdout.

    \b
    Examples:
      clusterbench ior mpiexec -n 36 IOR -a MPIIO -b 4g -t 4m -i 1 -F -o /gluster/output
      clusterbench ior --np 4 -a POSIX -b 64m -t 1m -F -C -e -o /scratch/test -O summaryFormat=JSON
      clusterbench ior --np 4 -f tests.ior
    """
    from clusterbench import catalogue
    from clusterbench.tools import ior_output
    from clusterbench.tools.ior_args import translate
    from clusterbench.run.measure import checked_request, execute_and_show, stops_said, tool_launcher, tool_ranks
    from clusterbench.run.plan import expand
    from clusterbench.report.data import load_run

    t = translate(list(args))
    ranks = tool_ranks(ranks, t.ranks)
    ppn = ppn or t.ranks_per_node
    launcher = tool_launcher(launcher, t.launcher)
    cat = catalogue.load()
    kernel = cat.kernel("pario")  # BadInput when cbk was built without MPI
    steps = []
    for test in t.tests:
        cat.check_params(kernel, test.params)
        steps += expand("pario", test.params, repeat=test.repetitions, ranks=ranks, ranks_per_node=ppn,
                        launcher=launcher, name=step_name(f"ior test {test.id}: " + shlex.join(args)))
    req = checked_request(cat, steps, label, hostfile, oversubscribe, run_conditions(memory_limit, settings))
    if not quiet:  # on stderr: stdout is IOR's output alone
        for test in t.tests:
            click.echo(f"test {test.id}: pario " + " ".join(f"--{k}={v}" for k, v in test.params.items())
                       + f" --repetitions={test.repetitions}  (ranks {ranks})", err=True)
        for note in t.notes:
            click.echo("note: " + note, err=True)
    if t.summary_file:
        output_target.check(t.summary_file, "summaryFile")   # before the run, not after it
    store = open_store(db_url, writing=True)
    with stops_said(store):
        began = time.time()
        run_id = execute_and_show(store, cat, req, quiet, show=False)
        finished = time.time()
        run = load_run(store, run_id)
        build = run["steps"][0]["build"] or {}
        uname = os.uname()
        job = ior_output.Job(ranks=ranks, tasks_per_node=build.get("ranks_per_node", ppn or ranks),
                             nodes=build.get("nodes", 1), machine=f"{uname.sysname} {uname.nodename}",
                             platform=f"{uname.nodename}({uname.sysname})", began=began, finished=finished)
        log: list[str] | None = [] if t.summary_file else None   # IOR's log lines stay on stdout, as IOR's
        text = ior_output.render(t, job, [step["samples"] for step in run["steps"]], log)
        if t.summary_file:
            output_target.write(t.summary_file, text, "summaryFile")
            click.echo(f"Writing output to {t.summary_file}")
            click.echo("".join(log or []), nl=False)
        else:
            click.echo(text, nl=False)
        if not quiet:
            # IOR prints no caveat: what a figure cannot claim (no fsync, read from the cache) is said here,
            # on stderr beside the run number, as show says it under its table
            from clusterbench.output.render_text import plain
            from clusterbench.results.warning_fold import step_lines

            for test, step in zip(t.tests, run["steps"]):   # one step per test, "test N" as the line above named it
                for w in step_lines(step["summary"]):
                    click.echo(f"warning: test {test.id}: {plain(w)}", err=True)
        click.echo(f"stored as run {run_id} in {store.url}" + ("" if quiet else f" (clusterbench show {run_id}: "
                                                                 "its tables, limits and warnings)"), err=True)
