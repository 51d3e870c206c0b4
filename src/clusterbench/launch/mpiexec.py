"""Runs cbk under mpiexec. MPICH's Hydra and Open MPI spell ranks per
node, host files and oversubscription differently; the flavour is read
from `mpiexec --version`. The mpiexec used is the one beside cbk when
present (the MPI cbk was built with), else the first on PATH."""
from __future__ import annotations

import functools
import os
import shutil
import socket
import subprocess
from pathlib import Path

from clusterbench.errors import BadInput
from clusterbench.launch import hostfile as hostfiles
from clusterbench.launch import rank_placement
from clusterbench.launch.host_ranks import usable_cores
from clusterbench.launch.job import Job, Launcher, hostfile_hosts
from clusterbench.launch.rank_note import MPI, telling_job, told_nodes


@functools.cache
def find_mpiexec(cbk: str | None = None) -> str | None:
    if cbk:
        beside = Path(cbk).parent / "mpiexec"
        if os.access(beside, os.X_OK):
            return str(beside)
    return shutil.which("mpiexec")


@functools.cache
def flavour(mpiexec: str) -> str:
    """'mpich' (Hydra), 'openmpi', or 'unknown'."""
    try:
        text = subprocess.run([mpiexec, "--version"], capture_output=True, text=True, timeout=20).stdout
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    if "HYDRA" in text or "MPICH" in text or "Intel(R) MPI" in text:
        return "mpich"
    if "Open MPI" in text or "OpenRTE" in text or "Open RTE" in text:
        return "openmpi"
    return "unknown"


def hydra_command(mpiexec: str, job: Job) -> list[str]:
    cmd = [mpiexec, "-n", str(job.ranks)]
    if job.ranks_per_node:
        cmd += ["-ppn", str(job.ranks_per_node)]
    if job.hostfile:
        listed = hostfiles.hosts_argument(job.hostfile, "mpich")
        cmd += ["-hosts", listed] if listed else ["-f", job.hostfile]
    for k, v in sorted(job.env.items()):
        cmd += ["-genv", k, v]
    # Hydra oversubscribes without being asked
    return cmd + list(job.argv)


def openmpi_command(mpiexec: str, job: Job, as_root: bool) -> list[str]:
    cmd = [mpiexec, "-n", str(job.ranks)]
    if job.ranks_per_node:
        cmd += ["--map-by", f"ppr:{job.ranks_per_node}:node"]
    if job.hostfile:
        listed = hostfiles.hosts_argument(job.hostfile, "openmpi")
        cmd += ["--host", listed] if listed else ["--hostfile", job.hostfile]
    if job.oversubscribe:
        cmd += ["--oversubscribe"]
    if as_root:
        cmd += ["--allow-run-as-root"]
    for k, v in sorted(job.env.items()):
        cmd += ["-x", f"{k}={v}"]
    return cmd + list(job.argv)


def slurm_entries(environ) -> tuple[hostfiles.HostEntry, ...] | None:
    """A Slurm job's nodes in order (SLURM_JOB_NODELIST) with
    SLURM_TASKS_PER_NODE as each node's slots, as both MPIs read them; None
    outside a job, inside a step, or where the two do not pair up."""
    from clusterbench.launch.allocation import cpus_per_node

    if not environ.get("SLURM_JOB_ID") or environ.get("SLURM_STEP_ID"):
        return None
    hosts = rank_placement.slurm_hostnames(environ.get("SLURM_JOB_NODELIST", ""))
    tasks = cpus_per_node(environ.get("SLURM_TASKS_PER_NODE", ""))
    if not hosts or not tasks or len(hosts) != len(tasks):
        return None
    return tuple(hostfiles.HostEntry(h, t) for h, t in zip(hosts, tasks))


def grid_engine_entries(environ) -> tuple[hostfiles.HostEntry, ...] | None:
    """A Grid Engine job's $PE_HOSTFILE, its lines' hosts and slots in
    order; None outside a job or where it cannot be read."""
    path = environ.get("PE_HOSTFILE")
    if not (environ.get("JOB_ID") and environ.get("SGE_ROOT") and path):
        return None
    try:
        return hostfiles.grid_engine_entries(path) or None
    except OSError:
        return None


def batch_allocation(kind: str, job: Job, environ) -> rank_placement.Placement | None:
    """mpiexec without a host file inside a batch job: the job's nodes and
    slots as the MPI reads them, each placed as from a host file. Hydra
    round and round over a Slurm job's nodes (slurm_entries) or over
    $PE_HOSTFILE's lines (its slots, or --ppn a host past them); Open MPI
    in a Slurm job with ppr:N:node (--ppn); as each placed its ranks in
    sbatch and qsub jobs on the test clusters (test_slurm_multinode.py,
    test_gridengine.py). Open MPI in a Slurm job without --ppn maps by core
    over the nodes in order, each taking its slots but no more than its
    cores: 2 a node in a job of 4(x3) tasks on nodes of 2 cores, node after
    node. Another node's cores are not known here: this node's are taken
    for every node's, as for the job's alike nodes. Open MPI reads
    $PE_HOSTFILE only where its runtime was built with Grid Engine support
    (PRRTE's ras/gridengine, absent from the Open MPI tested): None there,
    as outside a job."""
    slurm = slurm_entries(environ)
    if kind == "mpich":
        entries = slurm or (None if environ.get("SLURM_JOB_ID") else grid_engine_entries(environ))
        return rank_placement.hydra(entries, job.ranks, job.ranks_per_node) if entries else None
    if kind != "openmpi" or not slurm:
        return None
    if job.ranks_per_node:
        return rank_placement.open_mpi(slurm, job.ranks, job.ranks_per_node)
    cores = usable_cores()
    if job.oversubscribe or not cores:   # oversubscribed, Open MPI maps past the slots as it sees fit
        return None
    # by core: a node's slots, no more than its cores, those of this one (the job's nodes taken as alike)
    held = tuple(hostfiles.HostEntry(e.host, min(e.slots, cores)) for e in slurm)
    return rank_placement.open_mpi(held, job.ranks, None)


