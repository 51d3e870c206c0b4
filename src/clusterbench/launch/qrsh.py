"""Runs cbk through Grid Engine's qrsh: the scheduler picks the slots, and
the output streams back as from srun. Several ranks ask for a parallel
environment ($CLUSTERBENCH_SGE_PE, default `mpi`) and start cbk under the
mpiexec beside it, which finds the granted hosts itself (Hydra and Open MPI
read $PE_HOSTFILE and start remote ranks with `qrsh -inherit`).
Inside a job already (qsub), use --launcher mpiexec instead: the job's
slots are granted, and mpiexec is tightly integrated the same way."""
from __future__ import annotations

import os
import shlex
import shutil

from clusterbench.errors import BadInput
from clusterbench.launch.job import Job, Launcher
from clusterbench.launch.mpiexec import MpiExec

NOT_HERE = "no qrsh on PATH (this host is not a Grid Engine submit host, or $SGE_ROOT is not set)"


def qrsh_command(qrsh: str, job: Job, pe: str, inner: list[str]) -> list[str]:
    """`inner` is what runs in the granted slots (cbk itself, or mpiexec ... cbk).
    qrsh joins its command words with spaces and a shell on the execution
    host parses that line, so each word is quoted here: a `;`, `$(...)`,
    space or `$` in a --dir or label reaches cbk as written, never the shell."""
    # -V: the job sees this environment (CVARs, $CLUSTERBENCH_*); -now no: wait in the queue
    # rather than fail when the slots are busy; -cwd: cbk's relative paths mean what they say
    cmd = [qrsh, "-V", "-now", "no", "-cwd"]
    if job.ranks > 1:
        cmd += ["-pe", pe, str(job.ranks)]
    return cmd + [shlex.quote(word) for word in inner]


class Qrsh(Launcher):
    name = "qrsh"

    def unavailable(self, cbk: str | None = None) -> str | None:
        return None if shutil.which("qrsh") else NOT_HERE

    def command(self, job: Job) -> list[str]:
        qrsh = shutil.which("qrsh")
        if not qrsh:
            raise BadInput(NOT_HERE)
        if job.hostfile:
            raise BadInput("with --launcher qrsh Grid Engine chooses the hosts: drop --hostfile")
        # several ranks: mpiexec inside the granted slots; its host file is Grid Engine's
        inner = MpiExec().command(job) if job.ranks > 1 else list(job.argv)
        return qrsh_command(qrsh, job, os.environ.get("CLUSTERBENCH_SGE_PE", "mpi"), inner)


LAUNCHER = Qrsh()
