"""Launchers: how a cbk command is started (locally, under mpiexec, ...).

Each launcher is one small class in one module, registered by name; the
module list below is explicit and imported lazily, so a launcher whose
tool is absent costs nothing until chosen, and then says why it cannot run.
"""
from __future__ import annotations

import importlib

from clusterbench.errors import BadInput
from clusterbench.launch.job import Job, Launcher

_MODULES = {
    "local": "clusterbench.launch.local",
    "mpiexec": "clusterbench.launch.mpiexec",
    "srun": "clusterbench.launch.srun",
    "qrsh": "clusterbench.launch.qrsh",
}


def names() -> list[str]:
    return list(_MODULES)


def get(name: str, cbk: str | None = None) -> Launcher:
    try:
        module = importlib.import_module(_MODULES[name])
    except KeyError:
        raise BadInput(f"no such launcher: '{name}' (launchers: {', '.join(_MODULES)})") from None
    launcher = module.LAUNCHER
    why = launcher.unavailable(cbk)
    if why:
        raise BadInput(f"launcher {name} cannot run here: {why}")
    return launcher


def choose(requested: str | None, ranks: int, cbk: str | None = None) -> Launcher:
    """The requested launcher, else mpiexec for several ranks, else local."""
    return get(requested or ("mpiexec" if ranks > 1 else "local"), cbk)


__all__ = ["Job", "Launcher", "choose", "get", "names"]
