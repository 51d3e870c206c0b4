"""Suites: TOML files listing steps. Shipped ones live in
clusterbench/suites/; any path to a .toml file works too.

    description = "..."
    [[steps]]
    name = "disk: durable write, cold read"
    kernel = "seqio"
    repeat = 5                       # repetitions (default 5)
    np = 1                           # ranks; a list sweeps
    ppn = 1                          # ranks per node (optional); a list sweeps placements
    requires = ["mpi"]               # skipped when cbk lacks it (a suite of only skipped steps: refused)
    gpus-per-rank = 1                # each rank its own granted GPU(s) (optional; docs/gpu.md)
    share-gpus = false               # with too few, share them round-robin (optional)
    params = { dir = "{dir}", file-size = "512m" }   # a list value sweeps

"{name}" in a parameter value is replaced by the suite variable `name`
given on the command line (clusterbench run quick --dir=/scratch); a
variable given that no step uses is refused, not dropped.

Run conditions (docs/run-conditions.md) at the top level apply to every
step; [[conditions]] blocks run the whole suite once under each and end
in their comparison (spec.py in clusterbench/conditions shows the keys).
"""
from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from clusterbench.conditions import spec as conditions
from clusterbench.errors import BadInput
from clusterbench.run.plan import Step, expand

SCHEMA_FILE = Path(__file__).parent.parent / "schemas" / "suite.schema.json"
# a suite expands to at most this many steps: each is a launch, and a
# mistyped sweep (10^6 points) would spend hours in preflight
MAX_STEPS = 10_000
# a suite file is read whole: the largest shipped is 3 KiB
MAX_SUITE_BYTES = 1 << 20
STEP_KEYS = {"name", "kernel", "repeat", "np", "ppn", "launcher", "requires", "params", "env", "gpus-per-rank",
             "share-gpus"}
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


def _substitute(value, variables: dict[str, str], where: str, used: set[str]):
    """`value` with each "{name}" replaced; the names met are added to `used`."""
    if isinstance(value, list):
        return [_substitute(v, variables, where, used) for v in value]
    if not isinstance(value, str):
        return value

    def repl(m: re.Match) -> str:
        key = m.group(1)
        if key not in variables:
            raise BadInput(f"{where} uses {{{key}}} but no --{key}=VALUE was given")
        used.add(key)
        return variables[key]

    return re.sub(r"\{([a-z][a-z0-9_-]*)\}", repl, value)


def check_document(doc: dict, name: str) -> None:
    """Refuses a suite that is not one (wrong types, repeat = 2.7,
    requires = "mpi", ppn = "x", a sweep over MAX_STEPS steps) before
    anything expands or runs: one line naming the step and key."""
    import json

    import jsonschema

    validator = jsonschema.Draft202012Validator(json.loads(SCHEMA_FILE.read_text()))
    error = jsonschema.exceptions.best_match(validator.iter_errors(doc))
    if error is not None:
        path = list(error.absolute_path)
        where = f"suite {name}"
        if len(path) >= 2 and path[0] == "steps":
            where += f", step {path[1] + 1}"
            path = path[2:]
        if error.validator == "additionalProperties" and isinstance(error.instance, dict):
            allowed = set(error.schema.get("properties", {}))
            raise BadInput(f"{where}: unknown key(s) {', '.join(sorted(k for k in error.instance if k not in allowed))}")
        key = ".".join(str(p) for p in path)
        value = repr(error.instance)
        if len(value) > 60:
            value = value[:57] + "..."
        what = error.message if len(error.message) <= 120 else error.message[:117] + "..."
        if error.validator in ("type", "oneOf", "minimum", "maximum", "pattern", "minItems"):
            what = f"expected {_expected(error)}"
        raise BadInput(f"{where}: {key + ' = ' if key else ''}{value}: {what}")
    total = 0
    for s in doc.get("steps", []):
        n = 1
        for v in [*s.get("params", {}).values(), s.get("np", 1), s.get("ppn")]:
            n *= len(v) if isinstance(v, list) else 1
        total += n
        if total > MAX_STEPS:
            raise BadInput(f"suite {name}: its sweeps expand to more than {MAX_STEPS:,} steps; "
                           f"split the suite or sweep fewer values")


def check_step_names(doc: dict, name: str) -> None:
    """Two steps given the same name would be one figure in every table and comparison."""
    first: dict[str, int] = {}
    for i, s in enumerate(doc.get("steps", []), 1):
        if "name" in s and first.setdefault(s["name"], i) != i:
            raise BadInput(f"suite {name}, step {i}: name {s['name']!r} is step {first[s['name']]}'s too; "
                           f"give each step its own name")


def _expected(error) -> str:
    """What a key takes, from its schema, in words."""
    schema = error.schema
    alternatives = schema.get("oneOf") or [schema]
    words = []
    for alt in alternatives:
        if "$ref" in alt:
            alt = {"integer": 1, "minimum": 1} if alt["$ref"].endswith("count") else {"type": "string, number or boolean"}
        t = alt.get("type")
        if t == "integer" or "integer" in alt:
            words.append(f"a whole number from {alt.get('minimum', 1)}" + (f" to {alt['maximum']:,}" if "maximum" in alt else ""))
        elif t == "array":
            words.append("a non-empty list of those" if len(alternatives) > 1 else "a list (in [ ])")
        elif t == "string" and "pattern" in alt:
            words.append("a name of lowercase letters, digits, - and _" if "a-z" in alt["pattern"] else "text without control characters")
        elif t == "string":
            words.append("text")
        elif isinstance(t, list):
            words.append(" or ".join(t))
        elif t:
            words.append(t if t != "object" else "a table")
    return ", or ".join(words) or error.message


