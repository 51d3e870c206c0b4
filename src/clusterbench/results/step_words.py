"""A step's title in words. A step of a sweep is stored under the name the
plan gave it (run/plan.py): its suite name and, in brackets, the values
that tell it from its siblings, "scaling: 2 nodes x 1 rank [op=allreduce]",
"seqio [block-size=4m, np=2]". The stored name stays as it is (it is what
was run, and old runs carry it); the reports show it in words, from the
parameter's description in `cbk --describe`: a choice by its value alone
where no other parameter of the kernel has that choice ("allreduce"),
anything else by its parameter's name and value ("block size 4 MiB",
"2 ranks").

Which values those are is a fact the plan stored with the step
(steps.swept, plan.Step.swept): the bracket is rebuilt from those names
and the step's own parameters, rank count and ranks per node, never read
out of the name. A step stored before that fact (steps.swept NULL) has
only its name: there the bracket is read, and only where each of its
`name=value` items is what the step's own facts say, so a name a user
gave with brackets of their own is shown as given."""
from __future__ import annotations

from clusterbench.output.counted_text import counted


def sweep_bracket(told: dict[str, str]) -> str:
    """' [op=allreduce, np=2]': what a swept step's name ends in, from the
    values that tell it from its siblings (run/plan.py's Step.swept names,
    in order). The plan names its steps with it, and title() rebuilds it."""
    return f" [{', '.join(f'{k}={v}' for k, v in told.items())}]"


def _name_words(name: str) -> str:
    return name.replace("-", " ").replace("_", " ")


def _value_words(param, value: str) -> str:
    from clusterbench.results.params import is_size_list
    from clusterbench.results.sizes import parse_size, size_text

    if param is not None and (param.type == "size" or is_size_list(param)):
        sizes = [parse_size(v) for v in value.split(",")]
        if all(n is not None for n in sizes):
            return ", ".join(size_text(n) for n in sizes)
    return value


def part_words(kernel, name: str, value: str) -> str:
    """One swept value in words: 'allreduce', 'block size 4 MiB', 'verify', 'no verify', '4 ranks'.
    kernel: a catalogue.Kernel, or None for one this cbk does not describe."""
    if name == "np" and value.isdigit():
        return counted(int(value), "rank")
    if name == "ppn" and value.isdigit():
        return f"{counted(int(value), 'rank')} per node"
    param = kernel.param(name) if kernel is not None else None
    if param is not None and param.type in ("choice", "choice-list") and param.choices:
        values = value.split(",") if param.type == "choice-list" else [value]
        others = {c for p in kernel.params if p is not param for c in (p.choices or ())}
        if all(v in param.choices for v in values) and not others & set(values):
            return ", ".join(values)     # unambiguous: no other parameter of the kernel offers it
    if param is not None and param.type == "bool" and value in ("true", "false"):
        return _name_words(name) if value == "true" else f"no {_name_words(name)}"
    return f"{_name_words(name)} {_value_words(param, value)}"


def _bracket(name: str) -> tuple[str, list[str]] | None:
    """('scaling: 2 nodes x 1 rank', ['op=allreduce']) for a name ending in the plan's bracket, else None."""
    if not name.endswith("]") or " [" not in name:
        return None
    base, _, inner = name[:-1].rpartition(" [")
    items = inner.split(", ")
    return (base, items) if base and all("=" in i for i in items) else None


def _facts(step: dict) -> dict[str, str]:
    """What the plan wrote a step's bracket from: its parameters, rank count ("np") and ranks per node ("ppn")."""
    return {**{k: str(v) for k, v in (step.get("params") or {}).items()}, "np": str(step.get("ranks")),
            "ppn": str(step.get("ranks_per_node"))}


def _split_bracket(step: dict, name: str) -> tuple[str, list[tuple[str, str]]]:
    """A step stored before steps.swept: its name's bracket, read where each item is one of its facts."""
    found = _bracket(name)
    if found is None:
        return name, []
    base, items = found
    facts = _facts(step)
    parts = [item.partition("=")[::2] for item in items]
    if any(facts.get(k) != v for k, v in parts):
        return name, []
    return base, parts


def _name_and_sweep(step: dict) -> tuple[str, list[tuple[str, str]]]:
    """The step's name before the plan's bracket, and what it swept
    [(name, value)]; (the name, []) for a step that swept nothing, or whose
    name does not end with its bracket (a GPU's " GPU 0")."""
    name = step.get("name") or step["kernel"]
    swept = step.get("swept")
    if swept is None:
        return _split_bracket(step, name)
    facts = _facts(step)
    if not swept or any(k not in facts for k in swept):
        return name, []
    told = {k: facts[k] for k in swept}
    bracket = sweep_bracket(told)
    if not name.endswith(bracket):
        return name, []
    return name[:-len(bracket)], list(told.items())


def sweep_in_words(step: dict) -> tuple[str, str]:
    """(the name before the plan's bracket, the sweep in words: 'array size 1 MiB'); '' where it swept nothing."""
    from clusterbench.results.params import kernel_of

    base, parts = _name_and_sweep(step)
    kernel = kernel_of(step["kernel"]) if parts else None
    return base, ", ".join(part_words(kernel, k, v) for k, v in parts)


def title(step: dict) -> str:
    """The step's name (or kernel) with the plan's bracket in words:
    'scaling: 2 nodes x 1 rank, allreduce'. step: name, kernel, params,
    ranks, ranks_per_node and swept as the store gives them (swept missing
    or None: a step stored before it)."""
    base, words = sweep_in_words(step)
    return f"{base}, {words}" if words else base
