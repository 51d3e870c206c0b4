"""The run use case shared by `clusterbench run`, `ior` and `mdtest`:
steps with absolute paths, a request checked before anything runs, then
execute and print the result tables."""
from __future__ import annotations

import contextlib
import dataclasses
import os
import sys

import click


def absolute_paths(steps, cat):
    """Path parameters become absolute, so records and the environment name the same directory."""
    out, targets = [], []
    from clusterbench.run.runner import missing_requirement

    for s in steps:
        if missing_requirement(s, cat):
            out.append(s)  # skipped when run; its kernel may not exist in this build
            continue
        kernel = cat.kernel(s.kernel)
        params = dict(s.params)
        for p in kernel.params:
            if p.type == "path":
                params[p.name] = os.path.abspath(params.get(p.name, p.default or "."))
                targets.append(params[p.name])
        out.append(dataclasses.replace(s, params=params))
    return out, list(dict.fromkeys(targets))


def tool_ranks(option_ranks: int | None, line_ranks: int | None) -> int:
    """--np, or the tool line's `mpiexec -n N`; both only when they agree."""
    from clusterbench.errors import BadInput
    from clusterbench.launch import MAX_RANKS

    if line_ranks and line_ranks > MAX_RANKS:
        raise BadInput(f"the line's {line_ranks} ranks (its launcher's -n, or IOR's -N) are more than MPI can"
                       f" count ({MAX_RANKS})")
    if option_ranks and line_ranks and option_ranks != line_ranks:
        # the line's count is its launcher's -n, or IOR's -N when it names no launcher
        raise BadInput(f"--np {option_ranks} and the line's {line_ranks} ranks (its launcher's -n, or IOR's -N) "
                       f"disagree")
    return option_ranks or line_ranks or 1


def tool_launcher(option_launcher: str | None, line_launcher: str | None) -> str | None:
    """--launcher, or the tool line's (srun for `srun -n N ior ...`); both only when they agree."""
    from clusterbench.errors import BadInput

    if option_launcher and line_launcher and option_launcher != line_launcher:
        raise BadInput(f"--launcher {option_launcher} and the line's {line_launcher} disagree: give one of them")
    return option_launcher or line_launcher


def checked_request(cat, steps, label, hostfile, oversubscribe, conditions):
    """The request of a translated tool line (ior, mdtest), with absolute
    paths and the run's command line (its store password masked); bad input
    (a missing directory, a refused setting) raises here, before anything is
    shown or the store is opened."""
    import shlex

    from clusterbench.conditions.apply import check
    from clusterbench.run.runner import RunRequest, preflight
    from clusterbench.store.redact import mask_secrets
    from clusterbench.store.storable import check_run

    steps, targets = absolute_paths(steps, cat)
    req = RunRequest(steps, label, mask_secrets(shlex.join(["clusterbench", *sys.argv[1:]])), None, targets,
                     hostfile, oversubscribe, conditions)
    check(req.conditions, req)
    preflight(cat, req)
    check_run(req.label, None, ((s.name, s.kernel, s.params) for s in req.steps))  # what PostgreSQL cannot hold
    return req


def execute_and_show(store, cat, req, quiet: bool, show: bool = True) -> int:
    """Runs the request; prints the result tables (also of a run whose steps
    failed, before its exit 1). Returns the run id. A stop goes up: the
    command says what was kept (stops_said)."""
    from clusterbench.errors import MeasurementFailed
    from clusterbench.run.progress import Progress
    from clusterbench.run.runner import execute

    try:
        run_id = execute(store, cat, req, Progress(enabled=not quiet))
    except MeasurementFailed as e:
        if not quiet:
            _print_run(store, e.run_id)
        raise
    if show and not quiet:
        _print_run(store, run_id)
    return run_id


@contextlib.contextmanager
def stops_said(store):
    """Around a command's runs, up to its "stored as run N" line: a stop
    (Ctrl-C, SIGTERM) says in one line which runs were kept, by id and
    status, or that none was (runner.stop_line), and exits 128 + the
    signal's number (130 after Ctrl-C). Only the run's own stop said so
    before: one that landed after an ok run was closed (while its tables
    were printed) said "interrupted", and the run's id never."""
    try:
        yield
    except KeyboardInterrupt as e:
        from clusterbench.launch.stop_signals import leaving
        from clusterbench.run.runner import stop_line

        status = leaving(e)   # first: a second stop from here on would say another line
        click.echo(stop_line(e, store), err=True)
        sys.exit(status)


def _print_run(store, run_id: int) -> None:
    # imported only to print: rich and the report code cost a --quiet run 20 ms (#24)
    from clusterbench.output.console import stdout_console
    from clusterbench.report.data import load_run
    from clusterbench.report.terminal import print_run

    print_run(stdout_console(), load_run(store, run_id))
