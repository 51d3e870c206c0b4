"""One registry for every extension point (subcommands, launchers,
importers, report formats, comparison formats, environment collectors),
after ReFrame's: an explicit list of names, each naming the module (or
"module:attribute") that implements it, imported only when chosen, so a
plug-in whose tool or library is absent costs nothing until then.

Entries are a sequence of tuples, not a dict literal: a dict would keep the
second of two equal names silently, and a second "mpiexec" line would
replace the first. Here it stops the import with DuplicateName. An unknown
name is bad input whose one line lists the choices.
"""
from __future__ import annotations

import importlib
from typing import Any, Iterable

from clusterbench.errors import BadInput


class DuplicateName(ValueError):
    """Two entries of one registry share a name: a programming error, raised at import."""


class Registry:
    def __init__(self, kind: str, entries: Iterable[tuple[str, str] | tuple[str, str, str]] = (), *,
                 plural: str | None = None, extra_choices: Iterable[str] = ()):
        """kind: what one entry is, for errors ("launcher"); extra_choices: names
        the caller accepts beside the entries ("auto"), listed in the error first."""
        self.kind = kind
        self.plural = plural or f"{kind}s"
        self.extra_choices = tuple(extra_choices)
        self._entries: dict[str, tuple[str, str]] = {}
        for entry in entries:
            self.add(*entry)

    def add(self, name: str, target: str, what: str = "") -> None:
        """Registers `name` as `target` ("package.module" or "package.module:attribute")."""
        if name in self._entries or name in self.extra_choices:
            raise DuplicateName(f"{self.kind} '{name}' is registered twice "
                                f"({self._entries.get(name, ('a choice of its own',))[0]} and {target})")
        self._entries[name] = (target, what)

    def names(self) -> list[str]:
        return list(self._entries)

    def choices(self) -> list[str]:
        """Every name the user may give, in the order the errors list them."""
        return [*self.extra_choices, *self._entries]

    def items(self) -> list[tuple[str, str]]:
        """(name, what it is), for help texts."""
        return [(name, what) for name, (_, what) in self._entries.items()]

    def entries(self) -> list[tuple[str, str, str]]:
        """(name, target, what): enough to build another registry from this one."""
        return [(name, target, what) for name, (target, what) in self._entries.items()]

    def __iter__(self):
        return iter(self.names())

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __len__(self) -> int:
        return len(self._entries)

    def unknown(self, name: object) -> BadInput:
        return BadInput(f"no such {self.kind}: '{name}' ({self.plural}: {', '.join(self.choices())})")

    def load(self, name: str) -> Any:
        """The module (or attribute) registered as `name`; BadInput listing the choices when none is."""
        if name not in self._entries:
            raise self.unknown(name)
        module, _, attribute = self._entries[name][0].partition(":")
        loaded = importlib.import_module(module)
        return getattr(loaded, attribute) if attribute else loaded
