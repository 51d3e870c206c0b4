"""RIKEN's Himeno benchmark, its text output: the dynamic-array C version
himenoBMTxpa (`mimax = 128 ...`, `MFLOPS measured : ...<tab>cpu : ...`,
`Score based on Pentium III 600MHz using Fortran 77`), the static serial C
version (the same lines, its score line without "using Fortran 77"), the
C+MPI versions with static or dynamic arrays (`Sequential version array
size`, `I-decomp = 1 J-decomp = 1 K-decomp =2`, `cpu : ... sec.`) and the
Fortran 77 and 90 versions, serial, and 90 with MPI (list-directed:
`mimax=   65`, `MFLOPS:  ...  time(s):  ...`, their axes C's reversed;
Fortran 90 says its clock's tick, `Time measurement accuracy`, 77 does not).

Every version runs the same Jacobi sweeps of the same problem as the
himeno kernel's `--mode=time` (3 timed sweeps, then as many as fit the
target), so a run is a himeno step of its grid: phase jacobi, qualifier
run_length "time", MFLOPS counted as the kernel counts them (34 flops per
interior point, (I-2)(J-2)(K-2) points). The static versions, the MPI and
the Fortran ones count so; himenoBMTxpa updates the same points but counts
(I-3)(J-3)(K-3) of them (`fflop(imax, ...)` with imax = mimax - 1 on its
grid of mimax points): its figure is scaled to the kernel's count and
kept as printed in `mflops_reference_count`, the name the kernel's
record gives that count. docs/import.md, "How they map to the kernels".
"""
from __future__ import annotations

import math
import re

from clusterbench.importers import ImportedRun, ImportedStep, Unreadable, invocations, measurement

NUMBER = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"
# the figure of a loop timed at 0 s: C's printf writes inf (or -nan), taken as not finite (import_runs' note)
FIGURE = rf"(?:{NUMBER}|[-+]?(?:inf|nan))"
# The first line each version prints: the C+MPI versions' heading at the start of a line (their mimax
# lines are indented), Fortran+MPI's a space in (its array lines under its headings open no run), the
# serial C versions' array line, the serial Fortran one's list-directed ("  mimax=          65  mjmax=
# ..."). Asked for the size, himenoBMTxpa and the Fortran versions print a "For example:" list and a
# prompt first, himenoBMTxp.f90 "Select Grid-size:": the lead, moved into the run it opens.
BANNER = re.compile(r"^(?:Sequential version array size|mimax = \d+ mjmax = \d+ mkmax = \d+"
                    r"| Sequential version array size"
                    r"|(?<!Sequential version array size\n)(?<!Parallel version  array size\n)"
                    r" +mimax= +\d+ +mjmax= +\d+ +mkmax= +\d+)[ \t]*$", re.M)
MARK = BANNER   # where a Himeno run starts, anywhere in a file (importers.other_tools_in)
PROMPT = re.compile(r"^(?: ?For example: *| Select Grid-size:)$", re.M)
ARRAYS = re.compile(r"^[ \t]*mimax ?= +(\d+) +mjmax ?= +(\d+) +mkmax ?= +(\d+)[ \t]*$", re.M)
LOCAL = re.compile(r"^[ \t]*imax ?= +(\d+) +jmax ?= +(\d+) +kmax ?= *(\d+)[ \t]*$", re.M)
DECOMPOSITION = re.compile(r"^[ \t]*I-decomp ?= +(\d+) +J-decomp ?= +(\d+) +K-decomp ?= *(\d+)[ \t]*$", re.M)
REHEARSAL = re.compile(rf"^[ \t]*MFLOPS: +({NUMBER}) +time\(s\): +({NUMBER}) +({NUMBER})[ \t]*$", re.M)
LOOPS = re.compile(r"^[ \t]*Loop executed for +(\d+) +times[ \t]*$", re.M)
GOSA = re.compile(rf"^[ \t]*Gosa : +({NUMBER})[ \t]*$", re.M)
MPI_CPU = re.compile(rf"^[ \t]*cpu : ({NUMBER}) sec\.[ \t]*$", re.M)
MEASURED = re.compile(rf"^[ \t]*MFLOPS measured : ({FIGURE})(?:\s+cpu : ({NUMBER}))?[ \t]*$", re.M)
# the Fortran versions print their figure as their rehearsal's, without the Gosa
FORTRAN_MEASURED = re.compile(rf"^[ \t]*MFLOPS: +({NUMBER}) +time\(s\): +({NUMBER})[ \t]*$", re.M)
# himenoBMTxp.f90 says its clock's tick (system_clock); RIKEN's Fortran 77 versions, timed by dtime, do not
F90_ACCURACY = re.compile(r"^[ \t]*Time measurement accuracy :", re.M)
SCORE = re.compile(rf"^[ \t]*Score based on Pentium III 600MHz( using Fortran 77)? ?: ({NUMBER})", re.M)
# RIKEN's sizes (paramset.sh, himenoBMTxpa's set_param), points per axis as the kernel's --size names them
SIZES = {(32, 32, 64): "XS", (64, 64, 128): "S", (128, 128, 256): "M", (256, 256, 512): "L", (512, 512, 1024): "XL"}
FLOPS_PER_POINT = 34
REFERENCE_TARGET_S = 60.0   # every version's `target = 60.0`: "This will take about one minute."


