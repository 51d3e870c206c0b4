"""Software that shapes a result: the MPI library and the variables that
tune it, the compiler, the cbk build, Python and clusterbench itself."""
from __future__ import annotations

import json
import os
import platform
import re
from pathlib import Path
from typing import Mapping

from clusterbench.environment.sources import Context, Reading, find_program, put

# Variables these MPI stacks and fabrics read; their values change results.
MPI_ENV_PREFIXES = ("MPIR_CVAR_", "OMPI_MCA_", "I_MPI_", "UCX_", "FI_", "MV2_", "PSM2_", "HCOLL_",
                    # Cray MPICH, PMIx, PSM3 (Intel Ethernet), UCC collectives, NCCL/RCCL
                    "MPICH_", "PMIX_MCA_", "PSM3_", "UCC_", "NCCL_")
# Open MPI's launcher sets these in every job (job ids, contact URIs, node
# ranks): they differ each run and tune nothing, so they are left out.
LAUNCHER_INTERNAL_PREFIXES = ("OMPI_MCA_orte_", "OMPI_MCA_ess_", "OMPI_MCA_pmix", "OMPI_MCA_prte_",
                              "OMPI_MCA_initial_wdir", "OMPI_MCA_ras_")
# Variables the OpenMP runtimes (GNU, LLVM/Intel) and the threaded BLAS read: how many threads a
# node's programs start and where they are placed. One node's profile setting OMP_NUM_THREADS=1 runs
# every user's OpenMP code on one core there, and no benchmark figure of cbk shows it (cbk names
# its thread count and binding itself), so the snapshot must.
THREAD_ENV_PREFIXES = ("OMP_", "GOMP_", "KMP_")
THREAD_ENV_NAMES = ("MKL_NUM_THREADS", "MKL_DYNAMIC", "OPENBLAS_NUM_THREADS", "BLIS_NUM_THREADS", "GOTO_NUM_THREADS")
# Fields of cbk's self-description that describe its build.
CBK_FIELDS = ("cbk_version", "mpi", "mpi_library", "mpi_built_with", "compiler", "compiler_flags", "build_type")


def first_line(text: str) -> str:
    return next((ln.strip() for ln in text.splitlines() if ln.strip()), "")


def parse_mpiexec_version(text: str) -> tuple[str, str]:
    """(flavour, version) from `mpiexec --version` of MPICH (Hydra), Open MPI,
    Intel MPI or MVAPICH. Raises ValueError for anything else."""
    if "Open MPI" in text or "OpenRTE" in text:
        m = re.search(r"\((?:Open MPI|OpenRTE)\)\s+(\S+)", text)
        return "Open MPI", m.group(1) if m else "unknown"
    if "Intel(R) MPI Library" in text:
        m = re.search(r"Version\s+(\S+)(?:\s+Build\s+(\S+))?", text)
        return "Intel MPI", (m.group(1) + (f" build {m.group(2)}" if m.group(2) else "")) if m else "unknown"
    m = re.search(r"^\s*Version:\s+(\S+)", text, re.M)
    if "MVAPICH" in text.upper() and m:
        return "MVAPICH", m.group(1)
    if "HYDRA" in text and m:
        return "MPICH", m.group(1)
    raise ValueError(first_line(text))


def mpi_env(environ: Mapping[str, str]) -> dict[str, str]:
    return {f"mpi.env.{k}": v for k, v in sorted(environ.items())
            if k.startswith(MPI_ENV_PREFIXES) and not k.startswith(LAUNCHER_INTERNAL_PREFIXES)}


def thread_env(environ: Mapping[str, str]) -> dict[str, str]:
    return {f"threads.env.{k}": v for k, v in sorted(environ.items())
            if k.startswith(THREAD_ENV_PREFIXES) or k in THREAD_ENV_NAMES}


def collect(env: dict, ctx: Context) -> None:
    _mpi(env, ctx)
    if ctx.is_real_root:   # the capturing process's own variables describe this machine only
        env.update(thread_env(os.environ))
    put(env, "compiler.cc", ctx.run(["cc", "--version"], stable=True), first_line)
    env["python.version"] = platform.python_version()
    env["python.implementation"] = platform.python_implementation()
    _clusterbench(env)
    _cbk(env, ctx)


