"""Runs a plan: starts each step through its launcher, streams cbk's
records into the store as they arrive (a crash keeps what was measured),
attaches limit warnings, and marks the run's outcome."""
from __future__ import annotations

import contextlib
import dataclasses
import functools
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import click

from clusterbench.run import step_engine
from clusterbench.run.step_engine import Interrupted, stopped_by
from clusterbench.launch import stop_signals
from clusterbench.launch.stop_signals import signal_name
from clusterbench.conditions import apply as conditions
from clusterbench.conditions.spec import Conditions
from clusterbench.catalogue import GPU, Catalogue, query_env
from clusterbench.errors import BadInput, MeasurementFailed, StoreFailed
from clusterbench.launch import Job, choose, host_ranks
from clusterbench.launch.kept_output import KeptOutput
from clusterbench.launch.messages import failure_line
from clusterbench.launch.processes import Deadline
from clusterbench.run.plan import Step
from clusterbench.run.progress import Progress
from clusterbench.run.host_files_dir import host_files_dir
from clusterbench.results.records import RunRecord, error_message, parse_line
from clusterbench.results.sample import Sample
from clusterbench.store import Store, run_kinds


@dataclass
class RunRequest:
    steps: list[Step]
    label: str | None
    command: str
    suite: str | None
    targets: list[str]
    hostfile: str | None = None
    oversubscribe: bool = False
    conditions: Conditions | None = None   # --memory-limit, --setting (clusterbench.conditions)
    link_bits_per_s: float | None = None   # --link-speed: the network's nominal rate, for the limit checks


def _raise_interrupted(signum, _frame):
    raise Interrupted(signal.Signals(signum).name)


def node_environments(cat: Catalogue, req: RunRequest, targets: list[str]) -> list[dict]:
    """One snapshot per node the steps reach, as their launchers reach them
    (Launcher.node_command: a host file's hosts, a Slurm allocation's nodes);
    the collector needs only Python and this package there. [] on one host."""
    argv = collector_argv(targets)
    for step in req.steps:
        if missing_requirement(step, cat):
            continue
        launcher = choose(step.launcher, step.ranks, cat.cbk)
        with host_files_dir() as folder:
            cmds = launcher.node_commands(argv, step.ranks, req.hostfile, Path(folder))
            if cmds:
                return collect_all(cmds, labelled=launcher.node_output_labelled)
    return []


def collect_all(cmds: list[list[str]], labelled: bool = False, timeout: float = 120) -> list[dict]:
    """The snapshots of several launches, run at once. Each launch has a
    process group of its own, as a step's launch has, and a stop signal
    meanwhile stops every launch's tree (SIGINT, then SIGKILL), as it
    stops a step: raised past them, it left mpiexec, each node's collector
    and the command it was waiting on running after clusterbench had said
    the run was interrupted (a SIGTERM reached none of them). `timeout`
    (seconds) is for all of them together, each read by a thread of its own
    (a snapshot can outgrow a pipe's buffer): waited for in turn, each its
    own 120 s, N hung nodes held the run N x 120 s."""
    procs: list[subprocess.Popen] = []
    outputs: dict[int, str] = {}

    def read(i: int, p: subprocess.Popen) -> None:
        outputs[i] = p.communicate()[0]

    try:
        for cmd in cmds:
            try:
                procs.append(subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                                              **step_engine.own_process_group()))
            except OSError:
                continue
        readers = [threading.Thread(target=read, args=(i, p), daemon=True) for i, p in enumerate(procs)]
        for t in readers:
            t.start()
        deadline = time.monotonic() + timeout
        for t in readers:
            t.join(max(0.0, deadline - time.monotonic()))
        alive = [t.is_alive() for t in readers]   # once: a reader may end between two looks
        answered = [outputs[i] for i, late in enumerate(alive) if not late]
        step_engine.stop(*(p for p, late in zip(procs, alive) if late))   # the whole launch: killing mpiexec alone left its node's collector
    except BaseException:
        step_engine.stop(*procs)
        raise
    found: list[dict] = []
    for out in answered:
        found += labelled_objects(out) if labelled else step_engine.json_objects(out)
    return found


