"""Runs cbk under Slurm's srun. Inside an allocation (salloc, sbatch) the
ranks go to that allocation's nodes; outside one, srun asks Slurm for an
allocation of its own, per step. cbk's MPI must speak a PMI that srun
serves: `--mpi` is taken from $CLUSTERBENCH_SRUN_MPI, else pmi2 (Slurm's
pmi2 plugin also answers PMI-1, which MPICH, the pip wheel included, speaks
by default; tested with Slurm 22.05). A mismatch shows as N single-rank
runs, which the runner rejects."""
from __future__ import annotations

import os
import shutil

from clusterbench.errors import BadInput
from clusterbench.launch.job import Job, Launcher
from clusterbench.launch.rank_note import SLURM, telling_job, told_nodes

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
    # --export=ALL: the ranks get this process's environment, where the
    # runner put the step's own variables (MPI algorithm CVARs, the GPU
    # binding's). A job submitted with `sbatch --export=NONE` has
    # SLURM_EXPORT_ENV=NONE, which srun obeys: its ranks started with no
    # variable but Slurm's, and --mpi-algorithm's choice was dropped, the
    # library's own algorithm timed under the chosen one's name.
    cmd = [srun, f"--ntasks={job.ranks}", f"--mpi={mpi}", "--kill-on-bad-exit=1", "--disable-status", "--export=ALL"]
    if job.ranks_per_node:
        # without --nodes srun spreads the tasks over the whole allocation
        # and only warns that it cannot honour --ntasks-per-node
        nodes = -(-job.ranks // job.ranks_per_node)
        cmd += [f"--nodes={nodes}", f"--ntasks-per-node={job.ranks_per_node}"]
    if job.hostfile:
        cmd.append(f"--nodefile={job.hostfile}")
    if job.oversubscribe:
        cmd.append("--overcommit")
    return cmd + list(job.argv)


class Srun(Launcher):
    name = "srun"
    node_output_labelled = True

    def unavailable(self, cbk: str | None = None) -> str | None:
        return None if shutil.which("srun") else NOT_HERE

    def mpi(self) -> str:
        return os.environ.get("CLUSTERBENCH_SRUN_MPI", "pmi2")

    def _srun(self) -> str:
        srun = shutil.which("srun")
        if not srun:
            raise BadInput(NOT_HERE)
        return srun

    def command(self, job: Job) -> list[str]:
        """Several ranks each say first the node srun started them on
        (launch/rank_note.py): srun's block layout (laid_out) names another
        where a step started while the job's previous step still held its
        CPUs, or under SLURM_DISTRIBUTION=cyclic, and none with --nodefile
        or outside an allocation."""
        told = telling_job(job, SLURM) if job.ranks > 1 else job
        return srun_command(self._srun(), told, self.mpi())

    def placement(self, job: Job):
        """Where each rank said srun started it (launch/rank_note.py), heard
        from the launch's stderr; for a rank that said none, the tasks as srun
        lays them out over the allocation's nodes (laid_out), where the ranks
        that told agree with it."""
        from clusterbench.launch.rank_placement import HeardPlacement, told_or_laid_out

        laid_out = self.laid_out(job)
        return HeardPlacement(lambda said: told_or_laid_out(told_nodes(said), laid_out))

    @staticmethod
    def laid_out(job: Job):
        """Inside an allocation, the tasks as srun lays them out over its
        nodes (launch/rank_placement.py's slurm_block, block distribution);
        None outside one (srun asks for nodes of its own), inside a step,
        with a host file (--nodefile), or with --overcommit (--oversubscribe),
        which changes the CPUs srun counts a node."""
        from clusterbench.launch.allocation import cpus_per_node
        from clusterbench.launch.rank_placement import slurm_block, slurm_hostnames

        if job.hostfile or job.oversubscribe or not os.environ.get("SLURM_JOB_ID") or os.environ.get("SLURM_STEP_ID"):
            return None
        hosts = slurm_hostnames(os.environ.get("SLURM_JOB_NODELIST", ""))
        cpus = cpus_per_node(os.environ.get("SLURM_JOB_CPUS_PER_NODE", ""))
        return slurm_block(hosts, tuple(cpus), job.ranks, job.ranks_per_node) if hosts and cpus else None

    def misfit(self, job: Job) -> str | None:
        from clusterbench.launch.allocation import slurm_misfit

        return None if job.hostfile else slurm_misfit(job, os.environ)

    def node_command(self, argv: tuple[str, ...], ranks: int, hostfile: str | None) -> list[str] | None:
        """Inside an allocation (salloc, sbatch), one task on each of its nodes."""
        if not os.environ.get("SLURM_JOB_ID"):
            return None
        nodes = int(os.environ.get("SLURM_JOB_NUM_NODES") or os.environ.get("SLURM_NNODES") or 1)
        # srun forwards output in chunks of 1 KiB and interleaves the tasks'
        # chunks mid-line; --label tags every chunk with its task, so each
        # task's line can be put back together
        srun, *rest = srun_command(self._srun(), Job(argv, nodes, 1), self.mpi())
        return [srun, "--label", *rest]


LAUNCHER = Srun()
