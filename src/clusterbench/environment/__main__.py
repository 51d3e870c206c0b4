"""`python -m clusterbench.environment [--target DIR ...]`: this host's
snapshot as JSON on stdout. The launcher starts one per node to capture
compute nodes; stdlib only, so it starts fast and needs nothing extra."""
from __future__ import annotations

import argparse
import json
import signal
import sys

from clusterbench.environment import collect, snapshot_hash, summary_block

# What stops a node's collector: its launcher passes the run's stop on as
# SIGINT (Hydra, srun) or SIGTERM (srun, a batch system); SIGHUP, a closed terminal
STOPS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def _stop(signum, _frame):
    """The first stop ends the capture (collect ends its commands); later
    ones are dropped. Hydra passes on the SIGINT its process tree had
    already: raised again, it cut short the capture's wait for its topics,
    and the collector exited with the command it had started still
    running (SIGTERM, by default, ended it at once, command left alike).
    What is left is bounded (environment.STOPPED_TOPICS_WAIT_S)."""
    for sig in STOPS:
        if signal.getsignal(sig) is _stop:
            signal.signal(sig, lambda *_: None)
    raise KeyboardInterrupt(signal.Signals(signum).name)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m clusterbench.environment",
                                 description="Print this host's environment snapshot as JSON.")
    ap.add_argument("--target", action="append", default=[], metavar="DIR",
                    help="also describe the file system and devices of this directory (repeatable)")
    ap.add_argument("--root", default="/", help="read /proc, /sys and /etc under this directory (fixture trees)")
    ap.add_argument("--no-commands", action="store_true", help="do not run mpiexec, cc, dmidecode, nvidia-smi, ...")
    ap.add_argument("--busy", action="store_true",
                    help="also name the processes keeping a CPU busy beside the capture (half a second of sampling)")
    ap.add_argument("--summary", action="store_true", help="print the report's environment block instead of JSON")
    ap.add_argument("--line", action="store_true",
                    help="JSON on one line (one line per node when several nodes print at once)")
    args = ap.parse_args(argv)
    for sig in STOPS:
        if signal.getsignal(sig) is not signal.SIG_IGN:   # one ignored at start stays so (nohup)
            signal.signal(sig, _stop)
    try:
        env = collect(args.target, root=args.root, run_commands=not args.no_commands, sample_processes=args.busy)
    except KeyboardInterrupt as stop:
        name = stop.args[0] if stop.args else "SIGINT"
        print(f"python -m clusterbench.environment: interrupted by {name}", file=sys.stderr)
        return 128 + signal.Signals[name].value
    if args.summary:
        width = max(len(k) for k, _ in summary_block(env))
        for k, v in summary_block(env):
            print(f"{k:<{width}}  {v}")
        print(f"{'Snapshot':<{width}}  {snapshot_hash(env)[:16]}")
    else:
        json.dump(env, sys.stdout, indent=None if args.line else 1, sort_keys=True, default=str)
        sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
