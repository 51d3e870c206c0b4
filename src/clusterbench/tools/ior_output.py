"""IOR 4.0's output (default text, JSON, CSV) from stored pario runs.

IOR prints through one small state machine (src/ior-output.c: key/value
lines, sections, arrays, a "next token" separator) driven by the same call
sequence for every format; `Emitter` is that machine and `render()` that
sequence, so the bytes match IOR's wherever the values do: the banner,
each test's start and Options block, the Results table (one row per
repetition and operation), `Max Write:`/`Max Read:` only with -v, the
27-column `Summary of all tests:`, `Finished`; `-O summaryFormat=JSON`
gives IOR's JSON document and `CSV` its per-repetition rows. Figures come
from pario's records: bandwidth = bytes / seconds (latest close - earliest
open), IOPS = transfers / wr-rd span, latency = rank 0's wr-rd time per
transfer of one block, open/wr-rd/close spans from earliest start to
latest end over ranks (the record's *_span_s fields), as IOR reduces them.
"""
from __future__ import annotations

import math
import os
import time
from dataclasses import dataclass

from clusterbench.tools.ior_args import IorTest, Translation, int_of
from clusterbench.results.sample import Sample

MIB, MB, KIB, GIB = 1048576.0, 1e6, 1024.0, 1073741824.0
VERSION = "4.0.0"


class Emitter:
    """IOR's printing state: format, indent, whether a separator is due."""

    def __init__(self, fmt: str):
        self.fmt, self.indent, self.need_next = fmt, 0, False
        self.out: list[str] = []

    def w(self, text: str) -> None:
        self.out.append(text)

    def _indent(self) -> None:
        if self.fmt == "json":
            self.w("  " * self.indent)

    def next_token(self) -> None:
        if self.need_next:
            self.need_next = False
            if self.fmt == "json":
                self.w(", \n")
        self._indent()

    def key_start(self, key: str) -> None:
        self.next_token()
        if self.fmt == "default":
            self.w(f"{key:<20s}: ")
        elif self.fmt == "json":
            self.w(f'"{key}": "')

    def key_end(self) -> None:
        if self.fmt == "json":
            self.w('"')
        if self.fmt == "default":
            self.w("\n")
        self.need_next = True

    def kv(self, key: str, value: str) -> None:
        self.next_token()
        self.need_next = True
        if self.fmt == "default":
            self.w(f"{key:<20s}: {value}\n")
        elif self.fmt == "json":
            self.w(f'"{key}": "{value}"')
        else:
            self.w(f"{value},")

    def kv_double(self, key: str, value: float) -> None:
        self.next_token()
        self.need_next = True
        if self.fmt == "default":
            self.w(f"{key:<20s}: {value:.4f}\n")
        elif self.fmt == "json":
            self.w(f'"{key}": "{value:.4f}"' if math.isinf(value) else f'"{key}": {value:.4f}')
        else:
            self.w(f"{value:.4f},")

    def kv_int(self, key: str, value: int) -> None:
        self.next_token()
        self.need_next = True
        if self.fmt == "default":
            self.w(f"{key:<20s}: {value}\n")
        elif self.fmt == "json":
            self.w(f'"{key}": {value}')
        else:
            self.w(f"{value},")

    def start_section(self) -> None:
        self.next_token()
        self.need_next = False
        if self.fmt == "json":
            self._indent()
            self.w("{\n")
        self.indent += 1

    def named_start(self, key: str, bracket: str) -> None:
        self.next_token()
        self.need_next = False
        self.indent += 1
        if self.fmt == "json":
            self.w(f'"{key}": {bracket}\n')
        elif self.fmt == "default":
            self.w(f"\n{key}: \n")

    def end_section(self) -> None:
        self.indent -= 1
        if self.fmt == "json":
            self.w("\n")
            self._indent()
            self.w("}\n")
        self.need_next = True

    def array_named_start(self, key: str) -> None:
        self.next_token()
        self.need_next = False
        if self.fmt == "json":
            self.w(f'"{key}": [\n')

    def array_end(self) -> None:
        self.indent -= 1
        if self.fmt == "json":
            self.w("]\n")
        self.need_next = True

    def text(self) -> str:
        return "".join(self.out)


