"""Runs a plan: starts each step through its launcher, streams cbk's
records into the store as they arrive (a crash keeps what was measured),
attaches limit warnings, and marks the run's outcome."""
from __future__ import annotations

import contextlib
import dataclasses
import functools
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import click

from clusterbench import limits
from clusterbench.conditions import apply as conditions
from clusterbench.conditions.spec import Conditions
from clusterbench.catalogue import Catalogue, query_env
from clusterbench.errors import BadInput, MeasurementFailed, StoreFailed
from clusterbench.launch import Job, choose
from clusterbench.launch.messages import failure_line, finalize_stall
from clusterbench.launch.processes import STOP_GRACE_S, Deadline, stop_tree
from clusterbench.plan import Step
from clusterbench.progress import Progress
from clusterbench.records import OtherRecord, RunRecord, error_message, read_line, stop_signal
from clusterbench.render_text import stored
from clusterbench.sample import Sample, SampleKey
from clusterbench.store import Store


class Interrupted(Exception):
    pass


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


# What a batch system or terminal sends before it ends a job: Slurm SIGTERM,
# Grid Engine's -notify warning and s_rt SIGUSR1/SIGUSR2, a CPU limit SIGXCPU,
# a closed terminal SIGHUP. Each stops the run as Ctrl-C does: cbk removes its
# files and the run is stored as interrupted, with what was measured.
STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP, signal.SIGUSR1, signal.SIGUSR2, signal.SIGXCPU)


def stopped_by(status: int, stderr: str) -> str | None:
    """The stop signal (Ctrl-C's or one of STOP_SIGNALS) a launch ended by:
    cbk's "stopped" record says it whatever the launcher makes of it (Hydra
    exits 2 for a rank ended by SIGINT); else -N from Popen when cbk itself
    was the launch."""
    if status == 0:
        return None
    stops = {s.name for s in (signal.SIGINT, *STOP_SIGNALS)}
    said = stop_signal(stderr)
    if said in stops:
        return said
    return next((s.name for s in (signal.SIGINT, *STOP_SIGNALS) if status == -s), None)


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
        with tempfile.TemporaryDirectory(prefix="clusterbench-hosts-") as folder:
            cmds = launcher.node_commands(argv, step.ranks, req.hostfile, Path(folder))
            if cmds:
                return collect_all(cmds, labelled=launcher.node_output_labelled)
    return []


def collect_all(cmds: list[list[str]], labelled: bool = False) -> list[dict]:
    """The snapshots of several launches, run at once."""
    procs = []
    for cmd in cmds:
        try:
            procs.append(subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True))
        except OSError:
            continue
    found: list[dict] = []
    for p in procs:
        try:
            out, _ = p.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
            continue
        found += labelled_objects(out) if labelled else _json_objects(out)
    return found


def collector_argv(targets: list[str]) -> tuple[str, ...]:
    return (sys.executable, "-m", "clusterbench.environment", "--line", *(f"--target={t}" for t in targets))


def collect_lines(cmd: list[str], labelled: bool = False) -> list[dict]:
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=120).stdout
    except (OSError, subprocess.SubprocessError):
        return []
    return labelled_objects(out) if labelled else _json_objects(out)


def labelled_objects(out: str) -> list[dict]:
    """Output of `srun --label`: lines "TASK: chunk"; a task's chunks, in
    order, make its output."""
    by_task: dict[str, list[str]] = {}
    for line in out.splitlines():
        task, sep, chunk = line.partition(": ")
        if sep and task.strip().isdigit():
            by_task.setdefault(task.strip(), []).append(chunk)
    return [obj for chunks in by_task.values() for obj in _json_objects("".join(chunks))]


def _json_objects(text: str) -> list[dict]:
    """Every JSON object in text, skipping anything else (a launcher's
    warning, a line cut short): a garbled snapshot is lost, not the run."""
    decoder, found, pos = json.JSONDecoder(), [], 0
    while (start := text.find("{", pos)) >= 0:
        try:
            obj, pos = decoder.raw_decode(text, start)
        except ValueError:
            pos = start + 1
            continue
        if isinstance(obj, dict):
            found.append(obj)
    return found


def capture_environment(store: Store, cat: Catalogue, run_id: int, req: RunRequest) -> dict:
    """Snapshots of this host and, with a host file, of every node in it;
    returns this host's (the limit checks use it)."""
    from clusterbench import environment

    local = environment.collect(req.targets)
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
        if r == "gpu" and (why := gpu_missing(cat.cbk, "gpumem" in cat.kernels, cat.left_out.get("gpumem"))):
            return why
        if r not in ("mpi", "root", "gpu"):
            return f"unknown requirement '{r}'"
    return None


