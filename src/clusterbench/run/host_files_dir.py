"""The folder a run keeps its per-node host files in, under the system's
temporary directory, named by the process that made it
("clusterbench-hosts-HOST-PID-TICKS-XXXXXXXX", TICKS: its start in clock
ticks since boot), so that one a killed run left (-9: no `finally` ran) is
known as such and removed when the next one is made. Before, each run
cluster killed with -9 left its folder in /tmp for good. Another host's
(a container sharing /tmp, whose pids are not ours to look up) is left
alone."""
from __future__ import annotations

import contextlib
import os
import re
import shutil
import socket
import tempfile
from collections.abc import Iterator

from clusterbench.run import private_dirs

PREFIX = "clusterbench-hosts-"
_OWNED = re.compile(rf"^{PREFIX}(?P<host>.+)-(?P<pid>\d+)-(?P<ticks>\d+)-[^-]+$")


def _owner_gone(name: str) -> bool:
    m = _OWNED.match(name)
    return bool(m) and m["host"] == socket.gethostname() and private_dirs.start_ticks(int(m["pid"])) != int(m["ticks"])


def sweep(parent: str) -> None:
    """Removes the host-file folders in parent whose process is gone (only
    this user's: another's is never ours to judge)."""
    with contextlib.suppress(OSError), os.scandir(parent) as entries:
        for entry in entries:
            if entry.name.startswith(PREFIX) and entry.is_dir(follow_symlinks=False) \
                    and entry.stat(follow_symlinks=False).st_uid == os.geteuid() and _owner_gone(entry.name):
                shutil.rmtree(entry.path, ignore_errors=True)


@contextlib.contextmanager
def host_files_dir() -> Iterator[str]:
    """A fresh folder for this run's host files, removed when it ends; the
    folders killed runs left are removed first."""
    parent = tempfile.gettempdir()
    sweep(parent)
    me = os.getpid()
    owner = f"{socket.gethostname()}-{me}-{private_dirs.start_ticks(me) or 0}"
    with tempfile.TemporaryDirectory(prefix=f"{PREFIX}{owner}-") as folder:
        yield folder