def human(value: int) -> str:
    """IOR's HumanReadable(..., BASE_TWO)."""
    for unit, name in ((1 << 40, "TiB"), (1 << 30, "GiB"), (1 << 20, "MiB")):
        if value >= unit:
            return f"{value / unit:.2f} {name}" if value % unit else f"{value // unit} {name}"
    return f"{value} bytes"


def pp(number: float, append: str = " ") -> str:
    """IOR's PPDouble, left-justified: 6 decimals below 1, 2 below 3600, else none."""
    if number < 0:
        return f"   -      {append}"
    precision = 6 if number < 1 else 2 if number < 3600 else 0
    return f"{number:<10.{precision}f}{append}"


def ctime(t: float) -> str:
    """IOR's CurrentTimeString (ctime_r without its newline)."""
    return time.asctime(time.localtime(t))


@dataclass
class Point:
    """One repetition of one operation, in IOR's terms."""
    rep: int
    bytes: int
    seconds: float
    ops: int
    open_s: float
    wrrd_s: float
    close_s: float
    rank0_wrrd_s: float
    stonewall_s: float = 0.0          # time to the stonewall (-D), rank 0's
    stonewall_bytes_mean: float = 0.0  # bytes a rank had moved at the stonewall, mean over ranks
    stonewall_transfers_min: int = 0   # the fewest transfers a rank had made at the stonewall
    transfers_max: int = 0             # the most any rank made (with wear-out, every rank's)


def points(samples: list[Sample], op: str) -> list[Point]:
    """IOR's figure per repetition: the write includes the fsync (-e), as IOR's."""
    chosen = [s for s in samples if s.phase == op]
    if op == "write" and any(s.mode == "fsync" for s in chosen):
        chosen = [s for s in chosen if s.mode == "fsync"]
    chosen.sort(key=lambda s: s.repetition)
    return [Point(i, s.bytes, s.seconds, s.ops, s.extra("open_span_s", -1.0), s.extra("transfer_span_s", -1.0),
                  s.extra("close_span_s", -1.0), s.extra("rank0_transfer_s", -1.0), s.extra("stonewall_s", 0.0),
                  s.extra("stonewall_bytes_mean", 0.0), s.extra("stonewall_transfers_min", 0),
                  s.extra("transfers_max", 0)) for i, s in enumerate(chosen)]


def stonewall_line(p: Point, transfer: int) -> str:
    """What IOR's WriteOrRead prints on rank 0 after the stonewall of a
    phase with stoneWallingWearOut, before its result row."""
    return (f"stonewalling pairs accessed min: {p.stonewall_transfers_min} max: {p.transfers_max} -- min data: "
            f"{p.stonewall_transfers_min * transfer / GIB:.1f} GiB mean data: {p.stonewall_bytes_mean / GIB:.1f} GiB "
            f"time: {p.stonewall_s:.1f}s\n")


@dataclass
class Job:
    """Where and how a run ran, for the banner and the Options block."""
    ranks: int
    tasks_per_node: int
    nodes: int
    machine: str          # uname sysname and nodename
    platform: str         # IOR's GetPlatformName: "nodename(sysname)"
    began: float
    finished: float


def _file_name(t: IorTest) -> str:
    name = t.settings.get("testfile", "testFile")
    return name + ".00000000" if t.flag("fileperproc") else name


def _filesystem(e: Emitter, path: str) -> None:
    """IOR's ShowFileSystemSize of the test file's directory."""
    try:
        st = os.statvfs(os.path.dirname(os.path.abspath(path)) or ".")
    except OSError:
        return
    total, free = st.f_blocks * st.f_frsize, st.f_bfree * st.f_frsize
    size, unit = total / 2**30, "GiB"
    if size > 1024:
        size, unit = total / 2**40, "TiB"
    used = (1 - free / total) * 100 if total else 0.0
    inodes = (1 - st.f_ffree / st.f_files) * 100 if st.f_files else 0.0
    if e.fmt == "default":
        e.w(f"{'Path':<20s}: {path}\n")
        e.w(f"{'FS':<20s}: {size:.1f} {unit}   Used FS: {used:2.1f}%   ")
        e.w(f"Inodes: {st.f_files / 2**20:.1f} Mi   Used Inodes: {inodes:2.1f}%\n")
    elif e.fmt == "json":
        e.w(f'    , "Path": "{path}",')
        e.w(f'"Capacity": "{size:.1f} {unit}", "Used Capacity": "{used:2.1f}%",')
        e.w(f'"Inodes": "{st.f_files / 2**20:.1f} Mi", "Used Inodes" : "{inodes:2.1f}%"\n')


