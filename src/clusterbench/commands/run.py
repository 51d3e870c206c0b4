from __future__ import annotations

import dataclasses
import shlex
import sys
from pathlib import Path

import click

from clusterbench.commands.options import (RANK_COUNT, Digits, Finite, PathParam, db_option, hostfile_option,
                                           link_speed_option, memory_limit_option, run_conditions, setting_option,
                                           width_option)
from clusterbench.errors import BadInput
from clusterbench.launch import help_text as launcher_help
from clusterbench.launch.processes import START_TIMEOUT_S
from clusterbench.store.command_options import BareFlag, parse_extra
from clusterbench.run.measure import absolute_paths, execute_and_show, stops_said
from clusterbench.run.cluster import straggler as straggler_rule
from clusterbench.store.opening import open_store
from clusterbench.store.redact import mask_secrets


# The longest --step-timeout or --stall-floor: a wait of 1e308 s overflowed the timer thread
# that ends a step (a traceback, and no step was ever ended)
LONGEST_WAIT_S = 365 * 24 * 3600

# Parameter types whose values never hold a comma: there, a comma lists values to sweep.
# (A choice-list, such as mpi's --op, takes its comma list itself, in one launch.)
LISTABLE_TYPES = ("choice", "size", "int", "real")


def comma_lists(kernel, params: dict[str, str]) -> dict:
    """--block-size=64k,1m: one step per value in one command (the sweep a
    suite's list gives), for choice, size, int and real parameters; a choice
    outside the kernel's is one line, exit 2."""
    out: dict = dict(params)
    for p in kernel.params:
        v = params.get(p.name)
        if p.type not in LISTABLE_TYPES or not isinstance(v, str) or "," not in v:
            continue
        values = [x.strip() for x in v.split(",")]
        bad = [x for x in values if not x or (p.choices and x not in p.choices)]
        if bad:
            allowed = f" (choices: {', '.join(p.choices)})" if p.choices else ""
            raise BadInput(f"--{p.name}={v}: '{bad[0]}' is not a value of it{allowed}")
        out[p.name] = list(dict.fromkeys(values))
    return out


def unknown_target(target: str, kernels: list[str], suite_names: list[str]) -> str:
    """'no such kernel or suite: quik (did you mean quick?) ...', naming both kinds of target."""
    import difflib

    close = difflib.get_close_matches(target, kernels + suite_names, n=1)
    hint = f" (did you mean {close[0]}?)" if close else ""
    return (f"no such kernel or suite: '{target}'{hint}; kernels: {', '.join(kernels)}; suites: "
            f"{', '.join(suite_names)} (or a path to a suite's .toml file)")


def report_folder(store_url: str, report_dir: str | None) -> Path:
    """Where a suite's report goes: --report-dir, else beside a SQLite store
    file (--db, $CLUSTERBENCH_DB or the default one), else (a database
    server) the user's data directory."""
    import sqlalchemy as sa
    from platformdirs import user_data_dir

    if report_dir:
        return Path(report_dir).resolve()
    url = sa.engine.make_url(store_url)
    if url.get_backend_name() == "sqlite" and url.database and url.database != ":memory:":
        return Path(url.database).resolve().parent
    return Path(user_data_dir("clusterbench")) / "reports"


def default_report_path(store_url: str, run_id: int, report_dir: str | None) -> str:
    """<folder>/<store>-run-<id>.html: two stores in one folder do not overwrite each other's reports."""
    import sqlalchemy as sa

    url = sa.engine.make_url(store_url)
    store_name = Path(url.database).stem if url.database and url.database != ":memory:" else "store"
    folder = report_folder(store_url, report_dir)
    folder.mkdir(parents=True, exist_ok=True)
    return str(folder / f"{store_name}-run-{run_id}.html")


def check_writable_folder(folder: str) -> None:
    """Bad input before the run rather than a lost report after it."""
    path = Path(folder).resolve()
    existing = next(p for p in (path, *path.parents) if p.exists())
    if not existing.is_dir():
        raise BadInput(f"--report-dir {folder}: {existing} is not a directory")
    from clusterbench.files import output_target

    # a file made and removed: /proc passed os.access as root, and the report failed after the run
    output_target.try_a_file_in(existing, "--report-dir", folder)


