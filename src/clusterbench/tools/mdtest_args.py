"""Translate an mdtest command line (IOR 4.0's mdtest) into metadata parameters.

`translate(argv)` takes what a user pastes: an optional launcher prefix
(`mpiexec -n N`, read by ior_args), the program name, then mdtest's options.
It returns the metadata kernel's parameters (names and values as text), the
rank count, the repetitions, how the summary is printed (rate, time or
both), and notes on options that change nothing here. Every option mdtest
has that the kernel does not implement is refused, all of a line's at once,
each with its reason. Mapping and differences: docs/kernels/metadata.md.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

from clusterbench.errors import BadInput
from clusterbench.tools.ior_args import _launcher, size_read
from clusterbench.tools.option_tokens import Grammar, number, tokens

# mdtest 4.0's options (src/mdtest.c, mdtest_run's option table)
GRAMMAR = Grammar(
    short_values=frozenset("abdefGiIlnNpsVwWxz"),
    short_flags=frozenset("BCTErDFgkLPRSctuUvXyYZ"),
    long_values=frozenset({"random-seed", "dataPacketType", "run-cmd-before-phase", "run-cmd-after-phase",
                           "saveRankPerformanceDetails", "posix.rangelocks", "savePerOpDataCSV", "GPUid"}),
    long_flags=frozenset({"print-all-procs", "verify-read", "verify-write", "allocateBufferOnGPU", "warningAsErrors",
                          "showRankStatistics", "posix.odirect", "gpuDirect"}),
)
VALUE_PARAMS = {"-n": "items", "-I": "items-per-dir", "-z": "depth", "-b": "branching", "-N": "stride",
                "-i": "repetitions", "--random-seed": "seed"}
SIZE_PARAMS = {"-w": "write-bytes", "-e": "read-bytes"}
# -U: mdtest after 4.0 selects its directory-rename phase as -C selects create (4.0 ran it only in "all")
PHASE_FLAGS = {"-C": "create", "-T": "stat", "-E": "read", "-U": "rename", "-r": "remove"}
UNSUPPORTED = {
    "-S": "shared-file mode (-S: every rank creates the same file) is not implemented",
    "-c": "collective creates (-c: rank 0 creates every rank's items) are not implemented",
    "-k": "mknod creates (-k) are not implemented: files are created with open(O_CREAT)",
    "-B": "phases without barriers (-B) are not offered: the rate needs every rank to start together",
    "-W": "the stonewall timer (-W) is not implemented: every item is created",
    "-x": "stonewall status files (-x) are not implemented",
    "-X": "read verification (-X) is not implemented",
    "--verify-read": "read verification is not implemented",
    "--verify-write": "write verification is not implemented",
    "-f": "task-count sweeps (-f/-l/-s) are not implemented: give the ranks to the launcher (mpiexec -n N)",
    "-l": "task-count sweeps (-f/-l/-s) are not implemented: give the ranks to the launcher (mpiexec -n N)",
    "-s": "task-count sweeps (-f/-l/-s) are not implemented: give the ranks to the launcher (mpiexec -n N)",
    "-g": "Lustre directory layouts (-g) are not implemented",
    "--print-all-procs": "per-process figures are stored with the run (clusterbench show/export), not printed",
    "--saveRankPerformanceDetails": "per-rank CSV files are not written; export the run instead",
    "--showRankStatistics": "per-rank statistics columns are not printed "
                            "(rank_items_per_s_min/max are stored with the run)",
    "--run-cmd-before-phase": "commands around phases are not run",
    "--run-cmd-after-phase": "commands around phases are not run",
    "--allocateBufferOnGPU": "GPU buffers are not implemented",
    "--GPUid": "GPU buffers are not implemented",
    "--gpuDirect": "GPU buffers are not implemented",
    "--savePerOpDataCSV": "per-operation CSV files are not written; export the run instead",
    "--posix.odirect": "O_DIRECT for mdtest's file data is not implemented",
    "--posix.rangelocks": "range locks are not implemented",
}
IGNORED = {
    "-v": "verbosity changes nothing here",
    "-V": "verbosity changes nothing here",
    "-t": "no unique-directory chdir overhead exists here to time (paths are absolute)",
    "-G": "the data-buffer offset changes nothing measured",
    "--dataPacketType": "the data is cbk's incompressible pattern",
    "--warningAsErrors": "every failed operation is already an error here",
}
COUNT = re.compile(r"^\d+$")
SIZE = re.compile(r"^\d+[kKmMgGtT]?$")


@dataclass
class MdtestLine:
    params: dict[str, str]
    ranks: int | None = None
    ranks_per_node: int | None = None
    repetitions: int = 1
    show: tuple[str, ...] = ("rate",)    # summary tables: rate, time or both (-Z, -P)
    argv: list[str] = field(default_factory=list)  # the mdtest program and its options, as given
    path: str = "./out"                 # mdtest's -d, for its Path line
    notes: list[str] = field(default_factory=list)
    launcher: str | None = None         # "srun" for a line that starts with srun


def _dir_of(path: str, notes: list[str], here: bool) -> str:
    """mdtest -d names the directory it works in (and makes it); cbk works
    in a private directory under the nearest directory that exists. Not
    here (a line read from an imported file): the directory as given, the
    run's own, whatever this machine holds at that path."""
    if not here:
        return path.rstrip("/") or "/"
    if os.path.isdir(path):
        notes.append(f"-d {path}: items are made in a private directory under {path}")
        return path
    parent = os.path.dirname(path.rstrip("/")) or "."
    notes.append(f"-d {path}: items are made in a private directory under {parent}")
    return parent


