"""Runs `clusterbench run cluster`: the per-node figures on every node (all
at once by default, what users see in production; one node at a time on
request), then the link matrix, then collective scaling. Stored as one run
of kind "cluster" (store/run_kinds.py); a per-node step is named after its
part and its node is the step's host column.

A per-node step on one node is the kernel launched on a one-line host file
through the run's launcher (mpiexec, or srun inside an allocation): the
same path every other step takes (run/step_engine.py: the step opened, the
private directories swept, the records stored and the launch judged as
`run` does), so records, warnings and the store are the ones a
single-node run gives. All nodes at once means one such launch
per node, started together; each node's output is stored, and its step
closed, as its launch ends (a Ctrl-C keeps every node that ended)."""
from __future__ import annotations

import contextlib
import dataclasses
import os
import queue
import random
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from clusterbench.launch import stop_signals
from clusterbench.run import runner, step_engine
from clusterbench.catalogue import GPU, Catalogue
from clusterbench.conditions import apply as conditions_apply
from clusterbench.conditions.spec import Conditions
from clusterbench.analysis.cluster.naming import (LINKS_ALONE_STEP, LINKS_STEP, SCALING_PREFIX,
                                                  suite_document)
from clusterbench.errors import BadInput
from clusterbench.launch import Job, choose
from clusterbench.launch.allocation import heterogeneous
from clusterbench.launch.job import hostfile_hosts
from clusterbench.launch.kept_output import KeptOutput
from clusterbench.launch.messages import failure_line
from clusterbench.launch.processes import START_TIMEOUT_S, Deadline
from clusterbench.run.plan import AutoRepeat, Step, expand
from clusterbench.results.step_words import sweep_bracket
from clusterbench.run.cluster.declared_time import Declared, launch_time
from clusterbench.run.cluster.straggler import StragglerRule
from clusterbench.run.progress import Progress
from clusterbench.run.host_files_dir import host_files_dir
from clusterbench.store import Store, run_kinds

PARTS = ("stream", "himeno", "cpufreq", "seqio", "pingpong", "gpu-link", "gpu-memory", "gpu-peer", "links",
         "scaling")
STOPPED_OUTPUT_WAIT_S = 30.0   # after a Ctrl-C: how long a stopped launch's output is awaited, to store it
OPTIONS = {"scratch", "one-at-a-time", "links-one-pair", "only", "skip", "threshold", "link-threshold", "topology"}


@dataclass
class ClusterRequest:
    hosts: list[str]
    hostfile: str | None          # the run's host file (None inside a Slurm or Grid Engine allocation)
    launcher: str                 # mpiexec or srun
    parts: tuple[str, ...]
    repeat: int
    one_at_a_time: bool
    links_one_pair: bool          # every link alone too, after the shift pattern
    overrides: dict[str, dict[str, str]]   # part -> name -> value
    scratch: str
    oversubscribe: bool
    switches: dict[str, str]      # host -> its switch, when known (link classes)
    label: str | None
    command: str
    step_timeout_s: float | None = None   # --step-timeout: one launch's limit
    auto: AutoRepeat | None = None        # --repeat auto: every step repeats until its CI rule says stop
    conditions: Conditions | None = None  # --memory-limit: each node's kernel in a memory cgroup (cgexec)
    straggler: StragglerRule = StragglerRule()   # --stall-floor, --stall-factor: a stopped node is ended
    start_timeout_s: float = START_TIMEOUT_S      # --start-timeout: a cluster-wide step's ranks past MPI_Init
    # node (its own host name) -> the host-file entry it is reached by, where they differ (named_by_snapshots)
    addresses: dict[str, str] = field(default_factory=dict)

    def reach(self, host: str) -> str:
        """The name a launcher reaches node `host` by."""
        return self.addresses.get(host, host)