def collector_argv(targets: list[str]) -> tuple[str, ...]:
    """A node's capture: with --busy, as the nodes' snapshots are compared (a noisy neighbour)."""
    return (sys.executable, "-m", "clusterbench.environment", "--line", "--busy", *(f"--target={t}" for t in targets))


def labelled_objects(out: str) -> list[dict]:
    """Output of `srun --label`: lines "TASK: chunk"; a task's chunks, in
    order, make its output."""
    by_task: dict[str, list[str]] = {}
    for line in out.splitlines():
        task, sep, chunk = line.partition(": ")
        if sep and task.strip().isdigit():
            by_task.setdefault(task.strip(), []).append(chunk)
    return [obj for chunks in by_task.values() for obj in step_engine.json_objects("".join(chunks))]


def capture_environment(store: Store, cat: Catalogue, run_id: int, req: RunRequest) -> dict:
    """Snapshots of this host and, with a host file, of every node in it;
    returns this host's (the limit checks use it)."""
    from clusterbench import environment

    local = environment.collect(req.targets, stop_grace=stop_signals.deferred)
    local.update(conditions.environment_keys(req.conditions))
    link = {"conditions.link_bits_per_s": req.link_bits_per_s} if req.link_bits_per_s else {}
    local.update(link)
    snapshots = {socket.gethostname(): local}
    for env in node_environments(cat, req, req.targets):
        if "host.name" not in env:   # not a snapshot: a garbled line's inner object
            continue
        env.update(conditions.environment_keys(req.conditions, this_host=False))
        env.update(link)
        snapshots.setdefault(str(env["host.name"]), env)
    for host, env in snapshots.items():
        h = environment.snapshot_hash(env)
        store.add_environment(env, h)
        store.link_host(run_id, host, h)
    return local


def missing_requirement(step: Step, cat: Catalogue) -> str | None:
    for r in step.requires:
        if r == "mpi" and not cat.mpi:
            return "cbk was built without MPI"
        if r == "root" and os.geteuid() != 0:
            return "needs root"
        if r == "gpu" and (why := gpu_missing(cat, step.kernel)):
            return why
        if r not in ("mpi", "root", "gpu"):
            return f"unknown requirement '{r}'"
    if step.ranks > 1 and not cat.mpi:
        # whether or not the step says `requires = ["mpi"]`: a cbk without MPI
        # started N times is N single-rank runs, which the launcher's rank
        # check then blamed on "mpiexec and cbk's MPI library" (or on a missing
        # mpiexec), neither of which installing an MPI would cure
        return f"{step.ranks} ranks need MPI, and cbk was built without MPI"
    return None


def gpu_missing(cat: Catalogue, kernel: str | None = None) -> str | None:
    """Why a step that needs a GPU cannot run here: no GPU on the PCI bus, cbk
    built without the GPU family's kernels (cbk's reason), or no GPU it can use visible to this
    host (the check of the step's own kernel when it is a GPU kernel, which
    asks the GPU runtime: gpupeer also wants two GPUs; else the first GPU
    kernel's). The check runs where clusterbench runs: a login node without
    GPUs skips a GPU step it would launch elsewhere."""
    built = cat.of_family(GPU)
    if not built:
        from clusterbench.environment.gpu import pci_gpus

        if pci_gpus() == {}:   # "rebuild cbk with nvcc" is no advice on a laptop with no GPU to measure
            return "no GPU on this host (no NVIDIA or AMD display or 3D controller on its PCI bus)"
        return next(iter(cat.left_out_of_family(GPU).values()), "cbk was built without the GPU kernels")
    return _gpu_refusal(cat.cbk, kernel if kernel in built else built[0])


@functools.cache
def _gpu_refusal(cbk: str, kernel: str) -> str | None:
    """Asked once per cbk: a refusal is not cached by cbk_refusal."""
    return cbk_refusal(cbk, (kernel,))


# what a step cbk refused at run time is stored as, within a suite
REFUSED_HERE = "cbk refused its input on this machine"


