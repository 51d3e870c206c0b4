"""clusterbench testbed: a cluster of test hosts on this machine (up, status,
exec, env, down). The work is clusterbench.testbed.cluster's; this module
parses and prints."""
from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import click

from clusterbench.commands.options import Digits, db_option
from clusterbench.errors import BadInput, MeasurementFailed
from clusterbench.output.counted_text import counted


def _dir_option(f):
    return click.option(
        "--dir", "state_dir", type=click.Path(file_okay=False, path_type=Path), envvar="CLUSTERBENCH_TESTBED",
        default=lambda: str(_default_dir()), show_default="/run/clusterbench/testbed",
        help="Where the cluster's state file, host file and ssh stand-in live ($CLUSTERBENCH_TESTBED); "
             "one directory per cluster.")(f)


def _default_dir() -> Path:
    from clusterbench.testbed.cluster import DEFAULT_DIR

    return DEFAULT_DIR


def _bad(e: Exception) -> BadInput:
    return BadInput(str(e))


@click.group("testbed")
def command():
    """A cluster of test hosts on this machine, from namespaces (needs root).

    \b
    clusterbench testbed up --hosts 4 --link 1gbit
    eval "$(clusterbench testbed env)"
    clusterbench run mpi --op=pingpong --np 2 --ppn 1 --hostfile "$CLUSTERBENCH_TESTBED/hostfile"
    clusterbench testbed down
    """


@command.command("up")
@click.option("--hosts", "host_count", type=Digits(unit="hosts"), default=4, show_default=True, help="Number of test hosts (h01, h02, ...).")
@click.option("--link", metavar="RATE[,DELAY]", help="Shape every host's link, both directions: a tc rate "
              "(100mbit, 1gbit) and optionally a one-way delay (500us, 2ms).")
@click.option("--subnet", help="Addresses to use, inside 198.18.0.0/15 [default: the first free /24 of 198.19.0.0/16].")
@click.option("--switches", type=Digits(unit="switches"), default=1, show_default=True,
              help="1, or 2: the first half of the hosts on one switch, the rest on another, joined by a trunk (E6).")
@click.option("--trunk", "trunk_links", type=Digits(unit="links"), help="Links between the two switches (1-16) [default: 1]; flows "
              "are spread over them by a hash of their addresses and ports (ECMP), as a LAG does.")
@click.option("--trunk-rate", metavar="RATE", help="Shape each trunk link, both directions (a tc rate: 1gbit).")
@click.option("--glusterfs", "gluster_servers", type=Digits(unit="servers"), metavar="N",
              help="Serve a GlusterFS volume from the last N hosts, mounted on the others and here (docs/netfs.md).")
@click.option("--bricks", type=Digits(unit="bricks"), help="Bricks of the volume, spread over the servers [default: one a server; "
              "2 replicated, 3 dispersed].")
@click.option("--layout", type=click.Choice(["distributed", "replicated", "dispersed"]), default="distributed",
              show_default=True, help="The volume's layout.")
@_dir_option
def up_cmd(host_count, link, subnet, switches, trunk_links, trunk_rate, gluster_servers, bricks, layout, state_dir):
    """Start a test cluster: hosts on one switch (or two, joined by a trunk), each its own host name and network
    stack, optionally serving a GlusterFS volume."""
    from clusterbench.testbed import cluster as tc
    from clusterbench.testbed.netns import TestBedError

    try:
        c = tc.up(state_dir, host_count, link, subnet, switches, trunk_links, trunk_rate, gluster_servers, bricks,
                  layout)
    except tc.BadCluster as e:
        raise _bad(e) from None
    except TestBedError as e:
        raise MeasurementFailed(f"testbed up failed and was undone: {e}") from None
    _print_status(c.status())
    # quoted for the shell: the line is pasted as it is, and a --dir may hold a space
    click.echo(f'use it: eval "$(clusterbench testbed env --dir {shlex.quote(str(state_dir))})"; host file {c.hostfile}')


