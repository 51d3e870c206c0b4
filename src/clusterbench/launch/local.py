"""Runs cbk directly: one process on this host."""
from __future__ import annotations

from clusterbench.errors import BadInput
from clusterbench.launch.job import Job, Launcher


class Local(Launcher):
    name = "local"

    def command(self, job: Job) -> list[str]:
        if job.ranks != 1:
            raise BadInput(f"the local launcher runs one process; for --np {job.ranks} use --launcher mpiexec")
        return list(job.argv)

    def on_this_host_only(self, job: Job) -> bool:
        return True


LAUNCHER = Local()
