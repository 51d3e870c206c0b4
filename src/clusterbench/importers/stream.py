"""McCalpin's STREAM, its text output: stream.c 5.10 (`Best Rate MB/s`,
`Number of Threads counted`), older 5.x stream.c (`Rate (MB/s)`, `bytes per
DOUBLE PRECISION word`) and stream.f 5.6 (list-directed lines, its word
size printed before its banner), and stream_mpi.c (the official site's
MPI version: an aggregate array size split over ranks, its rates the
aggregate's; a stream step of its ranks, each rank's arrays the kernel's
array-size).

STREAM measures what the stream kernel measures (docs/kernels/stream.md:
the same four loops on three arrays, bytes counted as STREAM counts them,
the best pass after the first), so a run of doubles is a stream step:
phases copy/scale/add/triad, qualifier statistic "best", MiB/s (STREAM's
MB/s are 10^6 bytes/s: converted, kept as rate_decimal and best_mb_per_s),
with array-size (bytes per array), passes (NTIMES) and threads as the
kernel names them. Arrays of another element type (STREAM_TYPE=float)
are not the kernel's arithmetic: a `mccalpin-stream` step with the
tool's own parameters.

A run whose check failed ("Failed Validation on array a[]") is not
taken: its figures time arithmetic that went wrong, and the stream kernel
stores no figure of a run whose check failed either. A run that ends
before its check is not taken for the same reason: nothing says it passed.
"""
from __future__ import annotations

import re

from clusterbench.importers import ImportedRun, ImportedStep, Unreadable, invocations, measurement
from clusterbench.results.sizes import rounded_size_text

NUMBER = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"
BANNER = re.compile(r"^ ?STREAM [Vv]ersion \$Revision: (\d+(?:\.\d+)*) \$[ \t]*$", re.M)
MARK = BANNER   # where a STREAM run starts, anywhere in a file (importers.other_tools_in)
# stream.f says its word size before its banner; the lead moves that line into the run it opens
LEAD = re.compile(r"^ ?(?:Assuming \d+ bytes per DOUBLE PRECISION word|You have manually entered a size of)", re.M)
WORD_BYTES = re.compile(r"^ ?(?:This system uses (\d+) bytes per (?:array element|DOUBLE PRECISION word)\."
                        r"|Assuming (\d+) bytes per DOUBLE PRECISION word"
                        r"|You have manually entered a size of\s+(\d+)\s+bytes)", re.M)
# 5.10: "Array size = 1000000 (elements), Offset = 0 (elements)"; 5.9: "Array size = 4000000, Offset = 0";
# stream.f: "Array size =   20000000" and "Offset     =          0" on lines of their own
ARRAY = re.compile(r"^ ?Array size = +(\d+)(?: \(elements\))?(?:, Offset = (\d+))?", re.M)
OFFSET = re.compile(r"^ ?Offset += +(\d+)[ \t]*$", re.M)
# stream_mpi.c (the official site's MPI version, its own "$Revision: 1.8 $"): the aggregate size, split over ranks
MPI_TOTAL = re.compile(r"^Total Aggregate Array size = (\d+) \(elements\)", re.M)
MPI_RANKS = re.compile(r"^Data is distributed across (\d+) MPI ranks", re.M)
MPI_PER_RANK = re.compile(r"^ +Array size per MPI rank = (\d+) \(elements\)", re.M)
PASSES = re.compile(r"^ ?(?:Each kernel will be executed (\d+) times\.|Each test is run (\d+) times"
                    r"|You are running each test +(\d+) times)", re.M)
# stream_mpi.c: "Number of Threads requested for each MPI rank = 2", "Number of Threads counted for rank 0 = 2"
THREADS = re.compile(r"^ ?Number of Threads (requested|counted|) ?(?:for each MPI rank |for rank 0 )?= +(\d+)[ \t]*$",
                     re.M)
HEADING = re.compile(r"^ ?Function +(?:Best Rate MB/s|Rate \(MB/s\)) +Avg time +Min time +Max time[ \t]*$", re.M)
ROW = re.compile(rf"^ ?(Copy|Scale|Add|Triad): +({NUMBER}) +({NUMBER}) +({NUMBER}) +({NUMBER})[ \t]*$", re.M)
VALIDATES = re.compile(r"^ ?Solution Validates", re.M)
FAILED = re.compile(r"^ ?Failed Validation on array (\w+(?:\[\]|\(\))?)", re.M)
ARRAYS_TOUCHED = {"copy": 2, "scale": 2, "add": 3, "triad": 3}   # STREAM's bytes[] per element
KERNEL_WORD_BYTES = 8   # the stream kernel's doubles
MB, MIB = 1e6, 2**20


def detect(text: str) -> bool:
    return bool(BANNER.search(text[:65536]))


def parse(text: str) -> list[ImportedRun]:
    return invocations.text_runs(text, BANNER, _run, "no STREAM banner (\"STREAM version $Revision: 5.10 $\")",
                                 lead=LEAD)


def _cache_fit_unchecked(arrays_bytes: int, ranks: int) -> str:
    """The stream kernel warns when its three arrays fit in the last-level caches (cache
    bandwidth, not memory: kernels/compute/stream.c, from sysfs of the node it runs on). An
    import cannot: STREAM prints no cache size, and an imported run's host is known only by
    what its file states (import_runs.environment), so the check is said not made, with the
    arrays' size for the reader to hold against the host's caches."""
    per = " a rank" if ranks > 1 else ""
    return (f"cache check not made: STREAM states no cache size of its host, so whether its three arrays "
            f"({rounded_size_text(arrays_bytes)}{per}) fit in the last-level caches, which makes the figures cache "
            "bandwidth (the stream kernel warns), is not known")


