"""A node's cbk (the kernel runner) as one environment fact. The snapshot
states cbk's build as a dozen keys, each with its own `_error` when cbk
could not be asked (environment/software.py), so a node whose cbk does not
run (not installed, a library missing) differed from the others in 16
`cbk.*` keys, and the summary listed each: the one fact "h03 has no cbk"
was lost in them. Compared between nodes, they are one key, `cbk`, whose
value is the build in one line (its version, MPI library, compiler, flags
and the parts built in) or "none (why)"."""
from __future__ import annotations

from clusterbench.environment.report_block import cbk_text as build_text

KEY = "cbk"
_PREFIX = KEY + "."


def cbk_text(env: dict) -> str:
    """'0.9.0, MPI MPICH 5.0.2, gcc -O3 Release, built in: libaio, openmp',
    or 'none (exit status 127: cbk: libmpi.so.12: cannot open ...)'."""
    if "cbk.version" not in env:
        why = " ".join(str(env.get("cbk.version_error") or "its snapshot names no version").split())
        return f"none ({why})"
    return build_text(env)


def folded(envs: dict[str, dict]) -> dict[str, dict]:
    """Each snapshot with its `cbk.*` keys replaced by the one key `cbk`; a
    snapshot with none (an older one, or none taken) is left as it is."""
    out = {}
    for host, env in envs.items():
        if not any(k.startswith(_PREFIX) for k in env):
            out[host] = env
            continue
        out[host] = {k: v for k, v in env.items() if not k.startswith(_PREFIX)} | {KEY: cbk_text(env)}
    return out