def translate(argv: list[str], here: bool = True) -> MdtestLine:
    """here: the line is to run on this machine (clusterbench mdtest), so
    -d is looked up in its file system; False for a line an imported file
    holds, which ran elsewhere."""
    ranks, ppn, launcher, rest = _launcher(list(argv))
    program = "mdtest"
    if rest and os.path.basename(rest[0]).lower() == "mdtest":
        program, rest = rest[0], rest[1:]
    parsed = tokens(rest, GRAMMAR)
    problems = list(parsed.problems)
    params: dict[str, str] = {"items": "0"}
    notes: list[str] = []
    phases: list[str] = []
    files = dirs = False
    random_order = False
    negative_seed = None
    show = "rate"
    line = MdtestLine(params, ranks, ppn, argv=[program, *rest], launcher=launcher)
    for opt, value in parsed.options:
        if opt in UNSUPPORTED:
            problems.append(f"{opt}: {UNSUPPORTED[opt]}")
        elif opt in IGNORED:
            notes.append(f"{opt} ignored: {IGNORED[opt]}")
        elif opt == "--random-seed":
            read = number(value, "mdtest")
            if read.value is None:
                problems.append(f"{opt} {value}: " + (read.problem if read.problem != "not a number"
                                                      else "expected a whole number"))
            elif read.value < 0:
                negative_seed = value
            else:
                params["seed"] = str(read.value)
                random_order = random_order or read.value > 0   # mdtest: a seed alone makes stat and read random
        elif opt == "-p":
            # mdtest's pre-iteration delay, whole seconds as string_to_bytes reads them
            n = size_read(opt, value, "mdtest", problems, notes, "expected a delay in whole seconds (0, 1, 2, ...)", "s")
            if n:
                params["pre-delay"] = str(n)
        elif opt in VALUE_PARAMS:
            # string_to_bytes, as IOR's -b: -n 1k is 1024 (and -z 1k a depth of 1024)
            n = size_read(opt, value, "mdtest", problems, notes, "expected a count (0, 1, 2, ...)",
                          "items" if opt in ("-n", "-I") else "")
            if n is None:
                continue
            if opt == "-i":
                if n < 1:   # mdtest runs no iteration and prints a NaN summary; it ran one here
                    problems.append(f"-i {value}: expected a count of at least 1")
                line.repetitions = max(1, n)
            else:
                params[VALUE_PARAMS[opt]] = str(n)
        elif opt in SIZE_PARAMS:
            n = size_read(opt, value, "mdtest", problems, notes, "expected a byte count like 3901 or 4k")
            if n is not None:
                params[SIZE_PARAMS[opt]] = str(n) if not SIZE.match(value) else value.lower()
        elif opt in PHASE_FLAGS:
            phases.append(PHASE_FLAGS[opt])
        elif opt == "-a":
            if value.upper() != "POSIX":
                problems.append(f"-a {value}: the metadata kernel uses the POSIX API only")
        elif opt == "-d":
            if "@" in value:
                problems.append(f"-d {value}: several directories (dir1@dir2) are not implemented")
            else:
                params["dir"] = _dir_of(value, notes, here)
                line.path = value
        elif opt == "-F":
            files = True
        elif opt == "-D":
            dirs = True
        elif opt == "-u":
            params["unique-dir"] = "true"
        elif opt == "-L":
            params["leaf-only"] = "true"
        elif opt == "-R":
            random_order = True
        elif opt == "-y":
            params["fsync"] = "true"
        elif opt == "-Y":
            params["sync-phase"] = "true"
        elif opt == "-Z" and show != "both":   # -P wins wherever it is: mdtest prints both tables then
            show = "time"
        elif opt == "-P":
            show = "both"
    if negative_seed is not None:
        # mdtest orders a rank's stat and read at random where its seed is above 0, and -R adds the rank to it
        if random_order:
            problems.append(f"-R with --random-seed={negative_seed}: mdtest adds the rank to the seed and orders at "
                            f"random only where that is above 0, so its low ranks in order and the others at random, "
                            f"a mix the metadata kernel does not do; give a seed of 0 (a new one per run) or above")
        else:
            notes.append(f"--random-seed={negative_seed}: stat and read stay in order, as mdtest keeps them for a "
                         f"seed below 1 without -R")
    if problems:
        raise BadInput("mdtest line refused: " + "; ".join(problems))
    if files != dirs:
        params["kind"] = "files" if files else "dirs"
    if phases:
        params["phases"] = ",".join(dict.fromkeys(phases))
        if "create" not in phases:
            notes.append("no -C: the items are created first, untimed and unreported (cbk leaves nothing between runs)")
        if "remove" not in phases:
            notes.append("no -r: the items are removed at the end, untimed and unreported")
    if random_order:
        params["order"] = "random"
    if "dir" not in params:
        params["dir"] = "."
        notes.append("no -d: items are made in a private directory under the current directory")
    line.show = ("rate", "time") if show == "both" else (show,)
    line.notes = notes
    return line