def allocation_hosts() -> list[str]:
    nodelist = os.environ.get("SLURM_JOB_NODELIST") or os.environ.get("SLURM_NODELIST")
    if not os.environ.get("SLURM_JOB_ID") or not nodelist:
        return []
    if why := heterogeneous(os.environ):   # its nodelist is the first component's: a part taken as the cluster
        raise BadInput(f"run cluster: {why}")
    # inside a job, a failing scontrol is the news: "run cluster needs nodes (... a Slurm allocation)"
    # said to someone inside one hid it
    why = f"in Slurm job {os.environ['SLURM_JOB_ID']}, `scontrol show hostnames {nodelist}`"
    try:
        out = subprocess.run(["scontrol", "show", "hostnames", nodelist], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise BadInput(f"{why} could not run ({getattr(e, 'strerror', None) or e}): give the nodes with --hostfile")
    if out.returncode != 0 or not out.stdout.split():
        said = (out.stderr.strip().splitlines() or [f"exit status {out.returncode}"])[-1]
        raise BadInput(f"{why} failed ({said}): give the nodes with --hostfile")
    return out.stdout.split()


def grid_engine_hosts() -> list[str]:
    """The hosts of a Grid Engine job's parallel environment ($PE_HOSTFILE:
    "host slots queue processors" per line)."""
    pe_hostfile = os.environ.get("PE_HOSTFILE")
    if not os.environ.get("JOB_ID") or not pe_hostfile or not os.path.isfile(pe_hostfile):
        return []
    from clusterbench.launch.hostfile import grid_engine_hosts as pe_hosts

    return pe_hosts(pe_hostfile)


def find_hosts(hostfile: str | None) -> tuple[list[str], str | None, str]:
    """(hosts, host file, launcher): --hostfile, else a Slurm allocation's
    nodes, else a Grid Engine job's, else the test cluster named by
    $CLUSTERBENCH_TESTBED. Inside a Grid Engine job mpiexec needs no host
    file: Hydra and Open MPI read $PE_HOSTFILE and start remote ranks with
    qrsh -inherit (tight integration)."""
    if hostfile:
        return hostfile_hosts(hostfile), hostfile, "mpiexec"
    if hosts := allocation_hosts():
        return hosts, None, "srun"
    if hosts := grid_engine_hosts():
        return hosts, None, "mpiexec"
    testbed = os.environ.get("CLUSTERBENCH_TESTBED")
    if testbed and (Path(testbed) / "hostfile").is_file():
        path = str(Path(testbed) / "hostfile")
        return hostfile_hosts(path), path, "mpiexec"
    raise BadInput("run cluster needs nodes: --hostfile FILE, a Slurm allocation (sbatch -N 4), "
                   "a Grid Engine job (qsub -pe mpi 4), "
                   "or a test cluster (clusterbench testbed up; source its env.sh)")


def split_options(extra: dict[str, str]) -> tuple[dict[str, str], dict[str, dict[str, str]]]:
    """--scratch, --only ... and --PART.NAME=VALUE overrides of the suite."""
    options, overrides = {}, {}
    for k, v in extra.items():
        part, dot, name = k.partition(".")
        if dot:
            if part not in PARTS:
                raise BadInput(f"--{k}: no part '{part}' (parts: {', '.join(PARTS)})")
            overrides.setdefault(part, {})[name] = v
        elif k in OPTIONS:
            options[k] = v
        else:
            raise BadInput(f"run cluster: unknown option --{k} (options: --scratch DIR, --one-at-a-time, "
                           f"--links-one-pair, --only PART,.., --skip PART,.., --threshold 10%, --link-threshold 25%, --topology HOST:SWITCH,.., "
                           f"--PART.PARAM=VALUE; parts: {', '.join(PARTS)})")
    return options, overrides


def choose_parts(options: dict[str, str]) -> tuple[str, ...]:
    def parts(text: str, flag: str) -> set[str]:
        chosen = {p.strip() for p in text.split(",") if p.strip()}
        bad = chosen - set(PARTS)
        if bad:
            raise BadInput(f"--{flag} {text}: no part {', '.join(sorted(bad))} (parts: {', '.join(PARTS)})")
        return chosen
    only = parts(options["only"], "only") if "only" in options else set(PARTS)
    skip = parts(options["skip"], "skip") if "skip" in options else set()
    chosen = tuple(p for p in PARTS if p in only and p not in skip)
    if not chosen:
        raise BadInput("run cluster: --only/--skip leave nothing to measure")
    return chosen


def suite_entries() -> dict[str, dict]:
    doc = suite_document()
    entries = {e["part"]: e for e in doc["per-node"]}
    entries |= {e["part"]: {**e, "per_gpu": True} for e in doc["per-gpu"]}
    entries["links"], entries["scaling"] = doc["links"], doc["scaling"]
    return entries


def params_of(entry: dict, req: ClusterRequest) -> dict:
    params = {k: (req.scratch if v == "{scratch}" else v) for k, v in entry.get("params", {}).items()}
    params.update(req.overrides.get(entry["part"], {}))
    return params


def node_cpus(envs: dict[str, dict]) -> int:
    """The CPUs a job may use on the smallest node: the scaling step's "all cores per node".
    Those its processes may run on (cpu.cgroup_cpus), else those online: a node whose cpuset
    gives jobs one of its two CPUs would run two ranks on one CPU."""
    from clusterbench.environment.sources import parse_cpu_list

    counts = [len(parse_cpu_list(e["cpu.cgroup_cpus"])) if e.get("cpu.cgroup_cpus") else int(e["cpu.threads"])
              for e in envs.values() if e.get("cpu.cgroup_cpus") or str(e.get("cpu.threads", "")).isdigit()]
    return max(1, min(counts)) if counts else 1


def node_counts(n: int) -> list[int]:
    """2, 4, 8, .. and N."""
    out, k = [], 2
    while k < n:
        out.append(k)
        k *= 2
    return out + [n]


def plan(req: ClusterRequest, cat: Catalogue, cpus_per_node: int) -> tuple[list[Step], list[Step], list[Step]]:
    """(per-node step templates, per-GPU step templates, cluster-wide steps)."""
    entries = suite_entries()
    per_node, per_gpu, cluster = [], [], []
    for part in req.parts:
        e = entries[part]
        params = params_of(e, req)
        if part == "links":
            steps = expand(e["kernel"], params, repeat=req.repeat, ranks=len(req.hosts), ranks_per_node=1,
                           launcher=req.launcher, name=LINKS_STEP, requires=("mpi",))
            if req.links_one_pair:
                steps += expand(e["kernel"], {**params, "pattern": "one-pair"}, repeat=req.repeat,
                                ranks=len(req.hosts), ranks_per_node=1, launcher=req.launcher,
                                name=LINKS_ALONE_STEP, requires=("mpi",))
            cluster += steps
        elif part == "scaling":
            steps = []
            for nodes in node_counts(len(req.hosts)):
                for ppn in sorted({1, cpus_per_node}):
                    steps += expand(e["kernel"], params, repeat=req.repeat, ranks=nodes * ppn, ranks_per_node=ppn,
                                    launcher=req.launcher, requires=("mpi",),
                                    name=f"{SCALING_PREFIX}{nodes} nodes x {ppn} rank{'s' if ppn > 1 else ''}")
            cluster += steps
        elif e.get("per_gpu"):
            steps = expand(e["kernel"], params, repeat=req.repeat, ranks=1, launcher=req.launcher, name=part)
            per_gpu += steps
        else:
            steps = expand(e["kernel"], params, repeat=req.repeat, ranks=int(e.get("np", 1)),
                           ranks_per_node=e.get("ppn"), launcher=req.launcher, name=part,
                           requires=tuple(e.get("requires", ())))
            per_node += steps
        for step in steps:
            # a cbk without the GPU kernels skips the GPU parts (gpu_steps), not refuses the run
            if not (e.get("per_gpu") and step.kernel not in cat.kernels):
                check_values(cat, part, step, across_nodes=part in ("links", "scaling"))
    if req.auto:   # every step, per node or across the nodes, under --repeat auto's rule
        per_node, per_gpu, cluster = ([dataclasses.replace(s, auto=req.auto) for s in steps]
                                      for steps in (per_node, per_gpu, cluster))
    return per_node, per_gpu, cluster


def check_values(cat: Catalogue, part: str, step: Step, across_nodes: bool) -> None:
    """BadInput unless cbk takes the step's parameter names, and those of a
    step across the nodes (the link matrix, scaling) their values too
    (`cbk --check`, as `run` checks before it stores a run). Names alone were
    checked: --scaling.sizes=bogus was refused by the first scaling step's
    ranks, mid-run, and the run ended there with its later steps unlisted.
    A per-node step's values are checked on its node, by cbk: its checks
    read the machine (--scratch exists, the memory a STREAM array needs),
    and this host (a login node) is not the node; a refusal there fails
    that node's step, and the run goes on. A step that needs what cbk lacks
    here (MPI) is skipped when run, not refused."""
    if runner.missing_requirement(step, cat):
        return
    cat.check_params(cat.kernel(step.kernel), step.params)
    if not across_nodes:
        return
    why = runner.cbk_refusal(cat.cbk, (step.kernel, *step.cbk_args()))
    if why is not None:
        # cbk names a parameter as its kernel takes it (--sizes); the user gave it as --PART.NAME
        raise BadInput(f"run cluster: --{part}.{why[2:]}" if why.startswith("--") else f"run cluster, {part}: {why}")


def gpu_count(env: dict) -> int:
    n = env.get("gpu.count")   # an int in every snapshot (environment/gpu.py), as gpu_limits reads it
    return n if isinstance(n, int) else 0


def gpu_steps(step: Step, cat: Catalogue, hosts: list[str], envs: dict[str, dict]) -> tuple[list, str | None]:
    """[(a step, the nodes it runs on)], or why none runs. A part run on
    every GPU: GPU i of a node is the i-th of nvidia-smi's list in its
    snapshot, and its launch sees that GPU alone (CUDA_VISIBLE_DEVICES=i,
    counted in PCI bus order as nvidia-smi counts); each record names its
    GPU by bus id, which is what the per-GPU analysis goes by. A part that
    wants every GPU of a node in one process (every-gpu = false) runs once
    on each node with at least its min-gpus. A step of a sweep (a list in
    the part's params) is named "PART GPU i [name=value]": its bracket,
    rebuilt from the values the plan swept (plan.Step.swept), stays at the
    end, where a report reads it in words (results/step_words.py); before
    the bracket, its part was looked up by the whole name and not found."""
    if not cat.of_family(GPU):
        return [], next(iter(cat.left_out_of_family(GPU).values()), "cbk was built without the GPU kernels")
    bracket = sweep_bracket({k: step.params[k] for k in step.swept}) if step.swept else ""
    part = step.name[:-len(bracket)] if bracket else step.name
    entry = suite_entries()[part]
    least = int(entry.get("min-gpus", 1))
    counts = {h: gpu_count(envs.get(h, {})) for h in hosts}
    if not any(n >= least for n in counts.values()):
        return [], (f"no node's snapshot lists {least} or more GPUs (gpu.count)" if least > 1
                    else "no node's snapshot lists a GPU (gpu.count)")
    if step.kernel not in cat.kernels:
        return [], cat.left_out.get(step.kernel, f"cbk has no kernel {step.kernel}")
    if not entry.get("every-gpu", True):
        return [(step, [h for h in hosts if counts[h] >= least])], None
    out = []
    for i in range(max(counts.values())):
        env = {**step.env, "CUDA_DEVICE_ORDER": "PCI_BUS_ID", "CUDA_VISIBLE_DEVICES": str(i)}
        out.append((dataclasses.replace(step, name=f"{part} GPU {i}{bracket}", env=env),
                    [h for h in hosts if counts[h] > i]))
    return out, None


# -- per-node steps -----------------------------------------------------

@dataclass
class NodeLaunch:
    host: str
    step_id: int
    cmd: list[str]
    proc: subprocess.Popen | None = None
    out: str = ""
    err: str = ""
    deadline: Deadline | None = None
    repetitions: int = 1          # how many this launch runs (a per-node step's)
    took_s: float | None = None   # from its group's start to its end


def _start(launch: NodeLaunch, env: dict[str, str], timeout_s: float | None) -> None:
    # a process group of its own, as `run`'s launches: the terminal's Ctrl-C, Ctrl-Z and hangup
    # reach clusterbench alone, which passes them on (_run_together)
    # the launch keeps a reader of its own output, as `run`'s: a kill -9 of clusterbench does not end mpiexec
    # by SIGPIPE before the nodes' ranks have removed their files (launch/kept_output.py)
    pipes = KeptOutput()
    try:
        launch.proc = subprocess.Popen(launch.cmd, text=True, env={**os.environ, **env}, **pipes.popen_args(),
                                       **step_engine.own_process_group())
    except BaseException:
        pipes.close()
        raise
    launch.proc.stdout, launch.proc.stderr = pipes.started()   # communicate() reads them
    launch.deadline = Deadline(launch.proc, timeout_s)


def _finish(launch: NodeLaunch) -> None:
    launch.out, launch.err = launch.proc.communicate()
    launch.deadline.cancel()
    if launch.deadline.expired:
        launch.err = launch.deadline.message(launch.err)


@dataclass
class LaunchOutcome:
    ok: bool
    build: dict | None    # cbk's run record, with its cgroup and detail records
    message: str          # the error line when not ok; an MPI_Finalize stall when ok, else ""
    stopped_by: str | None = None   # the stop signal that ended cbk on the node (a batch system's, a Ctrl-C there)


def _store_samples(store: Store, launch: NodeLaunch, step: Step, launcher: str, env: dict,
                   offset: int, on_sample=None) -> LaunchOutcome:
    """Stores one launch's records (numbered on from offset; each sample
    handed to on_sample too) and judges it as `run` judges a launch (step_engine)."""
    records = step_engine.LaunchRecords(store, launch.step_id, env, offset, step_engine.detail_records(step.kernel),
                                        on_sample)
    for line in launch.out.splitlines():
        records.take(line)
    build = records.run_record()
    status = launch.proc.returncode
    if launch.deadline and launch.deadline.expired:
        status = 1
    status, err, stalled = step_engine.judge(status, launch.err, build, step, launcher)
    record = build and build.record
    if status == 0:
        return LaunchOutcome(True, record, stalled or "")
    return LaunchOutcome(False, record, failure_line(err, status), step_engine.stopped_by(status, err))


def _run_together(group: list[NodeLaunch], env: dict[str, str], timeout_s: float | None, on_end=None,
                  straggler: StragglerRule | None = None, earlier_well_s: list[float] | None = None,
                  declared: Declared | None = None) -> None:
    """Starts every launch of the group and calls on_end(launch) in this
    thread as each ends, so a node's samples are stored when its launch
    ends, not when the slowest node's does: a Ctrl-C keeps what ended.
    A launch the straggler rule finds stalled is ended (its deadline's
    message says why): measured against the group's others, or, given
    earlier_well_s (one at a time, a group of one), against the durations
    of the step's launches that ended well on other nodes before, and with
    none (the step's first launch), against its declared time (declared_time.py).
    Interrupted, it stops the launches still running and hands on_end what
    each printed before it stopped."""
    ended: queue.Queue[NodeLaunch] = queue.Queue()
    started_s = time.monotonic()

    def wait(lc: NodeLaunch) -> None:
        try:
            _finish(lc)
        finally:
            lc.took_s = time.monotonic() - started_s
            ended.put(lc)

    handed: set[int] = set()
    groups: list[int] = []   # the launches' process groups, for Ctrl-Z
    try:
        with stop_signals.suspended_together(groups):
            for lc in group:
                _start(lc, env, timeout_s)
                groups.append(lc.proc.pid)
                # waited on at once: should a later launch fail to start, this one's
                # end is still handed on below, not awaited for nothing
                threading.Thread(target=wait, args=(lc,), daemon=True).start()
            while len(handed) < len(group):
                lc = _next_ended(ended, group, handed, started_s, straggler, earlier_well_s, declared)
                if lc is None:
                    continue
                handed.add(id(lc))
                if on_end:
                    on_end(lc)
    except BaseException:
        running = [lc for lc in group if id(lc) not in handed]
        with stop_signals.deferred():   # a second Ctrl-C stops no node fewer
            for lc in running:
                if lc.deadline:
                    lc.deadline.cancel()
            step_engine.stop(*[lc.proc for lc in running if lc.proc])   # every node at once
            for _ in [lc for lc in running if lc.proc and on_end]:   # their waiters now end: store what each printed
                try:
                    lc = ended.get(timeout=STOPPED_OUTPUT_WAIT_S)
                except queue.Empty:
                    break
                with contextlib.suppress(Exception):
                    on_end(lc, stopped=True)
        raise


def _next_ended(ended: queue.Queue, group: list[NodeLaunch], handed: set[int], started_s: float,
                straggler: StragglerRule | None, earlier_well_s: list[float] | None = None,
                declared: Declared | None = None) -> NodeLaunch | None:
    """The next launch to end; None when, waiting for it, the straggler rule
    found launches stalled and ended them (they are handed on as they end)."""
    alone = earlier_well_s is not None
    first = alone and not earlier_well_s   # one at a time, the step's first launch: its declared time, if any
    if alone:
        went_well = earlier_well_s
        bound_s = None if not straggler else \
            straggler.bound_first_s(declared and declared.seconds) if first else straggler.bound_alone_s(went_well)
    else:
        went_well = [lc.took_s for lc in group if id(lc) in handed and lc.proc.returncode == 0]
        bound_s = straggler.bound_s(went_well, len(group)) if straggler else None
    running = [lc for lc in group if id(lc) not in handed and lc.deadline and not lc.deadline.reason]
    if bound_s is None or not running:
        return ended.get()
    try:
        return ended.get(timeout=max(0.0, started_s + bound_s - time.monotonic()))
    except queue.Empty:
        running_s = time.monotonic() - started_s
        for lc in running:
            lc.deadline.end(straggler.message_first(running_s, declared.seconds, declared.by) if first
                            else straggler.message(running_s, went_well, alone))
        return None


def run_on_nodes(store: Store, cat: Catalogue, run_id: int, position: int, step: Step, req: ClusterRequest,
                 envs: dict[str, dict], local_env: dict, progress: Progress, folder: Path,
                 conditions: Conditions | None = None, stalled: dict[str, str] | None = None) -> list[str]:
    """One step on every node; a status per node. stalled (host: why) gains
    each node the straggler rule ended, and loses each that ended the step
    well: the nodes whose last step stalled. Each node's repetitions
    are counted, and its stop_reason given, by the rule a `run` step has
    (step_engine.Repetitions: --repeat N, or auto's CI rule on the node's
    own figures).

    All at once: one launch per node, started together; a node's samples are
    stored as its launch ends. With a fixed count that one launch holds every
    repetition. Under --repeat auto the nodes go on together, launch group by
    launch group (the first min_repeat, then one more each), until every
    node's rule says stop: a node that stopped early would leave the others
    measured with one node fewer loading what they share, which is not the
    condition "all at once" measures.

    One at a time: repetition by repetition, each round visiting every node
    once (as A/B/A/B alternation), so a change in the machine's load over the
    minutes of the step falls on every node alike, not on whichever node's
    turn it was; in an order drawn afresh each round (round_order), so a load
    that comes and goes with the rounds' own period (another job stepping
    through its nodes in the same rhythm) does not fall on one node's turn
    in every round. Here each node stops on its own rule: it is measured
    alone anyway."""
    launcher = choose(req.launcher, 2, cat.cbk)
    sweep_nodes(cat, step, req, folder, progress)
    step_ids, hostfiles = {}, {}
    for host in req.hosts:
        hostfiles[host] = one_host_file(folder, req.reach(host))
        step_ids[host] = step_engine.begin(store, run_id, position, step, launcher.name, host=host)
    started_s = time.monotonic()
    counts = {h: step_engine.Repetitions(step, started_s) for h in req.hosts}
    reasons: dict[str, str | None] = {}    # why each node's repetition stops (None: it goes on)
    errors: dict[str, str] = {}
    stalls: dict[str, str] = {}
    builds: dict[str, dict | None] = {}
    statuses: dict[str, str] = {}
    # (host, seconds) of each launch that ended well: one at a time, what the straggler rule
    # measures the next node's launch by (each launch one repetition, so they are alike)
    took_well_s: list[tuple[str, float]] = []

    def command(host: str, repetitions: int) -> list[str]:
        return launcher.command(Job(conditions_apply.wrap(conditions, step.argv(cat.cbk, repetitions)), step.ranks,
                                    step.ranks_per_node, hostfiles[host], req.oversubscribe, step.env))

    def finish(host: str) -> None:
        if host in errors:
            store.finish_step(step_ids[host], "failed", build=builds.get(host), message=f"{host}: {errors[host]}")
            statuses[host] = "failed"
        else:
            store.finish_step(step_ids[host], "ok", build=builds.get(host), stop_reason=reasons[host],
                              message=stalls.get(host))
            statuses[host] = "ok"

    def ended(lc: NodeLaunch, stopped: bool = False) -> None:
        count = counts[lc.host]
        got = _store_samples(store, lc, step, launcher.name, envs.get(lc.host, local_env), count.done, count.record)
        builds[lc.host] = got.build or builds.get(lc.host)
        if stopped:
            return   # closed as interrupted below, with what it printed stored
        if got.stopped_by:
            # the stop reached cbk on the node and not us: the run stops as on
            # Ctrl-C, as `run` does; the other nodes' launches are stopped
            store.finish_step(step_ids[lc.host], "interrupted", build=builds.get(lc.host),
                              message=f"cbk ended by {got.stopped_by}")
            statuses[lc.host] = "interrupted"
            raise step_engine.Interrupted(got.stopped_by)
        if not got.ok:
            errors[lc.host] = got.message
            if lc.deadline.expired and lc.deadline.reason:
                progress.note(f"{step.name} on {lc.host}: {got.message}")   # the run goes on without it
                if stalled is not None:
                    stalled[lc.host] = f"{step.name} {got.message}"
            finish(lc.host)
            return
        if stalled is not None:
            stalled.pop(lc.host, None)
        took_well_s.append((lc.host, lc.took_s))
        if got.message:
            stalls[lc.host] = got.message
            progress.note(f"{step.name} on {lc.host}: {got.message}")
        reasons[lc.host] = count.ran(lc.repetitions)
        if reasons[lc.host] and (req.one_at_a_time or not step.auto):
            finish(lc.host)   # its count is reached: closed now, so a Ctrl-C later keeps it

    going = list(req.hosts)   # the nodes whose repetition goes on
    entry = suite_entries().get(step.name, {})   # its part in the suite (a GPU's step is named apart: none)
    shuffle = random.Random()   # seeded from the OS: two runs in step draw different orders
    try:
        while going:
            groups = [[h] for h in round_order(going, shuffle)] if req.one_at_a_time else [going]
            for hosts in groups:
                count = counts[hosts[0]]   # a group's nodes have run as many repetitions
                repetitions = count.next_batch(1 if req.one_at_a_time else None)
                progress.note(f"{step.name} on {', '.join(hosts)} ({repetitions_text(count, repetitions)})")
                earlier_well_s = [s for h, s in took_well_s if h != hosts[0]] if req.one_at_a_time else None
                declared = launch_time(entry, step.params, repetitions, node_cpus({hosts[0]: envs.get(hosts[0], {})})) \
                    if req.one_at_a_time else None
                _run_together([NodeLaunch(h, step_ids[h], command(h, repetitions), repetitions=repetitions)
                               for h in hosts], step_engine.cbk_env(step, run_id), req.step_timeout_s, ended,
                              req.straggler, earlier_well_s, declared)
            going = [h for h in going if h not in statuses]
            if not req.one_at_a_time and going and all(reasons.get(h) for h in going):
                for h in going:   # every node's rule says stop: the group stops
                    finish(h)
                going = []
    except BaseException:
        for host in req.hosts:
            if host not in statuses:
                store.finish_step(step_ids[host], "interrupted", build=builds.get(host),
                                  message="interrupted by a signal")
        raise
    return [statuses[h] for h in req.hosts]


def sweep_nodes(cat: Catalogue, step: Step, req: ClusterRequest, folder: Path, progress: Progress) -> None:
    """Removes the private directories killed runs left where the step works:
    this host's (a shared --scratch), as `run` does, then every node's on that
    node, each removal said with its node (run/sweep_here.py): a stamp is
    judged on the host it names, so this host's sweep alone left every node's.
    A node the sweep cannot reach is left to the step, which says why."""
    parent = step_engine.private_dirs_parent(cat, step)
    if parent is None:
        return
    step_engine.sweep_private_dirs(cat, step, progress.note)
    launcher = choose(req.launcher, 2, cat.cbk)
    argv = (sys.executable, "-m", "clusterbench.run.sweep_here", parent, *sorted(cat.kernels))
    launches = [NodeLaunch(h, 0, launcher.command(Job(argv, 1, None, one_host_file(folder, req.reach(h)),
                                                      req.oversubscribe)))
                for h in req.hosts]
    _run_together(launches, {}, req.step_timeout_s, straggler=req.straggler)
    for lc in launches:
        for line in lc.out.splitlines():
            if line.strip():
                progress.note(f"{lc.host}: {line.strip()}")


def round_order(going: list[str], rng: random.Random) -> list[str]:
    """The nodes of one --one-at-a-time round, each once, in a random order.
    A fixed order lets a load with the rounds' period fall on one node every
    round: with a second test suite beside it (most likely stepping through
    its own capped test cluster in the same rhythm) a healthy h04 ran 1.64x
    the others' Himeno in all 5 rounds and was flagged as odd."""
    order = list(going)
    rng.shuffle(order)
    return order


def repetitions_text(count: step_engine.Repetitions, repetitions: int) -> str:
    """"repetitions 7-12 of at most 30", "repetition 2 of 3": for the progress line."""
    first, last = count.done + 1, count.done + repetitions
    which = f"repetition {first}" if first == last else f"repetitions {first}-{last}"
    return f"{which} of {'at most ' if count.step.auto else ''}{count.most()}"


def one_host_file(folder: Path, host: str) -> str:
    path = folder / f"{host}.hosts"
    path.write_text(f"{host}\n")
    return str(path)


def switch_of(text: str | None) -> dict[str, str]:
    """`h01:sw1,h02:sw1,h03:sw2`: --topology, else the test cluster's
    $CLUSTERBENCH_TESTBED_TOPOLOGY; {} when neither says."""
    out = {}
    for item in (text or "").split(","):
        host, sep, switch = item.strip().partition(":")
        if item.strip() and not (sep and host and switch):
            raise BadInput(f"--topology {text}: expected HOST:SWITCH,HOST:SWITCH,.. (e.g. n01:leaf1,n02:leaf2)")
        if sep:
            out[host] = switch
    return out


def capture_snapshots(store: Store, cat: Catalogue, run_id: int, req: ClusterRequest,
                      folder: Path) -> tuple[dict, ClusterRequest]:
    """This host's snapshot and every node's, each node's collected by a
    launch of its own (one launch over all nodes interleaves their long
    JSON lines, and a garbled snapshot is lost); returns this host's, and
    the request with its nodes named as they name themselves
    (named_by_snapshots)."""
    from clusterbench import environment

    local = environment.collect([req.scratch], stop_grace=stop_signals.deferred)
    snapshots = {socket.gethostname(): local}
    launcher = choose(req.launcher, 2, cat.cbk)
    argv = runner.collector_argv([req.scratch])
    entries = list(req.hosts)
    launches = [NodeLaunch(h, 0, launcher.command(Job(argv, 1, None, one_host_file(folder, h), req.oversubscribe)))
                for h in entries]
    _run_together(launches, {}, req.step_timeout_s, straggler=req.straggler)
    by_entry = {}
    for lc in launches:
        for env in step_engine.json_objects(lc.out):
            if "host.name" in env:
                by_entry[lc.host] = env
    refuse_one_node_twice(req, by_entry)
    req = named_by_snapshots(req, by_entry)
    snapshots.update({req.hosts[i]: by_entry[entry] for i, entry in enumerate(entries) if entry in by_entry})
    local.update(conditions_apply.environment_keys(req.conditions))
    for env in snapshots.values():   # the limit each node ran under: its records carry it (record_fields)
        if env is not local:
            env.update(conditions_apply.environment_keys(req.conditions, this_host=False))
    for host, switch in req.switches.items():   # the link class (analysis.LINK_CLASS_KEY)
        if host in snapshots:
            snapshots[host]["fabric.switch"] = switch
    for host, env in snapshots.items():
        h = environment.snapshot_hash(env)
        store.add_environment(env, h)
        store.link_host(run_id, host, h)
    return local, req


def named_by_snapshots(req: ClusterRequest, by_entry: dict[str, dict]) -> ClusterRequest:
    """The request with each node named by the host name its snapshot gives
    (reached still by its host-file entry: ClusterRequest.reach), as its
    ranks' records name it: a host file of addresses (or FQDNs, or a
    fabric's names, n01-ib) stored the per-node figures under 198.19.0.2
    and the links under h01, one node as two ("6 nodes" of 3), and every
    node "without an environment snapshot" beside the links. A node with
    no snapshot keeps its entry. --topology names it by its entry (or, the
    test cluster's, by its name)."""
    names = {e: str(by_entry.get(e, {}).get("host.name") or e) for e in req.hosts}
    if all(n == e for e, n in names.items()):
        return req
    switches = {**req.switches, **{names[e]: req.switches[e] for e in names if e in req.switches}}
    return dataclasses.replace(req, hosts=[names[e] for e in req.hosts], switches=switches,
                               addresses={n: e for e, n in names.items() if n != e})


def refuse_one_node_twice(req: ClusterRequest, snapshots: dict[str, dict]) -> None:
    """BadInput when two entries of the node list are one machine (a host's
    alias and its address, h01 and 198.19.0.2), told by the host name each
    node's snapshot gives itself: its two ranks would meet in its own memory
    as the fastest "link", every real link judged against it and flagged, and
    the link records (named by each rank's gethostname) folded into one node."""
    by_name: dict[str, list[str]] = {}
    for host in req.hosts:
        name = snapshots.get(host, {}).get("host.name")
        if name:
            by_name.setdefault(str(name), []).append(host)
    twice = [(name, hosts) for name, hosts in by_name.items() if len(hosts) > 1]
    if twice:
        where = f"--hostfile {req.hostfile}" if req.hostfile else "the node list"
        said = "; ".join(f"{' and '.join(hosts)} are one node (each says its host name is {name})"
                         for name, hosts in twice)
        # nodes cloned with one host name are refused too, rightly: their records could not be told apart
        raise BadInput(f"{where}: {said}: list every node once (nodes that are not one need host names "
                       "of their own: each node's records are named by it)")


# -- the whole run ------------------------------------------------------

def conditions_view(req: ClusterRequest) -> runner.RunRequest:
    """The run as the run conditions and the cluster-wide steps see it."""
    return runner.RunRequest([], req.label, req.command, "cluster", [req.scratch], req.hostfile, req.oversubscribe,
                             req.conditions)


def check_conditions(req: ClusterRequest) -> None:
    """Refuses (BadInput) a memory limit this host cannot apply, before the
    store is opened, as `run` does: the same check (root or a delegated
    cgroup here). A node that cannot make its cgroup fails its step with a
    line naming the node (cgexec)."""
    conditions_apply.check(req.conditions, conditions_view(req))


def nodes_without_cbk(hosts: list[str], envs: dict[str, dict]) -> str:
    """The nodes whose snapshot says cbk cannot run there, with why; "" when
    none. An MPI job over every node waits for such a node's rank forever
    (Hydra, a rank gone before MPI_Init): the cluster-wide steps are skipped."""
    said = [f"{h}: {envs[h]['cbk.version_error']}" for h in hosts
            if h in envs and "cbk.version" not in envs[h] and envs[h].get("cbk.version_error")]
    return "; ".join(said)


def cbk_mpi(env: dict):
    """The MPI a node's cbk runs with (its loader's library, else the one it
    was built with): an MpiVersion, or None."""
    from clusterbench.environment.mpi_consistency import parse_built_with, parse_library_version

    return (parse_library_version(env.get("cbk.mpi_library") or "")
            or parse_built_with(env.get("cbk.mpi_built_with") or ""))


def nodes_of_another_mpi(hosts: list[str], envs: dict[str, dict], local_env: dict) -> str:
    """The nodes whose cbk runs another MPI library (MPICH, Open MPI, ...)
    than the others, "" when none: its rank never joins the others' job (a
    node with an Open MPI module loaded among MPICH ones held the link
    matrix for ever, while each per-node step ran well alone). The others
    are those of this host's cbk's MPI, the one the launcher speaks, when a
    node has it, else those of the MPI most nodes have."""
    mpis = {h: m for h in hosts if (m := cbk_mpi(envs.get(h, {})))}
    flavours = [m.flavour for m in mpis.values()]
    if len(set(flavours)) < 2:
        return ""
    here = cbk_mpi(local_env)
    usual = here.flavour if here and here.flavour in flavours else max(set(flavours), key=flavours.count)
    return "; ".join(f"{h}'s cbk runs {m}, the other nodes' {usual}" for h, m in mpis.items() if m.flavour != usual)


def unfit_nodes(hosts: list[str], envs: dict[str, dict], stalled: dict[str, str], local_env: dict | None = None) -> str:
    """Why a job over every node would wait for ever, "" when it would not:
    the nodes cbk cannot run on, those whose cbk runs another MPI library
    than the others (local_env: this host's snapshot, nodes_of_another_mpi),
    and those whose last per-node step the straggler rule ended (stalled:
    host -> why), which may still be stopped (--step-timeout has no
    default). A node that ended a later step well is back, and is not named."""
    said = []
    if missing := nodes_without_cbk(hosts, envs):
        said.append(f"cbk cannot run on every node ({missing})")
    if other := nodes_of_another_mpi(hosts, envs, local_env or {}):
        said.append(f"the nodes' cbk run two MPI libraries ({other}): ranks of two never meet")
    said += [f"{h}: {why}" for h, why in stalled.items()]
    return "; ".join(said)


def _skipped(store: Store, run_id: int, position: int, step: Step, why: str, progress: Progress) -> str:
    store.finish_step(step_engine.begin(store, run_id, position, step, "none"), "skipped", message=why)
    progress.note(f"skipped {step.name}: {why}")
    return "skipped"


def _skip(store: Store, run_id: int, position: int, step: Step, unable: str, progress: Progress) -> str:
    """A cluster-wide step skipped for the nodes a job over every node would wait for (unfit_nodes)."""
    return _skipped(store, run_id, position, step, f"{unable}, and a job over every node would wait for it", progress)


def execute(store: Store, cat: Catalogue, req: ClusterRequest, progress: Progress) -> int:
    """Runs the request under its conditions (held, as `run` holds them, for
    the run: this host's probe cgroup made and removed, the journal kept);
    returns the run id."""
    plan(req, cat, 1)   # bad parameters: exit 2 before a run is stored
    with conditions_apply.applied(req.conditions, conditions_view(req)) as active:
        return _execute(store, cat, dataclasses.replace(req, conditions=active), progress)


def _execute(store: Store, cat: Catalogue, req: ClusterRequest, progress: Progress) -> int:
    warnings: list[str] = []
    with runner.stored_run(store, req.label, req.command, "cluster", run_kinds.CLUSTER, warnings) as (run_id, statuses):
        rr = conditions_view(req)
        position = 0
        skipped: dict[str, list[str]] = {}   # why -> the names of the steps skipped for it
        with progress, host_files_dir() as folder:
            local_env, req = capture_snapshots(store, cat, run_id, req, Path(folder))
            envs = store.environments_of(run_id)
            per_node, per_gpu, cluster = plan(req, cat, node_cpus(envs))
            stalled: dict[str, str] = {}   # the nodes whose last per-node step stalled
            for step in per_node:
                why = runner.missing_requirement(step, cat)
                if why:   # stored, as `run` stores it: a part left out in silence was missing from show
                    statuses.append(_skipped(store, run_id, position, step, why, progress))
                    skipped.setdefault(why, []).append(step.name)
                else:
                    statuses += run_on_nodes(store, cat, run_id, position, step, req, envs, local_env, progress,
                                             Path(folder), req.conditions, stalled)
                position += 1
            for step in per_gpu:
                steps, why = gpu_steps(step, cat, req.hosts, envs)
                if why:
                    progress.note(f"skipped {step.name} on every node: {why}")
                for one, hosts in steps:
                    statuses += run_on_nodes(store, cat, run_id, position, one, dataclasses.replace(req, hosts=hosts),
                                             envs, local_env, progress, Path(folder), req.conditions, stalled)
                    position += 1
            unable = unfit_nodes(req.hosts, envs, stalled, local_env)
            for i, step in enumerate(cluster):
                step = dataclasses.replace(step, timeout_s=req.step_timeout_s, start_timeout_s=req.start_timeout_s)
                if unable:
                    statuses.append(_skip(store, run_id, position, step, unable, progress))
                    skipped.setdefault(unable, []).append(step.name)
                else:
                    try:
                        statuses.append(runner.run_step(store, cat, run_id, position, step, rr, local_env, progress))
                        if statuses[-1] == "skipped":   # a cbk built without MPI
                            skipped.setdefault(runner.missing_requirement(step, cat), []).append(step.name)
                    except BadInput as e:
                        # cbk refused its input on a node (another version there): the run ends here, and the
                        # steps planned after it are stored skipped, saying why: they were missing from the
                        # store, and show and the report gave no sign they were ever planned
                        said = e.message.removeprefix(f"{step.title()}: ")
                        why = f"not run: the run ended at {step.name}, whose input cbk refused: {said}"
                        for j, later in enumerate(cluster[i + 1:], start=position + 1):
                            _skipped(store, run_id, j, later, why, progress)
                        raise
                position += 1
            step_engine.add_cross_warnings(store, run_id)
        warnings += step_engine.part_skipped(skipped)
    return run_id


def flag_option(options: dict[str, str], name: str) -> bool:
    """--one-at-a-time (bare, or =true / =false; read back as such from the
    stored command line: analysis.ran_at_once). Any other value is refused:
    --one-at-a-time=yes ran every node at once in silence."""
    value = options.get(name, "false")
    if value not in ("true", "false"):
        raise BadInput(f"--{name}={value}: give it bare (--{name}), or as --{name}=true or --{name}=false")
    return value == "true"


def checked_scratch(scratch: str) -> str:
    """--scratch as given, refused (BadInput) when empty or relative: every
    node reads a relative path from its own working directory (its login's
    home under ssh, the job's under srun), not this one's."""
    if not scratch.strip():
        raise BadInput("--scratch is empty: give a directory every node has (default /tmp)")
    if not os.path.isabs(scratch):
        raise BadInput(f"--scratch {scratch}: give an absolute path (each node would read a relative one from its "
                       "own working directory)")
    return scratch


def request(extra: dict[str, str], *, hostfile: str | None, repeat: int | None, oversubscribe: bool,
            label: str | None, command: str, step_timeout_s: float | None = None,
            auto: AutoRepeat | None = None, conditions: Conditions | None = None,
            straggler: StragglerRule = StragglerRule(), start_timeout_s: float = START_TIMEOUT_S) -> ClusterRequest:
    options, overrides = split_options(extra)
    hosts, hostfile, launcher = find_hosts(hostfile)
    if len(hosts) < 2:
        raise BadInput(f"run cluster: {len(hosts)} node(s) found; a cluster run compares two nodes or more")
    from clusterbench.analysis.cluster.analysis import parse_fraction

    for flag in ("threshold", "link-threshold"):
        if flag in options:
            parse_fraction(options[flag], flag)   # bad input before anything runs; analysis reads it back
    scratch = checked_scratch(options.get("scratch", "/tmp"))
    # a node the user's --topology names that is not a node of the run is a typo (hx3 for h03), which left
    # h03 without a switch in silence; the test cluster's own topology may name hosts a smaller host file leaves out
    strangers = sorted(set(switch_of(options.get("topology"))) - set(hosts))
    if strangers:
        raise BadInput(f"--topology: {', '.join(strangers)} {'is' if len(strangers) == 1 else 'are'} not a node of "
                       f"this run (its nodes: {', '.join(hosts)})")
    return ClusterRequest(hosts, hostfile, launcher, choose_parts(options), repeat or 3,
                          flag_option(options, "one-at-a-time"), flag_option(options, "links-one-pair"), overrides,
                          scratch, oversubscribe,
                          switch_of(options.get("topology") or os.environ.get("CLUSTERBENCH_TESTBED_TOPOLOGY")),
                          label, command, step_timeout_s, auto, conditions, straggler, start_timeout_s)


__all__ = ["ClusterRequest", "execute", "request"]
