"""A line of sh the test cluster's ssh stand-in runs before each command it
starts on a test host, for planting a fault on one host: a cbk of another
MPI or version bound over the real one in that host's mount namespace, a
sleep before it starts anything. Shared by the cluster tests that do it."""
from __future__ import annotations

import contextlib


@contextlib.contextmanager
def before_each_command(cluster, line: str):
    """The test cluster's ssh stand-in runs the sh line (its host in $h)
    before each command it starts, for the body of the with."""
    original = cluster.ssh.read_text()
    assert original.count("\nexec ") == 1   # the stand-in's one exec: spliced in before it, or the test tests nothing
    cluster.ssh.write_text(original.replace("\nexec ", f"\n{line}\nexec ", 1))
    try:
        yield
    finally:
        cluster.ssh.write_text(original)


def bind_over_cbk(host: str, program, cbk: str) -> str:
    """The line that binds program over cbk on host alone (its mount namespace is the command's own)."""
    return f'[ "$h" = {host} ] && set -- "mount --bind {program} {cbk} || exit 1; $*"'