@functools.cache
def gpu_missing(cbk: str, built: bool, left_out: str | None) -> str | None:
    """Why a step that needs a GPU cannot run here: cbk built without the GPU
    kernels, or no GPU visible to this host (gpumem's own check, which asks
    the GPU runtime). Asked once per cbk. The check runs where clusterbench
    runs: a login node without GPUs skips a GPU step it would launch elsewhere."""
    if not built:
        return left_out or "cbk was built without the GPU kernels"
    return cbk_refusal(cbk, ("gpumem", "--passes=2"))


def run_step(store: Store, cat: Catalogue, run_id: int, position: int, step: Step, req: RunRequest,
             env: dict, progress: Progress) -> str:
    """Runs one step; returns its status (ok, failed, skipped)."""
    why = missing_requirement(step, cat)
    if why:
        # before choosing a launcher: a build without MPI may have no mpiexec either
        step_id = store.begin_step(run_id, position=position, name=step.name, kernel=step.kernel,
                                   params=stored(dict(step.params)), launcher=step.launcher or "none",
                                   ranks=step.ranks, ranks_per_node=step.ranks_per_node)
        store.finish_step(step_id, "skipped", message=why)
        progress.note(f"skipped {step.title()}: {why}")
        return "skipped"
    launcher = choose(step.launcher, step.ranks, cat.cbk)
    sweep_private_dirs(cat, step, progress)
    step_id = store.begin_step(run_id, position=position, name=step.name, kernel=step.kernel,
                               params=stored(dict(step.params)), launcher=launcher.name, ranks=step.ranks,
                               ranks_per_node=step.ranks_per_node)
    progress.start_step(step.title(), step.auto.max_repeat if step.auto else step.repeat)
    figures: dict[SampleKey, list[float]] = {}
    done, build, started, stalled = 0, None, time.monotonic(), None
    stop_reason = f"fixed: {step.repeat} repetitions"
    while True:
        batch = step.repeat if not step.auto else (step.auto.min_repeat if done == 0 else 1)
        if step.auto:
            batch = min(batch, step.auto.max_repeat - done)
        job = Job(conditions.wrap(req.conditions, step.argv(cat.cbk, batch)), step.ranks, step.ranks_per_node,
                  req.hostfile, req.oversubscribe, step.env, program=cat.cbk)
        status, stderr, b = run_batch(store, launcher.command(job), step, step_id, env, progress, done, figures,
                                      run_id)
        build = b or build
        if b is not None and finalize_stall(stderr):
            # the measurement is whole (cbk's run record came last); only the
            # MPI library's shutdown stalled, and the launcher may say it failed
            stalled = finalize_stall(stderr)
            status = 0
            progress.note(f"{step.title()}: {stalled}")
        if status == 0 and b and b.ranks != step.ranks:
            # e.g. srun started N single-rank MPI jobs: its PMI and cbk's MPI did not meet
            status, stderr = 1, (f"the launcher started cbk as {b.ranks} rank(s), not {step.ranks}: "
                                 f"{launcher.name} and cbk's MPI library do not work together here")
        done += batch
        if status != 0 or not step.auto:
            break
        stop_reason = auto_stop(step.auto, figures, done, time.monotonic() - started)
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
    store.finish_step(step_id, "failed", build=build and build.record, message=msg)
    progress.end_step()
    # cbk's messages start with the kernel's name: a step named after its kernel says it once
    said = msg if msg.startswith(f"{step.title()}: ") else f"{step.title()}: {msg}"
    if status == 2:
        raise BadInput(said)
    progress.note(f"step failed: {said}")
    return "failed"


def sweep_private_dirs(cat: Catalogue, step: Step, progress: Progress) -> None:
    """Removes the private directories killed runs left where this step
    works (their owner stamp says the owner is gone), saying so."""
    from clusterbench import private_dirs

    param = cat.kernel(step.kernel).param("dir")
    if param is None or param.type != "path":
        return
    private_dirs.sweep(step.params.get("dir") or param.default or ".", cat.kernels, progress.note)


