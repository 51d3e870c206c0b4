"""fio's terse output (`fio --minimal`, `--output-format=terse`), terse
versions 2 to 5: one line of semicolon-separated fields per job.

The field order is fio's stat.c (show_thread_status_terse_all,
show_ddir_status_terse; fio's HOWTO, "Terse output"): version, fio version,
job name, group id, error; then a block of 41 fields per direction (read,
write, and from version 4 trim; version 5 adds 6 more to each: bandwidth
samples and the IOPS statistics); then CPU, I/O depths, latency
distributions and disk use, which are not read. A block is: KiB moved,
bandwidth KiB/s, IOPS, run time ms, slat min/max/mean/stdev, clat
min/max/mean/stdev, 20 clat percentiles (`99.000000%=259`, padded with
`0%=0`), lat min/max/mean/stdev (all us), bandwidth min/max/share/mean/stdev.
With unified_rw_reporting=1 there is one block, the mixed one; with =both
the mixed block follows the others.

The lines hold no job option (rw, bs, iodepth, engine): each job is a `fio`
step named after it, as fio 2.2's JSON (which holds none either), and the
note says so. Lines of one job name and group (numjobs without
group_reporting) are summed, as the JSON importer sums its entries.

fio prints the job name as it was given, so a name holding ';' ("[read;4k]")
spans several fields: the name is as many fields as make the rest of the
line fall into its version's blocks.

Version 2 (fio 1.x's format, kept by --terse-version=2 to this day) names
no fio version ("2;JOB;GROUP;ERROR;..."), and its blocks changed with fio
(stat.c's history): from 2.0.10 the three blocks of today's versions 3-4
(read, write, trim); in 2.0 to 2.0.9 read and write alone, whose bandwidth
field was bytes/ms before 2.0.8 (commit 033bbb51, "Off by 1.024") and KiB/s
after, so their KiB/s is their KiB over their run time; in 1.99.x the total
latency before the percentiles, and in 1.58 and older 20 fields a
direction, without IOPS or percentiles: those two are refused in one line.
"""
from __future__ import annotations

import re

from clusterbench.importers import ImportedRun, ImportedStep, Unreadable, cut_short, measurement, number_on_line

# "3;fio-3.33;rr;0;0;..." (fio 2.x writes the same for version 3); "2;rr;0;0;...", with the CPU figures
# ("0.000000%;25.000000%;") somewhere after, as no other format's line starting "2;" has them
LINE = re.compile(r"^(?:([345]);fio-(\d[\w.\-+]*);|2;(?=[^\n]*;[\d.]+%;[\d.]+%;))", re.M)
MARK = LINE
BLOCK = {2: 41, 3: 41, 4: 41, 5: 47}
DIRECTIONS = {2: ("read", "write", "trim"), 3: ("read", "write"), 4: ("read", "write", "trim"),
              5: ("read", "write", "trim")}
# fio 2.0 to 2.0.9's version 2: read and write blocks, no trim
V2_BEFORE_TRIM = ("read", "write")
# fio keeps a job name in FIO_JOBNAME_SIZE bytes, its NUL included (thread_stat.name): a longer
# "name" is no name that held ';' (and trying every field of a long line as one took minutes)
JOB_NAME_BYTES = 128
WHOLE = re.compile(r"^-?\d+$")
FIO_COUNT_MAX = 2**64 - 1   # fio prints its counts (KiB, KiB/s, IOPS, ms) as unsigned long long
HEAD = 5   # version, fio version, job name, group id, error


def detect(text: str) -> bool:
    return LINE.search(text[:4096]) is not None


