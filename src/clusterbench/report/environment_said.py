"""A run's test environment said once in a report: a comparison of two
labels on one machine printed the same eighteen lines under each of its
twelve runs. A run whose one host's lines are all the same as an earlier
run's in the report points to that run instead."""
from __future__ import annotations


def same_as_earlier(runs: list[dict]) -> dict[int, int]:
    """{run id: the earlier run whose test environment reads the same, line for line}.
    A run over several hosts (a cluster run) keeps its own section."""
    from clusterbench.environment import summary_block

    first_with: dict[tuple, int] = {}
    same: dict[int, int] = {}
    for run in runs:
        if len(run["environments"]) != 1:
            continue
        ((host, env),) = run["environments"].items()
        lines = (host, tuple(summary_block(env)))
        if lines in first_with:
            same[run["id"]] = first_with[lines]
        else:
            first_with[lines] = run["id"]
    return same


def same_text(earlier_run_id: int) -> str:
    return f"Every line the same as run {earlier_run_id}'s, above."
