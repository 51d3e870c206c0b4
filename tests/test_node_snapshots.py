"""The per-node environment snapshots of `run --hostfile` (run/runner.collect_all):
launched at once, waited for together."""
from __future__ import annotations

import os
import sys
import time

from clusterbench.run.runner import collect_all


def test_hung_nodes_cost_one_timeout_together_not_one_each_and_are_stopped(tmp_path):
    """Each launch was waited for with its own 120 s from when its turn came: four hung
    nodes held a run 8 minutes before its first step. The timeout is for all of them."""
    pids = tmp_path / "pids"
    # a collector stuck on a command: it takes the stop's SIGINT as a node's collector does (a suite
    # started in the background has SIGINT ignored, which sh cannot undo: then the stop's grace ran out)
    hung = [sys.executable, "-c", "import os, signal, time; signal.signal(signal.SIGINT, signal.SIG_DFL); "
                                  f"open({str(pids)!r}, 'a').write(f'{{os.getpid()}}\\n'); time.sleep(600)"]
    answers = ["sh", "-c", 'echo \'{"host": "h01", "cpu.model": "x"}\'']
    # a node's snapshot larger than a pipe holds (64 KiB) is read while the others run
    large = [sys.executable, "-c", 'import json; print(json.dumps({"host": "h02", "dmesg": "x" * 300_000}))']
    start = time.monotonic()
    found = collect_all([hung, answers, hung, large, hung, hung], timeout=2)
    took = time.monotonic() - start
    assert found == [{"host": "h01", "cpu.model": "x"}, {"host": "h02", "dmesg": "x" * 300_000}]
    assert took < 7, f"{took:.1f} s: the launches were given 2 s each in turn (10 s), not 2 s together"
    for pid in map(int, pids.read_text().split()):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            continue
        # reaped by collect_all's stop; a zombie would still answer kill 0 only if never waited for
        raise AssertionError(f"hung launch {pid} still running after the timeout")
