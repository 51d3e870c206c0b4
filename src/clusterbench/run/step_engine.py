"""The life of one step in the store, shared by `run` (run/runner.py) and the
per-node steps of `run cluster` (run/cluster/execute.py), so both apply the
same checks: the step opened with storable parameters, the stale private
directories of killed runs swept where it works, each launch's records
stored as they are read (a sample with its limit warnings; the cgroup and
detail records kept with the run record), the launch judged (an
MPI_Finalize stall after the last record is not a failure; a run record
whose rank count differs from the step's is), and the checks between a
run's samples once it ends, and how many repetitions a launch runs and why
the step stops (Repetitions: --repeat N, or --repeat auto's CI rule). The
callers own only how they launch: one launch streamed (runner), or one
launch per node at once (cluster)."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from collections.abc import Callable, Collection

from clusterbench import catalogue, limits
from clusterbench.conditions import apply as conditions
from clusterbench.launch.messages import finalize_stall, launcher_ended_the_job
from clusterbench.launch.processes import STOP_GRACE_S, stop_trees
from clusterbench.run.plan import AutoRepeat, Step
from clusterbench.results.records import OtherRecord, RunRecord, error_message, read_line, stop_signal
from clusterbench.output.render_text import stored
from clusterbench.results.sample import Sample, SampleKey
from clusterbench.launch import stop_signals
from clusterbench.launch.stop_signals import STOP_SIGNALS
from clusterbench.store import Store


class Interrupted(BaseException):
    """A stop signal ended the run, or one of its launches (stopped_by).
    A BaseException, as KeyboardInterrupt is: raised by a signal handler
    wherever the main thread happens to be, an Exception was caught by any
    `except Exception` there (a collector's, a library's) and the run went
    on measuring as if never stopped (a pario run's SIGTERM, 1 in 40)."""


def stopped_by(status: int, stderr: str) -> str | None:
    """The stop signal (Ctrl-C's or one of STOP_SIGNALS) a launch ended by:
    cbk's "stopped" record says it whatever the launcher makes of it (Hydra
    exits 2 for a rank ended by SIGINT); else -N from Popen when cbk itself
    was the launch. None where the launcher ended the job itself for a rank
    that exited badly: Open MPI then sends the others SIGTERM, which is no
    one's stop (the run went on as interrupted, exit 143)."""
    if status == 0 or launcher_ended_the_job(stderr):
        return None
    stops = {s.name for s in (signal.SIGINT, *STOP_SIGNALS)}
    said = stop_signal(stderr)
    if said in stops:
        return said
    return next((s.name for s in (signal.SIGINT, *STOP_SIGNALS) if status == -s), None)


def begin(store: Store, run_id: int, position: int, step: Step, launcher: str, host: str | None = None) -> int:
    """Opens the step in the store; host: the one node a per-node step runs on."""
    return store.begin_step(run_id, position=position, name=step.name, kernel=step.kernel,
                            params=stored(dict(step.params)), launcher=launcher, ranks=step.ranks,
                            ranks_per_node=step.ranks_per_node, host=host, swept=list(step.swept))


def private_dirs_parent(cat, step: Step) -> str | None:
    """The directory this step's cbk makes its private directories in; None
    for a kernel that makes none."""
    param = cat.kernel(step.kernel).param("dir")
    if param is None or param.type != "path":
        return None
    return step.params.get("dir") or param.default or "."


def sweep_private_dirs(cat, step: Step, note: Callable[[str], None]) -> None:
    """Removes the private directories killed runs left where this step
    works (their owner stamp says the owner is gone), saying so."""
    from clusterbench.run import private_dirs

    if (parent := private_dirs_parent(cat, step)) is not None:
        private_dirs.sweep(parent, cat.kernels, note)


def cbk_env(step: Step, run_id: int) -> dict[str, str]:
    """The environment a launch of cbk gets: the step's, the store's run id
    (cbk's owner stamps) and this process (cbk ends if it is killed)."""
    return {**os.environ, **step.env, "CLUSTERBENCH_RUN": str(run_id), "CLUSTERBENCH_ORCHESTRATOR": orchestrator()}


def orchestrator() -> str:
    """This process as cbk watches it (kernels/core/orchestrator_watch.h):
    "BOOT_ID PID START_TICKS". A cbk on this host that sees it gone (a kill
    -9 here) removes its files and ends, as on Ctrl-C."""
    from clusterbench.run import private_dirs

    return f"{private_dirs.boot_id()} {os.getpid()} {private_dirs.start_ticks(os.getpid())}"


def auto_stop(auto: AutoRepeat, figures: dict[SampleKey, list[float]], done: int, elapsed_s: float) -> str | None:
    """Why adaptive repetition stops now, or None to go on."""
    from clusterbench.analysis import stats

    widths = [stats.ci_width_ratio(v) for v in figures.values()]
    if widths and all(w is not None and w <= auto.ci_target for w in widths):
        return f"ci: 95 % CI within {max(widths):.1%} of the median (target {auto.ci_target * 100:g}%) after {done}"
    if done >= auto.max_repeat:
        return f"max-repeat: {done} repetitions (CI target {auto.ci_target * 100:g}% not reached)"
    if elapsed_s >= auto.max_seconds:
        return f"max-time: {elapsed_s:.0f} s after {done} repetitions (CI target {auto.ci_target * 100:g}% not reached)"
    return None


class Repetitions:
    """How many repetitions a step's next launch runs, and why the step
    stops: its fixed count (--repeat N), or --repeat auto's rule (auto_stop)
    on the figures of the samples it was given. One per step in `run`; one
    per node of a per-node step in `run cluster`, so each node is judged on
    its own figures by the rule a `run` step is judged by. started_s: when
    the step began (time.monotonic), shared by the nodes of one step so
    --max-time ends them together."""

    def __init__(self, step: Step, started_s: float | None = None):
        self.step, self.done = step, 0
        self.figures: dict[SampleKey, list[float]] = {}
        self.started_s = time.monotonic() if started_s is None else started_s

    def most(self) -> int:
        return self.step.auto.max_repeat if self.step.auto else self.step.repeat

    def next_batch(self, at_most: int | None = None) -> int:
        """The repetitions of the next launch: the rest of a fixed count; under
        auto the first min_repeat at once (the first n with a 95 % CI), then
        one at a time."""
        auto = self.step.auto
        if auto:
            n = min(auto.min_repeat if self.done == 0 else 1, auto.max_repeat - self.done)
        else:
            n = self.step.repeat - self.done
        return min(n, at_most) if at_most else n

    def record(self, sample: Sample) -> None:
        if sample.value is not None:
            self.figures.setdefault(sample.key(), []).append(sample.value)

    def ran(self, n: int) -> str | None:
        """Counts n repetitions more; returns why the step stops now (its
        stop_reason), or None to go on."""
        self.done += n
        auto = self.step.auto
        if not auto:
            return f"fixed: {self.step.repeat} repetitions" if self.done >= self.step.repeat else None
        if self.done < min(auto.min_repeat, auto.max_repeat):
            return None   # the first min_repeat always run, as `run`'s first launch holds them
        return auto_stop(auto, self.figures, self.done, time.monotonic() - self.started_s)


def detail_records(kernel: str) -> tuple[str, ...]:
    """The record types that break kernel's measurement down (per pair, per
    rank), as cbk --describe names them: kept with the step's build, so
    exports and reports can show them."""
    from clusterbench.results.params import kernel_of

    k = kernel_of(kernel)
    return k.detail_records if k else ()


class LaunchRecords:
    """What one launch of cbk prints, line by line: each sample stored as it
    is read, with the limit warnings of the host it ran on (env); cbk's run
    record kept, with the memory-cgroup records and the detail records
    (detail_types) attached to it."""

    def __init__(self, store: Store, step_id: int, env: dict, repetition_offset: int,
                 detail_types: Collection[str], on_sample: Callable[[Sample], None] | None = None):
        self.store, self.step_id, self.env, self.offset = store, step_id, env, repetition_offset
        self.detail_types, self.on_sample = detail_types, on_sample
        self.extra_fields = conditions.record_fields(env)
        self.build: RunRecord | None = None
        self.cgroups: list[dict] = []
        self.details: list[dict] = []

    def take(self, line: str) -> None:
        item = read_line(line, extra_fields=self.extra_fields)
        if isinstance(item, RunRecord):
            self.build = item
        elif isinstance(item, Sample):
            self.store.add_sample(self.step_id, item, limits.sample_warnings(item, self.env),
                                  repetition_offset=self.offset)
            if self.on_sample:
                self.on_sample(item)
        elif isinstance(item, OtherRecord) and item.type == "memory-cgroup":  # each host's peak under --memory-limit
            self.cgroups.append(item.record)
        elif isinstance(item, OtherRecord) and item.type in self.detail_types:
            self.details.append(item.record)

    def run_record(self) -> RunRecord | None:
        if self.build is not None and self.cgroups:
            self.build.record["memory_cgroups"] = self.cgroups
        if self.build is not None and self.details:
            self.build.record["detail_records"] = self.details
        return self.build


def judge(status: int, stderr: str, build: RunRecord | None, step: Step,
          launcher: str) -> tuple[int, str, str | None]:
    """(status, stderr, the stall to note or None) of a launch that ended."""
    stalled = None
    if build is not None and finalize_stall(stderr):
        # the measurement is whole (cbk's run record came last); only the
        # MPI library's shutdown stalled, and the launcher may say it failed
        stalled = finalize_stall(stderr)
        status = 0
    elif build is not None and status == -signal.SIGPIPE and not error_message(stderr):
        # Hydra's mpiexec killed by SIGPIPE writing to a proxy whose ranks had
        # ended (seen across test hosts when cbk's finalize watchdog ended
        # them): after cbk's run record, so the measurement is whole; the
        # watchdog's own lines went down with the launcher's output
        stalled = (f"{launcher} died of SIGPIPE after cbk's run record was written (a peer of the launcher "
                   "went away during MPI's shutdown); the measurement is whole")
        status = 0
    if status == 0 and build and build.ranks != step.ranks:
        # e.g. srun started N single-rank MPI jobs: its PMI and cbk's MPI did not meet
        status, stderr = 1, (f"the launcher started cbk as {build.ranks} rank(s), not {step.ranks}: "
                             f"{launcher} and cbk's MPI library do not work together here")
    return status, stderr, stalled


def own_process_group() -> dict:
    """Popen arguments that start a launch in a process group of its own,
    with nothing to read: a terminal's Ctrl-C then reaches clusterbench
    alone, which passes exactly one SIGINT to every process of the launch
    (stop). In the terminal's group, an impatient second Ctrl-C reached
    Hydra's mpiexec directly, and it kill -9'd its ranks while they removed
    their files; under nohup the closed terminal's SIGHUP reached Open MPI's
    prterun, which ended the job (run cluster's steps stored failed, exit 1).
    A launch in a background group that read the terminal would be stopped
    (SIGTTIN): Hydra forwards its stdin to rank 0. Every launch of `run`
    and `run cluster` starts so, and is sent SIGTERM should clusterbench
    die before it (launch/parent_death.py)."""
    from clusterbench.launch import parent_death

    return {"process_group": 0, "stdin": subprocess.DEVNULL, "preexec_fn": parent_death.armed()}


def stop(*procs: subprocess.Popen) -> None:
    """Lets cbk clean up (it removes its files on SIGINT), then insists, on
    each launcher and every process under it, all launches at once. Every
    launch has a process group of its own (own_process_group), so none had
    the terminal's Ctrl-C: each gets its one SIGINT here. A further stop
    signal meanwhile does not cut this short (stop_signals.deferred)."""
    with stop_signals.deferred():
        stop_trees([proc.pid for proc in procs if proc.poll() is None], STOP_GRACE_S)
        for proc in procs:
            proc.wait()


def json_objects(text: str) -> list[dict]:
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


def add_cross_warnings(store: Store, run_id: int) -> None:
    """The checks between a run's samples (limits.cross_sample_warnings),
    among the samples of one host: a per-node step's cold read is judged
    against the same node's direct read, never another node's."""
    from clusterbench.limits import gpu_limits as limits_gpu

    from clusterbench.results.sample import in_words

    steps = store.steps_of(run_id)
    by_host: dict[str | None, list[Sample]] = {}
    for st in steps:
        # in the kernel's words: a warning names its figure as the step's table does
        by_host.setdefault(st.host, []).extend(in_words(store.samples_of(st.id),
                                                        catalogue.step_phase_words(st.kernel, st.build)))
    for samples in by_host.values():
        for sid, extra in limits.cross_sample_warnings(samples).items():
            store.add_sample_warnings(sid, extra)
    for st in steps:   # two ranks on one GPU: known only from the step's run record
        if limits_gpu.uses_gpu(catalogue.family_of(st.kernel), st.params or {}) \
                and (why := limits_gpu.shared_gpu(st.build)):
            for s in store.samples_of(st.id):
                store.add_sample_warnings(s.id, [why])


def part_skipped(skipped: dict[str, list[str]]) -> list[str]:
    """The run's warning for the steps skipped (why -> their names): "part
    of the suite skipped: link matrix (mpiGraph shift pattern) and 8 scaling
    steps: cbk cannot run on every node (h03: ...), ...". Such a run was
    stored "ok", and show, list and the report said so of a run that never
    measured a link."""
    if not skipped:
        return []
    # here, not at the top: naming reads the cluster suite's file (tomllib), which a plain run never needs
    from clusterbench.analysis.cluster.naming import steps_text

    return [f"part of the suite skipped: {steps_text(names)}: {why}" for why, names in skipped.items()]
