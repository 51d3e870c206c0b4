"""Translate an IOR command line into pario parameters (pure Python).

`translate(argv)` accepts what a user pastes: an optional launcher prefix
(`mpiexec -n N`, `mpirun -np N`, with -ppn/-npernode), the IOR program
name, then IOR's options. It returns the pario parameters (cbk names and
values as text), the rank count and ranks per node if the launcher gave
them, and notes on options that have no effect here. An option IOR has but
pario does not implement raises BadInput naming it, so nothing is silently
measured differently. Mapping table and differences: docs/kernels/pario.md.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

from clusterbench.errors import BadInput

LAUNCHERS = {"mpiexec", "mpirun", "mpiexec.hydra"}
LAUNCHER_RANKS = {"-n", "-np", "--np", "--n"}
LAUNCHER_PPN = {"-ppn", "--ppn", "-npernode", "--npernode", "-perhost"}

# IOR options taking a value -> pario parameter (None: handled below)
VALUE_OPTS = {"-a": None, "-b": "block-size", "-t": "transfer-size", "-s": "segments", "-i": "repetitions",
              "-d": "delay", "-o": None, "-Q": "shift-nodes"}
# IOR flags without a value -> (parameter, value) or None (handled below)
FLAG_OPTS = {"-F": ("strategy", "split"), "-c": ("strategy", "collective"), "-e": None, "-Y": None,
             "-C": ("read", "shifted"), "-z": ("offsets", "random"), "-w": None, "-r": None,
             "-W": ("verify", "true"), "-R": ("verify", "true"), "-B": ("direct", "true"),
             "-k": None, "-g": None, "-v": None, "-q": None}
UNSUPPORTED = {
    "-E": "pario always writes fresh files in a private directory it removes (no existing test file)",
    "-u": "pario always works in one private directory per run",
    "-m": "multiple files per task (multiFile) are not implemented",
    "-O": "IOR's -O option strings are not implemented; use the single-letter options",
    "-f": "IOR script files are not implemented; translate each test separately",
    "-Z": "random task reordering for reads (-Z) is not implemented; -C shifts by node",
    "-X": "random task reordering for reads (-X seed) is not implemented",
    "-N": "give the rank count to the launcher (mpiexec -n N) instead of IOR -N",
    "-D": "stonewalling deadlines are not implemented: pario moves every byte",
    "-T": "a time limit per test is not implemented",
    "-G": "a fixed data-signature seed is not implemented: pario stamps offset and writer rank",
    "-l": "IOR data-packet types are not implemented: pario stamps offset and writer rank in every 4 KiB",
    "-x": "singleXferAttempt is not implemented",
    "-y": "dualMount is not implemented",
    "-j": "outlier reporting by threshold is not implemented (pario reports every rank's min/max)",
    "-H": "showHints is not implemented",
    "-U": "MPI-IO hints files are not implemented",
    "-P": "preallocation is not implemented",
    "-p": "preallocation is not implemented",
    "-I": "individual data sets (HDF5) are not implemented",
    "-n": "noFill (HDF5) is not implemented",
    "-L": "HDF5 options are not implemented",
    "-S": "IOR's -S option is not implemented",
    "-V": "IOR's -V option is not implemented",
    "-J": "IOR's -J option is not implemented",
}
APIS = {"POSIX": "posix", "MPIIO": "mpiio"}
SIZE = re.compile(r"^\d+[kKmMgGtT]?$")


@dataclass
class Translation:
    params: dict[str, str]
    ranks: int | None = None
    ranks_per_node: int | None = None
    notes: list[str] = field(default_factory=list)


def _launcher(argv: list[str]) -> tuple[int | None, int | None, list[str]]:
    if not argv or os.path.basename(argv[0]) not in LAUNCHERS:
        return None, None, argv
    ranks = ppn = None
    i = 1
    while i < len(argv) and argv[i].startswith("-"):
        opt = argv[i]
        if opt not in LAUNCHER_RANKS | LAUNCHER_PPN:
            raise BadInput(f"launcher option {opt} is not understood here: give the ranks with -n N (and -ppn N)")
        if i + 1 >= len(argv) or not argv[i + 1].isdigit() or int(argv[i + 1]) < 1:
            raise BadInput(f"launcher option {opt} needs a positive count")
        if opt in LAUNCHER_RANKS:
            ranks = int(argv[i + 1])
        else:
            ppn = int(argv[i + 1])
        i += 2
    return ranks, ppn, argv[i:]


def _split(argv: list[str]) -> list[tuple[str, str | None]]:
    """IOR options as (option, value): '-b 4g', '-b4g' and clustered flags '-wrC'."""
    out: list[tuple[str, str | None]] = []
    i = 0
    while i < len(argv):
        a = argv[i]
        if not a.startswith("-") or len(a) < 2 or a.startswith("--"):
            raise BadInput(f"unexpected IOR argument '{a}' (IOR options are single letters like -b 4g)")
        opt = a[:2]
        if opt in UNSUPPORTED:
            raise BadInput(f"IOR option {opt} is not supported: {UNSUPPORTED[opt]}")
        if opt in VALUE_OPTS:
            if len(a) > 2:
                out.append((opt, a[2:].lstrip("=")))
            elif i + 1 < len(argv):
                out.append((opt, argv[i + 1]))
                i += 1
            else:
                raise BadInput(f"IOR option {opt} needs a value")
        else:
            for ch in a[1:]:
                flag = "-" + ch
                if flag in UNSUPPORTED:
                    raise BadInput(f"IOR option {flag} is not supported: {UNSUPPORTED[flag]}")
                if flag not in FLAG_OPTS:
                    known = " ".join(sorted(set(VALUE_OPTS) | set(FLAG_OPTS)))
                    raise BadInput(f"unknown IOR option {flag} (supported: {known})")
                out.append((flag, None))
        i += 1
    return out


def translate(argv: list[str]) -> Translation:
    ranks, ppn, rest = _launcher(list(argv))
    if rest and os.path.basename(rest[0]).lower() in ("ior", "ior.exe"):
        rest = rest[1:]
    params: dict[str, str] = {"api": "posix", "strategy": "independent", "read": "same",
                              "block-size": "1m", "transfer-size": "256k", "segments": "1"}
    notes: list[str] = []
    write = read = False
    fsync_end = fsync_each = False
    for opt, value in _split(rest):
        if opt == "-a":
            api = APIS.get(value.upper())
            if not api:
                raise BadInput(f"IOR -a {value}: pario offers the APIs {', '.join(APIS)}")
            params["api"] = api
        elif opt == "-o":
            params["dir"] = os.path.dirname(value.rstrip("/")) or "."
            notes.append(f"-o {value}: files are made in a private directory under {params['dir']}")
        elif opt in ("-b", "-t"):
            if not SIZE.match(value):
                raise BadInput(f"IOR {opt} {value}: expected a size like 4g, 4m, 512k or 4096")
            params[VALUE_OPTS[opt]] = value.lower()
        elif opt in ("-s", "-i", "-Q"):
            if not value.isdigit() or int(value) < 1:
                raise BadInput(f"IOR {opt} {value}: expected a positive count")
            params[VALUE_OPTS[opt]] = value
        elif opt == "-d":
            try:
                if float(value) < 0:
                    raise ValueError
            except ValueError:
                raise BadInput(f"IOR -d {value}: expected a delay in seconds") from None
            params["delay"] = value
        elif opt == "-e":
            fsync_end = True
        elif opt == "-Y":
            fsync_each = True
        elif opt == "-w":
            write = True
        elif opt == "-r":
            read = True
        elif opt == "-k":
            notes.append("-k ignored: pario always removes its files")
        elif opt in ("-g", "-v", "-q"):
            notes.append(f"{opt} ignored: pario always " + {"-g": "puts barriers between open, transfer and close",
                                                            "-v": "reports every figure",
                                                            "-q": "stops at the first error"}[opt])
        else:
            key, val = FLAG_OPTS[opt]
            if key == "strategy" and params["strategy"] != "independent" and params["strategy"] != val:
                raise BadInput("IOR -F (file per process) and -c (collective) cannot be combined")
            params[key] = val
    if params["strategy"] == "collective" and params["api"] != "mpiio":
        raise BadInput("IOR -c (collective) needs -a MPIIO")
    if fsync_each:
        params["fsync"] = "each"
    elif fsync_end:
        params["fsync"] = "end"
    if write and not read:
        params["phases"] = "write-only"
    elif read and not write:
        params["phases"] = "read-only"
        notes.append("-r without -w: pario writes the data first (untimed, unreported), then times the read")
    if params["read"] == "same":
        notes.append("no -C: each rank reads its own data back, as IOR does; pario empties the page cache first")
    return Translation(params, ranks, ppn, notes)
