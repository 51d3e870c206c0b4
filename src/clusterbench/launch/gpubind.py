"""One set of GPUs per rank (E11): each rank of a step sees only its own
devices, taken from what the batch system granted this job on this node.

Grid Engine's resource map puts the granted ids in SGE_HGR_<complex>
(`qsub -l gpu=2` -> SGE_HGR_gpu="0 1"); Slurm sets CUDA_VISIBLE_DEVICES (or
ROCR_VISIBLE_DEVICES / ZE_AFFINITY_MASK) in the numbering the job's device
cgroup presents, and SLURM_STEP_GPUS / SLURM_JOB_GPUS with the node's
physical indices. Without a binding, every rank opens device 0: two ranks
then share one GPU while another idles.

Rank r of a node (its node-local rank, which every launcher exports) gets
granted[r*N:(r+1)*N]. The binding happens in a small wrapper each rank runs
before cbk (`python -m clusterbench.launch.gpubind --per-rank=N -- cbk ...`): it
sets the variables and execs cbk, which states in its run record the
devices each rank saw. Two ranks get the same device only with --share
(round-robin), never by accident: too few granted devices is bad input.

By default (`--default`, bind_by_default): a step of two or more ranks a
node whose figures are a GPU's gets one GPU per rank without any option,
shared round-robin where the node has fewer GPUs than ranks (a node with
one: both ranks on it, which the report says once). Its grant is the
batch system's as above, else, outside a batch job, the node's own GPUs
as the GPU runtime counts them (`cbk --gpus`): every rank opening device 0
measured GPU 0 talking to itself on a node with eight.
"""
from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
from pathlib import Path
from typing import Callable, Mapping, Sequence

from clusterbench.environment.gpu_grant import Grant, granted, parse_devices  # noqa: F401 (the binding's API)
from clusterbench.errors import BadInput

# Node-local rank as MPICH Hydra, Open MPI, Slurm, Cray PALS and MVAPICH export it.
LOCAL_RANK_VARIABLES = ("MPI_LOCALRANKID", "OMPI_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID", "PALS_LOCAL_RANKID",
                        "MV2_COMM_WORLD_LOCAL_RANK")
NODE_SOURCE = "the node's GPUs (cbk --gpus)"   # the default binding's grant where no variable names one
HINT = "qsub -l gpu=N on Grid Engine, sbatch --gpus-per-node=N on Slurm, or set CUDA_VISIBLE_DEVICES=0,1,..."


# How long `cbk --gpus` may take: a runtime's first start on a node of eight
# GPUs without persistence mode takes tens of seconds. What is waited for is
# said after SAY_AFTER_S, then every SAY_EVERY_S: the wait was two minutes of
# nothing, then a count of 0 (no binding), and again in each rank.
COUNT_LIMIT_S = 120
SAY_AFTER_S = 2
SAY_EVERY_S = 30


# Each answer of `cbk --gpus`, by cbk and the environment it ran in: `run`
# checks a step before it opens the store and again as it runs it, each
# check binding and then checking each rank's binding, and a runtime's start
# (tens of seconds on a node of eight GPUs) was waited for four times.
_COUNTED: dict[tuple, Grant] = {}


def node_gpus(cbk: str, say: Callable[[str], None] | None = None, limit_s: float = COUNT_LIMIT_S) -> Grant:
    """The GPUs this process sees, as the GPU runtime counts them: the
    default binding's grant where no batch system granted any. None (0) on
    a cbk without GPU kernels or a node without a usable GPU; counted once
    a process for one cbk and environment. A runtime that does not answer in
    limit_s is bad input here (a stuck driver), not a node without GPUs.
    `cbk --gpus` runs in a process group of its own, ended whole on a timeout
    or a stop (Ctrl-C): a runtime's helper processes are not left behind."""
    key = (cbk, tuple(sorted(os.environ.items())))
    if key not in _COUNTED:
        _COUNTED[key] = _count_gpus(cbk, say, limit_s)
    return _COUNTED[key]


