"""`clusterbench ior IOR-ARGS...`: run an IOR command line as pario.

The line is translated by clusterbench.ior_args (a leading `mpiexec -n N`
gives the ranks), then run and stored through the same path as
`clusterbench run pario ...`; after our table it prints IOR's familiar
summary (Max Write/Max Read and the per-operation Max/Min/Mean/StdDev
table), computed over the repetitions as IOR computes it.
"""
from __future__ import annotations

import math
import shlex
import sys

import click

from clusterbench.commands.options import db_option, open_store
from clusterbench.errors import BadInput
from clusterbench.sample import Sample

MIB, MB = 1048576.0, 1e6


def ior_figures(samples: list[Sample]) -> dict[str, list[Sample]]:
    """Per IOR operation, the samples IOR would have reported: the write
    figure includes fsync when -e was given (mode fsync), as IOR's does."""
    ops: dict[str, list[Sample]] = {"write": [], "read": []}
    writes = [s for s in samples if s.phase == "write"]
    if any(s.mode == "fsync" for s in writes):
        writes = [s for s in writes if s.mode == "fsync"]
    ops["write"] = writes
    ops["read"] = [s for s in samples if s.phase == "read"]
    return {k: v for k, v in ops.items() if v}


def _stats(values: list[float]) -> tuple[float, float, float, float]:
    """Max, min, mean and IOR's standard deviation (population: divided by n)."""
    mean = sum(values) / len(values)
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / len(values))
    return max(values), min(values), mean, sd


def summary_lines(figures: dict[str, list[Sample]], params: dict, ranks: int, ppn: int | None) -> list[str]:
    out = []
    for op, recs in figures.items():
        bw = [r.bytes / r.seconds / MIB for r in recs]
        out.append(f"Max {op.capitalize()}: {max(bw):.2f} MiB/sec ({max(bw) * MIB / MB:.2f} MB/sec)")
    out.append("")
    out.append("Summary of all tests:")
    out.append(f"{'Operation':<10} {'Max(MiB)':>10} {'Min(MiB)':>10} {'Mean(MiB)':>10} {'StdDev':>10} "
               f"{'Max(OPs)':>10} {'Min(OPs)':>10} {'Mean(OPs)':>10} {'StdDev':>10} {'Mean(s)':>10} "
               f"{'#Tasks':>6} {'tPN':>4} {'reps':>4} {'fPP':>4} {'aggs(MiB)':>10}")
    for op, recs in figures.items():
        bw = _stats([r.bytes / r.seconds / MIB for r in recs])
        iops = _stats([r.ops / r.seconds for r in recs])
        mean_s = sum(r.seconds for r in recs) / len(recs)
        fpp = 1 if params.get("strategy") == "split" else 0
        out.append(f"{op:<10} {bw[0]:>10.2f} {bw[1]:>10.2f} {bw[2]:>10.2f} {bw[3]:>10.2f} "
                   f"{iops[0]:>10.2f} {iops[1]:>10.2f} {iops[2]:>10.2f} {iops[3]:>10.2f} {mean_s:>10.5f} "
                   f"{ranks:>6} {ppn or ranks:>4} {len(recs):>4} {fpp:>4} {recs[0].bytes / MIB:>10.2f}")
    return out


@click.command("ior", context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False})
@click.option("--np", "ranks", type=click.IntRange(1), default=None,
              help="MPI ranks (or give them with a leading `mpiexec -n N`).")
@click.option("--ppn", type=click.IntRange(1), default=None, help="Ranks per node.")
@click.option("--hostfile", type=click.Path(exists=True, dir_okay=False), help="Host file for the MPI launcher.")
@click.option("--launcher", help="local, mpiexec or srun (Slurm) (default: mpiexec when more than one rank).")
@click.option("--oversubscribe", is_flag=True, help="Allow more ranks than cores (Open MPI needs it said).")
@click.option("--label", help="Name of the configuration measured.")
@click.option("--quiet", is_flag=True, help="No progress bar and no tables.")
@db_option
@click.argument("ior_args", nargs=-1, type=click.UNPROCESSED)
def command(ranks, ppn, hostfile, launcher, oversubscribe, label, quiet, db_url, ior_args):
    """Run an IOR command line with the pario kernel and store it.

    Paste the IOR options (a leading `mpiexec -n N IOR` is understood);
    our options come first.

    \b
    Examples:
      clusterbench ior mpiexec -n 36 IOR -a MPIIO -b 4g -t 4m -i 1 -F -o /gluster/output
      clusterbench ior --np 4 -a POSIX -b 64m -t 1m -F -C -e -o /scratch/test
    """
    from clusterbench import catalogue
    from clusterbench.commands.run import absolute_paths, execute_and_show
    from clusterbench.ior_args import translate
    from clusterbench.plan import expand
    from clusterbench.report.data import load_run
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
    store = open_store(db_url)
    req = RunRequest(steps, label, shlex.join(["clusterbench", *sys.argv[1:]]), None, targets, hostfile,
                     oversubscribe)
    run_id = execute_and_show(store, cat, req, quiet)
    run = load_run(store, run_id)
    if not quiet:
        step = run["steps"][0]
        for line in summary_lines(ior_figures(step["samples"]), params, ranks, ppn):
            click.echo(line)
    click.echo(f"stored as run {run_id} in {store.url}")