def library_selection(requests: tuple[str, ...], cbk: str) -> dict[str, str]:
    """Environment selecting the MPI library's collective algorithms."""
    from clusterbench.launch import mpi_tuning
    from clusterbench.launch.mpiexec import find_mpiexec, flavour

    exe = find_mpiexec(cbk)
    kind = flavour(exe) if exe else "unknown"
    if kind not in ("mpich", "openmpi"):
        raise BadInput("--mpi-algorithm needs MPICH or Open MPI's mpiexec; found " + (exe or "none"))
    env: dict[str, str] = {}
    for req in requests:
        collective, sep, algorithm = req.partition("=")
        if not sep or not algorithm:
            raise BadInput(f"--mpi-algorithm {req}: expected COLLECTIVE=ALGORITHM, e.g. allreduce=ring")
        env.update(mpi_tuning.selection_env(kind, collective.strip().lower(), algorithm.strip()))
    return env


@click.command("run", context_settings={"ignore_unknown_options": True, "allow_extra_args": True})
@click.argument("target")
@click.option("--repeat", default=None, metavar="N|auto",
              help="Repetitions of each step (default 5: fewer cannot show a significant difference; a suite's "
                   "own counts unless given; run cluster: 3), or auto: repeat until the median's 95 % CI is within "
                   "--ci-target (run cluster: on each node's own samples).")
@click.option("--ci-target", type=Finite(0.1, 100, unit="% of the median"), default=5.0, show_default=True,
              help="With --repeat auto: the CI width to reach, in % of the median.")
@click.option("--max-repeat", type=Digits(6, 100000, unit="repetitions"), default=30, show_default=True,
              help="With --repeat auto: stop after this many repetitions.")
@click.option("--max-time", type=Finite(1, unit="seconds"), default=600, show_default=True,
              help="With --repeat auto: stop a step after this many seconds.")
@click.option("--label", help="Name of the configuration measured, e.g. nfs-rdma or tuned=balanced.")
@click.option("--np", "ranks", type=RANK_COUNT, default=None, help="MPI ranks (kernels only).")
@click.option("--ppn", type=RANK_COUNT, default=None, help="Ranks per node.")
@hostfile_option
@click.option("--launcher", help=launcher_help())
@click.option("--oversubscribe", is_flag=True,
              help="Allow more ranks than cores (Open MPI needs it said; srun gets --overcommit, past the "
                   "Slurm job's CPUs), and more than 16 per hardware thread on this host alone (refused otherwise).")
@click.option("--mpi-algorithm", "mpi_algorithms", multiple=True, metavar="COLLECTIVE=ALGORITHM",
              help="Make the MPI library use this algorithm, e.g. allreduce=ring (MPICH CVARs or Open MPI "
                   "MCA parameters, passed through the launcher and recorded). Repeatable.")
@memory_limit_option
@link_speed_option
@setting_option
@click.option("--setting-a", "settings_a", multiple=True, metavar="NAME=VALUE",
              help="With --setting-b: run everything twice, under A then under B, and compare them. Repeatable.")
@click.option("--setting-b", "settings_b", multiple=True, metavar="NAME=VALUE",
              help="The second condition of --setting-a. Repeatable.")
@click.option("--gpus-per-rank", type=Digits(1, unit="GPUs a rank"), default=None, metavar="N",
              help="Give each rank N GPUs of its own from those the batch system granted (SGE_HGR_gpu, "
                   "SLURM_STEP_GPUS/SLURM_JOB_GPUS, CUDA_VISIBLE_DEVICES); records name each rank's devices.")
@click.option("--share-gpus", is_flag=True, help="With --gpus-per-rank: let ranks share GPUs round-robin "
              "when too few are granted (otherwise that is an error).")
