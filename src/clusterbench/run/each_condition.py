"""One suite (or kernel) under several conditions, in one command (E5):
`--setting-a X --setting-b Y`, or a suite's [[conditions]] blocks. Each
condition is one stored run labelled with it; the last thing printed is
their comparison, the first condition being the baseline."""
from __future__ import annotations

from dataclasses import replace
from typing import Callable

from clusterbench.conditions import apply
from clusterbench.conditions.spec import Conditions, new_cgroup_name
from clusterbench.errors import MeasurementFailed


def conditions_of(req, variants: tuple[Conditions, ...]) -> list[Conditions]:
    base = req.conditions or Conditions()
    # a fresh cgroup name per run: a killed run's leftover never meets the next one
    return [replace(base.merged(v), cgroup_name=new_cgroup_name()) for v in variants]


def check_all(req, variants: tuple[Conditions, ...]) -> None:
    """Refuses (BadInput) what any of the runs could not apply, before the
    first starts, and two conditions alike: each run is labelled with its
    conditions, so a suite's two [[conditions]] blocks of one title (the
    same settings, or the same name) were two runs of one label, pooled
    by every later `compare` of it, and compared with each other."""
    from clusterbench.errors import BadInput

    each = conditions_of(req, variants) if variants else [req.conditions]
    titles = [c.title() for c in each] if variants else []
    for i, title in enumerate(titles):
        if title in titles[:i]:
            where = f"suite {req.suite}: conditions blocks" if req.suite else "conditions"
            raise BadInput(f"{where} {titles.index(title) + 1} and {i + 1} are both {title!r}: nothing to "
                           f"compare; give each its own settings, memory limit or name")
    for c in each:
        apply.check(c, req)


def run_under_each(store, cat, req, variants: tuple[Conditions, ...], quiet: bool,
                   execute_and_show: Callable) -> list[int]:
    """Runs req once per condition; returns the run ids (exit 1 after the
    comparison when a run had failed steps)."""
    each = conditions_of(req, variants)
    check_all(req, variants)
    run_ids, failed, titles = [], None, []
    for c in each:
        label = f"{req.label}/{c.title()}" if req.label else c.title()
        titles.append(label)
        try:
            run_ids.append(execute_and_show(store, cat, replace(req, label=label, conditions=c), quiet))
        except MeasurementFailed as e:
            run_ids.append(e.run_id)
            failed = e
    if not quiet and len(run_ids) > 1:
        from clusterbench.analysis import comparison as compare
        from clusterbench.output.console import stdout_console
        from clusterbench.report.compare_terminal import print_comparison

        console = stdout_console()
        # by run id: a label may also name older runs, which must not be pooled in
        console.print("comparing " + ", ".join(f"run {i} ({t})" for i, t in zip(run_ids, titles)), markup=False)
        try:
            print_comparison(console, compare.build(store, [str(i) for i in run_ids]))
        except compare.NothingInCommon as e:
            if not failed:
                raise
            # a run that failed before any sample leaves nothing to compare: its failure is the news (exit 1)
            console.print(f"no comparison: {e.message}", markup=False)
    if failed:
        raise failed
    return run_ids