def auto_stop(auto, figures: dict[SampleKey, list[float]], done: int, elapsed_s: float) -> str | None:
    """Why adaptive repetition stops now, or None to go on."""
    from clusterbench import stats

    widths = [stats.ci_width_ratio(v) for v in figures.values()]
    if widths and all(w is not None and w <= auto.ci_target for w in widths):
        return f"ci: 95 % CI within {max(widths):.1%} of the median (target {auto.ci_target:.0%}) after {done}"
    if done >= auto.max_repeat:
        return f"max-repeat: {done} repetitions (CI target {auto.ci_target:.0%} not reached)"
    if elapsed_s >= auto.max_seconds:
        return f"max-time: {elapsed_s:.0f} s after {done} repetitions (CI target {auto.ci_target:.0%} not reached)"
    return None


def detail_records(kernel: str) -> tuple[str, ...]:
    """The record types that break kernel's measurement down (per pair, per
    rank), as cbk --describe names them: kept with the step's build, so
    exports and reports can show them."""
    from clusterbench.plan_params import kernel_of

    k = kernel_of(kernel)
    return k.detail_records if k else ()


def run_batch(store: Store, cmd: list[str], step: Step, step_id: int, env: dict, progress: Progress,
              offset: int, figures: dict[SampleKey, list[float]], run_id: int) -> tuple[int, str, RunRecord | None]:
    """One cbk launch; its records go to the store as they arrive.
    Returns (exit status, stderr, cbk's run record)."""
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, **step.env, "CLUSTERBENCH_RUN": str(run_id),   # for cbk's owner stamps
                                 "CLUSTERBENCH_ORCHESTRATOR": orchestrator()})
    stderr_chunks: list[str] = []
    reader = threading.Thread(target=lambda: stderr_chunks.append(proc.stderr.read()), daemon=True)
    reader.start()
    build, cgroups, details = None, [], []
    detail_types = detail_records(step.kernel)
    deadline = Deadline(proc, step.timeout_s)
    try:
        for line in proc.stdout:
            item = read_line(line, extra_fields=conditions.record_fields(env))
            if isinstance(item, RunRecord):
                build = item
            elif isinstance(item, Sample):
                store.add_sample(step_id, item, limits.sample_warnings(item, env), repetition_offset=offset)
                if item.value is not None:
                    figures.setdefault(item.key(), []).append(item.value)
                progress.record(item, item.repetition + offset)
            elif isinstance(item, OtherRecord) and item.type == "memory-cgroup":  # each host's peak under --memory-limit
                cgroups.append(item.record)
            elif isinstance(item, OtherRecord) and item.type in detail_types:
                details.append(item.record)
        status = proc.wait()
    except BaseException as e:
        deadline.cancel()
        _stop(proc)
        reader.join(timeout=5)
        stopped = isinstance(e, (KeyboardInterrupt, Interrupted))
        close_despite_failure(store, lambda: store.finish_step(
            step_id, "interrupted" if stopped else "failed", build=build and build.record,
            message="interrupted by a signal" if stopped else failure_text(e)))
        raise
    deadline.cancel()
    reader.join(timeout=30)
    if deadline.expired:
        status, stderr_chunks[:] = 1, [deadline.message()]
    if build is not None and cgroups:
        build.record["memory_cgroups"] = cgroups
    if build is not None and details:
        build.record["detail_records"] = details
    return status, "".join(stderr_chunks), build


def orchestrator() -> str:
    """This process as cbk watches it (kernels/core/orchestrator_watch.h):
    "BOOT_ID PID START_TICKS". A cbk on this host that sees it gone (a kill
    -9 here) removes its files and ends, as on Ctrl-C."""
    from clusterbench import private_dirs

    return f"{private_dirs.boot_id()} {os.getpid()} {private_dirs.start_ticks(os.getpid())}"


# Ctrl-C reaches the launcher too (one process group): a second SIGINT
# within this time would make mpiexec kill -9 its ranks mid-cleanup.
GROUP_SIGNAL_WAIT_S = 3


def _stop(proc: subprocess.Popen) -> None:
    """Lets cbk clean up (it removes its files on SIGINT), then insists, on
    the launcher and every process under it."""
    try:
        proc.wait(timeout=GROUP_SIGNAL_WAIT_S)
    except subprocess.TimeoutExpired:
        pass
    if proc.poll() is None:
        stop_tree(proc.pid, STOP_GRACE_S)
    proc.wait()


def add_cross_warnings(store: Store, run_id: int) -> None:
    from clusterbench.limits import gpu_limits as limits_gpu

    steps = store.steps_of(run_id)
    samples = [s for st in steps for s in store.samples_of(st.id)]
    for sid, extra in limits.cross_sample_warnings(samples).items():
        store.add_sample_warnings(sid, extra)
    for st in steps:   # two ranks on one GPU: known only from the step's run record
        if limits_gpu.uses_gpu(st.kernel, st.params or {}) and (why := limits_gpu.shared_gpu(st.build)):
            for s in store.samples_of(st.id):
                store.add_sample_warnings(s.id, [why])


