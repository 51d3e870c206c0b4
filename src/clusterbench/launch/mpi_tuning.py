"""The MPI library's own collective algorithm, chosen through its
environment: MPICH control variables (CVARs) or Open MPI MCA parameters.

The mpi kernel's `--algorithm=library` times whatever the library picks;
these variables make the library pick a named algorithm instead, so E7's
"the default ring vs recursive doubling" can be measured with the library's
own code. Pure functions, no I/O: the launcher passes the variables to every
rank (mpiexec -genv / -x) and the run records them.

    selection_env("mpich", "allreduce", "ring")
      -> {"MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM": "ring",
          "MPIR_CVAR_ALLREDUCE_DEVICE_COLLECTIVE": "0",
          "MPIR_CVAR_COLLECTIVE_FALLBACK": "error"}
    selection_env("openmpi", "allreduce", "ring")
      -> {"OMPI_MCA_coll_tuned_use_dynamic_rules": "1",
          "OMPI_MCA_coll_tuned_allreduce_algorithm": "4"}

MPICH (4.x, 5.0, ch4): the CVAR alone is not enough. With the default
MPIR_CVAR_DEVICE_COLLECTIVES=percoll the ch4 device may serve the
collective itself (its shared-memory algorithms) and never consult the
MPIR-level CVAR; MPIR_CVAR_<COLL>_DEVICE_COLLECTIVE=0 hands that one
collective to the MPIR level, where the CVAR applies. And when the chosen
algorithm cannot run for the arguments, MPICH by default prints a line and
silently uses its own choice; MPIR_CVAR_COLLECTIVE_FALLBACK=error makes that
a failed run instead of a mislabelled result.

Open MPI (4.1, 5.0): the `tuned` component obeys forced algorithms only with
coll_tuned_use_dynamic_rules=1; numbers are those of
ompi/mca/coll/tuned/coll_tuned_<coll>_decision.c. In Open MPI 5 the `han`
component (hierarchical, higher priority) may serve multi-node collectives
and use `tuned` only inside and between nodes; exclude it with the MCA
parameter coll=^han to time tuned's algorithm alone.
"""
from __future__ import annotations

import os
from collections.abc import Mapping

from clusterbench.environment.software import LAUNCHER_INTERNAL_PREFIXES, MPI_ENV_PREFIXES
from clusterbench.errors import BadInput

FLAVOURS = ("mpich", "openmpi")
COLLECTIVES = ("allreduce", "bcast", "alltoall", "allgather", "reduce", "barrier")

# Names meaning "the library's own choice": no variable is set.
LIBRARY_CHOICE = ("library", "default", "auto")

# Environment variables that change what an MPI library does at run time:
# the environment capture's list (the cbk mpi kernel records the same).
TUNING_PREFIXES = MPI_ENV_PREFIXES

# MPICH 4.x/5.0 MPIR_CVAR_<COLL>_INTRA_ALGORITHM values (`mpivars` lists them).
_MPICH: dict[str, tuple[str, ...]] = {
    "allreduce": ("nb", "smp", "recursive_doubling", "recursive_multiplying", "reduce_scatter_allgather", "tree",
                  "recexch", "ring", "k_reduce_scatter_allgather", "ccl"),
    "bcast": ("binomial", "nb", "smp", "scatter_recursive_doubling_allgather", "scatter_ring_allgather",
              "pipelined_tree", "tree"),
    "alltoall": ("brucks", "k_brucks", "nb", "pairwise", "pairwise_sendrecv_replace", "scattered"),
    "allgather": ("brucks", "k_brucks", "nb", "recursive_doubling", "ring", "recexch_doubling", "recexch_halving"),
    "reduce": ("binomial", "nb", "smp", "reduce_scatter_gather"),
    "barrier": ("nb", "smp", "k_dissemination", "recexch"),
}
# The kernel's names for algorithms MPICH spells differently.
_MPICH_ALIASES: dict[str, dict[str, str]] = {
    "allreduce": {"rabenseifner": "reduce_scatter_allgather"},
    "reduce": {"rabenseifner": "reduce_scatter_gather"},
    "alltoall": {"bruck": "brucks"},
    "allgather": {"bruck": "brucks"},
    "barrier": {"dissemination": "k_dissemination"},
}