@click.option("--step-timeout", type=Finite(1, LONGEST_WAIT_S, unit="seconds"), default=None, metavar="SECONDS",
              envvar="CLUSTERBENCH_STEP_TIMEOUT", show_envvar=True,
              help="End a launch of a step that runs longer than this (its launcher and every rank), store the "
                   "step as failed with the reason, and go on with the next (default: no limit).")
@click.option("--start-timeout", type=Finite(1, LONGEST_WAIT_S, unit="seconds"), default=START_TIMEOUT_S, show_default=True,
              metavar="SECONDS", envvar="CLUSTERBENCH_START_TIMEOUT", show_envvar=True,
              help="End a launch of several ranks whose ranks are not all past MPI_Init after this long (a rank "
                   "that died before it holds the others there for ever under MPICH), store the step as failed "
                   "with what the ranks said, and go on with the next; docs/reliability.md.")
@click.option("--stall-floor", type=Finite(1, LONGEST_WAIT_S, unit="seconds"), default=straggler_rule.FLOOR_S, show_default=True,
              metavar="SECONDS",
              help="run cluster, per-node steps: a node still running when the others ended is ended as stalled "
                   "once it has run the greater of this and --stall-factor x their median duration (with "
                   "--one-at-a-time: of the step's launches that ended well on other nodes earlier; the step's "
                   "first node has no bound). No --step-timeout needed for a stopped node; docs/cluster.md.")
@click.option("--stall-factor", type=Finite(2, unit="times the median duration"), default=straggler_rule.FACTOR, show_default=True,
              metavar="K",
              help="run cluster: see --stall-floor (10: a node 2-3x slower than the others is a finding, "
                   "flagged, not ended).")
@click.option("--quiet", is_flag=True, help="No progress bar and no result table.")
@click.option("--report", "report_path", default=None, metavar="FILE",
              help="Write an HTML report here (a suite writes one anyway, beside a SQLite store or into "
                   "--report-dir).")
@click.option("--report-dir", type=PathParam(file_okay=False), default=None,
              help="Folder for a suite's HTML report (default: the folder of the SQLite store, else the "
                   "user's data directory).")
