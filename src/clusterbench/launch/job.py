"""What to launch (Job) and the launcher interface."""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Job:
    argv: tuple[str, ...]          # the program each rank runs: cbk KERNEL --name=value ...
    ranks: int = 1
    ranks_per_node: int | None = None
    hostfile: str | None = None
    oversubscribe: bool = False
    env: dict[str, str] = field(default_factory=dict)


class Launcher:
    name = "?"

    def unavailable(self, cbk: str | None = None) -> str | None:
        """None when usable here, else the reason it is not."""
        return None

    def command(self, job: Job) -> list[str]:
        """The argv that starts the job; pure, tested against exact strings."""
        raise NotImplementedError