class MpiExec(Launcher):
    name = "mpiexec"

    def unavailable(self, cbk: str | None = None) -> str | None:
        return None if find_mpiexec(cbk) else "no mpiexec on PATH (install an MPI, or pip install mpich)"

    def command(self, job: Job) -> list[str]:
        """Inside a batch job without a host file, where the job's nodes are
        the MPI's to place the ranks on, each rank says first the node it
        started on (launch/rank_note.py): batch_allocation takes another
        node's cores for this one's, and Open MPI built without Grid Engine
        support places none from $PE_HOSTFILE."""
        return self.launch_command(telling_job(job, MPI) if self._ranks_tell(job) else job)

    def _ranks_tell(self, job: Job) -> bool:
        """Whether the job's nodes, not a host file, place its ranks: inside a batch job without one."""
        return job.ranks > 1 and not job.hostfile and not self.on_this_host_only(job)

    def launch_command(self, job: Job) -> list[str]:
        """mpiexec running job.argv as given, in its MPI's spelling."""
        exe = find_mpiexec(job.cbk)
        if not exe:
            raise BadInput("no mpiexec on PATH (install an MPI, or pip install mpich)")
        kind = flavour(exe)
        if kind == "openmpi":
            return openmpi_command(exe, job, os.geteuid() == 0)
        if kind == "mpich":
            return hydra_command(exe, job)
        raise BadInput(f"{exe} is neither MPICH Hydra nor Open MPI: cannot tell how to pass ranks per node")

    def on_this_host_only(self, job: Job) -> bool:
        """No host file, and no batch allocation whose nodes mpiexec would read."""
        from clusterbench.environment import batchjob

        return not job.hostfile and batchjob.current() is None

    def placement(self, job: Job):
        """This host for every rank, or the host file's placement in the
        MPI's own way (launch/rank_placement.py), or inside a Slurm job
        or Grid Engine job without a host file the node each rank said it
        started on (command), and for a rank that said none the job's nodes
        as the MPI reads them (batch_allocation), where the ranks that told
        agree; None where it cannot tell."""
        laid_out = self.laid_out(job)
        if not self._ranks_tell(job):
            return laid_out
        return rank_placement.HeardPlacement(lambda said: rank_placement.told_or_laid_out(told_nodes(said), laid_out))

    def laid_out(self, job: Job) -> rank_placement.Placement | None:
        """Where the MPI places each rank, from the host file or the batch job's nodes; None where not known."""
        if self.on_this_host_only(job):
            return rank_placement.Placement((socket.gethostname(),), (job.ranks,), job.ranks, False)
        exe = find_mpiexec(job.cbk)
        if not exe:
            return None
        if not job.hostfile:
            return batch_allocation(flavour(exe), job, os.environ)
        try:
            entries = hostfiles.read(job.hostfile).entries
        except BadInput:
            return None
        place = {"mpich": rank_placement.hydra, "openmpi": rank_placement.open_mpi}.get(flavour(exe))
        return place(entries, job.ranks, job.ranks_per_node) if place else None

    def misfit(self, job: Job) -> str | None:
        """Inside a batch job mpiexec places the ranks on the job's slots
        (Hydra reads SLURM_TASKS_PER_NODE or $PE_HOSTFILE) and starts more
        than it was granted; with a host file the user placed them."""
        from clusterbench.launch.allocation import misfit

        return None if job.hostfile else misfit(job, os.environ)

    def node_command(self, argv: tuple[str, ...], ranks: int, hostfile: str | None) -> list[str] | None:
        """With a host file, one process on each of its hosts (one rank runs
        on the first host of the file, not here: that host is the one)."""
        if not hostfile:
            return None
        hosts = hostfile_hosts(hostfile)
        return self.command(Job(argv, len(hosts) if ranks > 1 else 1, 1, hostfile))

    def node_commands(self, argv: tuple[str, ...], ranks: int, hostfile: str | None, folder: Path) -> list[list[str]]:
        """One launch per host, each with a host file of that host alone: one
        launch over all hosts interleaves their long JSON lines in mpiexec's
        output, and a garbled snapshot is lost."""
        if not hostfile:
            return []
        hosts = hostfile_hosts(hostfile)[:None if ranks > 1 else 1]
        cmds = []
        for i, host in enumerate(hosts):
            one = folder / f"host-{i}"
            one.write_text(host + "\n")
            cmds.append(self.command(Job(argv, 1, 1, str(one))))
        return cmds


LAUNCHER = MpiExec()