def _count_gpus(cbk: str, say: Callable[[str], None] | None, limit_s: float) -> Grant:
    import signal
    import time

    try:
        proc = subprocess.Popen([cbk, "--gpus"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                                start_new_session=True)
    except OSError:
        return Grant(NODE_SOURCE, ())
    started = time.monotonic()
    try:
        next_say = SAY_AFTER_S
        while True:
            waited = time.monotonic() - started
            try:
                out, _ = proc.communicate(timeout=max(0.0, min(next_say, limit_s) - waited))
                break
            except subprocess.TimeoutExpired:
                waited = time.monotonic() - started
                if say is not None and waited >= next_say:   # said before a refusal: at least once
                    say(f"waiting for the GPU runtime to count this node's GPUs ({cbk} --gpus): no answer after "
                        f"{next_say:g} s; given up at {limit_s:g} s (Ctrl-C stops now)")
                    next_say += SAY_EVERY_S
                if waited >= limit_s:
                    raise BadInput(f"the GPU runtime did not count this node's GPUs in {limit_s:g} s ({cbk} --gpus, "
                                   "stopped): check its driver (nvidia-smi, rocm-smi), or name the GPUs to bind with "
                                   "CUDA_VISIBLE_DEVICES=0,1,...") from None
    finally:
        if proc.returncode is None:   # a timeout or a stop: the group, whatever cbk's runtime started in it
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            proc.wait()
    count = int(out.strip()) if proc.returncode == 0 and out.strip().isdigit() else 0
    return Grant(NODE_SOURCE, tuple(str(i) for i in range(count)))


def _say_on_stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def require_grant(environ: Mapping[str, str], per_rank: int, cbk: str | None = None,
                  say: Callable[[str], None] | None = None) -> Grant:
    """The grant a binding splits; with `cbk` (the default binding), the
    node's own GPUs where no variable names a grant (a wait for them said with `say`)."""
    grant = granted(environ)
    if grant is None and cbk is not None:
        return node_gpus(cbk, say)
    if grant is None:
        raise BadInput(f"--gpus-per-rank {per_rank}: no GPUs granted to this job (no SGE_HGR_gpu, "
                       f"SLURM_STEP_GPUS, SLURM_JOB_GPUS or CUDA_VISIBLE_DEVICES): {HINT}")
    return grant


def check(grant: Grant, local_ranks: int, per_rank: int, share: bool) -> None:
    """Rejects a binding that would put two ranks on one device unasked."""
    if not grant.devices:
        raise BadInput(f"--gpus-per-rank {per_rank}: {grant.source} grants no GPU")
    if per_rank > len(grant.devices) or (local_ranks * per_rank > len(grant.devices) and not share):
        raise BadInput(f"--gpus-per-rank {per_rank} x {local_ranks} rank(s) on a node needs "
                       f"{per_rank * local_ranks} GPUs, but {grant.source} grants {len(grant.devices)} "
                       f"({' '.join(grant.devices)})" + ("" if share or per_rank > len(grant.devices) else
                                                         ": use fewer ranks per node, or --share-gpus"))


def assign(grant: Grant, local_rank: int, per_rank: int, share: bool) -> tuple[str, ...]:
    """The devices of node-local rank `local_rank`."""
    check(grant, local_rank + 1, per_rank, share)
    n = len(grant.devices)
    return tuple(grant.devices[(local_rank * per_rank + j) % n] for j in range(per_rank))


def bound_by_slurm(grant: Grant, environ: Mapping[str, str]) -> bool:
    """Whether srun already gave this task devices of its own: its
    visibility variable names fewer GPUs than the step has on the node
    (SLURM_GPUS_ON_NODE). `--gpus-per-task=N` implies `--gpu-bind=per_task:N`
    (srun(1)), so in a job submitted with it every task sees only its own N
    devices; indexing that one-task list by the node-local rank asked rank 1
    for a second GPU its task cannot see, and the step failed."""
    on_node = environ.get("SLURM_GPUS_ON_NODE", "")
    return (bool(environ.get("SLURM_JOB_ID")) and grant.source in ("CUDA_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES",
                                                                    "ZE_AFFINITY_MASK")
            and on_node.isdigit() and len(grant.devices) < int(on_node))


def rank_devices(grant: Grant, environ: Mapping[str, str], per_rank: int, share: bool) -> tuple[str, ...]:
    """This rank's devices: its slice of the node's grant, or, where srun
    bound the task already (bound_by_slurm), the first per_rank of its own."""
    if not bound_by_slurm(grant, environ):
        return assign(grant, local_rank(environ), per_rank, share)
    if per_rank > len(grant.devices):
        raise BadInput(f"--gpus-per-rank {per_rank}: srun bound this task to {len(grant.devices)} GPU(s) "
                       f"({grant.source}={','.join(grant.devices)}, of {environ['SLURM_GPUS_ON_NODE']} on the node): "
                       f"ask Slurm for --gpus-per-task={per_rank}, or drop --gpus-per-task for --gpus-per-node")
    return grant.devices[:per_rank]


def bind_by_default(step, family: str | None):
    """The step as the default binding leaves it: one GPU per rank, shared
    where the node has too few (the grant, else the node's own GPUs), for
    a step of GPU figures with two or more ranks on a node and no binding
    of its own; any other step unchanged."""
    from clusterbench.limits.gpu_limits import uses_gpu

    if step.gpus_per_rank or step.ranks < 2 or step.ranks_per_node == 1 or not uses_gpu(family, step.params):
        return step
    return dataclasses.replace(step, gpus_per_rank=1, share_gpus=True, gpus_by_default=True)


def _grant_of(step, cbk: str) -> Grant:
    # the user's own process: a wait for the runtime is said on its stderr (a rank's wrapper says nothing)
    return require_grant(os.environ, step.gpus_per_rank, cbk if step.gpus_by_default else None, _say_on_stderr)


def preflight(step, hostfile: str | None, cbk: str) -> None:
    """Before anything is stored: the grant exists, parses, and holds enough
    devices for the ranks this node will run (every rank of a one-node
    step, else --ppn). Multi-node steps without --ppn are checked by each
    rank's wrapper instead, which fails the step with the same line. A
    default binding on a node without a GPU binds nothing: cbk's own check
    of the kernel says why it cannot run."""
    grant = _grant_of(step, cbk)
    if step.gpus_by_default and not grant.devices:
        return
    if step.ranks_per_node:
        local_ranks = step.ranks_per_node
    elif hostfile is None and step.launcher not in ("srun", "qrsh"):
        local_ranks = step.ranks
    else:
        local_ranks = 1
    check(grant, min(local_ranks, step.ranks), step.gpus_per_rank, step.share_gpus)


def local_bindings(step, hostfile: str | None, cbk: str) -> list[dict[str, str | None]]:
    """The variables each rank of a step that runs on this host alone gets
    (binding_env of its devices), each distinct set once; [] for a step whose
    ranks start elsewhere (a host file, srun, qrsh: their grant is read there).
    run checks cbk's input under each, before anything is stored: a grant
    naming a GPU this host does not have was found only by the rank given
    it, after the run was stored."""
    if hostfile is not None or step.launcher in ("srun", "qrsh"):
        return []
    grant = _grant_of(step, cbk)
    if not grant.devices:
        return []   # a default binding on a node without a GPU: none
    amd = Path("/dev/kfd").exists()
    out: list[dict[str, str | None]] = []
    for rank in range(min(step.ranks_per_node or step.ranks, step.ranks)):
        env = binding_env(assign(grant, rank, step.gpus_per_rank, step.share_gpus), amd)
        if env not in out:
            out.append(env)
    return out


def local_rank(environ: Mapping[str, str]) -> int:
    for var in LOCAL_RANK_VARIABLES:
        value = environ.get(var, "")
        if value.isdigit():
            return int(value)
    if environ.get("PMI_SIZE", "1") not in ("", "1") or environ.get("OMPI_COMM_WORLD_SIZE", "1") != "1":
        raise BadInput("--gpus-per-rank: the launcher exports no node-local rank "
                       f"({', '.join(LOCAL_RANK_VARIABLES)})")
    return 0  # one process: the local launcher


def binding_env(devices: Sequence[str], amd: bool) -> dict[str, str | None]:
    """Variables to set (None: remove). On AMD nodes HIP also reads
    CUDA_VISIBLE_DEVICES *after* ROCR_VISIBLE_DEVICES has renumbered the
    devices, so only ROCR_VISIBLE_DEVICES is set there; CUDA and Level Zero
    ignore each other's variables."""
    ids = ",".join(devices)
    if amd:
        return {"ROCR_VISIBLE_DEVICES": ids, "CUDA_VISIBLE_DEVICES": None, "HIP_VISIBLE_DEVICES": None}
    return {"CUDA_VISIBLE_DEVICES": ids, "ROCR_VISIBLE_DEVICES": ids, "ZE_AFFINITY_MASK": ids}


def wrap(argv: Sequence[str], per_rank: int, share: bool, by_default: bool = False) -> tuple[str, ...]:
    """The argv each rank runs: the wrapper, then cbk's own argv."""
    return (sys.executable, "-m", "clusterbench.launch.gpubind", f"--per-rank={per_rank}",
            *(("--share",) if share else ()), *(("--default",) if by_default else ()), "--", *argv)


def main(args: list[str]) -> int:
    if "--" not in args:
        print("usage: python -m clusterbench.launch.gpubind --per-rank=N [--share] [--default] -- PROGRAM [ARGS...]",
              file=sys.stderr)
        return 2
    opts, argv = args[:args.index("--")], args[args.index("--") + 1:]
    per_rank = next((int(o.split("=", 1)[1]) for o in opts if o.startswith("--per-rank=")), 0)
    try:
        # the default binding: the node's own GPUs where nothing granted any, counted by the cbk it starts
        grant = require_grant(os.environ, per_rank, argv[0] if "--default" in opts else None)
        if not grant.devices and "--default" in opts:
            os.execv(argv[0], argv)   # no GPU here: cbk refuses its kernel with the runtime's reason
        devices = rank_devices(grant, os.environ, per_rank, "--share" in opts)
    except BadInput as e:
        # exiting here would leave the other ranks waiting in MPI_Init: cbk
        # starts anyway and fails its validation with this line on every rank
        os.environ["CBK_LAUNCH_ERROR"] = e.message
    else:
        for var, value in binding_env(devices, Path("/dev/kfd").exists()).items():
            if value is None:
                os.environ.pop(var, None)
            else:
                os.environ[var] = value
        os.environ["CLUSTERBENCH_GPU_GRANT"] = grant.source
    os.execv(argv[0], argv)
    return 127  # not reached


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