def _parameters(e: Emitter, t: IorTest, job: Job) -> None:
    s = t.settings
    e.named_start("Parameters", "{")
    ints = [("testID", t.id), ("refnum", int_of(s.get("refnum", "0")))]
    for k, v in ints:
        e.kv_int(k, v)
    e.kv("api", s.get("api", "POSIX"))
    e.kv("platform", job.platform)
    e.kv("testFileName", s.get("testfile", "testFile"))
    for k, name in (("deadlineForStonewall", "deadlineforstonewalling"), ("stoneWallingWearOut", "stonewallingwearout"),
                    ("maxTimeDuration", "maxtimeduration"), ("outlierThreshold", "outlierthreshold")):
        e.kv_int(k, int_of(s.get(name, "0")))
    e.kv("options", "(null)")
    e.kv_int("dryRun", t.flag("dryrun"))
    e.kv_int("nodes", job.nodes)
    e.kv_int("memoryPerTask", 0)
    e.kv_int("memoryPerNode", 0)
    e.kv_int("tasksPerNode", job.tasks_per_node)
    e.kv_int("repetitions", t.repetitions)
    for k, name in (("multiFile", "multifile"), ("interTestDelay", "intertestdelay"), ("fsync", "fsync"),
                    ("fsyncperwrite", "fsyncperwrite"), ("useExistingTestFile", "useexistingtestfile"),
                    ("uniqueDir", "uniquedir"), ("singleXferAttempt", "singlexferattempt"), ("readFile", "readfile"),
                    ("writeFile", "writefile"), ("filePerProc", "fileperproc"), ("reorderTasks", "reordertasks"),
                    ("reorderTasksRandom", "reordertasksrandom"), ("reorderTasksRandomSeed", "reordertasksrandomseed"),
                    ("randomOffset", "randomoffset"), ("checkWrite", "checkwrite"), ("checkRead", "checkread")):
        e.kv_int(k, int_of(s.get(name, "0")))
    e.kv_int("dataPacketType", 0)
    for k, name in (("keepFile", "keepfile"), ("keepFileWithError", "keepfilewitherror"),
                    ("warningAsErrors", "warningaserrors"), ("verbose", "verbose")):
        e.kv_int(k, int_of(s.get(name, "0")))
    e.kv("data packet type", "g")
    e.kv_int("setTimeStampSignature/incompressibleSeed", int_of(s.get("settimestampsignature", "0")))
    e.kv_int("collective", t.flag("collective"))
    e.kv_int("segmentCount", t.segments)
    e.kv_int("transferSize", t.transfer)
    e.kv_int("blockSize", t.block)
    e.end_section()


