"""What to launch (Job) and the launcher interface."""
from __future__ import annotations

from pathlib import Path

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Job:
    argv: tuple[str, ...]          # the program each rank runs: cbk KERNEL --name=value ...
    ranks: int = 1
    ranks_per_node: int | None = None
    hostfile: str | None = None
    oversubscribe: bool = False
    env: dict[str, str] = field(default_factory=dict)
    # the cbk the ranks run, when argv starts with a wrapper (the GPU binding,
    # the memory cgroup): its MPI, not the wrapper's Python, picks the mpiexec
    program: str | None = None

    @property
    def cbk(self) -> str:
        return self.program or self.argv[0]


def hostfile_hosts(path: str) -> list[str]:
    """Host names of an MPICH ("host:n") or Open MPI ("host slots=n") host file."""
    from clusterbench.launch.hostfile import hosts_of

    return hosts_of(path)


class Launcher:
    name = "?"
    # node_command's output is "TASK: chunk" lines (srun --label), not plain lines
    node_output_labelled = False

    def unavailable(self, cbk: str | None = None) -> str | None:
        """None when usable here, else the reason it is not."""
        return None

    def command(self, job: Job) -> list[str]:
        """The argv that starts the job; pure, tested against exact strings."""
        raise NotImplementedError

    def on_this_host_only(self, job: Job) -> bool:
        """Whether every rank of the job starts on this host (launch/host_ranks.py
        bounds how many); False where the launcher or a scheduler places them."""
        return False

    def placement(self, job: Job):
        """Where each rank starts (launch/rank_placement.py's Placement), as
        this launcher places them, for a message naming a rank that said
        nothing; None where a scheduler places them or it cannot tell."""
        return None

    def misfit(self, job: Job) -> str | None:
        """Why the job cannot start where this launcher would place it (a
        batch allocation too small for it), checked before anything is
        stored; None when it fits or the launcher cannot tell."""
        return None

    def node_command(self, argv: tuple[str, ...], ranks: int, hostfile: str | None) -> list[str] | None:
        """The argv that runs `argv` once on every node a step of `ranks`
        ranks would use (the per-node environment snapshot), or None when
        the step runs on this host only (the default)."""
        return None

    def node_commands(self, argv: tuple[str, ...], ranks: int, hostfile: str | None, folder: Path) -> list[list[str]]:
        """The launches that run `argv` once on every node (files they need
        go in `folder`); by default node_command's one launch."""
        cmd = self.node_command(argv, ranks, hostfile)
        return [cmd] if cmd else []
