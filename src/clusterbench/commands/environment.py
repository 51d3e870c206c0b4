from __future__ import annotations

import json

import click

from clusterbench.commands.options import PathParam, db_option, width_option
from clusterbench.errors import BadInput
from clusterbench.store.opening import open_store


@click.command("env")
@click.option("--diff", nargs=2, metavar="RUN_A RUN_B",
              help="Show what differs between two runs' environments; RUN@HOST picks one host's "
                   "(two hosts of one run: --diff 7@h01 7@h02).")
@click.option("--target", "targets", multiple=True, type=PathParam(exists=True, file_okay=False),
              help="Also describe the file system of this directory (repeatable).")
@click.option("--json", "as_json", is_flag=True, help="Print every collected key as JSON.")
@db_option
@width_option
def command(diff, targets, as_json, db_url):
    """Describe this machine as a benchmark report's environment block (E10)."""
    import os

    from clusterbench.output.console import stdout_console
    from rich.table import Table

    from clusterbench import environment

    console = stdout_console()
    if diff:
        store = open_store(db_url)
        (a_id, env_a), (b_id, env_b) = (_environments(store, r) for r in diff)
        for ha, hb in _host_pairs(sorted(env_a), sorted(env_b)):
            from clusterbench.analysis.comparison import single_target

            lines = environment.diff(single_target(env_a[ha]), single_target(env_b[hb]))
            t = Table("key", f"run {a_id} ({ha})", f"run {b_id} ({hb})",
                      title=f"environment differences: {len(lines)} line(s)")
            for key, va, vb in lines:
                t.add_row(key, "" if va is None else str(va), "" if vb is None else str(vb))
            console.print(t)
        return
    env = environment.collect([os.path.abspath(t) for t in targets])
    if as_json:
        click.echo(json.dumps(env, indent=1, sort_keys=True, default=str))
        return
    t = Table("item", "value", title="test environment")
    for k, v in environment.summary_block(env):
        t.add_row(k, v)
    console.print(t)


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
    run_ref, _, host = ref.rpartition("@") if "@" in ref else (ref, "", "")
    run_id = store.resolve(run_ref)[0]
    envs = store.environments_of(run_id)
    if not envs:
        raise BadInput(f"run {run_id} has no stored environment")
    if host:
        if host not in envs:
            raise BadInput(f"run {run_id} has no snapshot of host '{host}' (hosts: {', '.join(sorted(envs))})")
        envs = {host: envs[host]}
    return run_id, envs