def run_step(store: Store, cat: Catalogue, run_id: int, position: int, step: Step, req: RunRequest,
             env: dict, progress: Progress, refusal_skips: bool = False) -> str:
    """Runs one step; returns its status (ok, failed, skipped, refused). cbk
    refusing the step's input here (exit 2, after preflight's check passed:
    what this machine cannot take, as arrays larger than the GPU's free
    memory) raises BadInput, or with refusal_skips (a suite) stores the step
    skipped with cbk's reason, so the steps after it still run, and returns
    "refused": unlike a step skipped for a missing requirement, it was meant to run."""
    why = missing_requirement(step, cat)
    if why:
        # before choosing a launcher: a build without MPI may have no mpiexec either
        step_id = step_engine.begin(store, run_id, position, step, step.launcher or "none")
        store.finish_step(step_id, "skipped", message=why)
        progress.note(f"skipped {step.title()}: {why}")
        return "skipped"
    launcher = choose(step.launcher, step.ranks, cat.cbk)
    step_engine.sweep_private_dirs(cat, step, progress.note)
    step_id = step_engine.begin(store, run_id, position, step, launcher.name)
    count = step_engine.Repetitions(step)
    progress.start_step(step.title(), count.most())
    build, stalled, stop_reason = None, None, None
    while True:
        batch = count.next_batch()
        job = Job(conditions.wrap(req.conditions, step.argv(cat.cbk, batch)), step.ranks, step.ranks_per_node,
                  req.hostfile, req.oversubscribe, step.env, program=cat.cbk)
        status, stderr, b = run_batch(store, launcher.command(job), step, step_id, env, progress, count, run_id,
                                      launcher.placement(job))
        build = b or build
        status, stderr, stall = step_engine.judge(status, stderr, b, step, launcher.name)
        if stall:
            stalled = stall
            progress.note(f"{step.title()}: {stalled}")
        if status != 0:
            break
        stop_reason = count.ran(batch)
        if stop_reason:
            break
    stopped = stopped_by(status, stderr)
    if stopped:
        # the stop signal reached cbk and not us (started without job control, or sent to cbk alone):
        # the same stop as Ctrl-C, not a failed measurement
        store.finish_step(step_id, "interrupted", build=build and build.record, message=f"cbk ended by {stopped}")
        progress.end_step()
        raise Interrupted(stopped)
    if status == 0:
        store.finish_step(step_id, "ok", build=build and build.record, stop_reason=stop_reason, message=stalled)
        progress.end_step()
        return "ok"
    msg = failure_line(stderr, status)
    skipped = status == 2 and refusal_skips
    store.finish_step(step_id, "skipped" if skipped else "failed", build=build and build.record,
                      message=f"{REFUSED_HERE}: {msg}" if skipped else msg)
    progress.end_step()
    # cbk's messages start with the kernel's name: a step named after its kernel says it once
    said = msg if msg.startswith(f"{step.title()}: ") else f"{step.title()}: {msg}"
    if skipped:
        progress.note(f"skipped {step.title()}: {REFUSED_HERE}: {msg}")
        return "refused"
    if status == 2:
        raise BadInput(said)
    progress.note(f"step failed: {said}")
    return "failed"