# Open MPI coll/tuned forced-algorithm numbers.
_OPENMPI: dict[str, dict[str, int]] = {
    "allreduce": {"basic_linear": 1, "nonoverlapping": 2, "recursive_doubling": 3, "ring": 4, "segmented_ring": 5,
                  "rabenseifner": 6},
    "bcast": {"basic_linear": 1, "chain": 2, "pipeline": 3, "split_binary_tree": 4, "binary_tree": 5, "binomial": 6,
              "knomial": 7, "scatter_allgather": 8, "scatter_allgather_ring": 9},
    "alltoall": {"linear": 1, "pairwise": 2, "modified_bruck": 3, "linear_sync": 4, "two_proc": 5},
    "allgather": {"linear": 1, "bruck": 2, "recursive_doubling": 3, "ring": 4, "neighbor": 5, "two_proc": 6,
                  "sparbit": 7},
    "reduce": {"linear": 1, "chain": 2, "pipeline": 3, "binary": 4, "binomial": 5, "in_order_binary": 6,
               "rabenseifner": 7},
    "barrier": {"linear": 1, "double_ring": 2, "recursive_doubling": 3, "bruck": 4, "two_proc": 5, "tree": 6},
}
_OPENMPI_ALIASES: dict[str, dict[str, str]] = {
    "alltoall": {"bruck": "modified_bruck"},
}


def _key(name: str) -> str:
    """Spelling-insensitive: recursive-doubling == recursive_doubling == Recursive_Doubling."""
    return name.strip().lower().replace("-", "_")


def _check(flavour: str, collective: str) -> None:
    if flavour not in FLAVOURS:
        raise BadInput(f"no algorithm selection for MPI flavour {flavour!r} (known: {', '.join(FLAVOURS)})")
    if collective not in COLLECTIVES:
        raise BadInput(f"no algorithm selection for collective {collective!r} (known: {', '.join(COLLECTIVES)})")


def algorithms(flavour: str, collective: str) -> list[str]:
    """The algorithm names selection_env() accepts, as the library spells them."""
    _check(flavour, collective)
    return list(_MPICH[collective]) if flavour == "mpich" else list(_OPENMPI[collective])


def selection_env(flavour: str, collective: str, algorithm: str) -> dict[str, str]:
    """Environment variables making `flavour`'s MPI run `collective` with
    `algorithm` ({} for the library's own choice). Raises BadInput naming
    the valid algorithms."""
    _check(flavour, collective)
    key = _key(algorithm)
    if key in LIBRARY_CHOICE:
        return {}
    upper = collective.upper()
    if flavour == "mpich":
        key = _MPICH_ALIASES.get(collective, {}).get(key, key)
        if key not in _MPICH[collective]:
            raise BadInput(f"MPICH has no {collective} algorithm {algorithm!r} "
                           f"(known: {', '.join(_MPICH[collective])})")
        return {
            f"MPIR_CVAR_{upper}_INTRA_ALGORITHM": key,
            f"MPIR_CVAR_{upper}_DEVICE_COLLECTIVE": "0",
            "MPIR_CVAR_COLLECTIVE_FALLBACK": "error",
        }
    key = _OPENMPI_ALIASES.get(collective, {}).get(key, key)
    if key not in _OPENMPI[collective]:
        raise BadInput(f"Open MPI (coll/tuned) has no {collective} algorithm {algorithm!r} "
                       f"(known: {', '.join(_OPENMPI[collective])})")
    return {
        "OMPI_MCA_coll_tuned_use_dynamic_rules": "1",
        f"OMPI_MCA_coll_tuned_{collective}_algorithm": str(_OPENMPI[collective][key]),
    }


def recorded_variables(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The MPI tuning variables set in `environ` (default: this process's),
    sorted by name, so a run records which algorithm and transport it asked for."""
    env = os.environ if environ is None else environ
    return {k: env[k] for k in sorted(env)
            if k.startswith(TUNING_PREFIXES) and not k.startswith(LAUNCHER_INTERNAL_PREFIXES)}
