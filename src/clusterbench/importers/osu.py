"""OSU micro-benchmarks text output (5.x-7.x): the title line ("# OSU MPI
Latency Test v5.3"), optional datatype/pairs lines, the column heading, and
one row per message size.

A test the mpi kernel also runs becomes an mpi step (op pingpong, bw, bibw,
allreduce, reduce, alltoall, allgather, bcast, barrier) whose samples are
the kernel's: phase the op, one per size (sweep size_bytes), qualifier
algorithm "library", the average latency in us, or for bandwidth MiB/s
(OSU's MB/s are 10^6 bytes/s: converted, and kept as rate_decimal). Min and
max latency and iterations (-f) go in the record. osu_mbw_mr is the mpi
kernel's bw over its pairs, osu_multi_lat its pingpong over pairs. Every
other test (gather, scatter, the non-blocking ones, ...) is an `osu` step
named by its title. OSU prints no rank count for collectives: give --np.
A test on accelerator buffers (-d cuda ...) is the mpi kernel with
--buffer=device or managed when both sides are on that memory, else an
`osu` step with the accelerator and each side's buffer. A test of derived
datatypes (7.x -D, a "Transmit Size" column) is an `osu` step too, and so
is a table of a datatype the kernel's op does not move (7.1 on print it:
allreduce and reduce of other than MPI_FLOAT, the rest of other than
MPI_CHAR); -T all's table per datatype is a step each.
"""
from __future__ import annotations

import re

from clusterbench.importers import ImportedRun, ImportedStep, Unreadable, cut_short, measurement, printed_step, refuse_garbled

TITLE = re.compile(r"^# OSU (?:MPI(?:-(?P<accelerator>\w+))? )?(?P<title>.+?) Test v(?P<version>\S+)\s*$", re.M)
MARK = TITLE   # where an OSU test starts, anywhere in a file (importers.other_tools_in)
# -d cuda|rocm|openacc|sycl (util/osu_util.c's print_header): "MPI-CUDA" in the title, and for
# point-to-point tests where each side's buffer is: HOST (H), DEVICE (D), MANAGED (M), (MD) or (MH)
BUFFERS = re.compile(r"^# Send Buffer on (HOST|DEVICE|MANAGED) \(\w+\) and Receive Buffer on (HOST|DEVICE|MANAGED)",
                     re.M)
DATATYPE = re.compile(r"# Datatype: (\w+)\.?\s*$")   # 7.1 on, above or below each table's heading
# the datatypes the mpi kernel's ops move (kernels/mpi/mpi_ops.c; MPI_BYTE is OSU's MPI_CHAR); MPI_CHAR for the rest
KERNEL_DATATYPES = {"allreduce": "MPI_FLOAT", "reduce": "MPI_FLOAT"}
DDT_LAYOUT = re.compile(r"# Set Derived DataTypes block_length to (?P<block>\d+), stride to (?P<stride>\d+)\s*")
MPI_OPS = {"Latency": "pingpong", "Bandwidth": "bw", "Bi-Directional Bandwidth": "bibw",
           "Multiple Bandwidth / Message Rate": "bw", "Multi Latency": "pingpong",
           "Allreduce Latency": "allreduce", "Reduce Latency": "reduce", "All-to-All Personalized Exchange Latency":
           "alltoall", "Alltoall Latency": "alltoall", "Allgather Latency": "allgather", "Broadcast Latency": "bcast",
           "Bcast Latency": "bcast", "Barrier Latency": "barrier"}
POINT_TO_POINT = {"Latency", "Bandwidth", "Bi-Directional Bandwidth", "Multiple Bandwidth / Message Rate", "Multi Latency"}
MB = 1e6
MIB = 1 << 20


def detect(text: str) -> bool:
    return bool(TITLE.search(text[:4096]))


def _columns(heading: str) -> list[str]:
    """"# Size       Avg Latency(us)   Min Latency(us) ..." -> names."""
    body = heading.lstrip("#").strip()
    # columns are 2+ spaces apart, or a tab (an editor or `unexpand` turned the spaces into tabs)
    return [c.strip() for c in re.split(r"\s{2,}|\t", body) if c.strip()]