@db_option
@width_option
@click.pass_context
def command(ctx, target, repeat, ci_target, max_repeat, max_time, label, ranks, ppn, hostfile, launcher, oversubscribe, mpi_algorithms,
            memory_limit, link_speed, settings, settings_a, settings_b, gpus_per_rank, share_gpus, step_timeout,
            start_timeout, stall_floor, stall_factor, quiet, report_path,
            report_dir, db_url):
    """Run TARGET, a kernel (clusterbench kernels), a suite (quick, or a
    path to a .toml file), or cluster (every node, every link: docs/cluster.md),
    and store every repetition.

    Kernel parameters follow as --name=value (clusterbench kernels KERNEL
    lists them); for a suite they set its variables, e.g. --dir=/scratch.

    \b
    Examples:
      clusterbench run quick --dir=/scratch
      clusterbench run seqio --dir=/data --file-size=10g --label=ssd
      clusterbench run null --np 2 --seconds=0.1
      clusterbench run seqio --dir=/data --write=buffered --memory-limit=1g
      clusterbench run quick --dir=/nvme --setting-a tuned=balanced --setting-b tuned=latency-performance
      clusterbench run cluster --hostfile hosts --scratch=/local --one-at-a-time
      clusterbench run cluster --hostfile hosts --repeat auto --memory-limit=1g

    run cluster takes --repeat N|auto (each node's step judged on its own
    samples) and --memory-limit (a cgroup on each node); it places ranks and
    picks the launcher itself (no --np, --ppn, --launcher, --gpus-per-rank),
    and --setting changes this host only, not its nodes (refused).
    """
    from clusterbench import catalogue, suites
    from clusterbench.conditions import spec as conditions
    from clusterbench.run.plan import expand
    from clusterbench.run.runner import RunRequest

    extra = parse_extra(ctx.args)
    if hostfile:
        from clusterbench.launch import hostfile as hostfiles

        hostfiles.read(hostfile)   # a line in no known form: exit 2 before anything runs
    common = run_conditions(memory_limit, settings) or conditions.Conditions()
    variants: tuple = ()
    auto = None
    if repeat == "auto":
        from clusterbench.run.plan import AutoRepeat

        auto, repeat = AutoRepeat(ci_target / 100, 6, max_repeat, max_time), None
    elif repeat is not None:
        # isdigit() alone took '²' (then int() raised) and other scripts' digits ('٥' ran 5, stored as typed)
        if not (repeat.isascii() and repeat.isdigit()) or not 1 <= int(repeat) <= 100000:
            raise BadInput(f"--repeat {repeat}: give a number from 1 to 100000, or auto")
        repeat = int(repeat)
    if report_path:
        from clusterbench.files import output_target

        from clusterbench.report import check_html_name

        # refused before the run, not after it; never over the suite or host file the run reads
        output_target.check(report_path, "--report", tuple(
            name for name in (target if target.endswith(".toml") else None, hostfile) if name))
        check_html_name(report_path, "--report", "run writes an HTML report",
                        f"write it after the run: clusterbench report RUN -o {report_path}")
    if label is not None:
        from clusterbench.store.storable import check_label

        check_label(label)   # run cluster too, before its nodes are probed
    cat = catalogue.load()
    if target == "cluster":
        from clusterbench.run.cluster.use_case import run_cluster

        if report_dir:
            check_writable_folder(report_dir)
        return run_cluster(cat, extra, hostfile=hostfile, repeat=repeat, oversubscribe=oversubscribe, label=label,
                           quiet=quiet, db_url=db_url, step_timeout_s=step_timeout, start_timeout_s=start_timeout, auto=auto,
                           report_path_for=lambda url, run_id: report_path or default_report_path(url, run_id,
                                                                                                   report_dir),
                           conditions=run_conditions(memory_limit, ()),
                           straggler=straggler_rule.StragglerRule(stall_floor, stall_factor),
                           refused=dict(np=ranks, ppn=ppn, launcher=launcher, gpus_per_rank=gpus_per_rank,
                                        settings=settings, settings_ab=settings_a or settings_b,
                                        mpi_algorithm=mpi_algorithms))
    given = [f"--{name.replace('_', '-')}" for name in ("stall_floor", "stall_factor")
             if ctx.get_parameter_source(name) != click.core.ParameterSource.DEFAULT]
    if given:
        raise BadInput(f"{given[0]} applies to run cluster (its per-node steps)")
    if suites.is_suite(target):
        if ranks or ppn:
            raise BadInput("--np and --ppn apply to a kernel; a suite sets them per step")
        suite = suites.load(target, extra)
        steps = [dataclasses.replace(s, repeat=repeat) if repeat else s for s in suite.steps]
        if launcher:   # a step that names its own launcher keeps it
            steps = [s if s.launcher else dataclasses.replace(s, launcher=launcher) for s in steps]
        suite_name = suite.name
        common, variants = suite.conditions.merged(common), suite.variants
    else:
        if target not in cat.kernels and target not in cat.left_out:
            raise BadInput(unknown_target(target, list(cat.kernels), suites.shipped()))
        kernel = cat.kernel(target)   # a kernel this cbk was built without: why it is absent
        cat.check_params(kernel, extra)
        needs_value = [k for k, v in extra.items() if isinstance(v, BareFlag) and kernel.param(k).type != "bool"]
        if needs_value:
            raise BadInput(f"--{needs_value[0]} needs a value (--{needs_value[0]}=VALUE)")
        extra = comma_lists(kernel, extra)
        if (ranks or 1) > 1 and not kernel.parallel:
            raise BadInput(f"kernel {kernel.name} runs as one process; --np {ranks} needs a parallel kernel")
        steps = expand(kernel.name, extra, repeat=repeat or 5, ranks=ranks or 1, ranks_per_node=ppn,
                       launcher=launcher)
        suite_name = None
    if auto:
        steps = [dataclasses.replace(s, auto=auto) for s in steps]
    if step_timeout:
        steps = [dataclasses.replace(s, timeout_s=step_timeout) for s in steps]
    steps = [dataclasses.replace(s, start_timeout_s=start_timeout) for s in steps]
    if share_gpus and not gpus_per_rank:
        raise BadInput("--share-gpus applies with --gpus-per-rank N")
    if gpus_per_rank:
        # a one-process kernel has no ranks to share GPUs out to (gpupeer
        # wants every GPU of its node in its one process)
        if suite_name is None and not cat.kernel(target).parallel:
            raise BadInput(f"kernel {target} runs as one process, which sees every GPU of its node; "
                           "--gpus-per-rank binds each rank of a parallel kernel to its own GPUs")
        steps = [s if s.kernel in cat.kernels and not cat.kernels[s.kernel].parallel
                 else dataclasses.replace(s, gpus_per_rank=gpus_per_rank, share_gpus=share_gpus) for s in steps]
    # without it, two ranks of a GPU step on one node still get GPUs of their own where the node has them
    from clusterbench.launch.gpubind import bind_by_default

    steps = [bind_by_default(s, cat.family(s.kernel)) for s in steps]
    if mpi_algorithms:
        tuning = library_selection(mpi_algorithms, cat.cbk)
        steps = [dataclasses.replace(s, env={**s.env, **tuning}) for s in steps]
    if settings_a or settings_b:
        if not (settings_a and settings_b):
            raise BadInput("--setting-a and --setting-b go together: the two conditions to compare")
        variants = (conditions.Conditions(settings=conditions.parse_settings(settings_a, "--setting-a")),
                    conditions.Conditions(settings=conditions.parse_settings(settings_b, "--setting-b")))
        if set(variants[0].settings) == set(variants[1].settings):
            raise BadInput(f"--setting-a and --setting-b are the same ({variants[0].title()}): nothing to compare")
    if link_speed:
        # a kernel that rates its own figures against the link (tcp) is told the same rate, in its unit
        steps = [dataclasses.replace(s, params={**s.params, "link-speed": f"{link_speed / 1e9:g}"})
                 if "link-speed" not in s.params and any(p.name == "link-speed" for p in cat.kernel(s.kernel).params)
                 else s for s in steps]
    steps, targets = absolute_paths(steps, cat)
    if report_dir:
        check_writable_folder(report_dir)
    from clusterbench.output.render_text import stored, utf8_problem

    if label is not None and utf8_problem(label):
        raise BadInput(f"--label: {utf8_problem(label)}; a label is a name: give it in UTF-8")
    req = RunRequest(steps, label, stored(mask_secrets(shlex.join(["clusterbench", *sys.argv[1:]]))), suite_name,
                     targets, hostfile, oversubscribe, common or None, link_speed)
    from clusterbench.run import each_condition as recipe
    from clusterbench.store.storable import check_run

    check_run(label, suite_name, ((s.name, s.kernel, s.params) for s in steps))
    recipe.check_all(req, variants)  # a refused setting or memory limit: exit 2 before the store is opened
    from clusterbench.run.runner import preflight

    preflight(cat, req)  # a refused parameter too: nothing is created
    store = open_store(db_url, writing=True)
    with stops_said(store):
        if variants:
            run_ids = recipe.run_under_each(store, cat, req, variants, quiet, execute_and_show)
        else:
            run_ids = [execute_and_show(store, cat, req, quiet)]
        if suite_name == "io500-like":
            from clusterbench.analysis.io500_score import score_lines
            from clusterbench.report.data import load_run

            for run_id in run_ids:
                for line in score_lines(load_run(store, run_id)):
                    click.echo(line)
        click.echo(f"stored as run{'s' if len(run_ids) > 1 else ''} {', '.join(map(str, run_ids))} in {store.url}")
    if report_path or report_dir or suite_name:
        from clusterbench.report import write_report

        path = report_path or default_report_path(store.url, run_ids[-1], report_dir)
        option = "--report" if report_path else "--report-dir"
        click.echo(f"report: {write_report(store, [str(i) for i in run_ids], 'html', path, option=option)}")