def _options(e: Emitter, t: IorTest, job: Job) -> None:
    s = t.settings
    block, transfer, segments = t.block, t.transfer, t.segments
    e.named_start("Options", "{")
    e.kv("api", s.get("api", "POSIX"))
    e.kv("apiVersion", "")
    e.kv("test filename", s.get("testfile", "testFile"))
    e.kv("access", "file-per-process" if t.flag("fileperproc") else "single-shared-file")
    e.kv("type", "collective" if t.flag("collective") else "independent")
    e.kv_int("segments", segments)
    e.kv("ordering in a file", "random" if t.flag("randomoffset") else "sequential")
    if not t.flag("reordertasks") and not t.flag("reordertasksrandom"):
        e.kv("ordering inter file", "no tasks offsets")
    if t.flag("reordertasks") == 1:
        e.kv("ordering inter file", "constant task offset")
        e.kv_int("task offset", int_of(s.get("taskpernodeoffset", "1")))
    if t.flag("reordertasksrandom") == 1:
        e.kv("ordering inter file", "random task offset")
        e.kv_int("task offset", int_of(s.get("taskpernodeoffset", "1")))
        e.kv_int("reorder random seed", int_of(s.get("reordertasksrandomseed", "0")))
    e.kv_int("nodes", job.nodes)
    e.kv_int("tasks", job.ranks)
    e.kv_int("clients per node", job.tasks_per_node)
    e.kv_int("repetitions", t.repetitions)
    e.kv("xfersize", human(transfer))
    e.kv("blocksize", human(block))
    e.kv("aggregate filesize", human(block * segments * job.ranks))
    if t.flag("verbose"):
        e.kv_int("verbose", t.flag("verbose"))
    if t.flag("deadlineforstonewalling") > 0:
        e.kv_int("stonewallingTime", t.flag("deadlineforstonewalling"))
        e.kv_int("stoneWallingWearOut", t.flag("stonewallingwearout"))
    e.end_section()