def _mpi(env: dict, ctx: Context) -> None:
    exe = find_program("mpiexec") if ctx.run_commands and ctx.is_real_root else None
    if exe:
        env["mpi.mpiexec"] = exe
    version = ctx.run(["mpiexec", "--version"], stable=True)
    if version.ok:
        lines = [" ".join(ln.split()) for ln in version.text.splitlines() if ln.strip()]
        env["mpi.mpiexec_version"] = " | ".join(lines[:2])
    put(env, "mpi.flavour", version, lambda t: parse_mpiexec_version(t)[0], "mpiexec --version")
    put(env, "mpi.version", version, lambda t: parse_mpiexec_version(t)[1], "mpiexec --version")
    # MPICH and Intel wrappers take -show; Open MPI's take --showme
    show = ctx.run(["mpicc", "-show"], stable=True)
    if not show.ok and env.get("mpi.flavour") == "Open MPI":
        show = ctx.run(["mpicc", "--showme"], stable=True)
    put(env, "mpi.mpicc_show", show, first_line)
    wrapped = env.get("mpi.mpicc_show", "").split()
    if wrapped and os.path.basename(wrapped[0]) != "cc":
        put(env, "compiler.mpicc_compiler", ctx.run([wrapped[0], "--version"], stable=True), first_line)
    # the launcher's environment is the job's: on a compute node this is what ranks see
    if ctx.is_real_root:
        env.update(mpi_env(os.environ))


def _clusterbench(env: dict) -> None:
    import clusterbench

    # An installed package has its metadata beside it, named with its version:
    # found so, importlib.metadata (15 ms of every run, #24) is not needed.
    # Anything else (an editable install, a version that disagrees) asks it.
    installed = Path(clusterbench.__file__).parent.parent / f"clusterbench-{clusterbench.__version__}.dist-info"
    if (installed / "METADATA").is_file():
        env["clusterbench.version"] = clusterbench.__version__
        return
    from importlib import metadata

    try:
        env["clusterbench.version"] = metadata.version("clusterbench")
    except metadata.PackageNotFoundError:
        env["clusterbench.version_error"] = "package metadata not found (running from a source tree, not installed)"


def _cbk(env: dict, ctx: Context) -> None:
    """The kernel runner's build: version, MPI library, compiler and flags."""
    try:
        from clusterbench.catalogue import DESCRIBED, QUERY_ENV, cbk_path
    except ImportError as e:
        env["cbk.version_error"] = f"cannot look for cbk: {e}"
        return
    try:
        path = cbk_path()
    except Exception as e:  # BadInput naming where cbk was looked for
        env["cbk.version_error"] = str(e)
        return
    env["cbk.path"] = path
    # not kept per boot (command_cache.py): 4 ms to run without UCX's hooks, 20 kB to keep per environment;
    # in a run, the catalogue has just read it (catalogue.DESCRIBED)
    described = DESCRIBED.get(path) if ctx.is_real_root and ctx.run_commands else None
    out = Reading(text=described) if described is not None else ctx.run([path, "--describe"], extra_env=QUERY_ENV)
    try:
        desc = json.loads(out.text) if out.ok else None
    except ValueError:
        out, desc = Reading(error=f"{path} --describe printed no JSON"), None
    for field in CBK_FIELDS:
        key = "cbk.version" if field == "cbk_version" else f"cbk.{field}"
        if desc is None:
            env[key + "_error"] = out.error
        elif field in desc:
            env[key] = desc[field]
        else:
            env[key + "_error"] = f"not in {path} --describe (every run record of cbk states it)"
    # the optional parts built in, one line a diff compares ("libaio, liburing, openmp")
    features = desc.get("features") if desc is not None else None
    if isinstance(features, dict):
        env["cbk.features"] = ", ".join(sorted(k for k, on in features.items() if on)) or "none"
    else:
        env["cbk.features_error"] = out.error if desc is None else f"not in {path} --describe (cbk predates it)"