def parse(text: str) -> list[ImportedRun]:
    text, cut = cut_short.whole_lines(text)
    jobs: dict[tuple[str, str], list[tuple[int, list[str]]]] = {}
    versions: dict[str, None] = {}   # in the order of the lines
    for number, line in enumerate(text.splitlines(), 1):
        if LINE.match(line):
            split = line.split(";")
            if split[0] == "2":   # no fio version: an empty one in its place, so every version's head is 5 fields
                split.insert(1, "")
            fields = _rejoin_name(number, split)
            if fields[1]:
                versions[fields[1].removeprefix("fio-")] = None
            jobs.setdefault((fields[2], fields[3]), []).append((number, fields))
    if not jobs:
        raise Unreadable("no fio terse line (\"3;fio-3.33;JOB;...\")")
    run = ImportedRun("fio", next(iter(versions), None), f"terse v{next(iter(jobs.values()))[0][1][0]}", None,
                      no_version="fio's terse version 2 names no fio version")
    if len(versions) > 1:
        run.notes.append(f"lines of several fio versions ({', '.join(versions)}): the first line's named")
    run.notes.append("terse output holds no job options (rw, bs, iodepth, engine): each job is a fio step of its "
                     "name, its parameters not known; IOPS and KiB/s as fio truncated them (whole numbers)")
    for (name, _), lines in jobs.items():
        errors = [f[4] for _, f in lines if f[4] not in ("0", "")]
        if errors:
            run.notes.append(f"job {name}: fio reported error {errors[0]}: its figures cover only what ran before "
                             "it; not taken")
            continue
        step = ImportedStep(f"fio job {name}", "fio", {}, 1)
        blocks = [(number, _blocks(number, f)) for number, f in lines]
        before_trim = lines[0][1][0] == "2" and tuple(blocks[0][1]) == V2_BEFORE_TRIM
        if before_trim:
            run.notes.append("terse version 2 of fio 2.0 to 2.0.9 (no trim block): its bandwidth field is bytes/ms "
                             "before 2.0.8 and KiB/s after, so KiB/s is taken as KiB over the run time")
        for direction in blocks[0][1]:
            parts = [(number, b[direction]) for number, b in blocks if direction in b]
            if any(_int(b[0], number) > 0 for number, b in parts):
                step.samples.append(_sample(direction, parts, run, before_trim))
        if len(lines) > 1 and step.samples:
            run.notes.append(f"job {name}: {len(lines)} lines (numjobs without group_reporting): their IOPS and "
                             "bytes summed, as fio's group_reporting sums them")
        if step.samples:
            run.steps.append(step)
    if cut:
        run.notes.append(cut)
    return [run]


def _rejoin_name(number: int, fields: list[str]) -> list[str]:
    """The fields with a job name that held ';' joined back into one: the
    fewest name fields after which the group id and error are whole numbers
    and the rest falls into the line's blocks (a line shifted by a field has
    no percentile where its blocks hold them). A line that fits no way is
    left as it is, for _blocks to refuse."""
    for extra in range(len(fields) - HEAD):
        name = ";".join(fields[2:3 + extra])
        if len(name.encode()) >= JOB_NAME_BYTES:
            break
        joined = fields[:2] + [name] + fields[3 + extra:]
        if not all(WHOLE.match(v) for v in joined[3:5]):
            continue
        try:
            _blocks(number, joined)
            return joined
        except Unreadable:
            continue
    return fields


