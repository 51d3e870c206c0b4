"""`clusterbench mdtest MDTEST-ARGS...`: run an mdtest command line as the metadata kernel.

The line is translated by clusterbench.tools.mdtest_args (a leading `mpiexec -n N`
gives the ranks), run and stored through the same path as `clusterbench run
metadata ...`. As `clusterbench ior` does, stdout carries mdtest's banner and
`SUMMARY rate:` table alone (clusterbench.tools.mdtest_output), with --quiet
too, so a script that reads mdtest's output reads ours; our notes, warnings and
the run number go to stderr.
"""
from __future__ import annotations

import shlex
import time

import click

from clusterbench.commands.options import run_conditions, tool_line_options
from clusterbench.store.opening import open_store
from clusterbench.store.storable import step_name


@click.command("mdtest", context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False})
@tool_line_options("mdtest", quiet_help="No progress bar and no notes; mdtest's output only.")
def command(ranks, ppn, hostfile, launcher, oversubscribe, label, memory_limit, settings, quiet, db_url, args):
    """Run an mdtest command line with the metadata kernel and store it.

    Paste the mdtest options (a leading `mpiexec -n N mdtest` is understood);
    our options come first.

    \b
    Examples:
      clusterbench mdtest mpiexec -n 4 mdtest -n 1000 -u -d /scratch/md
      clusterbench mdtest --np 2 -F -n 500 -w 3901 -e 3901 -N 1 -d /scratch/md
    """
    from clusterbench import catalogue
    from clusterbench.tools import mdtest_output
    from clusterbench.run.measure import checked_request, execute_and_show, stops_said, tool_launcher, tool_ranks
    from clusterbench.tools.mdtest_args import translate
    from clusterbench.run.plan import expand
    from clusterbench.report.data import load_run

    line = translate(list(args))
    ranks = tool_ranks(ranks, line.ranks)
    ppn = ppn or line.ranks_per_node
    launcher = tool_launcher(launcher, line.launcher)
    cat = catalogue.load()
    kernel = cat.kernel("metadata")
    cat.check_params(kernel, line.params)
    steps = expand("metadata", line.params, repeat=line.repetitions, ranks=ranks, ranks_per_node=ppn,
                   launcher=launcher, name=step_name("mdtest " + shlex.join(args)))
    req = checked_request(cat, steps, label, hostfile, oversubscribe, run_conditions(memory_limit, settings))
    if not quiet:  # on stderr: stdout is mdtest's output alone
        click.echo("metadata " + " ".join(f"--{k}={v}" for k, v in line.params.items()) + f"  (ranks {ranks})",
                   err=True)
        for note in line.notes:
            click.echo("note: " + note, err=True)
    store = open_store(db_url, writing=True)
    with stops_said(store):
        started = time.time()
        run_id = execute_and_show(store, cat, req, quiet, show=False)
        step = load_run(store, run_id)["steps"][0]
        samples = step["samples"]
        build = step["build"] or {}
        # the records say it; a line that stores no item phase (-D -E: mdtest reads no directory) has -n still
        per_rank = next((s.extra("items_per_rank") for s in samples if not s.phase.startswith("tree")), None) \
            or int(line.params.get("items") or 0)
        kind = line.params.get("kind", "both")
        phases = line.params.get("phases", "all")
        read_without_bytes = kind != "dirs" and ("read" in phases or phases == "all") \
            and line.params.get("read-bytes", "0") == "0"
        out = mdtest_output.banner_lines(line.argv, ranks, build.get("hosts", []), line.path, step["params"]["dir"],
                                         started, read_without_bytes)
        out.append(mdtest_output.items_line(ranks, per_rank, kind))
        for what in line.show:
            out += ["", *mdtest_output.summary_lines(samples, kind, line.repetitions, what)]
        out.append(mdtest_output.finished_line(time.time()))
        for text in out:
            click.echo(text)
        if not quiet:
            # mdtest prints no caveat: what a figure cannot claim is said here, as show says it under its table
            from clusterbench.output.render_text import plain
            from clusterbench.results.warning_fold import step_lines

            for w in step_lines(step["summary"]):
                click.echo(f"warning: {plain(w)}", err=True)
        click.echo(f"stored as run {run_id} in {store.url}" + ("" if quiet else f" (clusterbench show {run_id}: "
                                                                 "its tables, limits and warnings)"), err=True)
