"""The host each rank of a launch starts on, as its launcher places them
from a host file: what a message names for a rank that said nothing (a rank
dead before MPI_Init names no host of its own, and the others' notes are
made before any host is known: kernels/core/start_watch.h).

A placement answers for one rank at a time, never as a list of every rank:
`--np 2000000000` over a host file of `h01:1000000000` is a launch mpiexec
may refuse, not a list for this process to build.
"""
from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass
from itertools import accumulate, product
from typing import Callable, Mapping

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

    def heard(self, said: str) -> Placement | None:
        """The placement, given what the launch wrote on stderr: this one,
        known before the launch."""
        return self


@dataclass(frozen=True)
class ToldPlacement:
    """The hosts ranks said they started on (launch/rank_note.py: each rank's
    note before it becomes cbk), and for a rank that said none (its node never started
    it) the launcher's layout, where that agrees with every rank that told:
    a step started while the job's previous step still held its CPUs runs
    on other nodes than the layout's. Made by `told_or_laid_out`."""
    told: Mapping[int, str]
    laid_out: Placement | None

    def host_of(self, rank: int) -> str | None:
        return self.told.get(rank) or (self.laid_out.host_of(rank) if self.laid_out else None)

    def heard(self, said: str) -> ToldPlacement:
        return self


def told_or_laid_out(told: Mapping[int, str], laid_out: Placement | None) -> ToldPlacement:
    """The ranks' own word, with the layout kept only where no rank contradicts it."""
    agrees = laid_out is not None and all(laid_out.host_of(rank) == host for rank, host in told.items())
    return ToldPlacement(told, laid_out if agrees else None)


@dataclass(frozen=True)
class HeardPlacement:
    """A placement the launch tells on stderr, where the hosts are granted
    after the launch began (qrsh: on the execution host): `read` makes it
    from what the launch wrote when a message needs it."""
    read: Callable[[str], Placement | None]

    def heard(self, said: str) -> Placement | None:
        return self.read(said)


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


def slurm_block(hosts: tuple[str, ...], cpus: tuple[int, ...], ranks: int, per_node: int | None) -> Placement | None:
    """srun's default distribution (block) over an allocation's nodes in
    their order (SLURM_JOB_NODELIST; cpus: SLURM_JOB_CPUS_PER_NODE), as
    Slurm's _task_layout_block counts it (slurm_step_layout.c): how many
    tasks each node takes is dealt cyclically, one a node a round while it
    has a CPU left, then one a node a round over all (over-subscribed); the
    tasks are numbered node by node. With --ntasks-per-node (--ppn), the
    first ceil(ranks / ppn) nodes (srun is given --nodes so), each with ppn
    of its CPUs at most (a node of 1 CPU under --ntasks-per-node=3 takes 1
    before the over-subscribed rounds, as real srun placed them); without
    it, no more nodes than tasks. None where the two lists differ in length.
    A step started while the job's previous step still holds its CPUs may be
    put on other nodes (2 tasks on h03 and h04 of four, a loaded machine):
    srun's ranks say where they started (launch/rank_note.py), and this names
    only a rank that said nothing of it, where the others agree with it."""
    if len(hosts) != len(cpus) or not hosts or ranks < 1:
        return None
    if per_node:
        nodes = -(-ranks // per_node)
        if nodes > len(hosts):
            return None
        hosts, cpus = hosts[:nodes], tuple(min(per_node, c) for c in cpus[:nodes])
    elif ranks < len(hosts):
        hosts, cpus = hosts[:ranks], cpus[:ranks]
    return Placement(hosts, _dealt(cpus, ranks), ranks, False)


def _dealt(cpus: tuple[int, ...], ranks: int) -> tuple[int, ...]:
    """Tasks a node, dealt one a node a round to nodes with a CPU left, in
    closed form (a round a task would be 10^9 rounds for 10^9 ranks)."""
    total = sum(cpus)
    if ranks >= total:   # every CPU taken, the rest dealt over all nodes alike
        more, extra = divmod(ranks - total, len(cpus))
        return tuple(c + more + (i < extra) for i, c in enumerate(cpus))
    low, high = 0, max(cpus)   # the most full rounds whose tasks fit: sum(min(c, rounds)) <= ranks
    while low < high:
        mid = (low + high + 1) // 2
        if sum(min(c, mid) for c in cpus) <= ranks:
            low = mid
        else:
            high = mid - 1
    left = ranks - sum(min(c, low) for c in cpus)
    counts = []
    for c in cpus:   # the partial round: the first `left` nodes with a CPU past the full rounds
        take = 1 if left and c > low else 0
        left -= take
        counts.append(min(c, low) + take)
    return tuple(counts)


_RANGE = re.compile(r"^(\d+)(?:-(\d+))?$")


def slurm_hostnames(nodelist: str) -> tuple[str, ...] | None:
    """A Slurm host list ("h[01-03,07],gpu[1-2]", as SLURM_JOB_NODELIST
    holds it) expanded as `scontrol show hostnames` expands it: each
    bracket a range or list, zero-padded to its lower bound's width, and a
    name of two brackets their product; None for a form it is not."""
    items, depth, start = [], 0, 0
    for i, c in enumerate(nodelist):
        depth += (c == "[") - (c == "]")
        if depth < 0 or depth > 1:
            return None
        if c == "," and depth == 0:
            items.append(nodelist[start:i])
            start = i + 1
    items.append(nodelist[start:])
    names: list[str] = []
    for item in items:
        parts = re.split(r"\[([^\]]*)\]", item.strip())
        if not item.strip():
            return None
        choices: list[list[str]] = []
        for k, part in enumerate(parts):
            if k % 2 == 0:
                choices.append([part])
                continue
            numbers = []
            for piece in part.split(","):
                m = _RANGE.match(piece.strip())
                if not m:
                    return None
                lo, hi = m.group(1), m.group(2) or m.group(1)
                if int(hi) < int(lo):
                    return None
                numbers += [str(n).zfill(len(lo)) for n in range(int(lo), int(hi) + 1)]
            choices.append(numbers)
        names += ["".join(p) for p in product(*choices)]
    return tuple(names)
