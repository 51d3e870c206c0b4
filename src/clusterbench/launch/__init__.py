"""Launchers: how a cbk command is started (locally, under mpiexec, ...).

Each launcher is one small class in one module, registered by name; the
module list below is explicit and imported lazily, so a launcher whose
tool is absent costs nothing until chosen, and then says why it cannot run.
"""
from __future__ import annotations

from clusterbench.errors import BadInput
from clusterbench.launch.job import Job, Launcher
from clusterbench.extensions.registry import Registry

# MPI counts ranks in a C int (MPI_Comm_size): a larger count given reached
# the store's integer column as an OverflowError traceback, after a run was begun
MAX_RANKS = 2**31 - 1

# name, its module's LAUNCHER, what it is in a few words (for --launcher's help)
LAUNCHERS = Registry("launcher", [
    ("local", "clusterbench.launch.local:LAUNCHER", "this host, one rank"),
    ("mpiexec", "clusterbench.launch.mpiexec:LAUNCHER", "MPICH or Open MPI; with --hostfile its hosts"),
    ("srun", "clusterbench.launch.srun:LAUNCHER", "Slurm; inside an allocation its nodes"),
    ("qrsh", "clusterbench.launch.qrsh:LAUNCHER", "Grid Engine"),
])


def names() -> list[str]:
    return LAUNCHERS.names()


def help_text() -> str:
    """--launcher's help, from the registry (no launcher module is imported)."""
    return ", ".join(f"{name} ({what})" for name, what in LAUNCHERS.items()) + \
        " (default: mpiexec when more than one rank, else local)."


def get(name: str, cbk: str | None = None) -> Launcher:
    launcher = LAUNCHERS.load(name)
    why = launcher.unavailable(cbk)
    if why:
        raise BadInput(f"launcher {name} cannot run here: {why}")
    return launcher


def choose(requested: str | None, ranks: int, cbk: str | None = None) -> Launcher:
    """The requested launcher, else mpiexec for several ranks, else local."""
    return get(requested or ("mpiexec" if ranks > 1 else "local"), cbk)


__all__ = ["Job", "Launcher", "choose", "get", "help_text", "names"]