def detect(text: str) -> bool:
    # 64 KiB: a job's log may hold its script's echo and module loads first
    return bool(BANNER.search(text[:65536]))


def parse(text: str) -> list[ImportedRun]:
    return invocations.text_runs(text, BANNER, _run, "no Himeno array line (\"mimax = 128 mjmax = 128 mkmax = 256\")",
                                 lead=PROMPT)


def _run(text: str, first_line: int) -> ImportedRun:
    banner = BANNER.search(text)
    if not banner:   # the array line itself was the line cut short
        raise Unreadable("no Himeno array line (\"mimax = 128 mjmax = 128 mkmax = 256\")")
    mpi = banner.group(0).lstrip().startswith("Sequential version array size")
    arrays = ARRAYS.search(text)
    fortran = bool(arrays) and "mimax=" in arrays.group(0)   # list-directed: "mimax=" and its figure apart
    rehearsal = REHEARSAL.search(text)
    measured = (FORTRAN_MEASURED if fortran else MEASURED).search(text, rehearsal.end() if rehearsal else 0)
    loops = LOOPS.search(text)
    if not (measured and loops and rehearsal):
        raise Unreadable("the run ends before its results (no 'Loop executed for N times' and 'MFLOPS measured' "
                         "lines): cut short, or killed?")
    iterations = int(loops.group(1))
    if iterations == 0:
        raise Unreadable(f"line {invocations.line_of(text, loops.start(), first_line)}: the loop was executed 0 "
                         "times (its 3 rehearsal sweeps took longer than 3 times the target): no measurement")
    if float(rehearsal.group(3)) == 0:
        # from Himeno's initial state the residual of 3 sweeps is never 0 (XS: 6.227474e-03): the sweeps
        # did not run Himeno's problem, as a STREAM whose check failed did not run its arithmetic
        raise Unreadable(f"line {invocations.line_of(text, rehearsal.start(), first_line)}: Gosa 0 after the 3 "
                         "rehearsal sweeps: the program did not solve Himeno's problem (its residual is never 0 "
                         "there); not taken")
    version, grid, ranks, decomposition = _program(text, mpi, fortran)
    target_s, target_note = _target(iterations, float(rehearsal.group(2)))
    size = SIZES.get(grid)
    grid_text = "x".join(map(str, grid))
    params = {"size": size} if size else {"grid": grid_text}
    params.update({"mode": "time", "seconds": target_s})
    if ranks > 1:
        params["decomposition"] = decomposition
    cpu = MPI_CPU.search(text) if mpi else None
    seconds = float(cpu.group(1)) if cpu else float(measured.group(2)) if measured.group(2) else None
    if fortran and seconds == 0:
        # the Fortran versions compute MFLOPS only `if(cpu /= 0.0)`: at 0 s they print the rehearsal's again
        raise Unreadable(f"line {invocations.line_of(text, measured.start(), first_line)}: the loop took 0 s on "
                         "its clock (under one tick): its MFLOPS is the rehearsal's, printed again; no measurement")
    gosa = GOSA.search(text, rehearsal.end())
    sample = _sample(float(measured.group(1)), grid, version, line=invocations.line_of(text, measured.start(),
                                                                                        first_line),
                     seconds=seconds, iterations=iterations, ops=iterations,
                     gosa=float(gosa.group(1)) if gosa else None, grid=grid_text, size=size,
                     decomposition=decomposition, calibration_seconds=float(rehearsal.group(2)),
                     calibration_mflops=float(rehearsal.group(1)), calibration_gosa=float(rehearsal.group(3)),
                     target_seconds=float(target_s))
    step = ImportedStep(f"Himeno {size or grid_text}" + (f" {decomposition}" if ranks > 1 else ""), "himeno",
                        params, ranks, samples=[sample])
    run = ImportedRun("Himeno", version, "text", None, steps=[step])
    rec = sample.record
    if "mflops_reference_count" in rec:
        run.notes.append(f"himenoBMTxpa counts 34 flops on {rec['reference_points']:,} points, not the "
                         f"{rec['points']:,} it updates: its {rec['mflops_reference_count']:.6f} MFLOPS is "
                         f"{sample.value:.6f} as the himeno kernel counts them")
    if target_note:
        run.notes.append(target_note)
    if version == "Fortran 77":
        run.notes.append("Fortran 77 times its loop with dtime: the process's CPU time (user and system), not "
                         "the wall time the other versions and the himeno kernel take")
    return run