def preflight(cat: Catalogue, req: RunRequest) -> None:
    """Rejects bad input before anything is stored or started."""
    for step in req.steps:
        if missing_requirement(step, cat):
            continue  # skipped when run, with the reason; its kernel may not even exist here
        cat.check_params(cat.kernel(step.kernel), step.params)
        if step.gpus_per_rank:
            from clusterbench.gpubind import preflight as gpu_preflight

            gpu_preflight(step, req.hostfile)
        launcher = choose(step.launcher, step.ranks, cat.cbk)
        launcher.command(Job(step.argv(cat.cbk), step.ranks, step.ranks_per_node, req.hostfile,
                             req.oversubscribe, step.env, program=cat.cbk))
        why = cbk_refusal(cat.cbk, (step.kernel, *step.cbk_args()))
        if why is not None:
            raise BadInput(f"{step.title()}: {why}")


# Kernel arguments `cbk --check` accepted in this process, by cbk: `run` checks
# before it opens the store, and execute() again for callers that did not.
# The check reads only the arguments, so once is enough.
_ACCEPTED: set[tuple[str, ...]] = set()


def cbk_refusal(cbk: str, args: tuple[str, ...]) -> str | None:
    """Why cbk refuses these kernel arguments, or None."""
    if (cbk, *args) in _ACCEPTED:
        return None
    check = subprocess.run([cbk, "--check", *args], capture_output=True, text=True, timeout=60, env=query_env())
    if check.returncode:
        return error_message(check.stderr) or check.stderr.strip()
    _ACCEPTED.add((cbk, *args))
    return None


def execute(store: Store, cat: Catalogue, req: RunRequest, progress: Progress) -> int:
    """Runs the request under its conditions (applied before the run is
    stored, restored after); returns the run id. Raises BadInput (exit 2),
    MeasurementFailed (exit 1) or KeyboardInterrupt after marking the run."""
    preflight(cat, req)
    with conditions.applied(req.conditions, req) as active:
        return _execute(store, cat, dataclasses.replace(req, conditions=active), progress)


def _execute(store: Store, cat: Catalogue, req: RunRequest, progress: Progress) -> int:
    with stored_run(store, req.label, req.command, req.suite) as (run_id, statuses):
        env = capture_environment(store, cat, run_id, req)
        with progress:
            for i, step in enumerate(req.steps):
                statuses.append(run_step(store, cat, run_id, i, step, req, env, progress))
        add_cross_warnings(store, run_id)
    return run_id


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


@contextlib.contextmanager
def stored_run(store: Store, label: str | None, command: str, suite: str | None) -> Iterator[tuple[int, list[str]]]:
    """A run in the store for the body of the `with`, which appends each
    step's status to the list it is given: Ctrl-C and SIGTERM become
    KeyboardInterrupt (the run marked interrupted), any error marks it
    failed and goes on up, failed steps end it failed (MeasurementFailed,
    exit 1), else it is ok. `run` and `run cluster` both go through here."""
    run_id = store.begin_run(label=label, command=command, suite=suite)
    previous = {sig: signal.signal(sig, _raise_interrupted) for sig in STOP_SIGNALS}
    statuses: list[str] = []
    try:
        yield run_id, statuses
    except (KeyboardInterrupt, Interrupted):
        close_despite_failure(store, lambda: store.finish_run(run_id, "interrupted", "interrupted by a signal"))
        raise KeyboardInterrupt from None
    except BaseException as e:
        if not close_despite_failure(store, lambda: store.finish_run(run_id, "failed", failure_text(e))):
            raise StoreFailed(f"{failure_text(e)}; run {run_id} could not be closed: "
                              "`list` will show it killed") from None
        raise
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    if "failed" in statuses:
        close_despite_failure(store, lambda: store.finish_run(run_id, "failed",
                                                             f"{statuses.count('failed')} step(s) failed"))
        failed = MeasurementFailed(f"run {run_id}: {statuses.count('failed')} of {len(statuses)} steps failed "
                                   f"(clusterbench show {run_id})")
        failed.run_id = run_id
        raise failed
    if not close_despite_failure(store, lambda: store.finish_run(run_id, "ok")):
        raise StoreFailed(f"run {run_id} measured, but the store could not close it: `list` will show it killed")
