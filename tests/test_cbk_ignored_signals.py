"""cbk leaves SIGHUP and SIGQUIT ignored when it was started with them
ignored (nohup; a shell's background job without job control), as POSIX
utilities do, and takes them as a stop otherwise. SIGINT is always taken:
it is how clusterbench stops a launch, whatever its own start ignored
(test_private_dirs.py::test_a_stop_signal_that_reaches_only_cbk_is_stored_interrupted)."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import time

import psutil
import pytest


def handlers_installed(pid: int) -> bool:
    """Whether cbk has installed its handlers (SIGINT, always taken, is caught)."""
    try:
        with open(f"/proc/{pid}/status") as f:
            caught = int(next(line for line in f if line.startswith("SigCgt:")).split()[1], 16)
    except (OSError, StopIteration):
        return False
    return bool(caught & (1 << (signal.SIGINT - 1)))


def signalled_run(argv: list[str], sig: signal.Signals, ignored: bool, ranks: int = 1) -> subprocess.CompletedProcess:
    """cbk (or a launch of `ranks` of it) started with sig ignored or at its
    default; sig sent to every cbk once each has its handlers; the outcome."""
    def start_state() -> None:
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        signal.signal(sig, signal.SIG_IGN if ignored else signal.SIG_DFL)

    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         start_new_session=True, preexec_fn=start_state)
    try:
        deadline = time.monotonic() + 60
        launch = psutil.Process(p.pid)
        ready: list[psutil.Process] = []
        while len(ready) < ranks:
            assert p.poll() is None, p.communicate()
            assert time.monotonic() < deadline, "cbk did not start within 60 s"
            found = [launch] if launch.name() == "cbk" else \
                [c for c in launch.children(recursive=True) if c.name() == "cbk"]
            ready = [r for r in found if handlers_installed(r.pid)]
            time.sleep(0.01)
        for rank in ready:
            os.kill(rank.pid, sig)
        out, err = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
    return subprocess.CompletedProcess(argv, p.returncode, out, err)


def stopped_by(err: str) -> list[str]:
    return [json.loads(line)["signal"] for line in err.splitlines() if '"type":"stopped"' in line]


@pytest.mark.timeout(120)
@pytest.mark.parametrize("sig", [signal.SIGHUP, signal.SIGQUIT], ids=["SIGHUP", "SIGQUIT"])
def test_a_signal_ignored_at_start_stays_ignored_and_one_not_ignored_stops_cbk(cbk_bin, sig):
    """Under nohup cbk took SIGHUP back as a stop: a hangup ended it (and,
    through it, the measurement) although whoever started it asked for
    hangups to be ignored. With an MPI library that loads UCX the check
    has to read the start's disposition before UCX's constructor, which
    takes SIGHUP for its debug signal."""
    argv = [cbk_bin, "null", "--seconds=1.5"]
    kept = signalled_run(argv, sig, ignored=True)
    assert kept.returncode == 0 and stopped_by(kept.stderr) == [], kept.stderr
    assert any(json.loads(line).get("type") == "measurement" for line in kept.stdout.splitlines()), kept.stdout
    taken = signalled_run(argv, sig, ignored=False)
    assert taken.returncode == -sig and stopped_by(taken.stderr) == [sig.name], taken.stderr


@pytest.mark.timeout(120)
def test_the_ranks_of_a_hydra_launch_started_under_nohup_keep_sighup_ignored(cbk_bin, mpiexec):
    """Hydra passes an ignored SIGHUP on to its ranks (Open MPI's prterun
    does not: its ranks start with SIGHUP at its default, and take it)."""
    r = signalled_run([mpiexec, "-n", "2", cbk_bin, "null", "--seconds=1.5"], signal.SIGHUP, ignored=True,
                      ranks=2)
    assert r.returncode == 0 and stopped_by(r.stderr) == [], r.stderr
