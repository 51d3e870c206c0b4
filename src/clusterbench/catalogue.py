"""What kernels exist and what they take, read from `cbk --describe`.

cbk is the single source of truth for kernel parameters: nothing here
repeats a kernel's parameter list.
"""
from __future__ import annotations

import dataclasses
import functools
import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from clusterbench.errors import BadInput

SCHEMA = 1


@dataclass(frozen=True)
class Param:
    name: str
    type: str
    default: str | None
    unit: str | None
    choices: tuple[str, ...] | None
    min: str | None
    max: str | None
    help: str
    role: str | None = None     # "where": says where it ran (a path, a peer), not what was measured
    before: str | None = None   # what a run stored before the parameter existed ran as (None: its default)


# A kernel's family: what reports group its figures by (docs/design.md, "Families").
FAMILIES = ("io", "network", "mpi", "compute", "gpu", "debug")
GPU = "gpu"   # the family whose figures are a GPU's: judged per GPU, run only where one is visible


@dataclass(frozen=True)
class Kernel:
    name: str
    summary: str
    parallel: bool
    params: tuple[Param, ...]
    family: str = "compute"
    # record types that break a measurement down (per pair, per rank)
    detail_records: tuple[str, ...] = ()
    # its phases in words, as reports print them (gpucopy's "h2d": "host to device"); {} from a
    # kernel that names none, or an older cbk
    phase_words: dict[str, str] = dataclasses.field(default_factory=dict)

    def param(self, name: str) -> Param | None:
        return next((p for p in self.params if p.name == name), None)


@dataclass(frozen=True)
class Catalogue:
    cbk: str
    version: str
    mpi: bool
    mpi_library: str | None
    common: tuple[Param, ...]
    kernels: dict[str, Kernel]
    mpi_built_with: str | None = None   # mpi.h's MPI at build time (mpi_library is the run time's)
    mpi_compiler: str | None = None
    # kernels this cbk was built without, and why (cbk --describe's left_out)
    left_out: dict[str, str] = dataclasses.field(default_factory=dict)
    # and their families, which cbk describes for them too
    left_out_families: dict[str, str] = dataclasses.field(default_factory=dict)
    # the optional parts built in (cbk --describe's features: openmp, liburing, libaio, cuda); None from an older cbk
    features: dict[str, bool] | None = None

    def kernel(self, name: str) -> Kernel:
        try:
            return self.kernels[name]
        except KeyError:
            if name in self.left_out:
                raise BadInput(f"{name} is not in this cbk ({self.cbk}): {self.left_out[name]}") from None
            raise BadInput(f"no such kernel: '{name}' (kernels: {', '.join(self.kernels)})") from None

    def family(self, name: str) -> str | None:
        """A kernel's family, also of one this build left out; None for a
        kernel cbk does not know (an imported tool's)."""
        k = self.kernels.get(name)
        return k.family if k else self.left_out_families.get(name)

    def of_family(self, family: str) -> tuple[str, ...]:
        """The kernels of this build in a family, in cbk's order."""
        return tuple(name for name, k in self.kernels.items() if k.family == family)

    def left_out_of_family(self, family: str) -> dict[str, str]:
        """The kernels of a family this build left out, and why."""
        return {name: why for name, why in self.left_out.items() if self.left_out_families.get(name) == family}

    def detail_records(self) -> frozenset[str]:
        """Every kernel's detail record types."""
        return frozenset(r for k in self.kernels.values() for r in k.detail_records)

    def check_params(self, kernel: Kernel, params: dict[str, str]) -> None:
        """Rejects parameter names the kernel does not take; cbk checks values."""
        known = {p.name for p in kernel.params}
        for name in params:
            if name == "repetitions":
                raise BadInput("repetitions are set with --repeat N")
            if name not in known:
                raise BadInput(f"kernel {kernel.name} has no parameter --{name} "
                               f"(see: clusterbench kernels {kernel.name})")
            if "\x00" in str(params[name]):  # no program argument can hold it
                raise BadInput(f"--{name}: a value cannot hold a NUL character")


def cbk_path() -> str:
    """The cbk executable: $CLUSTERBENCH_CBK, else the one pip installed with
    this package, else the one beside this Python, else PATH."""
    env = os.environ.get("CLUSTERBENCH_CBK")
    if env:
        return env
    installed = installed_cbk()
    if installed:
        return installed
    beside = Path(sys.executable).parent / "cbk"
    if os.access(beside, os.X_OK):
        return str(beside)
    found = shutil.which("cbk")
    if found:
        return found
    raise BadInput("cbk, the kernel runner, is not installed: run scripts/setup.sh, "
                   "or set CLUSTERBENCH_CBK to its path")


