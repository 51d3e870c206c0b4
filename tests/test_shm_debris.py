"""MPI ranks killed with -9 leave their shared-memory segments in /dev/shm;
the suite removes, when it ends, those that appeared while it ran and no
live process uses (tests/shm_debris.py), and leaves the rest."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

import shm_debris
from test_private_dirs import descendants, wait_gone


def _wait_for(cond, timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if cond():
            return True
        time.sleep(0.05)
    return False


def _hydra_files_held(pids) -> set[str]:
    """The Hydra topology files one of pids holds open (a launch's proxy does)."""
    names = set()
    for pid in pids:
        try:
            for fd in os.listdir(f"/proc/{pid}/fd"):
                name = os.path.basename(os.readlink(f"/proc/{pid}/fd/{fd}"))
                if name.startswith(shm_debris.HYDRA_PREFIX):
                    names.add(name)
        except OSError:
            pass
    return names


def _aged(names: set[str]) -> None:
    old = time.time() - 10 * shm_debris.UNUSED_FOR_S
    for n in names:
        os.utime(shm_debris.SHM / n, (old, old))


def _mapped_by_tree(pid: int) -> set[str]:
    """The /dev/shm files that pid's descendants map, by name."""
    import psutil

    names = set()
    for p in psutil.Process(pid).children(recursive=True):
        try:
            names.update(Path(m.path).name for m in p.memory_maps(grouped=True) if m.path.startswith("/dev/shm/"))
        except psutil.Error:
            pass
    return names & shm_debris.mpi_files()


@pytest.mark.timeout(120)
def test_the_segments_of_ranks_killed_with_9_are_removed_and_a_mapped_one_is_kept(mpiexec, cbk_bin):
    before = shm_debris.mpi_files()
    ranks = subprocess.Popen([mpiexec, "-n", "2", cbk_bin, "mpi", "--op=pingpong", "--sizes=8", "--iterations=1000000",
                              "--repetitions=1000"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                             start_new_session=True)
    try:
        assert _wait_for(lambda: _mapped_by_tree(ranks.pid), 60), "the ranks mapped no segment in /dev/shm"
        ours = _mapped_by_tree(ranks.pid)
    finally:
        os.killpg(ranks.pid, signal.SIGKILL)
        ranks.wait()
    assert ours <= shm_debris.mpi_files(), "killed with -9, the ranks left no segment: nothing to remove"
    # a process beside the suite maps one more, named as MPICH names its segments: it is in use
    held = shm_debris.SHM / f"mpich_shm_cbtest{os.getpid():x}_0"
    held.write_bytes(b"\0" * 4096)
    holder = subprocess.Popen([sys.executable, "-c", "import mmap, sys; f = open(sys.argv[1], 'r+b'); "
                               "m = mmap.mmap(f.fileno(), 0); f.close(); print(flush=True); sys.stdin.read()",
                               str(held)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        holder.stdout.readline()
        _aged(ours | {held.name})
        files, size = shm_debris.remove_left(before)
        assert files >= len(ours) and size > 0   # a suite beside this one may have left some too
        assert not (shm_debris.mpi_files() & ours) and held.exists()
    finally:
        holder.communicate("")
        held.unlink()


@pytest.mark.timeout(30)
def test_a_segment_there_before_the_suite_or_just_made_is_left(tmp_path):
    there = shm_debris.SHM / f"mpich_shm_cbtestold{os.getpid():x}_0"
    fresh = shm_debris.SHM / f"mpich_shm_cbtestnew{os.getpid():x}_0"
    there.write_bytes(b"x")
    try:
        before = shm_debris.mpi_files()
        _aged({there.name})
        fresh.write_bytes(b"x")   # made a moment ago: a rank beside the suite may not have mapped it yet
        shm_debris.remove_left(before)
        assert there.exists() and fresh.exists()
    finally:
        there.unlink()
        fresh.unlink()


@pytest.mark.timeout(120)
def test_the_topology_file_of_an_mpiexec_killed_with_9_is_removed_and_a_fresh_one_is_left(mpiexec, cbk_bin,
                                                                                             monkeypatch):
    before = shm_debris.hydra_files()
    job = subprocess.Popen([mpiexec, "-n", "2", cbk_bin, "null", "--seconds=30", "--repetitions=1"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        # this launch's file, the one its proxy holds open: a launch of another worker's test makes one
        # beside it, and taking every new one took that live file for ours (a run of four workers)
        if not _wait_for(lambda: _hydra_files_held(set(descendants(job.pid))), 30):
            pytest.skip("this mpiexec writes no hwloc topology file (not MPICH's Hydra)")
        launch = descendants(job.pid)
        ours = _hydra_files_held(launch)
        assert ours, "the launch's proxy let go of its topology file as it was looked for"
        assert shm_debris.hydra_running()
    finally:
        os.killpg(job.pid, signal.SIGKILL)
        job.wait()
    # the proxy and ranks die a moment after mpiexec: until then the file is in use, and kept
    wait_gone(launch, 30)
    folder = Path(tempfile.gettempdir())
    assert ours <= shm_debris.hydra_files(), "killed with -9, mpiexec left no topology file: nothing to remove"
    fresh = folder / f"{shm_debris.HYDRA_PREFIX}cbtest{os.getpid():x}"
    fresh.write_text("<topology/>")   # a launch's, a moment old: its proxies may not have read it yet
    try:
        old = time.time() - 2 * shm_debris.HYDRA_UNUSED_FOR_S
        for n in ours:
            os.utime(folder / n, (old, old))
        monkeypatch.setattr(shm_debris, "hydra_running", lambda: True)   # a launch beside, whose file it may be
        assert shm_debris.remove_hydra_left(before) >= len(ours)
        assert not (shm_debris.hydra_files() & ours) and fresh.exists()
        # no Hydra left to read it: no one's. Every other file is taken as there before: a launch of
        # another worker's test may have written its own a moment ago, its proxy yet to read it
        monkeypatch.setattr(shm_debris, "hydra_running", lambda: False)
        assert shm_debris.remove_hydra_left(shm_debris.hydra_files() - {fresh.name}) == 1 and not fresh.exists()
    finally:
        fresh.unlink(missing_ok=True)