def run_batch(store: Store, cmd: list[str], step: Step, step_id: int, env: dict, progress: Progress,
              count: step_engine.Repetitions, run_id: int,
              placement=None) -> tuple[int, str, RunRecord | None]:
    """One cbk launch; its records go to the store as they arrive, and to
    count (numbered on after its repetitions so far); placement: the host
    of each rank, as its launcher placed them (named for a rank that said nothing).
    Returns (exit status, stderr, cbk's run record)."""
    # the launch keeps a reader of its own output: a kill -9 of this process must not end mpiexec by
    # SIGPIPE before its ranks have removed their files (launch/kept_output.py)
    pipes = KeptOutput()
    try:
        proc = subprocess.Popen(cmd, env=step_engine.cbk_env(step, run_id), **pipes.popen_args(),
                                **step_engine.own_process_group())
    except BaseException:
        pipes.close()
        raise
    proc.stdout, proc.stderr = pipes.started()
    stderr_chunks: list[str] = []

    def read_stderr() -> None:
        for said in proc.stderr:   # line by line: a launch ended unstarted quotes what it said before the stop
            stderr_chunks.append(said)

    reader = threading.Thread(target=read_stderr, daemon=True)
    reader.start()

    offset = count.done

    def sampled(item: Sample) -> None:
        count.record(item)
        progress.record(item, item.repetition + offset)

    records = step_engine.LaunchRecords(store, step_id, env, offset, step_engine.detail_records(step.kernel), sampled)
    # several ranks: bounded until cbk's first record says every one is past MPI_Init
    deadline = Deadline(proc, step.timeout_s, step.start_timeout_s if step.ranks > 1 else None,
                        heard=lambda: "".join(stderr_chunks), placement=placement)
    try:
        with stop_signals.suspended_together([proc.pid]):   # its own group: Ctrl-Z reaches us alone
            for line in proc.stdout:
                if parse_line(line) is not None:   # `started`, or an older cbk's first record
                    deadline.started()
                records.take(line)
            status = proc.wait()
    except BaseException as e:
        with stop_signals.deferred():
            deadline.cancel()
            step_engine.stop(proc)
            build = records.build
            reader.join(timeout=5)
            stopped = isinstance(e, (KeyboardInterrupt, Interrupted))
            close_despite_failure(store, lambda: store.finish_step(
                step_id, "interrupted" if stopped else "failed", build=build and build.record,
                message="interrupted by a signal" if stopped else failure_text(e)))
        raise
    deadline.cancel()
    reader.join(timeout=30)
    if deadline.expired:
        status, stderr_chunks[:] = 1, [deadline.message("".join(stderr_chunks))]
    return status, "".join(stderr_chunks), records.run_record()


def preflight(cat: Catalogue, req: RunRequest) -> None:
    """Rejects bad input before anything is stored or started."""
    skipped = {}
    for step in req.steps:
        if why := missing_requirement(step, cat):
            skipped[step.title()] = why
            continue  # skipped when run, with the reason; its kernel may not even exist here
        cat.check_params(cat.kernel(step.kernel), step.params)
        if step.ranks_per_node and step.ranks_per_node > step.ranks:
            # Hydra puts the ranks there is; Open MPI maps ppr:N:node as N slots and failed the stored run
            raise BadInput(f"{step.title()}: {step.ranks_per_node} ranks per node (--ppn) of {step.ranks} "
                           f"rank{'' if step.ranks == 1 else 's'} in all; give --ppn {step.ranks} or less")
        if step.gpus_per_rank:
            from clusterbench.launch.gpubind import preflight as gpu_preflight

            gpu_preflight(step, req.hostfile, cat.cbk)
        launcher = choose(step.launcher, step.ranks, cat.cbk)
        job = Job(step.argv(cat.cbk), step.ranks, step.ranks_per_node, req.hostfile, req.oversubscribe, step.env,
                  program=cat.cbk)
        launcher.command(job)
        if why := launcher.misfit(job):
            raise BadInput(f"{step.title()}: {why}")
        if not req.oversubscribe and launcher.on_this_host_only(job):
            host_ranks.check(step.ranks, step.title())   # Hydra started all of 100,000 ranks on 2 cores
        why = cbk_refusal(cat.cbk, (step.kernel, *step.cbk_args()))
        if why is None and step.gpus_per_rank:
            from clusterbench.launch.gpubind import local_bindings

            # what each rank will see: a grant may name a GPU this host lacks, which the check in this
            # process's own environment (every granted GPU visible) does not find
            why = next((w for b in local_bindings(step, req.hostfile, cat.cbk)
                        if (w := cbk_refusal(cat.cbk, (step.kernel, *step.cbk_args()), b)) is not None), None)
        if why is not None:
            raise BadInput(f"{step.title()}: {why}")
    if req.steps and len(skipped) == len(req.steps):
        # a run of nothing but skipped steps would be stored as ok, exit 0, with a report of empty
        # tables: `run gpu` on a node without a GPU is bad input there, as `run gpucopy` is
        raise BadInput(f"{'suite ' + req.suite if req.suite else 'this run'}: every step would be skipped here, "
                       f"nothing to measure: {'; '.join(dict.fromkeys(skipped.values()))}")