def _mpi_layout(text: str) -> tuple[int, int] | None:
    """(ranks, elements per rank) of stream_mpi.c's output, None for stream.c's and stream.f's."""
    ranks, per_rank = MPI_RANKS.search(text), MPI_PER_RANK.search(text)
    if not MPI_TOTAL.search(text):
        return None
    if not (ranks and per_rank):
        raise Unreadable("stream_mpi's 'Total Aggregate Array size' without its 'distributed across N MPI ranks' "
                         "and 'Array size per MPI rank' lines: its ranks are unknown")
    return int(ranks.group(1)), int(per_rank.group(1))


def _run(text: str, first_line: int) -> ImportedRun:
    banner = BANNER.search(text)
    if not banner:   # the banner itself was the line cut short
        raise Unreadable("no STREAM banner (\"STREAM version $Revision: 5.10 $\")")
    heading = HEADING.search(text)
    rows = list(ROW.finditer(text, heading.end())) if heading else []
    if not rows:
        raise Unreadable("the run ends before its results (no 'Function ... Rate' table): cut short, or killed?")
    failed = FAILED.search(text, rows[-1].end())
    if failed:
        raise Unreadable(f"line {invocations.line_of(text, failed.start(), first_line)}: STREAM's check failed "
                         f"('Failed Validation on array {failed.group(1)}'): its figures time arithmetic that went "
                         "wrong; not taken")
    if not VALIDATES.search(text, rows[-1].end()):
        raise Unreadable("the run ends before STREAM's check of its arrays ('Solution Validates'): nothing says "
                         "its arithmetic was right (cut short?); not taken")
    mpi = _mpi_layout(text)
    array = ARRAY.search(text) or MPI_TOTAL.search(text)
    word = WORD_BYTES.search(text)
    passes = PASSES.search(text)
    if not (array and word and passes):
        raise Unreadable("no 'Array size', bytes per element or 'executed N times' line: what was measured is "
                         "unknown")
    # stream_mpi counts the aggregate size in its rates; each rank's arrays are the kernel's --array-size
    counted = int(array.group(1))
    ranks, elements = mpi or (1, counted)
    word_bytes = int(next(g for g in word.groups() if g))
    offset_line = OFFSET.search(text)   # stream.f prints its offset on a line of its own
    offset = (array.group(2) if not mpi else None) or (offset_line.group(1) if offset_line else None)
    ntimes = int(next(g for g in passes.groups() if g))
    threads = {kind or "set": int(n) for kind, n in THREADS.findall(text)}
    # a build without OpenMP prints no thread line (stream.c's are under #ifdef _OPENMP, stream.f's !$)
    thread_count = threads.get("counted", threads.get("requested", threads.get("set", 1)))
    version = banner.group(1)
    fortran = banner.group(0).startswith(" ")
    ours = word_bytes == KERNEL_WORD_BYTES
    params = ({"array-size": str(elements * word_bytes), "passes": str(ntimes), "threads": str(thread_count)} if ours
              else {"array-elements": str(elements), "element-bytes": str(word_bytes), "ntimes": str(ntimes),
                    "threads": str(thread_count)})
    step = ImportedStep("STREAM" if ours else f"STREAM {word_bytes}-byte elements",
                        "stream" if ours else "mccalpin-stream", params, ranks)
    for row in rows:
        phase = row.group(1).lower()
        mb_per_s, avg_s, min_s, max_s = (float(x) for x in row.group(2, 3, 4, 5))
        step.samples.append(measurement(
            phase, "n/a", mb_per_s * MB / MIB, "MiB/s", qualifiers={"statistic": "best"},
            line=invocations.line_of(text, row.start(), first_line),
            # STREAM prints its times to 6 decimals (stream.f 4) and its rate from the unrounded time: a
            # printed 0.000000 is a time under half a microsecond, not none
            seconds=min_s if min_s > 0 else None, bytes=ARRAYS_TOUCHED[phase] * word_bytes * counted,
            rate_decimal=mb_per_s, rate_decimal_unit="MB/s", best_mb_per_s=mb_per_s, avg_time_s=avg_s,
            min_time_s=min_s, max_time_s=max_s, passes=ntimes,
            # 5.x C skips the first pass; stream.f the first and the last
            passes_counted=ntimes - (2 if fortran else 1), array_elements=elements,
            array_bytes=elements * word_bytes, element_bytes=word_bytes,
            offset_elements=int(offset) if offset is not None else None, threads=thread_count,
            threads_requested=threads.get("requested"), validated=True,
            total_array_elements=counted if mpi else None, ranks=ranks if mpi else None))
    run = ImportedRun("STREAM", f"{version} Fortran" if fortran else f"{version} MPI" if mpi else version, "text", None,
                      steps=[step])
    if mpi:
        run.notes.append(f"stream_mpi: {ranks} ranks, each pass's time the fastest rank's (barriers before and after "
                         "each kernel), the rate the aggregate arrays over it")
        if elements * ranks != counted:
            run.notes.append(f"stream_mpi split {counted} elements as {elements} per rank: its rates count "
                             f"{counted - elements * ranks} elements no rank had")
    if not ours:
        run.notes.append(f"STREAM of {word_bytes}-byte elements is not the stream kernel's arithmetic (doubles): "
                         "a mccalpin-stream step, compared only with other imports")
    run.notes.append(_cache_fit_unchecked(3 * word_bytes * elements, ranks))
    if "requested" in threads and "counted" in threads and threads["requested"] != threads["counted"]:
        run.notes.append(f"STREAM counted {threads['counted']} threads of the {threads['requested']} requested: "
                         f"taken as {thread_count}")
    return run
