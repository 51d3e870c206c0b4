"""`clusterbench mdtest MDTEST-ARGS...`: run an mdtest command line as the metadata kernel.

The line is translated by clusterbench.mdtest_args (a leading `mpiexec -n N`
gives the ranks), run and stored through the same path as `clusterbench run
metadata ...`; after our table it prints mdtest's banner and `SUMMARY rate:`
table (clusterbench.mdtest_output), so a script that reads mdtest's output
reads ours.
"""
from __future__ import annotations

import shlex
import sys
import time

import click

from clusterbench.commands.options import (db_option, memory_limit_option, open_store, run_conditions,
                                           setting_option, width_option)
from clusterbench.errors import BadInput
from clusterbench.launch import help_text as launcher_help
from clusterbench.store.redact import mask_passwords


@click.command("mdtest", context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False})
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
@width_option
@click.argument("mdtest_args", nargs=-1, type=click.UNPROCESSED)
def command(ranks, ppn, hostfile, launcher, oversubscribe, label, memory_limit, settings, quiet, db_url, mdtest_args):
    """Run an mdtest command line with the metadata kernel and store it.

    Paste the mdtest options (a leading `mpiexec -n N mdtest` is understood);
    our options come first.

    \b
    Examples:
      clusterbench mdtest mpiexec -n 4 mdtest -n 1000 -u -d /scratch/md
      clusterbench mdtest --np 2 -F -n 500 -w 3901 -e 3901 -N 1 -d /scratch/md
    """
    from clusterbench import catalogue, mdtest_output
    from clusterbench.measure import absolute_paths, execute_and_show
    from clusterbench.mdtest_args import translate
    from clusterbench.plan import expand
    from clusterbench.report.data import load_run
    from clusterbench.runner import RunRequest, preflight

    line = translate(list(mdtest_args))
    if ranks and line.ranks and ranks != line.ranks:
        raise BadInput(f"--np {ranks} and the launcher's -n {line.ranks} disagree")
    ranks = ranks or line.ranks or 1
    ppn = ppn or line.ranks_per_node
    cat = catalogue.load()
    kernel = cat.kernel("metadata")
    cat.check_params(kernel, line.params)
    steps = expand("metadata", line.params, repeat=line.repetitions, ranks=ranks, ranks_per_node=ppn,
                   launcher=launcher, name="mdtest " + shlex.join(mdtest_args))
    steps, targets = absolute_paths(steps, cat)
    req = RunRequest(steps, label, mask_passwords(shlex.join(["clusterbench", *sys.argv[1:]])), None, targets, hostfile,
                     oversubscribe, run_conditions(memory_limit, settings))
    from clusterbench.conditions.apply import check

    # bad input is only its error line: checked before the translation is shown and the store is opened
    check(req.conditions, req)
    preflight(cat, req)
    if not quiet:
        click.echo("metadata " + " ".join(f"--{k}={v}" for k, v in line.params.items()) + f"  (ranks {ranks})")
        for note in line.notes:
            click.echo("note: " + note)
    store = open_store(db_url, writing=True)
    started = time.time()
    run_id = execute_and_show(store, cat, req, quiet)
    if not quiet:
        step = load_run(store, run_id)["steps"][0]
        records = [s.record for s in step["samples"]]
        build = step["build"] or {}
        per_rank = next((r["items_per_rank"] for r in records if not r["phase"].startswith("tree")), 0)
        kind = line.params.get("kind", "both")
        phases = line.params.get("phases", "all")
        read_without_bytes = kind != "dirs" and ("read" in phases or phases == "all") \
            and line.params.get("read-bytes", "0") == "0"
        out = mdtest_output.banner_lines(line.argv, ranks, build.get("hosts", []), line.path, step["params"]["dir"],
                                         started, read_without_bytes)
        out.append(mdtest_output.items_line(ranks, per_rank, kind))
        for what in line.show:
            out += ["", *mdtest_output.summary_lines(records, kind, line.repetitions, what)]
        out.append(mdtest_output.finished_line(time.time()))
        for text in out:
            click.echo(text)
    click.echo(f"stored as run {run_id} in {store.url}")
