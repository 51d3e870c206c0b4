"""`clusterbench clean`: undo what runs that ended without cleaning up left
on this host: settings changed by --setting, memory cgroups of
--memory-limit (the journal in the user's state directory says which)."""
from __future__ import annotations

import click


@click.command("clean")
def command():
    """Restore the settings and remove the memory cgroups that runs killed
    with -9 (or crashed) left behind on this host. Every clusterbench
    command does this first; this one also says when there was nothing."""
    from clusterbench.conditions import journal

    # the group already replayed what it could; this reports what remains
    left = sorted(journal.state_dir().glob("*.json")) if journal.state_dir().is_dir() else []
    if not left:
        click.echo(f"nothing to restore ({journal.state_dir()})")
        return
    for path in left:
        click.echo(f"still to restore: {path} (its run is alive, another host's, or the restore failed above)")
