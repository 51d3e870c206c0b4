"""`python -m clusterbench.conditions.cgexec --memory-limit BYTES --cgroup NAME -- cbk ...`

What each rank runs under --memory-limit: on its own host it creates (or
joins) the memory cgroup NAME capped at BYTES, starts the command inside
it, stays outside itself (so its own memory is not charged), passes stop
signals on, and when the command ends removes the cgroup if it is the last
one out. The one that removes it prints a `memory-cgroup` record with the
host's peak, which the runner stores with the step.

A launcher starts this per rank exactly as it would start cbk, so the cap
holds on every host of an MPI or batch-system launch. Stdlib only.
"""
from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import subprocess
import sys

from clusterbench.conditions import cgroup

SCHEMA = 1  # cbk's record schema (catalogue.SCHEMA); not imported: this runs on every rank
FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1, signal.SIGUSR2,
             signal.SIGXCPU)
CREATE_TRIES = 5  # another rank may remove the cgroup between our mkdir and our join


def _error(message: str) -> int:
    sys.stderr.write(json.dumps({"schema": SCHEMA, "type": "error", "message": message}) + "\n")
    sys.stderr.flush()
    return 2


def _start(h: cgroup.Hierarchy, name: str, limit: int, argv: list[str]) -> tuple[subprocess.Popen, object]:
    for _ in range(CREATE_TRIES):
        path = cgroup.create(h, name, limit)
        try:
            # preexec_fn is safe here: this process has one thread. The kernel inherits every
            # descriptor, as if started directly: MPI process managers pass PMI_FD and the like.
            return subprocess.Popen(argv, preexec_fn=lambda: cgroup.join_self(path), close_fds=False), path
        except subprocess.SubprocessError:
            continue  # the cgroup vanished under us (the last rank of a previous launch removed it)
    raise cgroup.CgroupUnavailable(f"cannot move the kernel into the cgroup {h.parent / name}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m clusterbench.conditions.cgexec")
    ap.add_argument("--memory-limit", type=int, required=True, metavar="BYTES")
    ap.add_argument("--cgroup", required=True, metavar="NAME")
    ap.add_argument("command", nargs=argparse.REMAINDER)
    args = ap.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command or "/" in args.cgroup:
        return _error("cgexec: give --cgroup NAME (no slash) and a command after --")
    host = socket.gethostname()
    try:
        h = cgroup.find()
        why = cgroup.caps_nothing(args.memory_limit, h=h)
        if why:
            return _error(f"host {host}: --memory-limit {args.memory_limit // 2**20} MiB: {why}")
        child, path = _start(h, args.cgroup, args.memory_limit, command)
    except cgroup.CgroupUnavailable as e:
        return _error(f"host {host}: {e}")
    except OSError as e:
        return _error(f"host {host}: cannot start {command[0]}: {e.strerror or e}")
    for sig in FORWARDED:
        signal.signal(sig, lambda s, _f: child.send_signal(s))
    status = child.wait()
    peak, ooms = cgroup.peak_bytes(h, path), cgroup.oom_kills(h, path)
    last = cgroup.remove(path)
    if ooms:
        _error(f"host {host}: the out-of-memory killer ended {ooms} process(es) in the memory cgroup: "
               f"--memory-limit {args.memory_limit // 2**20} MiB is too small for the kernel's own memory")
    if last:
        rec = {"schema": SCHEMA, "type": "memory-cgroup", "host": host, "cgroup": h.describe(),
               "memory_limit_bytes": args.memory_limit, "memory_peak_bytes": peak, "oom_kills": ooms}
        try:
            sys.stdout.write(json.dumps(rec) + "\n")
            sys.stdout.flush()
        except OSError:  # the runner is gone (kill -9); the cgroup is removed all the same
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 128 - status if status < 0 else status


if __name__ == "__main__":
    sys.exit(main())
