"""`clusterbench clean [DIR...]`: undo what runs that ended without cleaning
up left: settings changed by --setting and memory cgroups of
--memory-limit on this host (the journal in the user's state directory says
which), and cbk's private directories in each DIR whose owner is gone
(their owner stamp says so; see run/private_dirs.py)."""
from __future__ import annotations

import os

import click

from clusterbench.commands.options import PathParam


@click.command("clean")
@click.argument("dirs", nargs=-1, type=PathParam(file_okay=False, path_type=str))
@click.option("--dry-run", is_flag=True, help="List what would be removed; remove nothing.")
def command(dirs, dry_run):
    """Restore the settings and remove the memory cgroups that runs killed
    with -9 (or crashed) left behind on this host; with DIR, also remove the
    benchmark directories (cbk-KERNEL-XXXXXX) such runs left in DIR. Only
    directories carrying cbk's owner stamp, made on this host by a process
    that is gone, are removed; nothing else is touched. Every clusterbench
    command restores settings first; this one also says when there was nothing."""
    from clusterbench import catalogue
    from clusterbench.run import private_dirs
    from clusterbench.conditions import journal
    from clusterbench.errors import BadInput

    for d in dirs:
        if not os.path.isdir(d):
            raise BadInput(f"clean: {d!r} is not a directory")
    # a directory is cbk's only if its name's kernel is one cbk has
    kernels = catalogue.load().kernels if dirs else {}
    for d in dirs:
        found = private_dirs.orphans(d, kernels)
        others = private_dirs.others_users(d, kernels)
        if not found:
            click.echo(f"no stale benchmark directory {'of yours ' if others else ''}in {os.fsdecode(d)!r}")
        if others:
            listed = ", ".join(f"{name} ({owner})" for name, owner in others)
            click.echo(f"left to their owners, other users' benchmark directories in {os.fsdecode(d)!r}: {listed}")
        for orphan in found:
            if dry_run:
                click.echo(f"would remove {orphan.describe()}")
                continue
            try:
                private_dirs.remove(orphan)
                click.echo(f"removed {orphan.describe()}")
            except OSError as e:
                raise BadInput(f"clean: cannot remove {os.fsdecode(orphan.path)!r}: {e.strerror}") from None
    # the group already replayed what it could; this reports what remains
    left = sorted(journal.state_dir().glob("*.json")) if journal.state_dir().is_dir() else []
    if not left:
        if not dirs:
            click.echo(f"nothing to restore ({journal.state_dir()})")
        return
    for path in left:
        click.echo(f"still to restore: {path} (its run is alive, another host's, or the restore failed above)")
