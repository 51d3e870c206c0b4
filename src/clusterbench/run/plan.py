"""A plan: the measurement steps of one run, with sweeps expanded.

A parameter given as a list is swept: one step per value, and several
swept parameters give their cartesian product, in the order given. Every
value is read once here by its type (plan_params): a step's parameters
are canonical text from the plan on, so 1m and 1024k are one value.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass, field

from clusterbench.launch.processes import START_TIMEOUT_S


@dataclass(frozen=True)
class AutoRepeat:
    """Repeat until the median's 95 % CI is narrower than `ci_target` (a
    fraction of the median) for every figure of the step, or a limit is hit."""
    ci_target: float = 0.05
    min_repeat: int = 6      # the first n at which a 95 % order-statistic CI exists
    max_repeat: int = 30
    max_seconds: float = 600.0


@dataclass(frozen=True)
class Step:
    kernel: str
    params: dict[str, str]     # canonical text (plan_params): one spelling per value
    repeat: int = 5
    ranks: int = 1
    ranks_per_node: int | None = None
    launcher: str | None = None
    name: str | None = None
    requires: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    auto: AutoRepeat | None = None
    gpus_per_rank: int = 0     # >0: each rank bound to its own granted GPUs (clusterbench.launch.gpubind)
    share_gpus: bool = False   # with too few granted GPUs, ranks share them round-robin
    # bound by default (gpubind.bind_by_default), not by --gpus-per-rank: the node's own GPUs where no grant
    gpus_by_default: bool = False
    timeout_s: float | None = None   # one launch's time limit (--step-timeout); None: no limit
    # how long a launch of several ranks may take until they are all past MPI_Init (--start-timeout)
    start_timeout_s: float = START_TIMEOUT_S
    # what tells this step from its siblings, in the order its name's bracket gives them: swept parameters'
    # names, then "np" and "ppn" where several rank counts or placements were swept; () outside a sweep.
    # Stored with the step (steps.swept, 0012), so a report puts the name in words from these facts
    # (results/step_words.py) instead of reading the bracket back out of the name
    swept: tuple[str, ...] = ()

    def title(self) -> str:
        return self.name or self.kernel

    def argv(self, cbk: str, repetitions: int | None = None) -> tuple[str, ...]:
        argv = (cbk, self.kernel, *self.cbk_args(repetitions))
        if self.gpus_per_rank:
            from clusterbench.launch.gpubind import wrap

            return wrap(argv, self.gpus_per_rank, self.share_gpus, self.gpus_by_default)
        return argv

    def cbk_args(self, repetitions: int | None = None) -> tuple[str, ...]:
        args = [f"--{k}={v}" for k, v in self.params.items()]
        return (*args, f"--repetitions={repetitions or self.repeat}")


def as_text(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def expand(kernel: str, params: dict, *, repeat: int, ranks: int | list[int] = 1,
           ranks_per_node: int | list[int] | None = None, launcher: str | None = None, name: str | None = None,
           requires: tuple[str, ...] = (), env: dict | None = None) -> list[Step]:
    """Steps for every combination of the list-valued parameters, rank
    counts and ranks per node (a list of ppn sweeps placements: np=4 with
    ppn=[4, 2, 1] runs as 1x4, 2x2 and 4x1)."""
    from clusterbench.results.params import canonical_for
    from clusterbench.results.step_words import sweep_bracket

    params = canonical_for(kernel, params)
    swept = {k: v for k, v in params.items() if isinstance(v, list)}
    fixed = {k: as_text(v) for k, v in params.items() if not isinstance(v, list)}
    rank_values = ranks if isinstance(ranks, list) else [ranks]
    ppn_values = ranks_per_node if isinstance(ranks_per_node, list) else [ranks_per_node]
    steps = []
    for np_ in rank_values:
        for ppn in ppn_values:
            for combo in itertools.product(*swept.values()) if swept else [()]:
                chosen = {k: as_text(v) for k, v in zip(swept, combo)}
                p = {k: chosen.get(k, fixed.get(k)) for k in params}  # the order the user gave
                told = dict(chosen)
                if len(rank_values) > 1:
                    told["np"] = str(np_)
                if len(ppn_values) > 1:
                    told["ppn"] = str(ppn)
                label = f"{name or kernel}{sweep_bracket(told)}" if told else name
                steps.append(Step(kernel, p, repeat, int(np_), None if ppn is None else int(ppn), launcher, label,
                                  requires, dict(env or {}), swept=tuple(told)))
    return steps
