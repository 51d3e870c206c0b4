"""Is the MPI a run would use the one cbk was built with?

cbk states three MPIs: the one its mpi.h named when it was compiled
(`mpi_built_with`, fixed in the binary), the library the dynamic loader
gave it now (`mpi_library`, MPI_Get_library_version), and the launcher
clusterbench would start it with (the mpiexec beside cbk, else on PATH).
On a cluster they part when another MPI module is loaded than at build
time: cbk then fails to start, or its ranks never meet. `--version` prints
all three and warns when they differ.
"""
from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass


@dataclass(frozen=True)
class MpiVersion:
    flavour: str   # "MPICH", "Open MPI", "Intel MPI", "MVAPICH"
    version: str   # "4.1.2"

    def __str__(self) -> str:
        return f"{self.flavour} {self.version}"


def parse_built_with(text: str) -> MpiVersion | None:
    """cbk's `mpi_built_with` ("MPICH 4.1.2", "Open MPI 4.1.5"); None for "none"/unknown."""
    m = re.fullmatch(r"(MPICH|Open MPI|Intel MPI|MVAPICH) (\S+)", (text or "").strip())
    return MpiVersion(m.group(1), m.group(2)) if m else None


def parse_library_version(text: str) -> MpiVersion | None:
    """The first line of MPI_Get_library_version as the common MPIs word it:
    "MPICH Version:      4.1.2", "Open MPI v4.1.5, package: ...",
    "Intel(R) MPI Library 2021.10 for Linux* OS", "MVAPICH2 Version      :\t2.3.7"."""
    text = (text or "").strip()
    if m := re.match(r"Intel\(R\) MPI Library (?:for \S+ OS, Version )?(\d[\w.]*)", text):
        return MpiVersion("Intel MPI", m.group(1))
    if m := re.match(r"MVAPICH2?\s+Version\s*:\s*(\S+)", text, re.I):
        return MpiVersion("MVAPICH", m.group(1))
    if m := re.match(r"MPICH Version:\s*(\S+)", text):
        return MpiVersion("MPICH", m.group(1))
    if m := re.match(r"Open MPI v(\d[\w.]*)", text):
        return MpiVersion("Open MPI", m.group(1))
    return None


def library_text(library: str | None) -> str | None:
    """The run-time library as people name it ("MPICH 4.0.2"), not its raw
    banner ("MPICH Version:      4.0.2"); an unknown banner with its spaces folded."""
    if not library:
        return None
    parsed = parse_library_version(library)
    return str(parsed) if parsed else " ".join(library.split())


def parse_mpiexec(text: str) -> MpiVersion | None:
    """`mpiexec --version` of Hydra, Open MPI, Intel MPI or MVAPICH."""
    from clusterbench.environment.software import parse_mpiexec_version

    try:
        flavour, version = parse_mpiexec_version(text)
    except ValueError:
        return None
    return MpiVersion(flavour, version.split()[0])


def same(a: MpiVersion, b: MpiVersion) -> bool:
    """Same flavour, and versions equal as far as both go ("2021.10" is "2021.10.0")."""
    if a.flavour != b.flavour:
        return False
    pa, pb = a.version.split("."), b.version.split(".")
    n = min(len(pa), len(pb))
    return pa[:n] == pb[:n]


def mpiexec_version(mpiexec: str) -> tuple[MpiVersion | None, str]:
    """(parsed version, first line or reason) of `mpiexec --version`."""
    try:
        p = subprocess.run([mpiexec, "--version"], capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.SubprocessError) as e:
        return None, f"cannot run {mpiexec} --version: {e}"
    text = p.stdout or p.stderr
    first = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    return parse_mpiexec(text), first


def report(built_with: str | None, compiler: str | None, library: str | None,
           mpiexec: str | None) -> tuple[list[str], list[str]]:
    """(lines to print, warnings) for `clusterbench --version`."""
    built = parse_built_with(built_with or "")
    if not built_with:
        return ["MPI: not built in (cbk runs its single-process kernels only)"], []
    lines = [f"MPI: built with {built_with}" + (f" ({compiler})" if compiler else "")]
    warnings = []
    runtime = parse_library_version(library or "")
    lines.append(f"MPI library at run time: {library_text(library)}")
    if built and runtime and not same(built, runtime):
        warnings.append(f"cbk was built with {built} but loads {runtime} at run time: load the MPI module it "
                        "was built with, or reinstall clusterbench against this one "
                        "(clusterbench's installation guide)")
    if mpiexec:
        launched, first = mpiexec_version(mpiexec)
        lines.append(f"mpiexec: {mpiexec} ({launched or first})")
        if built and launched and not same(built, launched):
            warnings.append(f"cbk was built with {built} but {mpiexec} is {launched}: ranks started by another "
                            "MPI's launcher do not meet; load the MPI module cbk was built with "
                            "(clusterbench's installation guide)")
    else:
        lines.append("mpiexec: none beside cbk or on PATH")
    return lines, warnings