def _print_status(s: dict) -> None:
    link = s["rate"] or "unshaped"
    if s["delay"]:
        link += f", {s['delay']} delay each way"
    state = "up" if s["complete"] else "INCOMPLETE (run testbed down)"
    click.echo(f"test cluster {s['id']} ({state}): {counted(len(s['hosts']), 'host')} on {s['subnet']}, links {link}, "
               f"switch {s['bridge']} {s['bridge_address']}")
    trunk = s.get("trunk")
    if trunk:
        sw1, sw2 = s["switches"]
        click.echo(f"  switches: sw1 {sw1['bridge']} {sw1['subnet']}, sw2 {sw2['bridge']} {sw2['subnet']}; trunk of "
                   f"{trunk['links']} link{'s' * (trunk['links'] > 1)}, {trunk['rate'] or 'unshaped'} each, multipath "
                   f"hashed on addresses and ports ({'up' if trunk['up'] else 'MISSING'})")
    for h in s["hosts"]:
        click.echo(f"  {h['name']}  {h['address']:<15} {h['switch']}  {'up' if h['up'] else 'MISSING'}  "
                   f"({h['namespace']})")
    g = s.get("glusterfs")
    if g:
        click.echo(f"GlusterFS volume {g['volume']} ({g['layout']}, {len(g['bricks'])} bricks on "
                   f"{', '.join(g['servers'])}) mounted at {g['path']}"
                   + (f" (each of {', '.join(g['clients'])} has its own mount there)" if g["clients"] else ""))


@command.command("status")
@click.option("--json", "as_json", is_flag=True, help="Print the state as JSON.")
@_dir_option
def status_cmd(as_json, state_dir):
    """Show the test cluster's hosts, addresses and links."""
    from clusterbench.testbed import cluster as tc

    try:
        s = tc.Cluster.load(state_dir).status()
    except tc.BadCluster as e:
        raise _bad(e) from None
    if as_json:
        click.echo(json.dumps(s, indent=1))
    else:
        _print_status(s)


@command.command("env")
@_dir_option
def env_cmd(state_dir):
    """Print the environment (shell exports) that lets mpiexec start ranks on the test hosts."""
    from clusterbench.testbed import cluster as tc

    try:
        c = tc.Cluster.load(state_dir)
    except tc.BadCluster as e:
        raise _bad(e) from None
    click.echo((c.dir / "env.sh").read_text(), nl=False)


@command.command("exec", context_settings={"ignore_unknown_options": True})
@click.argument("host")
@click.argument("argv", nargs=-1, required=True, type=click.UNPROCESSED)
@_dir_option
def exec_cmd(host, argv, state_dir):
    """Run a command on a test host: clusterbench testbed exec h01 -- hostname"""
    from clusterbench.testbed import cluster as tc

    if os.geteuid() != 0:
        raise BadInput("testbed exec needs root (it enters the host's namespaces)")
    try:
        cmd = tc.Cluster.load(state_dir).command(host, list(argv))
    except tc.BadCluster as e:
        raise _bad(e) from None
    sys.exit(subprocess.run(cmd).returncode)


@command.command("down")
@_dir_option
def down_cmd(state_dir):
    """Remove the test cluster: every namespace, link, mount and file it made."""
    from clusterbench.testbed import cluster as tc

    try:
        removed = tc.down(state_dir)
    except tc.BadCluster as e:
        raise _bad(e) from None
    click.echo(f"test cluster removed ({len(removed)} objects)")


@command.command("netfs-compare")
@click.option("--size", default="128m", show_default=True, help="Bytes per process (IOR -b) and seqio's file size.")
@click.option("--repeat", type=Digits(1, unit="repetitions"), help="Repetitions of each step [default: the suite's, 3].")
@click.option("--dir", "state_root", type=click.Path(file_okay=False, path_type=Path),
              default="/run/clusterbench/netfs-compare", show_default=True,
              help="Where each configuration's test cluster lives while it runs.")
@db_option
def netfs_compare_cmd(size, repeat, state_root, db_url):
    """E2/E3: the netfs-compare suite on a GlusterFS test cluster over a 1 Gbit/s
    link, unshaped, and with two servers; then the side-by-side table with the
    limit that binds each figure (docs/netfs.md)."""
    from clusterbench.store.opening import open_store
    from clusterbench.testbed import cluster as tc
    from clusterbench.testbed import netfs_compare
    from clusterbench.testbed.netns import TestBedError

    if db_url:
        os.environ["CLUSTERBENCH_DB"] = db_url   # the suite runs store where the table reads
    try:
        labels = netfs_compare.run(state_root, size, repeat, echo=click.echo)
    except tc.BadCluster as e:
        raise _bad(e) from None
    except TestBedError as e:
        raise MeasurementFailed(str(e)) from None
    print_netfs_table(*netfs_compare.table(open_store(db_url), labels))


def print_netfs_table(header: list[str], rows: list[list[str]]) -> None:
    from rich.table import Table

    from clusterbench.output.console import stdout_console

    t = Table(title="E3: the same benchmark on GlusterFS, side by side (median MB/s; % change against the first)")
    from clusterbench.output.render_text import terminal

    for i, h in enumerate(header):
        t.add_column(terminal(h), justify="left" if i == 0 or h == "limit" else "right")
    for r in rows:
        t.add_row(*map(terminal, r))   # server paths and volume names: text, never markup
    stdout_console().print(t)