# Kernel arguments `cbk --check` accepted in this process, by cbk: `run` checks
# before it opens the store, and execute() again for callers that did not.
# The check reads only the arguments (and, for a rank bound to its GPUs, the
# binding it is checked under), so once is enough.
_ACCEPTED: set[tuple] = set()


def cbk_refusal(cbk: str, args: tuple[str, ...], binding: dict[str, str | None] | None = None) -> str | None:
    """Why cbk refuses these kernel arguments, or None; with `binding`, in
    the environment a rank bound to its GPUs gets (gpubind.binding_env: None
    removes a variable)."""
    key = (cbk, *args, *sorted((k, v or "") for k, v in (binding or {}).items()))
    if key in _ACCEPTED:
        return None
    env = query_env()
    for var, value in (binding or {}).items():
        if value is None:
            env.pop(var, None)
        else:
            env[var] = value
    check = subprocess.run([cbk, "--check", *args], capture_output=True, text=True, timeout=60, env=env)
    if check.returncode:
        return error_message(check.stderr) or check.stderr.strip()
    _ACCEPTED.add(key)
    return None


def execute(store: Store, cat: Catalogue, req: RunRequest, progress: Progress) -> int:
    """Runs the request under its conditions (applied before the run is
    stored, restored after); returns the run id. Raises BadInput (exit 2),
    MeasurementFailed (exit 1) or KeyboardInterrupt after marking the run."""
    preflight(cat, req)
    with conditions.applied(req.conditions, req) as active:
        return _execute(store, cat, dataclasses.replace(req, conditions=active), progress)


def _execute(store: Store, cat: Catalogue, req: RunRequest, progress: Progress) -> int:
    warnings: list[str] = []
    with stored_run(store, req.label, req.command, req.suite, warnings=warnings) as (run_id, statuses):
        env = capture_environment(store, cat, run_id, req)
        with progress:
            for i, step in enumerate(req.steps):
                statuses.append(run_step(store, cat, run_id, i, step, req, env, progress,
                                         refusal_skips=len(req.steps) > 1))
        refused = [step.title() for step, status in zip(req.steps, statuses) if status == "refused"]
        if "ok" not in statuses and "failed" not in statuses:
            # every step refused at run time: a run that measured nothing is no "ok" one
            raise BadInput(f"{'suite ' + req.suite if req.suite else 'this run'}: every step was refused here, "
                           f"nothing measured (clusterbench show {run_id})")
        # a GPU step skipped on a node without a GPU is the suite working as written (the step says so);
        # a step refused here was meant to run
        warnings += step_engine.part_skipped({REFUSED_HERE: refused} if refused else {})
        step_engine.add_cross_warnings(store, run_id)
    return run_id


def stop_line(stop: BaseException, store: Store) -> str:
    """What a command's stop says of the runs it kept: each run the store
    closed, by its id and status (the run stored as interrupted only where
    stored_run closed one). A stop before its row was written (while the
    progress display was imported, or the conditions applied) said it was
    stored too, and `list` showed no such run; one after an ok run was
    closed (while its tables were printed) said nothing of the run, whose
    id the "stored as run N" line it cut off was to give."""
    kept = dict(store.closed_runs)
    if getattr(stop, "run_id", None) is not None:
        kept.setdefault(stop.run_id, "interrupted")   # its close failed: it is `killed` in `list`
    if not kept:
        return "interrupted before the run began: it was not stored"
    return "interrupted: " + "; ".join(
        f"run {run_id} is stored as interrupted, with what it measured" if status == "interrupted"
        else f"run {run_id} is stored ({status}): clusterbench show {run_id}" for run_id, status in kept.items())


def failure_text(e: BaseException) -> str:
    return e.message if isinstance(e, click.ClickException) else f"{type(e).__name__}: {e}"


