"""Runs cbk through Grid Engine's qrsh: the scheduler picks the slots, and
the output streams back as from srun. Several ranks ask for a parallel
environment ($CLUSTERBENCH_SGE_PE, default `mpi`) and start cbk under the
mpiexec beside it, which finds the granted hosts itself (Hydra and Open MPI
read $PE_HOSTFILE and start remote ranks with `qrsh -inherit`); it writes
those hosts on stderr first, known there alone, and each rank the node it
started on, to name a silent rank's host.
Inside a job already (qsub), use --launcher mpiexec instead: the job's
slots are granted, and mpiexec is tightly integrated the same way."""
from __future__ import annotations

import os
import shlex
import shutil

from clusterbench.errors import BadInput
from clusterbench.launch.hostfile import HostEntry, grid_engine_lines
from clusterbench.launch.job import Job, Launcher
from clusterbench.launch.messages import PLACEMENT_NOTE
from clusterbench.launch.mpiexec import MpiExec, find_mpiexec, flavour
from clusterbench.launch.rank_note import MPI, telling_job, told_nodes
from clusterbench.launch.rank_placement import HeardPlacement, hydra, told_or_laid_out

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


def telling_pe_hostfile(inner: list[str]) -> list[str]:
    """`inner` run after writing $PE_HOSTFILE's lines on stderr, each after
    messages.PLACEMENT_NOTE: the hosts Grid Engine granted are known on the
    execution host alone, and a rank silent at the start deadline is named
    with the host mpiexec placed it on from them (Qrsh.placement)."""
    return ["sh", "-c", f'sed "s/^/{PLACEMENT_NOTE}/" "$PE_HOSTFILE" >&2; exec "$@"', "sh", *inner]


def granted(said: str) -> tuple[HostEntry, ...]:
    """The $PE_HOSTFILE lines a launch of telling_pe_hostfile wrote (not its ranks' notes)."""
    return grid_engine_lines(line[len(PLACEMENT_NOTE):] for line in said.splitlines()
                             if line.startswith(PLACEMENT_NOTE) and not told_nodes(line))


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
        # several ranks: mpiexec inside the granted slots; its host file is Grid Engine's, and each
        # rank says first the node it started on (launch/rank_note.py)
        inner = telling_pe_hostfile(MpiExec().launch_command(telling_job(job, MPI))) if job.ranks > 1 \
            else list(job.argv)
        return qrsh_command(qrsh, job, os.environ.get("CLUSTERBENCH_SGE_PE", "mpi"), inner)

    def placement(self, job: Job) -> HeardPlacement | None:
        """Several ranks: the node each rank said it started on (launch/rank_note.py),
        and for a rank that said none, Hydra's placement over the $PE_HOSTFILE
        the launch tells (telling_pe_hostfile), as mpiexec places them inside
        a qsub job (mpiexec.batch_allocation), where the ranks that told agree
        with it; none for Open MPI, which reads it only where built with Grid
        Engine support."""
        if job.ranks < 2:
            return None
        exe = find_mpiexec(job.cbk)
        hydra_places = bool(exe) and flavour(exe) == "mpich"

        def heard(said: str):
            entries = granted(said) if hydra_places else ()
            laid_out = hydra(entries, job.ranks, job.ranks_per_node) if entries else None
            return told_or_laid_out(told_nodes(said), laid_out)

        return HeardPlacement(heard)


LAUNCHER = Qrsh()
