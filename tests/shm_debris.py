"""The shared-memory files MPI ranks killed with -9 leave in /dev/shm,
removed when the suite ends.

MPICH (mpich_shm_*, mpich_vci_*, mpich_shar_tmp*), Open MPI (sm_segment.*,
vader_segment.*) and UCX (ucx_shm_posix_*) unlink their segments in
MPI_Finalize or on SIGINT/SIGTERM; a rank killed with -9 cannot. The tests
that kill a run with -9 left about 50 such files, 100 MiB of memory, per
suite, and nothing ever reclaims them: 5.6 GiB had piled up on a developer
VM (2026-12-07).

Only what appeared while this suite ran is touched, and of that only a file
no live process has mapped or open, and that has stood unused a while (a
rank of a suite running beside this one opens and maps its segment within
microseconds of creating it). What was there before the suite is left.

MPICH's mpiexec (Hydra) killed with -9 leaves, alike, the hwloc topology it
wrote for its proxies, /tmp/hydra_hwloc_xmlfile_* (30-50 a suite, 8 KiB
each); it removes it at its exit. A proxy reads it once, at its start: one
of those the suite's run left that no process holds open and that is a
minute old is no launch's any more; nor is a younger one when no Hydra
process lives on the machine (those of the suite's last minute were left,
one or two a run).
"""
from __future__ import annotations

import os
import stat
import tempfile
import time
from pathlib import Path

SHM = Path("/dev/shm")
MPI_PREFIXES = ("mpich_shm_", "mpich_vci_", "mpich_shar_tmp", "sm_segment.", "vader_segment.", "ucx_shm_posix_")
UNUSED_FOR_S = 2.0


def mpi_files() -> set[str]:
    try:
        return {n for n in os.listdir(SHM) if n.startswith(MPI_PREFIXES)}
    except OSError:
        return set()


def _in_use(folder: Path = SHM) -> set[str]:
    """The paths in folder that some live process maps or holds open."""
    used: set[str] = set()
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/maps") as maps:
                used.update(line.split(None, 5)[5].strip() for line in maps if f" {folder}/" in line)
        except (OSError, IndexError):
            pass
        try:
            for fd in os.listdir(f"/proc/{pid}/fd"):
                target = os.readlink(f"/proc/{pid}/fd/{fd}")
                if target.startswith(f"{folder}/"):
                    used.add(target)
        except OSError:
            pass
    return used


def remove_left(before: set[str]) -> tuple[int, int]:
    """Removes the MPI files that appeared since `before` was taken and that
    no process uses. Returns (files, bytes) removed."""
    new = mpi_files() - before
    if not new:
        return 0, 0
    used = _in_use()
    now = time.time()
    files = size = 0
    for name in sorted(new):
        path = SHM / name
        try:
            st = path.lstat()
        except OSError:
            continue
        if str(path) in used or now - st.st_mtime < UNUSED_FOR_S or not stat.S_ISREG(st.st_mode):
            continue
        try:
            path.unlink()
        except OSError:
            continue
        files, size = files + 1, size + st.st_size
    return files, size


HYDRA_PREFIX = "hydra_hwloc_xmlfile_"
HYDRA_UNUSED_FOR_S = 60.0
# a process that may yet hand a proxy its topology file (Open MPI's mpiexec counted too: the same name)
HYDRA_PROCESSES = ("mpiexec", "mpiexec.hydra", "mpirun", "hydra_pmi_proxy")


def hydra_running() -> bool:
    """Whether a Hydra launch (mpiexec or its proxy) of anyone's lives on this machine."""
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            if Path(f"/proc/{pid}/comm").read_text().strip() in HYDRA_PROCESSES:
                return True
        except OSError:
            continue
    return False


def hydra_files() -> set[str]:
    try:
        return {n for n in os.listdir(tempfile.gettempdir()) if n.startswith(HYDRA_PREFIX)}
    except OSError:
        return set()


def remove_hydra_left(before: set[str]) -> int:
    """Removes Hydra's topology files that appeared since `before` was taken
    and no process holds open, and are a minute old or no Hydra process is
    alive to want them. Returns how many."""
    new = hydra_files() - before
    if not new:
        return 0
    folder = Path(tempfile.gettempdir())
    used = _in_use(folder)
    young_kept = hydra_running()
    now, removed = time.time(), 0
    for name in new:
        path = folder / name
        try:
            st = path.lstat()
            young = now - st.st_mtime < HYDRA_UNUSED_FOR_S
            if str(path) in used or (young and young_kept) or not stat.S_ISREG(st.st_mode):
                continue
            path.unlink()
        except OSError:
            continue
        removed += 1
    return removed
