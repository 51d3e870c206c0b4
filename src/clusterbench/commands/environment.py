from __future__ import annotations

import json

import click

from clusterbench.commands.options import PathParam, db_option, width_option
from clusterbench.errors import BadInput
from clusterbench.output.counted_text import counted
from clusterbench.store.opening import open_store


@click.command("env")
@click.option("--diff", nargs=2, metavar="RUN_A RUN_B",
              help="Show what differs between two runs' environments; RUN@HOST picks one host's "
                   "(two hosts of one run: --diff 7@h01 7@h02).")
@click.option("--target", "targets", multiple=True, type=PathParam(exists=True, file_okay=False),
              help="Also describe the file system of this directory (repeatable).")
@click.option("--json", "as_json", is_flag=True,
              help="Print every collected key as JSON; with --diff, each host pair's differing keys, as stored.")
@db_option
@width_option
def command(diff, targets, as_json, db_url):
    """Describe this machine as a benchmark report's environment block (E10)."""
    import os

    from clusterbench.output.console import stdout_console
    from rich.table import Table

    from clusterbench import environment
    from clusterbench.output.render_text import terminal

    console = stdout_console()
    if diff and targets:   # --target describes this machine, which a diff of two stored runs never reads
        raise click.UsageError("--target describes this machine; it has nothing to add to --diff of two stored runs")
    if diff:
        from clusterbench.analysis.comparison import single_target

        store = open_store(db_url)
        (a_id, env_a), (b_id, env_b) = (_environments(store, r) for r in diff)
        pairs = []
        for ha, hb in _host_pairs(sorted(env_a), sorted(env_b)):
            lines, unrecorded = _recorded(environment.diff(single_target(env_a[ha]), single_target(env_b[hb])),
                                          env_a[ha], env_b[hb])
            pairs.append((ha, hb, lines, unrecorded))
        if as_json:   # a script's diff: the stored keys and values, as `env --json` prints them
            click.echo(json.dumps([_diff_json(a_id, ha, b_id, hb, lines, unrecorded)
                                   for ha, hb, lines, unrecorded in pairs], indent=1, default=str))
            return
        for ha, hb, lines, unrecorded in pairs:
            t = Table("key", f"run {a_id} ({terminal(ha)})", f"run {b_id} ({terminal(hb)})",
                      title=f"environment differences: {counted(len(lines), 'line')}")
            for key, va, vb in lines:   # values read from machines and files: printed as written
                t.add_row(_key_cell(key), terminal(environment.value_text(key, va)),
                          terminal(environment.value_text(key, vb)))
            if unrecorded:
                folded, reasons = unrecorded
                t.add_row(f"({folded} more keys)", *(terminal(why) for why in reasons))
            for column in t.columns:   # a path or a reason longer than its column folds, never cut with "…"
                column.overflow = "fold"
            console.print(t)
        return
    from clusterbench.launch.stop_signals import deferred

    env = environment.collect([os.path.abspath(t) for t in targets], stop_grace=deferred)
    if as_json:
        click.echo(json.dumps(env, indent=1, sort_keys=True, default=str))
        return
    t = Table("item", "value", title="test environment")
    for k, v in environment.summary_block(env):
        t.add_row(terminal(k), terminal(v))   # read from the machine: text, never markup
    console.print(t)


def _diff_json(a_id: int, ha: str, b_id: int, hb: str, lines: list, unrecorded: tuple | None) -> dict:
    """One host pair of a diff as JSON: the keys that differ with both stored values (null where
    a side lacks the key), and the keys an imported run's file did not state, counted, with why."""
    folded, reasons = unrecorded or (0, ("", ""))
    return {"a": {"run": a_id, "host": ha}, "b": {"run": b_id, "host": hb},
            "differences": [{"key": key, "a": va, "b": vb} for key, va, vb in lines],
            "not_recorded": {"keys": folded, "a": reasons[0] or None, "b": reasons[1] or None} if folded else None}


def _key_cell(key: str) -> str:
    """The key in words (environment/key_words.py), the stored key under it in dim: people grep
    for the key, and docs/environment.md names each by it. A key with no words: as stored, once."""
    from clusterbench.environment.key_words import key_words
    from clusterbench.output.render_text import terminal

    words = key_words(key)
    return terminal(key) if words == key else f"{terminal(words)}\n[dim]{terminal(key)}[/dim]"


def _recorded(lines: list, env_a: dict, env_b: dict) -> tuple[list, tuple | None]:
    """The lines of a diff an imported run's file can speak to, and (how
    many, (why in a, why in b)) for the rest: an imported run's snapshot
    holds only what its file stated, and each key it lacks was a line of its
    own ("imported from OSU 7.4 text: not recorded", about 150 of them). Of
    two imported runs, a key neither file stated is no difference either,
    though the two reasons name different formats."""
    from clusterbench.importers.unrecorded import is_unrecorded, lacks

    why_a = next((v for v in env_a.values() if is_unrecorded(v)), None)
    why_b = next((v for v in env_b.values() if is_unrecorded(v)), None)
    if not (why_a or why_b):
        return lines, None

    if why_a and why_b:
        kept = [ln for ln in lines if not (lacks(ln[1]) and lacks(ln[2]))]
    else:
        side = 1 if why_a else 2   # the imported run's column of (key, value a, value b)
        kept = [ln for ln in lines if not lacks(ln[side])]
    folded = len(lines) - len(kept)
    return kept, (folded, (why_a or "", why_b or "")) if folded else None


def _host_pairs(hosts_a: list[str], hosts_b: list[str]) -> list[tuple[str, str]]:
    """The same hosts pair by name; otherwise host by host in order, the run
    with fewer hosts taken round again, so every host of both runs is compared
    (one host against a run of several: against each of them)."""
    if hosts_a == hosts_b:
        return [(h, h) for h in hosts_a]
    n = max(len(hosts_a), len(hosts_b))
    return [(hosts_a[i % len(hosts_a)], hosts_b[i % len(hosts_b)]) for i in range(n)]


def _environments(store, ref: str) -> tuple[int, dict[str, dict]]:
    """RUN (every host's snapshot) or RUN@HOST (that host's) -> (run id, {host: snapshot})."""
    run_ref, at, host = ref.rpartition("@") if "@" in ref else (ref, "", "")
    run_id = store.resolve(run_ref)[0]
    envs = store.environments_of(run_id)
    if not envs:
        raise BadInput(f"run {run_id} has no stored environment")
    if at and not host:   # '1@' was taken as the whole run, every host, as if no host were named
        raise BadInput(f"{ref}: no host after '@' (hosts of run {run_id}: {', '.join(sorted(envs))})")
    if host:
        if host not in envs:
            raise BadInput(f"run {run_id} has no snapshot of host '{host}' (hosts: {', '.join(sorted(envs))})")
        envs = {host: envs[host]}
    return run_id, envs