def parse(text: str) -> list[ImportedRun]:
    titles = list(TITLE.finditer(text))
    if not titles:
        raise Unreadable("no OSU title line (\"# OSU MPI ... Test vX.Y\")")
    text, cut = cut_short.whole_lines(text)
    titles = list(TITLE.finditer(text))
    if not titles:   # the title was the line cut short
        raise Unreadable("no OSU title line (\"# OSU MPI ... Test vX.Y\")")
    runs = [ImportedRun("OSU", titles[0]["version"], "text", None)]
    line = 1 + text.count("\n", 0, titles[0].end())   # the title's line; a test's body starts after it
    for i, t in enumerate(titles):
        end = titles[i + 1].start() if i + 1 < len(titles) else len(text)
        body = text[t.end(): end]
        before = text[:t.start()].rstrip("\n").rpartition("\n")[2]   # the line above the title
        for step in _test(t["title"].strip(), body, runs[-1], line, t["accelerator"], DDT_LAYOUT.fullmatch(before)):
            if any(st.name == step.name and st.params == step.params for st in runs[-1].steps):
                # the same test again: another run of OSU (a job that ran it twice), not more of this one's rows
                runs.append(ImportedRun("OSU", t["version"], "text", None, notes=[
                    n for n in runs[-1].notes if "(give --np)" in n]))
            runs[-1].steps.append(step)
        line += body.count("\n")   # the next title is on the body's last line
    runs = [r for r in runs if r.steps]
    if not runs:
        raise Unreadable("no result row under the column heading")
    if cut:
        runs[-1].notes.append(cut)
    return runs


def _test(title: str, body: str, run: ImportedRun, title_line: int, accelerator: str | None,
          layout: re.Match | None) -> list[ImportedStep]:
    """The test's steps: one, or with -T (7.1 on) one per datatype's table."""
    op = MPI_OPS.get(title)
    # -D (7.x): each message is a derived datatype OSU packs, its "Transmit Size" the bytes it sends of
    # a buffer of Size bytes; the mpi kernel sends Size contiguous bytes, so it is not the kernel's op
    derived = re.search(r"^# Size\b.*\bTransmit Size\s*$", body, re.M)
    if derived:
        op = None
    buffer = None
    if accelerator:
        # the mpi kernel's --buffer puts both sides on one kind of memory; a test on GPU buffers taken
        # as the kernel's default (host) compared GPU latencies with host ones as one measurement
        sides = BUFFERS.search(body)
        both = {sides.group(1), sides.group(2)} if sides else set()
        if op and len(both) == 1:
            buffer = both.pop().lower()
        else:
            op = None
    pairs = re.search(r"\[ pairs: (\d+) \]", body)
    # the one-sided tests ("MPI_Put Latency", "MPI_Get Bandwidth", ...) but their Multi ones need exactly two
    # processes ("This test requires exactly two processes"), as the point-to-point ones do
    one_sided = title.startswith("MPI_") and "Multi" not in title
    ranks = 2 * int(pairs.group(1)) if pairs else 2 if title in POINT_TO_POINT or one_sided else 0
    if ranks == 0 and not any("rank count" in n for n in run.notes):
        run.notes.append("OSU prints no rank count for collectives: stored as 0 ranks (give --np)")
    params = {"op": op} if op else {"test": title}
    if buffer:
        params["buffer"] = buffer
    elif accelerator:
        params["accelerator"] = accelerator.lower()
        sides = BUFFERS.search(body)
        if sides:
            params.update({"send-buffer": sides.group(1).lower(), "receive-buffer": sides.group(2).lower()})
    # one-sided tests (osu_put_latency, osu_get_bw, ...): how the window was made and how each operation
    # was synchronised, whose times differ a hundredfold (flush 0.14 us, lock/unlock 12,309 us for 1 byte)
    for heading, name in (("Window creation", "window-creation"), ("Synchronization", "synchronization")):
        m = re.search(rf"^# {heading}: (\S+)", body, re.M)
        if m:
            params[name] = m.group(1)
    if derived:
        # only point-to-point tests print the layout (util/osu_util.c's print_header); -D cont and indx
        # print the defaults, which they do not use
        params["derived-datatype"] = (f"block_length {layout['block']}, stride {layout['stride']}" if layout
                                      else "layout not printed")
    if title == "Multiple Bandwidth / Message Rate":
        window = re.search(r"\[ window size: (\d+) \]", body)
        if window:
            params["window"] = window.group(1)

    def step_of(element: str | None) -> ImportedStep:
        # the mpi kernel sums MPI_FLOATs in allreduce and reduce and moves MPI_BYTEs in the rest
        # (kernels/mpi/mpi_ops.c), as OSU did before 7.1; 7.1 on sum MPI_CHARs by default, and -T
        # (mpi_char, mpi_int, mpi_float, or all: a table each) picks others: other measurements
        if element in (None, KERNEL_DATATYPES.get(op or "", "MPI_CHAR")):
            return ImportedStep(f"OSU {title}", "mpi" if op else "osu", dict(params), ranks)
        other = {"test": title, **{k: v for k, v in params.items() if k != "op"}, "datatype": element}
        return ImportedStep(f"OSU {title}", "osu", other, ranks)

    steps, element = [step_of(None)], None
    table = None
    failed: list[int] = []   # lines of rows OSU's own check (-c) failed
    # the body starts on the title's line (after the title), so its line i is the file's title_line + i
    for i, line in enumerate(body.split("\n")):
        s = line.strip()
        datatype = DATATYPE.match(s)
        if datatype:   # a table's datatype: above its heading (collectives) or below it (point-to-point)
            steps[-1:] = ([steps[-1]] if steps[-1].samples else []) + [step_of(datatype.group(1))]
            element = datatype.group(1)
            continue
        if s.startswith("#"):
            if re.search(r"(Latency|Bandwidth|MB/s)", s) and not s.startswith("# OSU"):
                try:
                    table = _Table(_columns(s))
                except ValueError:
                    table = None   # a heading without a figure column
            continue
        fields = s.split()
        if table is None or len(fields) != table.width:
            continue
        if table.validation is not None and fields[table.validation] != "Pass":
            failed.append(title_line + i)
            continue
        refuse_garbled(fields, title_line + i)
        step = steps[-1]
        phase = step.params["op"] if step.kernel == "mpi" else _slug(title)
        try:
            step.samples.append(table.sample(fields, title_line + i, phase, element))
        except ValueError:
            continue   # a line of other output in the table
    if failed:
        # -c: OSU checked the data each size moved and found it wrong; the time is of an operation that
        # did not do its work, as a fio job with an error
        run.notes.append(f"OSU {title}: {len(failed)} row(s) whose validation (-c) failed, not taken "
                         f"(line {', '.join(map(str, failed))})")
    return [st for st in steps if st.samples]


