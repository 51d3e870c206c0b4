"""Suites: TOML files listing steps. Shipped ones live in
clusterbench/suites/; any path to a .toml file works too.

    description = "..."
    [[steps]]
    name = "disk: durable write, cold read"
    kernel = "seqio"
    repeat = 5                       # repetitions (default 5)
    np = 1                           # ranks; a list sweeps
    ppn = 1                          # ranks per node (optional)
    requires = ["mpi"]               # skipped when cbk lacks it
    params = { dir = "{dir}", file-size = "512m" }   # a list value sweeps

"{name}" in a parameter value is replaced by the suite variable `name`
given on the command line (clusterbench run quick --dir=/scratch).

Run conditions (docs/run-conditions.md) at the top level apply to every
step; [[conditions]] blocks run the whole suite once under each and end
in their comparison (spec.py in clusterbench/conditions shows the keys).
"""
from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from clusterbench.conditions import spec as conditions
from clusterbench.errors import BadInput
from clusterbench.plan import Step, expand

STEP_KEYS = {"name", "kernel", "repeat", "np", "ppn", "launcher", "requires", "params", "env"}
DEFAULT_VARIABLES = {"dir": "."}


@dataclass(frozen=True)
class Suite:
    name: str
    description: str
    steps: list[Step]
    conditions: conditions.Conditions = field(default_factory=conditions.Conditions)  # for every run
    variants: tuple[conditions.Conditions, ...] = ()   # [[conditions]]: one run each, then compared


def shipped() -> list[str]:
    return sorted(p.name[:-5] for p in resources.files(__name__).iterdir() if p.name.endswith(".toml"))


def is_suite(target: str) -> bool:
    return target in shipped() or target.endswith(".toml")


def _substitute(value, variables: dict[str, str], where: str):
    if isinstance(value, list):
        return [_substitute(v, variables, where) for v in value]
    if not isinstance(value, str):
        return value

    def repl(m: re.Match) -> str:
        key = m.group(1)
        if key not in variables:
            raise BadInput(f"{where} uses {{{key}}} but no --{key}=VALUE was given")
        return variables[key]

    return re.sub(r"\{([a-z][a-z0-9_-]*)\}", repl, value)


def load(target: str, variables: dict[str, str]) -> Suite:
    if target.endswith(".toml"):
        path = Path(target)
        if not path.is_file():
            raise BadInput(f"suite file {target} does not exist")
        text, name = path.read_text(), path.stem
    else:
        text, name = resources.files(__name__).joinpath(f"{target}.toml").read_text(), target
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise BadInput(f"suite {name}: {e}") from None
    values = {**DEFAULT_VARIABLES, **variables}
    steps: list[Step] = []
    for i, s in enumerate(doc.get("steps", []), 1):
        where = f"suite {name}, step {i}"
        unknown = set(s) - STEP_KEYS
        if unknown:
            raise BadInput(f"{where}: unknown key(s) {', '.join(sorted(unknown))}")
        if "kernel" not in s:
            raise BadInput(f"{where}: no kernel")
        params = {k: _substitute(v, values, where) for k, v in s.get("params", {}).items()}
        steps += expand(s["kernel"], params, repeat=int(s.get("repeat", 5)), ranks=s.get("np", 1),
                        ranks_per_node=s.get("ppn"), launcher=s.get("launcher"), name=s.get("name"),
                        requires=tuple(s.get("requires", ())), env=s.get("env"))
    if not steps:
        raise BadInput(f"suite {name} has no steps")

    def run_conditions(table: dict, where: str) -> conditions.Conditions:
        if not isinstance(table, dict):
            raise BadInput(f"{where}: expected a table")
        table = dict(table)  # "{var}" works in settings values and the memory limit, as in params
        if isinstance(table.get("settings"), dict):
            table["settings"] = {n: _substitute(v, values, where) for n, v in table["settings"].items()}
        if "memory-limit" in table:
            table["memory-limit"] = _substitute(table["memory-limit"], values, where)
        return conditions.from_table(table, where)

    common = run_conditions({k: doc[k] for k in ("memory-limit", "settings") if k in doc}, f"suite {name}")
    blocks = doc.get("conditions", [])
    if not isinstance(blocks, list):
        raise BadInput(f"suite {name}: conditions must be [[conditions]] blocks")
    variants = tuple(run_conditions(b, f"suite {name}, conditions block {i}") for i, b in enumerate(blocks, 1))
    return Suite(name, doc.get("description", ""), steps, common, variants)
