"""McCalpin's STREAM, its text output: stream.c 5.10 (`Best Rate MB/s`,
`Number of Threads counted`), older 5.x stream.c (`Rate (MB/s)`, `bytes per
DOUBLE PRECISION word`) and stream.f 5.6 (list-directed lines, its word
size printed before its banner).

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
PASSES = re.compile(r"^ ?(?:Each kernel will be executed (\d+) times\.|Each test is run (\d+) times"
                    r"|You are running each test +(\d+) times)", re.M)
THREADS = re.compile(r"^ ?Number of Threads (requested|counted|) ?= +(\d+)[ \t]*$", re.M)
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
    array = ARRAY.search(text)
    word = WORD_BYTES.search(text)
    passes = PASSES.search(text)
    if not (array and word and passes):
        raise Unreadable("no 'Array size', bytes per element or 'executed N times' line: what was measured is "
                         "unknown")
    elements = int(array.group(1))
    word_bytes = int(next(g for g in word.groups() if g))
    offset_line = OFFSET.search(text)   # stream.f prints its offset on a line of its own
    offset = array.group(2) or (offset_line.group(1) if offset_line else None)
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
                        "stream" if ours else "mccalpin-stream", params, 1)
    for row in rows:
        phase = row.group(1).lower()
        mb_per_s, avg_s, min_s, max_s = (float(x) for x in row.group(2, 3, 4, 5))
        step.samples.append(measurement(
            phase, "n/a", mb_per_s * MB / MIB, "MiB/s", qualifiers={"statistic": "best"},
            line=invocations.line_of(text, row.start(), first_line),
            # STREAM prints its times to 6 decimals (stream.f 4) and its rate from the unrounded time: a
            # printed 0.000000 is a time under half a microsecond, not none
            seconds=min_s if min_s > 0 else None, bytes=ARRAYS_TOUCHED[phase] * word_bytes * elements,
            rate_decimal=mb_per_s, rate_decimal_unit="MB/s", best_mb_per_s=mb_per_s, avg_time_s=avg_s,
            min_time_s=min_s, max_time_s=max_s, passes=ntimes,
            # 5.x C skips the first pass; stream.f the first and the last
            passes_counted=ntimes - (2 if fortran else 1), array_elements=elements,
            array_bytes=elements * word_bytes, element_bytes=word_bytes,
            offset_elements=int(offset) if offset is not None else None, threads=thread_count,
            threads_requested=threads.get("requested"), validated=True))
    run = ImportedRun("STREAM", f"{version} Fortran" if fortran else version, "text", None, steps=[step])
    if not ours:
        run.notes.append(f"STREAM of {word_bytes}-byte elements is not the stream kernel's arithmetic (doubles): "
                         "a mccalpin-stream step, compared only with other imports")
    if "requested" in threads and "counted" in threads and threads["requested"] != threads["counted"]:
        run.notes.append(f"STREAM counted {threads['counted']} threads of the {threads['requested']} requested: "
                         f"taken as {thread_count}")
    return run
