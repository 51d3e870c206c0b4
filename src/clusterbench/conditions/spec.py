"""What a run asks for: a memory limit and settings, from the command line
(--memory-limit, --setting, --setting-a/--setting-b) or a suite:

    memory-limit = "1g"                               # every step, every host
    settings = { "vm.dirty_ratio" = "5" }             # this host, for the run
    [[conditions]]                                    # run the suite once per block,
    name = "balanced"                                 #   then compare the runs (E5)
    settings = { tuned = "balanced" }
    [[conditions]]
    settings = { tuned = "latency-performance" }
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field, replace

from clusterbench.errors import BadInput
from clusterbench.results.sizes import size_arg

MIN_MEMORY_LIMIT_BYTES = 16 << 20  # below this cbk and an MPI library's buffers alone hit the cap
CONDITION_KEYS = {"name", "settings", "memory-limit"}


def new_cgroup_name() -> str:
    return f"clusterbench-{os.getpid()}-{os.urandom(3).hex()}"


@dataclass(frozen=True)
class Applied:
    """A setting as the run saw it: the value found before, the value during."""
    setting: str
    requested: str
    before: str
    during: str


@dataclass(frozen=True)
class Conditions:
    memory_limit_bytes: int | None = None
    settings: tuple[tuple[str, str], ...] = ()        # (name, value), in the order given
    name: str | None = None                           # of one of several conditions (the run's label)
    cgroup_name: str = field(default_factory=new_cgroup_name)
    applied: tuple[Applied, ...] = ()                 # filled in while the run's settings hold

    def __bool__(self) -> bool:
        return bool(self.memory_limit_bytes or self.settings)

    def title(self) -> str:
        parts = [f"{k}={v}" for k, v in self.settings]
        if self.memory_limit_bytes:
            parts.append(f"memory-limit={size_arg(self.memory_limit_bytes)}")
        return self.name or ",".join(parts) or "as found"

    def merged(self, other: "Conditions") -> "Conditions":
        """This with other's settings and limit on top (other wins per name)."""
        names = dict(self.settings)
        names.update(dict(other.settings))
        return replace(self, memory_limit_bytes=other.memory_limit_bytes or self.memory_limit_bytes,
                       settings=tuple(names.items()), name=other.name or self.name)


def parse_memory_limit(text: str | int | None, where: str = "--memory-limit") -> int | None:
    if text is None or text == "":
        return None
    from clusterbench.results.sizes import parse_size

    n = parse_size(str(text))
    if n is None:
        raise BadInput(f"{where} {text}: give a size such as 128m or 1g")
    if n < MIN_MEMORY_LIMIT_BYTES:
        raise BadInput(f"{where} {text}: at least {MIN_MEMORY_LIMIT_BYTES >> 20}m (the kernel's own memory "
                       f"counts against the limit too)")
    return n


def parse_settings(texts, where: str = "--setting") -> tuple[tuple[str, str], ...]:
    out: dict[str, str] = {}
    for t in texts:
        name, sep, value = str(t).partition("=")
        if not sep or not name.strip() or not value.strip():
            raise BadInput(f"{where} {t}: expected NAME=VALUE, e.g. vm.dirty_ratio=5 or thp=never")
        name, value = name.strip(), value.strip()
        if out.get(name, value) != value:
            raise BadInput(f"{where} {name} is given twice ({out[name]} and {value}): give it once")
        out[name] = value
    return tuple(out.items())


def from_table(table: dict, where: str) -> Conditions:
    """A suite's top level or one [[conditions]] block."""
    unknown = set(table) - CONDITION_KEYS
    if unknown:
        raise BadInput(f"{where}: unknown key(s) {', '.join(sorted(unknown))}")
    settings = table.get("settings", {})
    if not isinstance(settings, dict):
        raise BadInput(f"{where}: settings must be a table, e.g. settings = {{ \"vm.dirty_ratio\" = \"5\" }}")
    # TOML's true became "True", written to the kernel only when that block's turn came,
    # after the blocks before it had run; a number is a setting's value as written
    for k, v in settings.items():
        if isinstance(v, bool) or not isinstance(v, (str, int, float)):
            raise BadInput(f"{where}: settings.{k} = {v!r}: give a setting's value as text or a number "
                           f"(e.g. \"never\", 5)")
    if "name" in table and not isinstance(table["name"], str):
        raise BadInput(f"{where}: name = {table['name']!r}: give the condition's name as text (it labels its run)")
    return Conditions(parse_memory_limit(table.get("memory-limit"), f"{where}: memory-limit"),
                      parse_settings((f"{k}={v}" for k, v in settings.items()), f"{where}: settings"),
                      name=table.get("name"))