def _sample(printed_mflops: float, axes: tuple[int, int, int], version: str, **fields):
    """The jacobi sample in the kernel's count: 34 flops on each interior point a sweep updates,
    (I-2)(J-2)(K-2); himenoBMTxpa's figure counts (I-3)(J-3)(K-3) and is scaled, kept as printed."""
    points = math.prod(m - 2 for m in axes)
    counted = math.prod(m - 3 for m in axes) if version == "himenoBMTxpa" else points
    printed = {"mflops_reference_count" if counted != points else "mflops_printed": printed_mflops}
    return measurement("jacobi", "n/a", printed_mflops * points / counted, "MFLOPS",
                       qualifiers={"run_length": "time"}, points=points, reference_points=counted,
                       flop_count=f"{FLOPS_PER_POINT} per interior point per sweep, interior = (I-2)(J-2)(K-2) "
                                  "points", **printed, **fields)


def _program(text: str, mpi: bool, fortran: bool) -> tuple[str, tuple[int, int, int], int, str]:
    """(the version, the grid in points per axis as the kernel names it, ranks, decomposition)."""
    arrays = ARRAYS.search(text)
    local = LOCAL.search(text)
    if not arrays or not local:
        raise Unreadable("no 'mimax = ... mkmax = ...' and 'imax = ... kmax = ...' lines: the grid is unknown")
    printed = tuple(int(x) for x in arrays.groups())
    # Fortran's first index is C's last: mimax= 65 is the long axis of XS (64x32x32 in its words), and
    # its decomposition's I-decomp splits that axis; its arrays hold one point more per axis, as the
    # static C version's
    in_kernel_order = (lambda axes: tuple(reversed(axes))) if fortran else tuple
    if fortran and not mpi:
        version = "Fortran 90" if F90_ACCURACY.search(text) else "Fortran 77"
        return version, in_kernel_order([m - 1 for m in printed]), 1, "1x1x1"
    if not mpi:
        score = SCORE.search(text)
        # himenoBMTxpa allocates its grid (mimax = 128 for M) and says it in its score line; the static
        # version allocates one point more per axis (mimax = 129, imax = 128: the grid)
        dynamic = bool(score.group(1)) if score else printed in SIZES
        grid = printed if dynamic else tuple(m - 1 for m in printed)
        return ("himenoBMTxpa" if dynamic else "himenoBMTxps"), grid, 1, "1x1x1"
    parts_of = DECOMPOSITION.search(text)
    if not parts_of:
        raise Unreadable("no 'I-decomp = ... K-decomp = ...' line: the MPI version's ranks are unknown")
    parts = tuple(int(x) for x in parts_of.groups())
    if 0 in parts:
        raise Unreadable("a decomposition of 0 parts along an axis: not one Himeno prints")
    block = tuple(int(x) for x in local.groups())
    # "Sequential version array size" prints MX0 (grid + 1) in the static version and the grid itself in
    # the dynamic-array one; rank 0's block ("imax = 17" for 32 points in 2 parts) tells which
    versions = ((("Fortran+MPI", tuple(m - 1 for m in printed)),) if fortran else
                (("C+MPI static arrays", tuple(m - 1 for m in printed)), ("C+MPI dynamic arrays", printed)))
    fits = [(name, g) for name, g in versions if all(_rank0_block(n, p) == b for n, p, b in zip(g, parts, block))]
    if len(fits) != 1:
        raise Unreadable(f"the array line ({'x'.join(map(str, printed))}) and rank 0's block "
                         f"({'x'.join(map(str, block))}) fit no grid of the static or dynamic MPI version")
    (version, grid), = fits
    return version, in_kernel_order(grid), math.prod(parts), "x".join(map(str, in_kernel_order(parts)))


def _rank0_block(points: int, parts: int) -> int:
    """Rank 0's points along an axis, with its halo, as the MPI versions' initmax splits it."""
    return points // parts + (1 if points % parts else 0) + (1 if parts > 1 else 0)


def _target(iterations: int, rehearsal_s: float) -> tuple[str, str | None]:
    """The target the program ran for, in seconds, as text: every version sets 60 and runs
    n = int(target / (t3 / 3)) sweeps, so the rehearsal's 3-sweep time t3 bounds the target to
    [n t3/3, (n+1) t3/3). 60 where it lies there; else (the source was changed) the shortest
    decimal there, noted."""
    per_sweep = rehearsal_s / 3
    # t3 is printed to the microsecond: each bound moves by up to (n+1) x 0.5 us / 3
    slack = (iterations + 1) * 0.5e-6 / 3
    low, high = iterations * per_sweep - slack, (iterations + 1) * per_sweep + slack
    if low <= REFERENCE_TARGET_S < high:
        return "60", None
    for step in (100, 10, 1, 0.1, 0.01, 0.001, 1e-4, 1e-5, 1e-6):
        x = -(-low // step) * step
        if x < high:
            text = f"{x:.6f}".rstrip("0").rstrip(".")
            return text, (f"the loop count ({iterations}) is not what Himeno's 60 s target gives after a "
                          f"{rehearsal_s:.6f} s rehearsal: its target was changed, to between {low:.4g} and "
                          f"{high:.4g} s; taken as {text} s")
    return f"{low:.6f}", None
