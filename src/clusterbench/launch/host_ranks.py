"""How many ranks a step may start on this host alone without --oversubscribe.

MPICH's Hydra starts every rank it is asked for: `run null --np 100000` on
a 2-core machine forked 100,000 processes (minutes of a machine brought to
a crawl, and no figure worth keeping). Moderate oversubscription is useful
and the suites use it (mpi-sweep and parallel-io run 4 ranks on 2 cores,
network 8, and say so in their records' warnings), so the bound is far
above that: RANKS_PER_HARDWARE_THREAD ranks per hardware thread this process
may run on. Past it, the user says --oversubscribe. A step spread over
hosts (a host file, srun, qrsh, mpiexec inside a batch allocation) is its
launcher's and the scheduler's to place, and is not bounded here.
"""
from __future__ import annotations

import os

from clusterbench.errors import BadInput

# 16 per thread: 8x the most any suite asks of a 2-core machine (network's 8 ranks), and 32 ranks there
RANKS_PER_HARDWARE_THREAD = 16


def hardware_threads() -> int:
    """The hardware threads this process may run on (its CPU affinity: a
    cpuset or taskset narrows it), else the machine's."""
    try:
        return len(os.sched_getaffinity(0)) or os.cpu_count() or 1
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def usable_cores(root: str = "/sys/devices/system/cpu") -> int | None:
    """The cores this process may run on (hardware threads of one core
    counted once, as Open MPI's mapping by core counts them); None where
    the topology cannot be read."""
    try:
        threads = os.sched_getaffinity(0)
    except (AttributeError, OSError):
        return None
    cores = set()
    for cpu in threads:
        try:
            with open(f"{root}/cpu{cpu}/topology/physical_package_id") as package, \
                    open(f"{root}/cpu{cpu}/topology/core_id") as core:
                cores.add((package.read().strip(), core.read().strip()))
        except OSError:
            return None
    return len(cores) or None


def check(ranks: int, what: str, threads: int | None = None) -> None:
    """Raises BadInput where `ranks` on this host alone is past the bound."""
    threads = threads or hardware_threads()
    most = RANKS_PER_HARDWARE_THREAD * threads
    if ranks > most:
        raise BadInput(f"{what}: {ranks} ranks on this host alone, which has {threads} hardware thread"
                       f"{'' if threads == 1 else 's'} (at most {most} ranks without --oversubscribe, "
                       f"{RANKS_PER_HARDWARE_THREAD} per thread); pass --oversubscribe to start them anyway, "
                       f"or --hostfile to spread them over hosts")
