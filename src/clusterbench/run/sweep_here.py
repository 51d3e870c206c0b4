"""`python -m clusterbench.run.sweep_here DIR KERNEL...`: removes the private
directories that killed runs left in DIR on this host (private_dirs.sweep),
one line on stdout for each removed or not removable.

A cluster run starts it on every node before a per-node step that works in
a directory: a stamp can only be judged on the host it names (its pid and
boot id are that host's), so the launching host's own sweep left every
node's directories alone. A kill -9 of clusterbench on a real cluster (the
nodes' cbk cannot watch a process of another boot; their MPI runtime kills
them before they clean up) left seqio's 128 MiB file per node in --scratch,
and every later run in silence. Stdlib only, so it starts fast."""
from __future__ import annotations

import sys

from clusterbench.run import private_dirs


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print("usage: python -m clusterbench.run.sweep_here DIR KERNEL...", file=sys.stderr)
        return 2
    private_dirs.sweep(argv[0], set(argv[1:]), lambda line: print(line, flush=True))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