def _result(e: Emitter, op: str, p: Point, t: IorTest, ranks: int) -> None:
    block, transfer = t.block, t.transfer
    bw = p.bytes / p.seconds
    iops = (p.bytes / transfer) / p.wrrd_s if p.wrrd_s > 0 else float("inf")
    latency = p.rank0_wrrd_s / (block // transfer)
    spans = (p.open_s, p.wrrd_s, p.close_s)
    if e.fmt == "default":
        e.w(f"{op:<10s}" + pp(bw / MIB) + pp(iops) + pp(latency, "  ") + pp(block / KIB) + pp(transfer / KIB)
            + "".join(pp(x) for x in spans) + pp(p.seconds) + f"{p.rep:<4d}\n")
    elif e.fmt == "json":
        e.start_section()
        e.kv("access", op)
        for k, v in (("bwMiB", bw / MIB), ("blockKiB", block / KIB), ("xferKiB", transfer / KIB), ("iops", iops),
                     ("latency", latency), ("openTime", spans[0]), ("wrRdTime", spans[1]), ("closeTime", spans[2]),
                     ("totalTime", p.seconds)):
            e.kv_double(k, v)
        e.end_section()
    else:
        e.kv("access", op)
        for k, v in (("bwMiB", bw / MIB), ("iops", iops), ("latency", latency), ("blockKiB", block / KIB),
                     ("xferKiB", transfer / KIB), ("openTime", spans[0]), ("wrRdTime", spans[1]),
                     ("closeTime", spans[2]), ("totalTime", p.seconds)):
            e.kv_double(k, v)
        e.kv_int("Numtasks", ranks)
        e.w(f"{p.rep}\n")


def stats(values: list[float]) -> tuple[float, float, float, float]:
    """Max, min, mean and IOR's standard deviation (population: divided by n)."""
    mean = sum(values) / len(values)
    return max(values), min(values), mean, math.sqrt(sum((v - mean) ** 2 for v in values) / len(values))


SUMMARY_HEADER = (f"{'Operation':<9s} {'Max(MiB)':>10s} {'Min(MiB)':>10s} {'Mean(MiB)':>10s} {'StdDev':>10s} "
                  f"{'Max(OPs)':>10s} {'Min(OPs)':>10s} {'Mean(OPs)':>10s} {'StdDev':>10s} {'Mean(s)':>10s} "
                  f"{'Stonewall(s)':>10s} {'Stonewall(MiB)':>13s}"
                  " Test# #Tasks tPN reps fPP reord reordoff reordrand seed segcnt "
                  f"{' blksiz':>8s} {'xsize':>8s} {'aggs(MiB)':>9s} {'API':>5s} RefNum")


def _summary_row(e: Emitter, op: str, pts: list[Point], t: IorTest, job: Job) -> None:
    s = t.settings
    transfer = t.transfer
    bw = stats([p.bytes / p.seconds for p in pts])
    ops = stats([p.bytes / transfer / p.seconds for p in pts])
    mean_s = sum(p.seconds for p in pts) / len(pts)
    agg = pts[0].bytes / MIB
    ints = {"reord": t.flag("reordertasks"), "reordoff": int_of(s.get("taskpernodeoffset", "1")),
            "reordrand": t.flag("reordertasksrandom"), "seed": int_of(s.get("reordertasksrandomseed", "0")),
            "refnum": int_of(s.get("refnum", "0"))}
    api = s.get("api", "POSIX")
    wear_out = t.flag("stonewallingwearout") > 0
    wall_s = sum(p.stonewall_s for p in pts)
    wall_mib = sum(p.stonewall_bytes_mean for p in pts) / wall_s / MIB if wall_s > 0 else 0.0
    if e.fmt == "default":
        walls = f"{wall_s / len(pts):10.2f} {wall_mib:13.2f}" if wear_out else f"{'NA':>10s} {'NA':>13s}"
        e.w(f"{op:<9s} " + "".join(f"{v / MIB:10.2f} " for v in bw) + "".join(f"{v:10.2f} " for v in ops)
            + f"{mean_s:10.5f} {walls} {t.id:5d} {job.ranks:6d} {job.tasks_per_node:3d} "
            f"{t.repetitions:4d} {t.flag('fileperproc'):3d} {ints['reord']:5d} {ints['reordoff']:8d} "
            f"{ints['reordrand']:9d} {ints['seed']:4d} {t.segments:6d} {t.block:8d} "
            f"{transfer:8d} {agg:9.1f} {api:>3s} {ints['refnum']:6d}\n")
    elif e.fmt == "json":
        e.start_section()
        e.kv("operation", op)
        e.kv("API", api)
        for k, v in (("TestID", t.id), ("ReferenceNumber", ints["refnum"]), ("segmentCount", t.segments),
                     ("blockSize", t.block), ("transferSize", transfer), ("numTasks", job.ranks),
                     ("tasksPerNode", job.tasks_per_node), ("repetitions", t.repetitions),
                     ("filePerProc", t.flag("fileperproc")), ("reorderTasks", ints["reord"]),
                     ("taskPerNodeOffset", ints["reordoff"]), ("reorderTasksRandom", ints["reordrand"]),
                     ("reorderTasksRandomSeed", ints["seed"])):
            e.kv_int(k, v)
        for k, v in (("bwMaxMIB", bw[0] / MIB), ("bwMinMIB", bw[1] / MIB), ("bwMeanMIB", bw[2] / MIB),
                     ("bwStdMIB", bw[3] / MIB), ("OPsMax", ops[0]), ("OPsMin", ops[1]), ("OPsMean", ops[2]),
                     ("OPsSD", ops[3]), ("MeanTime", mean_s)):
            e.kv_double(k, v)
        if wear_out:
            e.kv_double("StoneWallTime", wall_s / len(pts))
            e.kv_double("StoneWallbwMeanMIB", wall_mib)
        e.kv_double("xsizeMiB", agg)
        e.end_section()


def _hints(samples: list[Sample]) -> dict[str, str]:
    """--mpiio.showHints: IOR prints at every open the hints it passed and
    those the opened file has; pario records both (rank 0's)."""
    out = {}
    for s in samples:
        in_effect = s.extra("mpi_hints_in_effect")
        if s.phase in out or in_effect is None:
            continue
        passed = [kv.split("=", 1) for kv in s.extra("mpi_hints_passed", "").split(",") if kv]
        effect = [kv.split("=", 1) for kv in in_effect.split(";") if kv]
        out[s.phase] = ("\nhints passed to MPI_File_open() {\n" + "".join(f"\t{k} = {v}\n" for k, v in passed)
                        + "}\n\nhints returned from opened file {\n"
                        + "".join(f"\t{k} = {v}\n" for k, v in effect) + "}\n")
    return out


def render(tr: Translation, job: Job, runs: list[list[Sample]], log: list[str] | None = None) -> str:
    """IOR's whole output; runs[i] holds the samples of test i. `log`: where
    the lines IOR prints on its log (stdout) rather than its result file go,
    for a line with summaryFile; None, inline as IOR's stdout holds both."""
    e = Emitter(tr.output)

    def log_line(text: str) -> None:
        if log is None:
            e.w(text)
        else:
            log.append(text)
    verbose = tr.verbose
    if e.fmt != "csv":  # PrintHeader
        e.start_section()
        if e.fmt == "json":
            e.kv("Version", VERSION)
        else:
            e.w(f"IOR-{VERSION}: MPI Coordinated Test of Parallel I/O\n")
        e.kv("Began", ctime(job.began))
        e.key_start("Command line")
        e.w(" ".join(tr.argv))
        e.key_end()
        e.key_start("Machine")
        e.w(job.machine)
        e.key_end()
        e.array_named_start("tests")
    done = []
    for t, samples in zip(tr.tests, runs):
        ops = {op: points(samples, op) for op, wanted in (("write", t.write), ("read", t.read)) if wanted}
        ops = {op: pts for op, pts in ops.items() if pts}
        done.append((t, ops))
        if e.fmt != "csv":  # ShowTestStart
            e.start_section()
            e.kv_int("TestID", t.id)
            e.kv("StartTime", ctime(job.began))
            _filesystem(e, _file_name(t))
            if e.fmt == "json":
                _parameters(e, t, job)
            if verbose > 0 and e.fmt == "default":
                e.w(f"Participating tasks : {job.ranks}\n")
            _options(e, t, job)  # ShowSetup
            e.named_start("Results", "[")
        if e.fmt == "default":
            e.w("\naccess    bw(MiB/s)  IOPS       Latency(s)  block(KiB) xfer(KiB)  open(s)    wr/rd(s)   "
                "close(s)   total(s)   iter\n")
            e.w("------    ---------  ----       ----------  ---------- ---------  --------   --------   "
                "--------   --------   ----\n")
        elif e.fmt == "csv":
            e.w("access,bw(MiB/s),IOPS,Latency,block(KiB),xfer(KiB),open(s),wr/rd(s),close(s),total(s),numTasks,iter\n")
        reps = max((len(p) for p in ops.values()), default=0)
        hints = _hints(samples) if t.flag("mpiio.showhints") and t.params["api"] == "mpiio" else {}
        for rep in range(reps):
            for op, pts in ops.items():
                if rep < len(pts):
                    if op in hints and e.fmt == "default":
                        e.w(hints[op])
                    if t.flag("stonewallingwearout") and e.fmt == "default":
                        log_line(stonewall_line(pts[rep], t.transfer))
                    _result(e, op, pts[rep], t, job.ranks)
        e.array_end()  # PrintRepeatEnd
        if verbose > 0:  # PrintShortSummary
            e.array_end()
            best = {op: max(p.bytes / p.seconds for p in pts) for op, pts in ops.items()}
            if e.fmt == "default":
                if "write" in best:
                    e.w(f"Max Write: {best['write'] / MIB:.2f} MiB/sec ({best['write'] / MB:.2f} MB/sec)\n")
                if "read" in best:
                    e.w(f"Max Read:  {best['read'] / MIB:.2f} MiB/sec ({best['read'] / MB:.2f} MB/sec)\n")
            elif e.fmt == "json":
                e.named_start("max", "{")
                for op, bw in best.items():
                    e.kv_double(f"{op}MiB", bw / MIB)
                    e.kv_double(f"{op}MB", bw / MB)
                e.end_section()
        if e.fmt != "csv":  # ShowTestEnd
            if t.flag("stonewallingwearout") and e.fmt == "default":
                # IOR's line (sic): the first repetition's write, the most transfers a rank made; 0 without a write
                writes = ops.get("write", [])
                log_line(f"Pairs deadlineForStonewallingaccessed: {writes[0].transfers_max if writes else 0}\n")
            e.end_section()
    # PrintLongSummaryAllTests: always (IOR raises verbose to 1 for it)
    e.array_end()
    if e.fmt == "default":
        e.w("\nSummary of all tests:")
        e.w("\n" + SUMMARY_HEADER + "\n")
    elif e.fmt == "json":
        e.named_start("summary", "[")
    for t, ops in done:
        for op, pts in ops.items():
            _summary_row(e, op, pts, t, job)
    e.array_end()
    if e.fmt != "csv":  # PrintTestEnds
        e.kv("Finished", ctime(job.finished))
        e.end_section()
    return e.text()