def _blocks(number: int, fields: list[str]) -> dict[str, list[str]]:
    """The line's direction blocks by name. A block's first two fields
    (KiB, KiB/s) are whole numbers; the CPU fields after the last block
    are percentages ("2.440000%"), which is where the blocks end. Each
    block's 20 percentiles ("99.000000%=259") and bandwidth share ("0.0%")
    are where its version puts them, or the line is not that version's:
    a field left out or added shifts every figure after it."""
    version = int(fields[0])
    if version == 2 and not any("%=" in f for f in fields):
        raise Unreadable(f"line {number}: terse version 2 of fio 1.58 or older (20 fields a direction: no IOPS, no "
                         "latency percentiles) is not read; fio 2.0 and later print IOPS in it")
    size, at, found = BLOCK[version], HEAD, []
    while at + size <= len(fields) and not fields[at].endswith("%"):
        found.append(fields[at: at + size])
        at += size
    shaped = all(all("%=" in p for p in b[12:32]) and b[38].endswith("%") for b in found)
    if not (found and shaped and at + 1 < len(fields) and fields[at].endswith("%") and fields[at + 1].endswith("%")):
        raise Unreadable(f"line {number}: {len(fields)} fields do not fall into terse version {version}'s blocks of "
                         f"{size} per direction (20 'P%=us' percentiles each) followed by the CPU figures "
                         "(a field cut or added?)")
    names = DIRECTIONS[version]
    if version == 2 and len(found) == len(V2_BEFORE_TRIM):
        names = V2_BEFORE_TRIM
    if len(found) == 1:
        return {"mixed": found[0]}        # unified_rw_reporting=1: one block, reads and writes together
    if len(found) == len(names) + 1:
        names = names + ("mixed",)        # unified_rw_reporting=both: the mix after the others
    if len(found) != len(names):
        raise Unreadable(f"line {number}: {len(found)} direction blocks, terse version {version} prints "
                         f"{len(names)} ({', '.join(names)})")
    return dict(zip(names, found))


def _int(v: str, number: int) -> int:
    """A count fio printed with %llu: past 2^64 - 1 it is none of fio's (a 400-digit IOPS field ended
    the import as "OverflowError: int too large to convert to float")."""
    try:
        n = int(v)
    except ValueError:
        raise Unreadable(f"line {number}: {v!r} is not a whole number") from None
    if abs(n) > FIO_COUNT_MAX:
        raise Unreadable(f"line {number}: {v[:20]}... ({len(v)} digits) is past the largest count fio prints "
                         "(2^64 - 1)")
    return n




def _latency(name: str, stats: list[str], number: int) -> dict[str, float]:
    """min/max/mean (us) as the JSON importer names them; all four 0 is fio
    printing no samples (its calc_lat failed: psync has no submission latency)."""
    if all(number_on_line(v, number) == 0 for v in stats):
        return {}
    return {f"{name}_us_{k}": number_on_line(v, number) for k, v in zip(("min", "max", "mean"), stats)}


def _percentiles(fields: list[str], number: int) -> dict[str, float]:
    out = {}
    for f in fields:
        p, _, v = f.partition("%=")
        if p != "0":   # fio pads its 20 places with "0%=0": no percentile
            out[f"clat_us_p{p.rstrip('0').rstrip('.').replace('.', '_')}"] = number_on_line(v, number)
    return out


def _sample(direction: str, parts: list[tuple[int, list[str]]], run: ImportedRun, rate_of_runtime: bool = False):
    """rate_of_runtime: KiB/s as KiB over the run time, not the bandwidth field (fio 2.0-2.0.9's version 2)."""
    number = parts[0][0]
    kib = sum(_int(b[0], n) for n, b in parts)
    if rate_of_runtime:
        kib_per_s = sum(_int(b[0], n) * 1000 / _int(b[3], n) for n, b in parts if _int(b[3], n) > 0)
    else:
        kib_per_s = sum(_int(b[1], n) for n, b in parts)
    iops = sum(_int(b[2], n) for n, b in parts)
    runtime_ms = max(_int(b[3], n) for n, b in parts)
    fields: dict = {"mib_per_s": kib_per_s / 1024, "seconds": runtime_ms / 1000, "bytes": kib * 1024,
                    "jobs": len(parts)}
    if len(parts) == 1:
        b = parts[0][1]
        fields.update(_latency("slat", b[4:8], number))
        fields.update(_latency("clat", b[8:12], number))
        fields.update(_percentiles(b[12:32], number))
        fields.update(_latency("lat", b[32:36], number))
    elif not any("latency percentiles" in n for n in run.notes):
        run.notes.append("latency percentiles of jobs without group_reporting are not combined: not taken")
    return measurement(direction, "n/a", float(iops), "IOPS", line=number, **fields)
