"""The host each rank of a launch starts on, as its launcher places them
from a host file: what a message names for a rank that said nothing (a rank
dead before MPI_Init names no host of its own, and the others' notes are
made before any host is known: kernels/core/start_watch.h).

A placement answers for one rank at a time, never as a list of every rank:
`--np 2000000000` over a host file of `h01:1000000000` is a launch mpiexec
may refuse, not a list for this process to build.
"""
from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass
from itertools import accumulate

from clusterbench.launch.hostfile import HostEntry


@dataclass(frozen=True)
class Placement:
    """Hosts in order, each with the ranks it takes in one round; `rounds`:
    whether ranks past one round start over at the first host (Hydra)."""
    hosts: tuple[str, ...]
    slots: tuple[int, ...]
    ranks: int
    rounds: bool

    def host_of(self, rank: int) -> str | None:
        """The host rank `rank` starts on; None for a rank past the launch's."""
        if not 0 <= rank < self.ranks:
            return None
        ends = list(accumulate(self.slots))
        at = rank % ends[-1] if self.rounds else rank
        return self.hosts[bisect_right(ends, at)] if at < ends[-1] else None


def hydra(entries: tuple[HostEntry, ...], ranks: int, per_node: int | None) -> Placement:
    """MPICH's Hydra: each line of the file is a node of its own (a host
    named twice is two), filled in order with its slots (1 when none is
    given), or --ppn ranks a node in place of the slots, round and round
    until every rank is placed (mpiexec 5.0.2, seen by the proxy each rank
    ran under)."""
    return Placement(tuple(e.host for e in entries), tuple(per_node or e.slots or 1 for e in entries), ranks, True)


def open_mpi(entries: tuple[HostEntry, ...], ranks: int, per_node: int | None) -> Placement | None:
    """Open MPI: each host's slots filled in the order of the file; with
    ppr:N:node, N a host where its slots allow, else its slots (a host of 1
    slot takes 1 of ppr:2:node's ranks and the next host the rest: Open MPI
    5.0.11's --display-map; taken as N a host both times before). None where
    a host's slots are its core count (no slots given, without ppr), for a
    host named twice (its lines' slots are joined), or past the slots, where
    Open MPI refuses or its oversubscription decides. Its default mapping by
    core also holds a host to its cores: a file giving a host more slots
    than it has cores is not one this answers for (the cores of another host
    are not known here)."""
    hosts = tuple(e.host for e in entries)
    if len(set(hosts)) != len(hosts):
        return None
    if per_node:
        slots = tuple(min(per_node, e.slots) if e.slots else per_node for e in entries)
    else:
        slots = tuple(e.slots for e in entries)
    if None in slots or ranks > sum(slots):
        return None
    return Placement(hosts, slots, ranks, False)