def close_despite_failure(store: Store, close) -> bool:
    """Runs close (a finish_step or finish_run); if the store fails it, as a
    full disk does, frees the room kept for this (store/disk_reserve.py) and
    tries once more. True if the run or step was closed."""
    try:
        close()
        return True
    except StoreFailed:
        if not store.release_reserve():
            return False
    try:
        close()
        return True
    except StoreFailed:
        return False


def _first_failure(store: Store, run_id: int) -> str:
    """': step 2 (name): why' for the first failed step, so the one line a
    batch log or a test keeps says why without `show`."""
    try:
        step = next((s for s in store.steps_of(run_id) if s.status == "failed"), None)
    except StoreFailed:
        return ""
    lines = (step.message or "").strip().splitlines() if step else []
    if not lines:
        return ""
    why = lines[0] if len(lines[0]) <= 300 else lines[0][:299] + "…"
    return f"; step {step.position + 1} ({step.name or step.kernel}): {why}"


@contextlib.contextmanager
def stored_run(store: Store, label: str | None, command: str, suite: str | None,
               kind: str = run_kinds.MEASURED, warnings: list[str] | None = None) -> Iterator[tuple[int, list[str]]]:
    """A run in the store for the body of the `with`, which appends each
    step's status to the list it is given: Ctrl-C and SIGTERM become
    KeyboardInterrupt(signal name) (the run marked interrupted), any error marks it
    failed and goes on up, failed steps end it failed (MeasurementFailed,
    exit 1), else it is ok. `run` and `run cluster` both go through here.
    warnings: what the body found wrong that failed no step (a cluster run's
    link matrix skipped), kept as the run's message, ok or failed: a run
    that measured a part of its suite was stored "ok" and said nothing."""
    previous = stop_signals.install(_raise_interrupted)
    statuses: list[str] = []
    run_id: int | None = None
    closing = False
    try:
        run_id = store.begin_run(label=label, command=command, suite=suite, kind=kind)
        yield run_id, statuses
        closing = True
        # a stop is held until the run's row says ok or failed: raised inside that write, it left the run
        # `running` and the command said no run was stored
        with stop_signals.held():
            _close(store, run_id, statuses, warnings)
    except (KeyboardInterrupt, Interrupted) as e:
        name = signal_name(e)
        if closing:
            raise KeyboardInterrupt(name) from None   # after the close: the run stays as closed (stop_line)
        if run_id is None:
            # stopped while its row was written (an fsync, or a wait on another writer): the row may be
            # committed without its id handed back, and would stay `running` while this said interrupted
            with contextlib.suppress(StoreFailed):
                run_id = store.unclosed_run_of_this_process()
        if run_id is not None:
            with stop_signals.deferred():
                close_despite_failure(store, lambda: store.finish_run(run_id, "interrupted",
                                                                     f"interrupted by {name}"))
        stop = KeyboardInterrupt(name)
        stop.run_id = run_id   # what the stop line may say was stored (stop_line)
        raise stop from None
    except BaseException as e:
        if run_id is None or closing:
            raise   # nothing stored: the store said why itself; or the close's own failure
        if not close_despite_failure(store, lambda: store.finish_run(run_id, "failed", failure_text(e))):
            raise StoreFailed(f"{failure_text(e)}; run {run_id} could not be closed: "
                              "`list` will show it killed") from None
        raise
    finally:
        stop_signals.restore(previous)


def _close(store: Store, run_id: int, statuses: list[str], warnings: list[str] | None) -> None:
    """Closes a run whose body ended: failed (MeasurementFailed) if a step failed, else ok."""
    warned = "; ".join(warnings or [])
    if "failed" in statuses:
        close_despite_failure(store, lambda: store.finish_run(run_id, "failed", f"{statuses.count('failed')} step(s) "
                                                             f"failed{'; ' + warned if warned else ''}"))
        failed = MeasurementFailed(f"run {run_id}: {statuses.count('failed')} of {len(statuses)} steps failed"
                                   f"{_first_failure(store, run_id)} (clusterbench show {run_id})")
        failed.run_id = run_id
        raise failed
    if not close_despite_failure(store, lambda: store.finish_run(run_id, "ok", warned or None)):
        raise StoreFailed(f"run {run_id} measured, but the store could not close it: `list` will show it killed")
