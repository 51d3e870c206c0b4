"""Which batch job this process runs in, from the variables the schedulers
set: 'slurm 1234' (or 'slurm 1234_7' for an array task), 'sge 5678' (or
'sge 5678.3'), 'pbs 42.server'; None outside a batch job.

As an environment collector (`batchjob.*`): what the job was given, as the
scheduler states it, so that a run's snapshot says where and with what it
ran: the partition or queue, the nodes, the CPUs per node, the GPUs asked
for. The job's id is the run's (runs.batch_job), not the snapshot's: a
snapshot is shared by every run whose machine is the same."""
from __future__ import annotations

import os
from typing import TYPE_CHECKING, Mapping

if TYPE_CHECKING:
    from clusterbench.environment.sources import Context


def current(env: Mapping[str, str] = os.environ) -> str | None:
    if env.get("SLURM_JOB_ID"):
        task = env.get("SLURM_ARRAY_TASK_ID")
        job = env.get("SLURM_ARRAY_JOB_ID") if task else env["SLURM_JOB_ID"]
        return f"slurm {job}_{task}" if task else f"slurm {job}"
    if env.get("JOB_ID") and env.get("SGE_ROOT"):  # JOB_ID alone is too common a name
        task = env.get("SGE_TASK_ID")
        return f"sge {env['JOB_ID']}.{task}" if task and task != "undefined" else f"sge {env['JOB_ID']}"
    if env.get("PBS_JOBID"):
        return f"pbs {env['PBS_JOBID']}"
    return None


# key -> the variable it is read from, as written: Slurm's own compressed
# forms ("node[01-04,07]", "2(x3),1") are kept, not expanded, so the value
# is the one `scontrol show job` and the job's script saw. The job-wide
# variables only: a per-node snapshot is taken by a step of its own, whose
# SLURM_CPUS_ON_NODE, SLURM_GPUS_ON_NODE and SLURM_TASKS_PER_NODE are that
# step's, not the job's (nodes of one job would differ by them).
SLURM_KEYS = (
    ("batchjob.partition", "SLURM_JOB_PARTITION"),
    ("batchjob.nodes", "SLURM_JOB_NODELIST"),
    ("batchjob.node_count", "SLURM_JOB_NUM_NODES"),
    ("batchjob.cpus_per_node", "SLURM_JOB_CPUS_PER_NODE"),
    ("batchjob.cpus_per_task", "SLURM_CPUS_PER_TASK"),
    ("batchjob.gpus", "SLURM_GPUS"),
    ("batchjob.gpus_per_node", "SLURM_GPUS_PER_NODE"),
    ("batchjob.gpus_per_task", "SLURM_GPUS_PER_TASK"),
)
SGE_KEYS = (
    ("batchjob.queue", "QUEUE"),
    ("batchjob.parallel_environment", "PE"),
    ("batchjob.slots", "NSLOTS"),
    ("batchjob.node_count", "NHOSTS"),
)
PBS_KEYS = (
    ("batchjob.queue", "PBS_QUEUE"),
    ("batchjob.node_count", "PBS_NUM_NODES"),
)
# stored as numbers; the others stay text in every job ("2" and "2(x3),1" alike)
COUNT_KEYS = frozenset({"batchjob.node_count", "batchjob.slots", "batchjob.cpus_per_task"})


def keys(environ: Mapping[str, str]) -> dict[str, object]:
    """The batchjob.* keys of the job these variables describe; {} outside one.
    Grid Engine's hosts are not read from $PE_HOSTFILE: mpiexec hands the
    master's variables to every node, and that path is under the master's
    execd spool, which another node may not see; a key only some nodes have
    would show as a difference between them (the run's hosts are stored
    with the run anyway)."""
    job = current(environ)
    if job is None:
        return {}
    system = job.split()[0]
    table = {"slurm": SLURM_KEYS, "sge": SGE_KEYS, "pbs": PBS_KEYS}[system]
    out: dict[str, object] = {"batchjob.system": system}
    for key, var in table:
        value = environ.get(var, "").strip()
        if value and value != "undefined":
            out[key] = int(value) if key in COUNT_KEYS and value.isdigit() else value
    return out


def collect(env: dict, ctx: Context) -> None:
    # the process's own variables describe this machine only when reading it
    if ctx.is_real_root:
        env.update(keys(os.environ))
