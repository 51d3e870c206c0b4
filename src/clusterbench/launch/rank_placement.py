"""The host each rank of a launch starts on, as its launcher places them
from a host file: what a message names for a rank that said nothing (a rank
dead before MPI_Init names no host of its own, and the others' notes are
made before any host is known: kernels/core/start_watch.h).

Each function returns one host per rank (rank i on [i]), or None where the
placement depends on what this host cannot see (a node's core count).
"""
from __future__ import annotations

from itertools import cycle, islice

from clusterbench.launch.hostfile import HostEntry


def hydra(entries: tuple[HostEntry, ...], ranks: int, per_node: int | None) -> list[str]:
    """MPICH's Hydra: each line of the file is a node of its own (a host
    named twice is two), filled in order with its slots (1 when none is
    given), or --ppn ranks a node in place of the slots, round and round
    until every rank is placed (mpiexec 5.0.2, seen by the proxy each rank
    ran under)."""
    slots = [per_node or e.slots or 1 for e in entries]
    return list(islice(cycle([e.host for e, n in zip(entries, slots) for _ in range(n)]), ranks))


def open_mpi(entries: tuple[HostEntry, ...], ranks: int, per_node: int | None) -> list[str] | None:
    """Open MPI: each host's slots filled in the order of the file
    (ppr:N:node: N a host). None where a host's slots are its core count
    (no slots given), for a host named twice (its lines' slots are joined),
    or past the slots, where Open MPI's oversubscription decides."""
    hosts = [e.host for e in entries]
    if len(set(hosts)) != len(hosts):
        return None
    slots = [per_node] * len(entries) if per_node else [e.slots for e in entries]
    if None in slots or ranks > sum(slots):
        return None
    return [h for h, n in zip(hosts, slots) for _ in range(n)][:ranks]
