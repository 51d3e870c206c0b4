"""mdtest's text output from a stored metadata run, as mdtest 4.0 prints it.

The layout is mdtest's (src/mdtest.c, summarize_results_rank0): the
banner, the `SUMMARY rate:` table with one row per operation in mdtest's
order (Max, Min, Mean over the iterations of each iteration's rate, and
the sample standard deviation), then Tree creation and Tree removal. An
iteration's rate is all ranks' items over (latest end - earliest start),
which the kernel records as `rate`; `-Z` prints the same table of
seconds. Pure: samples in, lines out.
"""
from __future__ import annotations

import math
import os
import time

from clusterbench.results.sample import Sample

# mdtest's rows (its enum order; "Directory read" is never printed)
DIR_ROWS = [("dir-create", "Directory creation"), ("dir-stat", "Directory stat"),
            ("dir-rename", "Directory rename"), ("dir-remove", "Directory removal")]
FILE_ROWS = [("file-create", "File creation"), ("file-stat", "File stat"), ("file-read", "File read"),
             ("file-remove", "File removal")]
READ_WARNING = "WARNING: Read bytes is 0, thus, a read test will actually just open/close"
TREE_ROWS = [("tree-create", "Tree creation"), ("tree-remove", "Tree removal")]


def _stats(values: list[float]) -> tuple[float, float, float, float]:
    """Max, min, mean and mdtest's standard deviation (sample: n - 1; 0 for one)."""
    if not values:
        return 0.0, 0.0, 0.0, 0.0
    mean = sum(values) / len(values)
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (len(values) - 1)) if len(values) > 1 else 0.0
    return max(values), min(values), mean, sd


def _figures(samples: list[Sample], phase: str, what: str) -> list[float]:
    return [s.seconds if what == "time" else s.value for s in samples if s.phase == phase]


def summary_lines(samples: list[Sample], kind: str, repetitions: int, what: str = "rate") -> list[str]:
    """The SUMMARY table; `samples` are the measurements of one run."""
    rows = (DIR_ROWS if kind != "files" else []) + (FILE_ROWS if kind != "dirs" else [])
    out = [f"SUMMARY {what}: (of {repetitions} iterations)",
           "   Operation                     Max            Min           Mean        Std Dev",
           "   ---------                     ---            ---           ----        -------"]
    for phase, name in rows:
        mx, mn, mean, sd = _stats(_figures(samples, phase, what))
        out.append(f"   {name:<18s}     {mx:14.3f} {mn:14.3f} {mean:14.3f} {sd:14.3f}")
    for phase, name in TREE_ROWS:
        mx, mn, mean, sd = _stats(_figures(samples, phase, what))
        out.append(f"   {name:<22s} {mx:14.3f} {mn:14.3f} {mean:14.3f} {sd:14.3f}")
    return out


def _stamp(t: float) -> str:
    return time.strftime("%m/%d/%Y %H:%M:%S", time.localtime(t))


def filesystem_lines(path: str) -> list[str]:
    """mdtest's Path/FS lines (IOR's ShowFileSystemSize)."""
    try:
        st = os.statvfs(path)
    except OSError:
        return []
    total = st.f_blocks * st.f_frsize
    free = st.f_bfree * st.f_frsize
    size, unit = total / 2**30, "GiB"
    if size > 1024:
        size, unit = total / 2**40, "TiB"
    used = (1 - free / total) * 100 if total else 0.0
    inodes_used = (1 - st.f_ffree / st.f_files) * 100 if st.f_files else 0.0
    return [f"{'Path':<20s}: {path}",
            f"{'FS':<20s}: {size:.1f} {unit}   Used FS: {used:2.1f}%   "
            f"Inodes: {st.f_files / 2**20:.1f} Mi   Used Inodes: {inodes_used:2.1f}%"]


def command_line(argv: list[str]) -> str:
    """mdtest's echo of its command line: the program, then each word in quotes."""
    return argv[0] + "".join(f" '{a}'" for a in argv[1:])


def nodemap_line(hosts: list[str]) -> str:
    """1 for every rank on rank 0's host, 0 elsewhere (IOR's QueryNodeMapping)."""
    return "Nodemap: " + "".join("1" if h == hosts[0] else "0" for h in hosts)


def banner_lines(argv: list[str], ranks: int, hosts: list[str], path: str, statfs_path: str, started: float,
                 read_without_bytes: bool) -> list[str]:
    """`path` is mdtest's -d as given; `statfs_path` the directory that exists."""
    nodes = len(set(hosts)) or 1
    fs = filesystem_lines(statfs_path)
    if fs:
        fs[0] = f"{'Path':<20s}: {path}"
    return [f"-- started at {_stamp(started)} --", "",
            f"mdtest-4.0.0 was launched with {ranks} total task(s) on {nodes} node(s)",
            f"Command line used: {command_line(argv)}",
            *([READ_WARNING] if read_without_bytes else []),
            *fs, *([nodemap_line(hosts)] if hosts else [])]


def items_line(ranks: int, items_per_rank: int, kind: str) -> str:
    noun = {"files": "files", "dirs": "directories"}.get(kind, "files/directories")
    return f"{ranks} tasks, {ranks * items_per_rank} {noun}"


def finished_line(finished: float) -> str:
    return f"-- finished at {_stamp(finished)} --"
