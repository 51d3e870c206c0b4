"""Host files as users write them, handed to each MPI in its own form.

clusterbench reads both common forms, one host per line, `#` comments:
MPICH's `host` or `host:slots` and Open MPI's `host` or `host slots=N`
(also `max_slots=`, ignored). A launcher is given the file unchanged when it
is already in its own form; otherwise it gets the hosts as a list on its
command line, in its own spelling (Hydra `-hosts h01:3,h02:3`, Open MPI
`--host h01:3,h02:3`): Open MPI reads `h01:3` in a file as a host named
"h01:3" and refuses the job ("All nodes which are allocated for this job
are already filled"), Hydra reads `slots=3` as a host name.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from clusterbench.errors import BadInput

_MPICH_LINE = re.compile(r"^(?P<host>[^\s:]+)(?::(?P<slots>\d+))?$")
_OPENMPI_LINE = re.compile(r"^(?P<host>[^\s:]+)(?P<opts>(?:\s+\w+\s*=\s*\d+)*)$")
# a host name or address, as ssh and the host-file names of run cluster (<host>.hosts) can take it:
# '-oProxyCommand=...' reached ssh as an option, '../x' wrote x.hosts outside the run's folder
_HOST_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]*$")


@dataclass(frozen=True)
class HostEntry:
    host: str
    slots: int | None   # None: as many as the MPI gives a host by default


@dataclass(frozen=True)
class HostFile:
    path: str
    entries: tuple[HostEntry, ...]
    form: str   # "plain" (names only), "mpich" (host:n), "openmpi" (host slots=n) or "mixed"

    @property
    def hosts(self) -> list[str]:
        return list(dict.fromkeys(e.host for e in self.entries))

    def as_list(self) -> str:
        """h01:3,h02 (the spelling both Hydra's -hosts and Open MPI's --host read)."""
        return ",".join(e.host if e.slots is None else f"{e.host}:{e.slots}" for e in self.entries)


def read(path: str) -> HostFile:
    """The host file at path; a line in neither form is one line of bad input
    (checked before a run: commands/run.py)."""
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except (OSError, UnicodeDecodeError) as e:
        raise BadInput(f"--hostfile {path}: cannot read it ({getattr(e, 'strerror', None) or e})") from None
    entries, forms = [], set()

    def take(number: int, raw: str, form: str, host: str, slots: str | None) -> None:
        # a host of no slot takes no rank: Hydra divides by it (SIGFPE, "exit status -8")
        if slots is not None and int(slots) == 0:
            raise BadInput(f"--hostfile {path}, line {number}: '{raw.strip()}': a host needs 1 slot or more "
                           f"(drop the line to leave the host out)")
        if not _HOST_NAME.match(host):
            raise BadInput(f"--hostfile {path}, line {number}: '{raw.strip()}': '{host}' is no host name (letters, "
                           "digits, '.', '-' and '_', not starting with '-' or '.')")
        forms.add(form)
        entries.append(HostEntry(host, int(slots) if slots is not None else None))

    for number, raw in enumerate(lines, 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        m = _MPICH_LINE.match(line)
        if m:
            slots = m.group("slots")
            take(number, raw, "mpich" if slots is not None else "plain", m.group("host"), slots)
            continue
        m = _OPENMPI_LINE.match(line)
        if m:
            opts = dict(re.findall(r"(\w+)\s*=\s*(\d+)", m.group("opts")))
            unknown = set(opts) - {"slots", "max_slots"}
            if not unknown:
                take(number, raw, "openmpi", m.group("host"), opts.get("slots"))
                continue
        raise BadInput(f"--hostfile {path}, line {number}: '{raw.strip()}' is neither 'host', 'host:slots' "
                       f"(MPICH) nor 'host slots=N' (Open MPI)")
    if not entries:
        raise BadInput(f"--hostfile {path}: no host in it")
    forms.discard("plain")
    return HostFile(path, tuple(entries), "mixed" if len(forms) > 1 else forms.pop() if forms else "plain")


def hosts_argument(path: str, own_form: str) -> str | None:
    """The host list to give a launcher whose host files are in own_form
    ("mpich" or "openmpi"), or None when it can read this file as it is
    (also when the file cannot be read: the launcher then says why)."""
    try:
        hf = read(path)
    except BadInput:
        return None
    return None if hf.form in ("plain", own_form) else hf.as_list()


def hosts_of(path: str) -> list[str]:
    """The host names of a host file, each once, in order."""
    return read(path).hosts


def grid_engine_lines(lines) -> tuple[HostEntry, ...]:
    """Lines of Grid Engine's $PE_HOSTFILE ("host slots queue processors"
    a line), a host and its slots a line in their order: written by Grid
    Engine for mpiexec's own tight integration, not a host file a user gives."""
    words = [line.split() for line in lines if line.split()]
    return tuple(HostEntry(w[0], int(w[1]) if len(w) > 1 and w[1].isdigit() and int(w[1]) else None) for w in words)


def grid_engine_entries(path: str) -> tuple[HostEntry, ...]:
    """Grid Engine's $PE_HOSTFILE at path (grid_engine_lines)."""
    with open(path, encoding="utf-8", errors="replace") as f:
        return grid_engine_lines(f)


def grid_engine_hosts(path: str) -> list[str]:
    """The hosts of Grid Engine's $PE_HOSTFILE, each once."""
    return list(dict.fromkeys(e.host for e in grid_engine_entries(path)))
