"""Whether a figure KERNEL:PHASE[:MODE] names something: a kernel cbk has or
a stored step ran, and a phase and mode that kernel's stored samples carry.

A figure that names nothing is bad input (one line naming what exists, exit
2), as show, compare and export treat a run that does not exist; a figure
that exists but whose runs the filters leave out is an empty answer. The
catalogue does not say which phases a kernel measures (they are the C
kernel's), so a phase is judged only once the store holds a run of its
kernel: an empty store refuses no figure of a kernel cbk has.
"""
from __future__ import annotations

import sqlalchemy as sa

from clusterbench.errors import BadInput
from clusterbench.store.schema import samples, steps


def _names(values) -> str:
    return ", ".join(sorted(v for v in values if v)) or "none"


def cbk_kernel_names() -> list[str]:
    """Every kernel cbk has, those this cbk was built without (a GPU kernel)
    included; none when there is no cbk (the stored steps then say which exist)."""
    from clusterbench import catalogue

    try:
        cat = catalogue.load()
    except BadInput:
        return []
    return [*cat.kernels, *cat.left_out]


def refuse_unknown_kernel(store, kernel: str, catalogue_kernels: list[str]) -> None:
    """Raises BadInput when neither cbk nor any stored step knows the kernel
    (an imported run's kernel, such as ior, is known by its steps)."""
    if kernel in catalogue_kernels:
        return
    with store.engine.connect() as c:
        stored = [k for (k,) in c.execute(sa.select(steps.c.kernel).distinct())]
    if kernel not in stored:
        rest = sorted(set(stored) - set(catalogue_kernels))
        raise BadInput(f"no such kernel: {kernel!r} (kernels: {', '.join(catalogue_kernels) or 'no cbk found'}"
                       + (f"; stored runs also hold: {', '.join(rest)}" if rest else "") + ")")


def refuse_unmeasured_figure(store, kernel: str, phase: str, mode: str | None) -> None:
    """Raises BadInput when the store holds samples of the kernel but none
    of this phase (or this phase in this mode), whatever the runs' status."""
    q = (sa.select(samples.c.phase, samples.c.mode).distinct()
         .join(steps, steps.c.id == samples.c.step_id).where(steps.c.kernel == kernel))
    with store.engine.connect() as c:
        measured = c.execute(q).all()
    if not measured:
        return
    if phase not in {p for p, _ in measured}:
        raise BadInput(f"{kernel} never measured a phase {phase!r} in {store.url} "
                       f"(phases: {_names({p for p, _ in measured})})")
    modes = {m for p, m in measured if p == phase}
    if mode is not None and mode not in modes:
        raise BadInput(f"{kernel}:{phase} never measured a mode {mode!r} in {store.url} (modes: {_names(modes)})")