def check_variables_used(name: str, given: dict[str, str], used: set[str]) -> None:
    """A variable given that no step uses would be dropped in silence: `run
    quick --file-size=1m` wrote quick's 1 GiB files while the user believed
    the 1m. Refused, with the variables the suite does take."""
    unused = [k for k in given if k not in used]
    if unused:
        takes = f"its variables: {', '.join(f'--{k}' for k in sorted(used))}" if used else "it takes no variables"
        raise BadInput(f"suite {name} uses no {', '.join(f'--{k}' for k in unused)} ({takes})")


def step_env(env: dict | None, where: str) -> dict[str, str]:
    """A step's environment variables as its launch passes them: text, a
    whole number as written (the schema takes env = { OMP_NUM_THREADS = 4 },
    and it was a TypeError traceback once the run was stored, failed), and
    no NUL, which no environment can hold (a ValueError traceback)."""
    out = {}
    for key, value in (env or {}).items():
        text = str(value)
        if "\x00" in text:
            raise BadInput(f"{where}: env.{key}: a value cannot hold a NUL character")
        out[key] = text
    return out


def gpu_binding(steps: list[Step], s: dict, where: str) -> list[Step]:
    """The step keys gpus-per-rank = N and share-gpus = true (see clusterbench.launch.gpubind)."""
    n = s["gpus-per-rank"]
    if not isinstance(n, int) or isinstance(n, bool) or n < 1:
        raise BadInput(f"{where}: gpus-per-rank = {n!r}: give a whole number of 1 or more")
    return [dataclasses.replace(st, gpus_per_rank=n, share_gpus=bool(s.get("share-gpus", False))) for st in steps]


def _read(target: str) -> tuple[str, str]:
    """The suite's text and name; a file that is not UTF-8 text of a sane size is refused."""
    if not target.endswith(".toml"):
        return resources.files(__name__).joinpath(f"{target}.toml").read_text(), target
    from clusterbench.files.small_file import read_small

    path = Path(target)
    if not path.exists():
        raise BadInput(f"suite file {target} does not exist")
    try:
        data = read_small(path, MAX_SUITE_BYTES, "suite")
    except OSError as e:
        raise BadInput(f"suite file {target}: {e.strerror}") from None
    try:
        return data.decode("utf-8"), path.stem
    except UnicodeDecodeError as e:
        raise BadInput(f"suite file {target}: not UTF-8 text (byte 0x{data[e.start]:02x} at offset {e.start}); "
                       f"a TOML file is UTF-8") from None


def load(target: str, variables: dict[str, str]) -> Suite:
    text, name = _read(target)
    import tomllib   # here: a kernel run never reads a suite

    try:
        doc = tomllib.loads(text)
        check_document(doc, name)
    except tomllib.TOMLDecodeError as e:
        raise BadInput(f"suite {name}: {e}") from None
    except RecursionError:
        # tomllib and jsonschema descend recursively: arrays nested thousands deep exhaust the stack
        raise BadInput(f"suite {name}: values nested too deeply; a suite's values are scalars or lists of them") \
            from None
    check_step_names(doc, name)
    values = {**DEFAULT_VARIABLES, **variables}
    used: set[str] = set()
    steps: list[Step] = []
    for i, s in enumerate(doc.get("steps", []), 1):
        where = f"suite {name}, step {i}"
        unknown = set(s) - STEP_KEYS
        if unknown:
            raise BadInput(f"{where}: unknown key(s) {', '.join(sorted(unknown))}")
        if "kernel" not in s:
            raise BadInput(f"{where}: no kernel")
        params = {k: _substitute(v, values, where, used) for k, v in s.get("params", {}).items()}
        new = expand(s["kernel"], params, repeat=int(s.get("repeat", 5)), ranks=s.get("np", 1),
                     ranks_per_node=s.get("ppn"), launcher=s.get("launcher"), name=s.get("name"),
                     requires=tuple(s.get("requires", ())), env=step_env(s.get("env"), where))
        steps += gpu_binding(new, s, where) if "gpus-per-rank" in s else new
    if not steps:
        raise BadInput(f"suite {name} has no steps")

    def run_conditions(table: dict, where: str) -> conditions.Conditions:
        if not isinstance(table, dict):
            raise BadInput(f"{where}: expected a table")
        table = dict(table)  # "{var}" works in settings values and the memory limit, as in params
        if isinstance(table.get("settings"), dict):
            table["settings"] = {n: _substitute(v, values, where, used) for n, v in table["settings"].items()}
        if "memory-limit" in table:
            table["memory-limit"] = _substitute(table["memory-limit"], values, where, used)
        return conditions.from_table(table, where)

    common = run_conditions({k: doc[k] for k in ("memory-limit", "settings") if k in doc}, f"suite {name}")
    blocks = doc.get("conditions", [])
    if not isinstance(blocks, list):
        raise BadInput(f"suite {name}: conditions must be [[conditions]] blocks")
    variants = tuple(run_conditions(b, f"suite {name}, conditions block {i}") for i, b in enumerate(blocks, 1))
    check_variables_used(name, variables, used)
    return Suite(name, doc.get("description", ""), steps, common, variants)
