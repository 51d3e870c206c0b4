"""Environment modules loaded when the run started (Lmod, Environment
Modules): on a cluster the MPI, compiler and libraries a result depends on
are chosen by `module load`, and their names and versions are the record of
that choice. Both systems export LOADEDMODULES and _LMFILES_
(colon-separated, in load order)."""
from __future__ import annotations

import os
from typing import Mapping

from clusterbench.environment.sources import Context

# Variables that say a module system is set up in this shell, loaded or not.
SYSTEM_MARKERS = ("LMOD_CMD", "MODULESHOME", "MODULES_CMD")


def colon_list(text: str) -> list[str]:
    return [part for part in text.split(":") if part]


def module_keys(environ: Mapping[str, str]) -> dict[str, object]:
    out: dict[str, object] = {}
    if "LMOD_VERSION" in environ:
        out["modules.system"] = f"Lmod {environ['LMOD_VERSION']}"
    elif "MODULES_CMD" in environ or "MODULE_VERSION" in environ:
        version = environ.get("MODULE_VERSION")
        out["modules.system"] = "Environment Modules" + (f" {version}" if version else "")
    if "LOADEDMODULES" not in environ and not any(m in environ for m in SYSTEM_MARKERS):
        out["modules.loaded_error"] = ("no module system in this environment "
                                       "(LOADEDMODULES, LMOD_CMD, MODULESHOME, MODULES_CMD unset)")
        return out
    loaded = colon_list(environ.get("LOADEDMODULES", ""))
    out["modules.loaded"] = " ".join(loaded)
    out["modules.count"] = len(loaded)
    files = colon_list(environ.get("_LMFILES_", ""))
    if files:
        out["modules.files"] = " ".join(files)
    if environ.get("MODULEPATH"):
        out["modules.path"] = environ["MODULEPATH"]
    return out


def collect(env: dict, ctx: Context) -> None:
    if not ctx.is_real_root:
        env["modules.loaded_error"] = "not read: reading a file tree, not this process's environment"
        return
    env.update(module_keys(os.environ))
