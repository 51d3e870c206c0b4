"""Runs cbk under Slurm's srun. Inside an allocation (salloc, sbatch) the
ranks go to that allocation's nodes; outside one, srun asks Slurm for an
allocation of its own, per step. cbk's MPI must speak a PMI that srun
serves: `--mpi` is taken from $CLUSTERBENCH_SRUN_MPI, else pmi2 (Slurm's
pmi2 plugin also answers PMI-1, which MPICH, the pip wheel included, speaks
by default; tested with Slurm 22.05). A mismatch shows as N single-rank
runs, which the runner rejects."""
from __future__ import annotations

import os
import re
import shutil
from typing import Mapping

from clusterbench.errors import BadInput
from clusterbench.launch.job import Job, Launcher

NOT_HERE = "no srun on PATH (this host is not a Slurm client: apt-get install slurm-client, or use mpiexec)"


def srun_command(srun: str, job: Job, mpi: str) -> list[str]:
    # --disable-status: srun takes a first SIGINT as a request for the tasks'
    # status, and only a second within a second ends them. clusterbench sends
    # a launch one SIGINT (step_engine.stop), so it waited out its grace and
    # killed srun: cbk was still working (its files in --dir at clusterbench's
    # exit) and an allocation srun had asked for itself stayed held. With it,
    # srun passes the one SIGINT to every task and ends when they have.
    # (--quit-on-interrupt is not it: srun then aborts the step at once, and
    # cbk is killed while it removes its files.)
    cmd = [srun, f"--ntasks={job.ranks}", f"--mpi={mpi}", "--kill-on-bad-exit=1", "--disable-status"]
    if job.ranks_per_node:
        # without --nodes srun spreads the tasks over the whole allocation
        # and only warns that it cannot honour --ntasks-per-node
        nodes = -(-job.ranks // job.ranks_per_node)
        cmd += [f"--nodes={nodes}", f"--ntasks-per-node={job.ranks_per_node}"]
    if job.hostfile:
        cmd.append(f"--nodefile={job.hostfile}")
    if job.oversubscribe:
        cmd.append("--overcommit")
    # srun passes this process's environment on; the job's own variables are
    # set in that environment by the runner, so they need no --export here
    return cmd + list(job.argv)


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


def allocation_misfit(job: Job, environ: Mapping[str, str]) -> str | None:
    """Why srun, inside this Slurm allocation, would refuse the step: more
    nodes than the job has ("Only allocated 1 nodes asked for 2"), or more
    ranks than its CPUs without --overcommit ("More processors requested
    than permitted"). Those reached srun, and the run was stored as failed.
    A lower bound: a node that allots whole cores holds fewer tasks than
    CPUs, and srun then refuses what passes here. None outside an allocation
    and inside a step (srun within srun)."""
    job_id = environ.get("SLURM_JOB_ID")
    if not job_id or environ.get("SLURM_STEP_ID"):
        return None
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
                    f"or pass --oversubscribe (srun --overcommit)")
    elif job.ranks > sum(cpus):
        return (f"{job.ranks} ranks; Slurm job {job_id} was given {sum(cpus)} CPU(s) "
                f"(SLURM_JOB_CPUS_PER_NODE={cpus_text}): {ask} (--ntasks={job.ranks}), "
                f"or pass --oversubscribe (srun --overcommit)")
    return None


class Srun(Launcher):
    name = "srun"
    node_output_labelled = True

    def unavailable(self, cbk: str | None = None) -> str | None:
        return None if shutil.which("srun") else NOT_HERE

    def mpi(self) -> str:
        return os.environ.get("CLUSTERBENCH_SRUN_MPI", "pmi2")

    def command(self, job: Job) -> list[str]:
        srun = shutil.which("srun")
        if not srun:
            raise BadInput(NOT_HERE)
        return srun_command(srun, job, self.mpi())

    def misfit(self, job: Job) -> str | None:
        return None if job.hostfile else allocation_misfit(job, os.environ)

    def node_command(self, argv: tuple[str, ...], ranks: int, hostfile: str | None) -> list[str] | None:
        """Inside an allocation (salloc, sbatch), one task on each of its nodes."""
        if not os.environ.get("SLURM_JOB_ID"):
            return None
        nodes = int(os.environ.get("SLURM_JOB_NUM_NODES") or os.environ.get("SLURM_NNODES") or 1)
        # srun forwards output in chunks of 1 KiB and interleaves the tasks'
        # chunks mid-line; --label tags every chunk with its task, so each
        # task's line can be put back together
        srun, *rest = self.command(Job(argv, nodes, 1))
        return [srun, "--label", *rest]


LAUNCHER = Srun()
