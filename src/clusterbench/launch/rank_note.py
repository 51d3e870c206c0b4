"""Each rank's note of the node it started on, written on stderr before it
becomes cbk, where a scheduler and not a host file places the ranks (srun,
qrsh, mpiexec inside a batch job): a rank that then says nothing (stopped, or dead before MPI_Init) is
named in the step's message with its own node, not a prediction of where
the launcher would put it (launch/messages.py, rank_placement.ToldPlacement)."""
from __future__ import annotations

import re
from dataclasses import replace

from clusterbench.launch.job import Job
from clusterbench.launch.messages import PLACEMENT_NOTE

# the rank and node as each launcher gives them to a rank: srun's own, and the process managers' under
# Grid Engine (Hydra's PMI_RANK, Open MPI's OMPI_COMM_WORLD_RANK; the node as cbk's notes name hosts)
SLURM = ("$SLURM_PROCID", "$SLURMD_NODENAME")
MPI = ("${PMI_RANK:-$OMPI_COMM_WORLD_RANK}", "$(uname -n)")


def telling_node(argv: tuple[str, ...] | list[str], said: tuple[str, str]) -> list[str]:
    """argv run after the rank writes "[clusterbench placement] rank N on
    NODE" on stderr (said: the rank and node, as shell words), from a shell
    that then becomes it: one short line a rank."""
    rank, node = said
    note = f"printf '%s\\n' \"{PLACEMENT_NOTE}rank {rank} on {node}\" >&2; exec \"$@\""
    return ["sh", "-c", note, "sh", *argv]


def telling_job(job: Job, said: tuple[str, str]) -> Job:
    """The job with each rank telling its node first (telling_node); the cbk it runs is kept."""
    return replace(job, argv=tuple(telling_node(job.argv, said)), program=job.cbk)


_TOLD = re.compile(rf"^{re.escape(PLACEMENT_NOTE)}rank (\d+) on (\S+)$", re.M)


def told_nodes(said: str) -> dict[int, str]:
    """The node each rank of a telling_node launch said it started on."""
    return {int(rank): node for rank, node in _TOLD.findall(said)}