def _slug(title: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")


class _Table:
    """A table's columns, placed once from its heading; `sample` reads one row."""

    def __init__(self, columns: list[str]):
        where = {c: i for i, c in enumerate(columns)}

        def first(*names):
            return next((where[n] for n in names if n in where), None)

        self.width = len(columns)
        self.size, self.iterations = where.get("Size"), where.get("Iterations")
        self.bw = first("Bandwidth (MB/s)", "MB/s", "Bandwidth(MB/s)")
        self.rate = where.get("Messages/s")
        self.avg = first("Latency (us)", "Avg Latency(us)", "Latency(us)")
        self.lo, self.hi = where.get("Min Latency(us)"), where.get("Max Latency(us)")
        self.transmit = where.get("Transmit Size")   # -D: the bytes a derived datatype of Size bytes sends
        self.validation = where.get("Validation")   # -c: "Pass", or "Fail" where the data moved was wrong
        # -z (7.3 on): "P50 Tail Lat(us)", "P99 Tail BW(MB/s)": the percentiles of the iterations' figures
        self.tails = {i: (f"tail_p{m.group(1)}_us" if m.group(2) == "Lat(us)" else f"tail_p{m.group(1)}_mb_s")
                      for c, i in where.items() for m in [re.fullmatch(r"P(\d+) Tail (Lat\(us\)|BW\(MB/s\))", c)] if m}
        if self.bw is None and self.avg is None:
            raise ValueError("no figure column")

    def sample(self, f: list[str], line: int, phase: str, element: str | None):
        # the mpi kernel's barrier is a sweep point of size 0
        size = int(f[self.size]) if self.size is not None else 0 if phase == "barrier" else None
        sweep = ("size_bytes", size) if size is not None else None
        iterations = int(f[self.iterations]) if self.iterations is not None else None
        extra = {name: float(f[i]) for i, name in self.tails.items()}
        if self.transmit is not None:
            extra["transmit_bytes"] = int(f[self.transmit])
        if self.bw is not None:
            mb = float(f[self.bw])
            return measurement(phase, "n/a", mb * MB / MIB, "MiB/s", sweep=sweep, line=line,
                               qualifiers=LIBRARY, rate_decimal=mb, rate_decimal_unit="MB/s",
                               messages_per_s=float(f[self.rate]) if self.rate is not None else None,
                               iterations=iterations, element_type=element, **extra)
        avg = float(f[self.avg])
        return measurement(phase, "n/a", avg, "us", sweep=sweep, line=line, qualifiers=LIBRARY,
                           rate_step=printed_step(f[self.avg]),
                           t_avg_us=avg, t_min_us=float(f[self.lo]) if self.lo is not None else None,
                           t_max_us=float(f[self.hi]) if self.hi is not None else None,
                           seconds=avg / 1e6, iterations=iterations, element_type=element, **extra)


LIBRARY = {"algorithm": "library"}
