"""Whether a step fits the batch job this process runs in, read from the
job's own variables, so that a step the job cannot hold is bad input before
anything is stored: srun refused it after the run was begun (a failed run,
exit 1), and MPICH's Hydra, inside a Slurm or Grid Engine job, started every
rank anyway on the slots it was granted, two or more to a CPU. Outside a
batch job, and for a step given a host file, nothing is checked here.
"""
from __future__ import annotations

import re
from typing import Mapping

from clusterbench.launch.job import Job

_CPUS_ITEM = re.compile(r"^(\d+)(?:\(x(\d+)\))?$")


def cpus_per_node(text: str) -> list[int] | None:
    """Slurm's SLURM_JOB_CPUS_PER_NODE (also SLURM_TASKS_PER_NODE's form) as
    one count per node: "2(x3),1" -> [2, 2, 2, 1]; None for a form it is not."""
    counts: list[int] = []
    for item in text.strip().split(","):
        m = _CPUS_ITEM.match(item.strip())
        if not m:
            return None
        counts += [int(m.group(1))] * int(m.group(2) or 1)
    return counts


def heterogeneous(environ: Mapping[str, str]) -> str | None:
    """Why a launch inside a heterogeneous Slurm job (sbatch -N1 : -N2,
    #SBATCH hetjob) is refused: the job's script sees its first component
    alone (SLURM_JOB_NODELIST, SLURM_JOB_CPUS_PER_NODE and SLURM_TASKS_PER_NODE
    are component 0's), and srun without --het-group runs there, so a
    cluster run or MPI step took a part of the nodes asked for as the whole.
    None outside one."""
    size = environ.get("SLURM_HET_SIZE") or environ.get("SLURM_PACK_SIZE") or ""   # PACK: Slurm before 20.02
    if not size.isdigit() or int(size) < 2:
        return None
    def each(name: str) -> list[str]:
        return [environ.get(f"{name}_HET_GROUP_{i}") or environ.get(f"{name}_PACK_GROUP_{i}") or ""
                for i in range(int(size))]

    parts = [nodes or "?" for nodes in each("SLURM_JOB_NODELIST")]
    counts = each("SLURM_JOB_NUM_NODES")
    nodes = f"sbatch -N {sum(map(int, counts))}" if all(c.isdigit() for c in counts) else "sbatch -N <nodes>"
    return (f"Slurm job {environ.get('SLURM_JOB_ID')} is heterogeneous ({size} components: {' + '.join(parts)}), and "
            f"srun, mpiexec and run cluster would see its first component alone ({parts[0]}): submit one job of "
            f"all the nodes ({nodes}), or one job a component")


def slurm_misfit(job: Job, environ: Mapping[str, str]) -> str | None:
    """Why the step does not fit this Slurm allocation: more nodes than the
    job has (srun: "Only allocated 1 nodes asked for 2"), or more ranks than
    its CPUs without --overcommit (srun: "More processors requested than
    permitted"; Hydra placed them all, two ranks to a CPU the job was given),
    or a heterogeneous job (heterogeneous).
    A lower bound: a node that allots whole cores holds fewer tasks than
    CPUs, and srun then refuses what passes here. None outside an allocation
    and inside a step (srun within srun)."""
    job_id = environ.get("SLURM_JOB_ID")
    if not job_id or environ.get("SLURM_STEP_ID"):
        return None
    if why := heterogeneous(environ):
        return why
    nodes_text = environ.get("SLURM_JOB_NUM_NODES") or environ.get("SLURM_NNODES") or ""
    cpus_text = environ.get("SLURM_JOB_CPUS_PER_NODE", "")
    cpus = cpus_per_node(cpus_text) if cpus_text else None
    ask = "ask sbatch/salloc for more"
    if job.ranks_per_node and nodes_text.isdigit():
        need = -(-job.ranks // job.ranks_per_node)
        if need > int(nodes_text):
            return (f"{job.ranks} ranks, {job.ranks_per_node} a node, need {need} nodes; Slurm job {job_id} has "
                    f"{nodes_text} (SLURM_JOB_NUM_NODES): {ask} (--nodes={need}), or give fewer ranks")
    if job.oversubscribe or not cpus:
        return None
    if job.ranks_per_node:
        fit = sum(1 for c in cpus if c >= job.ranks_per_node)
        need = -(-job.ranks // job.ranks_per_node)
        if fit < need:
            return (f"{job.ranks} ranks, {job.ranks_per_node} a node, need {need} nodes of {job.ranks_per_node} CPUs; "
                    f"Slurm job {job_id} has {fit} (SLURM_JOB_CPUS_PER_NODE={cpus_text}): {ask}, "
                    f"or pass --oversubscribe")
    elif job.ranks > sum(cpus):
        return (f"{job.ranks} ranks; Slurm job {job_id} was given {sum(cpus)} CPU(s) "
                f"(SLURM_JOB_CPUS_PER_NODE={cpus_text}): {ask} (--ntasks={job.ranks}), "
                f"or pass --oversubscribe")
    return None


def grid_engine_misfit(job: Job, environ: Mapping[str, str]) -> str | None:
    """More ranks than the job's slots (NSLOTS: 1 in a job without a
    parallel environment), or more nodes than its hosts (NHOSTS) for --ppn,
    without --oversubscribe; None outside a Grid Engine job."""
    if not (environ.get("JOB_ID") and environ.get("SGE_ROOT")):   # JOB_ID alone is too common a name
        return None
    slots, hosts = environ.get("NSLOTS", ""), environ.get("NHOSTS", "")
    pe = environ.get("PE") or "<parallel environment>"
    if job.ranks_per_node and hosts.isdigit() and -(-job.ranks // job.ranks_per_node) > int(hosts):
        need = -(-job.ranks // job.ranks_per_node)
        return (f"{job.ranks} ranks, {job.ranks_per_node} a node, need {need} hosts; Grid Engine job "
                f"{environ['JOB_ID']} was granted {hosts} (NHOSTS): ask qsub for more (-pe {pe} ...), "
                f"or give fewer ranks")
    if not job.oversubscribe and slots.isdigit() and job.ranks > int(slots):
        return (f"{job.ranks} ranks; Grid Engine job {environ['JOB_ID']} was granted {slots} slot(s) (NSLOTS): "
                f"ask qsub for -pe {pe} {job.ranks}, or pass --oversubscribe")
    return None


def misfit(job: Job, environ: Mapping[str, str]) -> str | None:
    """Why the step does not fit the batch job it runs in; None if it does,
    or outside one."""
    if environ.get("SLURM_JOB_ID"):
        return slurm_misfit(job, environ)
    return grid_engine_misfit(job, environ)