def installed_cbk() -> str | None:
    """The cbk the package's own install put in its scripts folder, as its
    RECORD names it. Beside sys.executable is that folder only in a virtual
    environment: `pip install --prefix=/apps/clusterbench` with the module
    setting PYTHONPATH (or --user, --target) runs under /usr/bin/python3,
    and cbk was then "not installed" unless its folder was on PATH."""
    from importlib import metadata

    try:
        files = metadata.distribution("clusterbench").files or []
    except metadata.PackageNotFoundError:
        return None
    for f in files:
        if f.name == "cbk" and f.parent.name in ("bin", "scripts", "Scripts"):
            path = os.path.normpath(f.locate())
            if os.access(path, os.X_OK):
                return path
    return None


# cbk's queries (--describe, --check, --version) never start MPI, yet loading
# an MPI library built with UCX runs UCX's constructor, which patches mmap
# and friends for its memory hooks: 40 ms per query (MPICH's and Open MPI's
# wheels alike), about all of it. A query has no memory to register, so it
# is started without the hooks; its output is the same (test_catalogue_*).
QUERY_ENV = {"UCX_MEM_MMAP_HOOK_MODE": "none"}


def query_env() -> dict[str, str]:
    """The environment to start a cbk query (not a measurement) in."""
    return {**os.environ, **QUERY_ENV}


def _param(d: dict) -> Param:
    return Param(d["name"], d["type"], d["default"], d["unit"],
                 tuple(d["choices"]) if d.get("choices") else None, d.get("min"), d.get("max"), d["help"],
                 d.get("role"), d.get("before"))


def _kernel(k: dict) -> Kernel:
    return Kernel(k["name"], k["summary"], k["parallel"], tuple(_param(p) for p in k["parameters"]),
                  k.get("family") or "compute", tuple(k.get("detail_records") or ()),
                  dict(k.get("phase_words") or {}))


# `cbk --describe` output by cbk path, as load() read it: the environment
# snapshot of the same process describes the cbk build from it rather than
# starting cbk again (environment/software.py).
DESCRIBED: dict[str, str] = {}


@functools.cache
def load(cbk: str | None = None) -> Catalogue:
    cbk = cbk or cbk_path()
    try:
        out = subprocess.run([cbk, "--describe"], capture_output=True, text=True, check=True, timeout=30,
                             env=query_env()).stdout
    except (OSError, subprocess.SubprocessError) as e:
        raise BadInput(f"cannot run {cbk} --describe: {e}") from None
    DESCRIBED[cbk] = out
    d = json.loads(out)
    if d.get("schema") != SCHEMA:
        raise BadInput(f"{cbk} speaks record schema {d.get('schema')}, this clusterbench expects {SCHEMA}: "
                       "reinstall both from one source tree")
    kernels = {k["name"]: _kernel(k) for k in d["kernels"]}
    # name -> {"family", "why"}; a cbk built before left-out kernels had a family gave the reason alone
    left_out = {name: e if isinstance(e, dict) else {"why": str(e)} for name, e in (d.get("left_out") or {}).items()}
    return Catalogue(cbk, d["cbk_version"], d["mpi"], d.get("mpi_library"),
                     tuple(_param(p) for p in d["common_parameters"]), kernels,
                     d.get("mpi_built_with"), d.get("mpi_compiler"),
                     {name: str(e.get("why") or "") for name, e in left_out.items()},
                     {name: e["family"] for name, e in left_out.items() if e.get("family")},
                     d.get("features") if isinstance(d.get("features"), dict) else None)


def step_family(step: dict) -> str | None:
    """A stored step's family: its run record's (cbk writes it there), else
    the installed cbk's description of its kernel (a run stored before cbk
    wrote it); None when neither knows it."""
    return (step.get("build") or {}).get("family") or family_of(step["kernel"])


def step_phase_words(kernel: str, build: dict | None) -> dict[str, str]:
    """A stored step's phases in words: its run record's (cbk writes them
    there), else the installed cbk's description of its kernel (a run stored
    before cbk wrote them); {} when neither names them (the phases then print
    as the kernel named them)."""
    words = (build or {}).get("phase_words")
    if isinstance(words, dict):
        return words
    try:
        k = load().kernels.get(kernel)
    except BadInput:
        return {}
    return k.phase_words if k else {}


def family_of(kernel: str) -> str | None:
    """A stored step's kernel's family from the installed cbk's description
    (a kernel it left out included); None without a cbk, or for a kernel it
    does not know (an imported tool's)."""
    try:
        return load().family(kernel)
    except BadInput:
        return None
