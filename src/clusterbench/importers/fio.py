"""fio's JSON and json+ output (--output-format=json / json+, fio 2.x-3.x),
its normal text output for the main figures, and its terse lines
(fio_terse: --minimal); a log several runs were appended to is a run per
JSON document or per run's text.

Per job name (the entries of one job with numjobs>1 and no group_reporting
summed, as randio's --jobs are) and per direction: IOPS as the sample, with
bandwidth, slat/clat/lat statistics and percentiles (us) and json+'s
latency bins in the record. A random-pattern job becomes a randio step
(pattern, block size, queue depth, jobs, runtime, ramp, direct, engine,
file size, read mix in randio's names), so it compares with `clusterbench
run randio` on the same work; other jobs are `fio` steps with fio's options.
fio 2.x reports latencies in us and io_bytes in KiB; 3.x in ns and bytes.
"""
from __future__ import annotations

import datetime as dt
import json
import os
import re

from clusterbench.importers import (ImportedRun, ImportedStep, Unreadable, cut_short, fio_terse, invocations,
                                   json_documents, measurement, number_on_line)
from clusterbench.importers.run_dates import from_epoch
from clusterbench.output.figure_digits import as_given
from clusterbench.results.sizes import parse_size, size_arg

RANDIO_PATTERNS = {"randread": "randread", "randwrite": "randwrite", "randrw": "randrw", "randrw,": "randrw"}
ENGINES = {"io_uring", "libaio", "psync"}
DIRECTIONS = (("read", "randread"), ("write", "randwrite"))
# where each checked figure of a sample is in the document, for the plausibility gate's message
MEMBERS = {"value": "iops", "seconds": "runtime", "bytes": "io_bytes", "mib_per_s": "bw", "ops": "total_ios"}
# "rr: (g=0): rw=randread, bs=(R) 4096B-4096B, (W) ..., ioengine=psync, iodepth=1"; fio 2.18 and older print
# "bs=4K-4K/4K-4K/4K-4K" (or "bs(seq/rand)=...") there
TEXT_JOB = re.compile(r"^(\S.*?): \(g=\d+\): rw=(\w+), bs(?:\(seq/rand\))?=(?:\(R\) )?(\S+?)-.*?ioengine=(\w+), "
                      r"iodepth=(\d+)", re.M)
MARK = TEXT_JOB   # where a fio run (its job lines) starts, anywhere in a file (importers.other_tools_in)


# fio --client=HOST's normal output: a line per server, then the servers' lines prefixed "<host> " but for
# the result blocks, and an "All clients" block summing them
CLIENT_SERVER = re.compile(r"^hostname=(\S+), be=\d+, \d+-bit, os=\S+, arch=\S+, fio=fio-(\S+), flags=\d+\s*$", re.M)
CLIENT_PREFIX = re.compile(r"^<[^>\n]+> ", re.M)


def detect(text: str) -> bool:
    head = text[:4096]
    if re.search(r'"fio version"\s*:', head) or fio_terse.detect(head):
        return True
    if CLIENT_SERVER.search(head):
        head = CLIENT_PREFIX.sub("", head)
        return bool(TEXT_JOB.search(head))
    return bool(re.search(r"^fio-[23]\.\d+", head, re.M) and TEXT_JOB.search(head))


def parse(text: str) -> list[ImportedRun]:
    # --output-format=json,terse prints the terse lines, then the JSON, which holds all they do and the job
    # options: the JSON is read, wherever it starts
    json_doc = re.search(r'"fio version"\s*:', text[:4096]) or (
        fio_terse.detect(text[:4096]) and re.search(r'^\{\s*\n\s*"fio version"\s*:', text, re.M))
    if fio_terse.detect(text[:4096]) and not json_doc:
        runs = fio_terse.parse(text)   # --minimal: a line of fields per job
        # --output-format=terse,normal: the text beside them (each terse line blanked, so lines keep their numbers)
        beside = "\n".join("" if fio_terse.LINE.match(line) else line for line in text.split("\n"))
        if TEXT_RESULT.search(beside):
            from clusterbench.importers.fio_terse_normal import merge

            text_runs = parse(beside)
            if len(text_runs) != 1:
                raise Unreadable(f"its terse lines are beside the normal text of {len(text_runs)} runs of fio: "
                                 "which run each line is of cannot be told (import each run's output alone)")
            return [merge(runs[0], text_runs[0])]
        return runs
    if json_doc:
        # one run per document (fio --output=log run twice); --output-format=json,normal prints the
        # JSON, then the same results as text, which are left out
        docs, skipped = json_documents.documents(text)
        # --status-interval=N writes a report every N seconds, each of the run so far, then the final one
        reports: list[list[dict]] = []
        for doc in docs:
            if reports and _continues(reports[-1][-1], doc):
                reports[-1].append(doc)
            else:
                reports.append([doc])
        runs = [_parse_json(each[-1]) for each in reports]
        for each, run in zip(reports, runs):
            if len(each) > 1:
                run.notes.append(f"{len(each) - 1} interim report(s) of this run (--status-interval) before fio's "
                                 "final one: left out")
        if skipped:
            runs[0].notes.append("lines around the JSON (fio's normal output with json,normal, its terse lines "
                                 "with json,terse, or other output) were skipped")
        return runs
    if TEXT_VERSION.search(text):
        # one run per "fio-3.33" line (a log that two runs were appended to), each from its job lines
        return invocations.text_runs(text, TEXT_VERSION, _text_run, "no \"fio-x.y\" version line", lead=TEXT_JOB_LINES)
    return [_parse_text(text)]


# -- JSON ------------------------------------------------------------------
def _continues(before: dict, doc: dict) -> bool:
    """Whether `doc` is a later report of the run `before` reported on
    (--status-interval): the same jobs, each having run longer and done no
    fewer I/Os, reported no later than the extra run time allows (fio's
    timestamps are whole seconds). A second run of the job file appended to
    the log starts its run time again, or reports after its whole run."""
    jobs_before, jobs = before.get("jobs"), doc.get("jobs")
    if not (isinstance(jobs_before, list) and isinstance(jobs, list)) or len(jobs_before) != len(jobs) or not jobs:
        return False
    if not all(isinstance(a, dict) and isinstance(b, dict) for a, b in zip(jobs_before, jobs)):
        return False
    if any((a.get("jobname"), a.get("groupid")) != (b.get("jobname"), b.get("groupid"))
           for a, b in zip(jobs_before, jobs)):
        return False
    if all("job_start" in j for j in jobs_before + jobs):   # fio 3.36 on: when each job started
        return all(a["job_start"] == b["job_start"] for a, b in zip(jobs_before, jobs))
    grown = []
    for a, b in zip(jobs_before, jobs):
        for d in ("read", "write", "mixed"):
            da, db = a.get(d), b.get(d)
            if isinstance(da, dict) and isinstance(db, dict) and _num(da.get("runtime")) and _num(db.get("runtime")):
                if db["runtime"] < da["runtime"] or (db.get("total_ios") or 0) < (da.get("total_ios") or 0):
                    return False
                grown.append(db["runtime"] - da["runtime"])
    t0, t1 = before.get("timestamp"), doc.get("timestamp")
    # no run time gained: the same report twice (a log appended to itself), which _each_run_once says
    return bool(grown) and max(grown) > 0 and _num(t0) and _num(t1) and 0 <= t1 - t0 <= max(grown) / 1000 + 1


def _parse_json(doc: dict) -> ImportedRun:
    jobs, clients, all_clients = doc.get("jobs"), set(), False
    if not isinstance(jobs, list) and isinstance(doc.get("client_stats"), list):
        # fio --client=HOST (its servers on other nodes): each entry a job on one server, named by its
        # hostname and port; with two or more, fio adds an "All clients" entry summing them, which would
        # count every figure twice
        jobs = [j for j in doc["client_stats"] if not (isinstance(j, dict) and j.get("jobname") == "All clients")]
        all_clients = len(jobs) < len(doc["client_stats"])
        clients = {(j.get("hostname"), j.get("port")) for j in jobs if isinstance(j, dict)}
    if not isinstance(jobs, list):
        raise Unreadable("no \"jobs\" list (nor fio --client's \"client_stats\")")
    version = str(doc.get("fio version", "")).removeprefix("fio-") or None
    plus = any(isinstance(j, dict) and isinstance(j.get(d), dict) and isinstance(j[d].get(c), dict)
               and "bins" in j[d][c] for j in jobs for d in ("read", "write") for c in ("clat_ns", "clat"))
    run = ImportedRun("fio", version, "json+" if plus else "JSON", None)
    if len(clients) > 1:
        run.notes.append(f"fio --client: the jobs of {len(clients)} servers, each job's figures summed over them"
                         + (" (fio's own \"All clients\" sum left out)" if all_clients else ""))
    glob = doc.get("global options") if isinstance(doc.get("global options"), dict) else {}
    if not glob and not any(isinstance(j, dict) and j.get("job options") for j in jobs):
        # fio before 2.3 writes neither: a randread job is then a fio step "read" with no parameter,
        # which compare matches with any other job of its name
        run.notes.append("the file holds no job options (fio before 2.3 writes none): the jobs' rw, bs, "
                         "iodepth and engine are not known (fio's normal output prints them)")
    by_name: dict[tuple, list[dict]] = {}
    for j in jobs:
        if not isinstance(j, dict) or "jobname" not in j:
            run.notes.append("a job entry without a name was skipped")
            continue
        by_name.setdefault((str(j["jobname"]), j.get("groupid")), []).append(j)
    for (name, _), entries in by_name.items():
        opts = {**{str(k): str(v) for k, v in glob.items()},
                **{str(k): str(v) for k, v in (entries[0].get("job options") or {}).items()}}
        errors = [e.get("error") for e in entries if e.get("error")]
        if errors:
            run.notes.append(_errored(name, errors[0]))
            continue
        step = _step(name, opts, len(entries))
        if _pattern(opts) and _not_randio(opts):
            # an fsync after each write measured 2,683 IOPS where buffered random writes do 100 times more
            run.notes.append(f"fio job {name}: {', '.join(_not_randio(opts))}, which randio does not do: a fio step, "
                             "not matched with randio's figures")
        if len(clients) > 1:   # one job on several nodes is no randio step of one node's jobs
            step = ImportedStep(f"fio job {name}", "fio", {**opts, "clients": str(len(clients))}, 1)
        for direction, rand_phase in DIRECTIONS:
            parts = _moved(entries, direction)
            if parts:
                step.samples.append(_sample(rand_phase if step.kernel == "randio" else direction, opts, parts, run,
                                            _syncs(entries) if direction == "write" else {}))
        if not step.samples and _moved(entries, "mixed"):
            # unified_rw_reporting=1: reads and writes as one "mixed" figure, which is no randio phase
            step = ImportedStep(f"fio job {name}", "fio", dict(opts), 1)
            step.samples.append(_sample("mixed", opts, _moved(entries, "mixed"), run))
        if step.samples:
            run.steps.append(step)
    if _num(doc.get("timestamp")):
        run.started, run.finished = _span(doc, [j for j in jobs if isinstance(j, dict)], glob)
    hosts = {str(j["hostname"]) for j in jobs if isinstance(j, dict) and j.get("hostname")}
    run.hosts = sorted(hosts)
    return run


def _moved(entries: list[dict], direction: str) -> list[dict]:
    """The entries' figures of one direction, where any of them moved data."""
    parts = [e[direction] for e in entries if isinstance(e.get(direction), dict)]
    return parts if any(_num(p.get("io_bytes")) and p["io_bytes"] > 0 for p in parts) else []


def _span(doc: dict, jobs: list[dict], glob: dict) -> tuple[dt.datetime, dt.datetime]:
    """When the run began and ended. fio writes `timestamp` (whole seconds) as the run ends, and the
    start was that less the longest job's time: up to a second early (`elapsed` is whole seconds;
    a stonewalled job's counts from fio's start, its wait included). From 3.36 `job_start` (ms of
    CLOCK_REALTIME, unless the job set `job_start_clock_id`: another clock) dates the start to the
    millisecond, and `timestamp_ms` the end (the whole second would fall before a short job began)."""
    starts, end_ms = [j.get("job_start") for j in jobs], doc.get("timestamp_ms")

    def clock(j: dict) -> str:
        opts = j.get("job options") if isinstance(j.get("job options"), dict) else {}
        return str(opts.get("job_start_clock_id", glob.get("job_start_clock_id", "0")))

    if (jobs and _num(end_ms) and 0 <= end_ms / 1e3 - doc["timestamp"] < 1
            and all(_num(t) and 0 < t <= end_ms for t in starts) and all(clock(j) == "0" for j in jobs)):
        return from_epoch(min(starts) / 1e3, '"job_start"'), from_epoch(end_ms / 1e3, '"timestamp_ms"')
    ended = from_epoch(doc["timestamp"], '"timestamp"')
    elapsed = max((_job_seconds(j) for j in jobs), default=0.0)
    return ended - dt.timedelta(seconds=elapsed), ended


def _job_seconds(job: dict) -> float:
    """How long a job ran: the longest of its `elapsed` (whole seconds, the
    ramp included, but 0 for a job under half a second: such a run listed as
    taking 0.0 s) and its run times in milliseconds (`job_runtime` of fio 3,
    each direction's `runtime`, which every figure imported has)."""
    times = [float(job["elapsed"])] if _num(job.get("elapsed")) else []
    times += [float(job["job_runtime"]) / 1e3] if _num(job.get("job_runtime")) else []
    times += [float(job[d]["runtime"]) / 1e3 for d in ("read", "write", "trim", "mixed")
              if isinstance(job.get(d), dict) and _num(job[d].get("runtime"))]
    # a damaged or hand-edited file: a time that is no time (NaN, negative, centuries) says nothing
    return max((t for t in times if 0 <= t < 1e9), default=0.0)


def _errored(name: str, error) -> str:
    """The note for a job fio reported an error for (ENOSPC, EIO...): its
    figures are of the part it ran before the error, not of the job asked
    for, and compare would take them for the job's."""
    code = int(error) if _num(error) else None
    why = f" ({os.strerror(code)})" if code and code > 0 else ""
    return f"job {name}: fio reported error {error}{why}: its figures cover only what ran before it; not taken"


def _num(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _f(d: dict, key: str) -> float:
    v = d.get(key)
    if not _num(v):
        raise Unreadable(f"'{key}' is {json.dumps(v)}, not a number")
    return float(v)


def _latency(d: dict, name: str) -> dict:
    """slat/clat/lat: fio 3.x *_ns, fio 2.x in us; as *_us fields."""
    out = {}
    if isinstance(d.get(f"{name}_ns"), dict):
        stats, scale = d[f"{name}_ns"], 1e-3
    elif isinstance(d.get(name), dict):
        stats, scale = d[name], 1.0
    else:
        return out
    for k in ("min", "max", "mean"):
        if _num(stats.get(k)):
            out[f"{name}_us_{k}"] = stats[k] * scale
    pct = stats.get("percentile")
    if isinstance(pct, dict):
        for p, v in pct.items():
            # fio 2.x pads its list to 20 entries with "0.00": 0 (real ones print "%f", "1.000000"): no p0 of 0 us
            if _num(v) and p != "0.00":
                out[f"{name}_us_p{p.rstrip('0').rstrip('.').replace('.', '_')}"] = v * scale
    bins = stats.get("bins")
    if isinstance(bins, dict) and _num(bins.get("FIO_IO_U_PLAT_BITS")) and _num(bins.get("FIO_IO_U_PLAT_VAL")):
        # fio 2.x json+: every bin by its index ("0" ... "1215"), with the constants that map an index to
        # its latency in us; fio 3 names each non-empty bin by its latency in ns
        bits, val = int(bins["FIO_IO_U_PLAT_BITS"]), int(bins["FIO_IO_U_PLAT_VAL"])
        out[f"{name}_ns_bins"] = {str(_bin_us(int(k), bits, val) * 1000): v for k, v in bins.items()
                                  if k.isdigit() and _num(v) and v}
    elif isinstance(bins, dict):
        out[f"{name}_ns_bins"] = {str(k): v for k, v in bins.items() if _num(v)}
    return out


def _bin_us(idx: int, bits: int, val: int) -> int:
    """fio 2.x's latency (us) of histogram bin `idx`: stat.c plat_idx_to_val (the bin's middle, truncated)."""
    if idx < (val << 1):
        return idx
    error_bits = (idx >> bits) - 1
    return int((1 << (error_bits + bits)) + (idx % val + 0.5) * (1 << error_bits))


def _syncs(entries: list[dict]) -> dict:
    """fio 3.x's per-job "sync" block, the fsync/fdatasync calls (fsync=N, end_fsync...): their count
    and latency, for the write sample's record (a write's own latency leaves them out: 6 us a write
    beside 363 us a sync); one job's alone, as latencies of several are not combined."""
    sync = entries[0].get("sync") if len(entries) == 1 else None
    if not isinstance(sync, dict) or not _num(sync.get("total_ios")) or not sync["total_ios"]:
        return {}
    return {"sync_ops": int(sync["total_ios"]), **_latency({"sync_lat_ns": sync.get("lat_ns")}, "sync_lat")}


def _sample(phase: str, opts: dict, parts: list[dict], run: ImportedRun, syncs: dict | None = None):
    iops = sum(_f(p, "iops") for p in parts)
    kib_per_s = sum(_f(p, "bw") for p in parts)
    runtime_ms = max(_f(p, "runtime") for p in parts)
    if "io_kbytes" in parts[0]:
        data = int(sum(_f(p, "io_bytes") for p in parts))
    else:  # fio 2.x: io_bytes in KiB
        data = int(sum(_f(p, "io_bytes") for p in parts) * 1024)
    ios = sum(int(p["total_ios"]) for p in parts if _num(p.get("total_ios"))) or None
    # an entry per job, but one for all of a group_reporting job's numjobs: "jobs": 1 beside --jobs=2
    numjobs = int(opts["numjobs"]) if opts.get("numjobs", "").isdigit() else 1
    fields = {"mib_per_s": kib_per_s / 1024, "seconds": runtime_ms / 1000, "bytes": data, "ops": ios,
              "jobs": max(len(parts), numjobs)}
    if len(parts) == 1:
        for name in ("slat", "clat", "lat"):
            fields.update(_latency(parts[0], name))
    elif not any("latency percentiles" in n for n in run.notes):
        run.notes.append("latency percentiles of jobs without group_reporting are not combined: not taken")
    fields.update(syncs or {})
    mode = "direct" if _flag(opts.get("direct", "0")) else "buffered"
    return measurement(phase, mode, iops, "IOPS", member=MEMBERS, **fields)


def _flag(v: str) -> bool:
    return v.strip().lower() not in ("0", "false", "no", "off", "")


def _seconds(v: str) -> str:
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*(s|sec|m|min|ms|us|h)?\s*", v)
    if not m:
        return v
    n = float(m.group(1)) * {"s": 1, "sec": 1, None: 1, "m": 60, "min": 60, "h": 3600, "ms": 1e-3,
                             "us": 1e-6}[m.group(2)]
    return as_given(n)   # :g wrote runtime=1234567 as "1.23457e+06": another run's parameter, 6 digits of it


# job options that change what a random job measures and randio has no parameter for: a sync after
# every N writes, O_SYNC/O_DSYNC writes, a rate cap, think time between I/Os, verify's reading back
NOT_RANDIO = ("fsync", "fdatasync", "sync", "rate", "rate_iops", "rate_min", "rate_iops_min", "thinktime", "verify")


def _not_randio(opts: dict) -> list[str]:
    """The job's options (`fsync=1`) that make it no randio measurement; [] for none."""
    return [f"{k}={opts[k]}" for k in NOT_RANDIO if str(opts.get(k, "0")).lower() not in ("0", "", "none")]


def _pattern(opts: dict) -> str | None:
    """randio's pattern of the job's rw (randread, randwrite, randrw); None for sequential jobs."""
    return RANDIO_PATTERNS.get(opts.get("rw", opts.get("readwrite", "read")).split(":")[0])


def _step(name: str, opts: dict, entries: int) -> ImportedStep:
    pattern = _pattern(opts)
    jobs = int(opts["numjobs"]) if opts.get("numjobs", "").isdigit() else entries
    if pattern is None or _not_randio(opts):
        return ImportedStep(f"fio job {name}", "fio", dict(opts), 1)
    params = {"pattern": pattern, "block-size": opts.get("bs", opts.get("blocksize", "4k")).lower(),
              "iodepth": opts.get("iodepth", "1"), "jobs": str(jobs),
              "runtime": _seconds(opts.get("runtime", "0")), "ramp": _seconds(opts.get("ramp_time", "0")),
              "direct": "true" if _flag(opts.get("direct", "0")) else "false"}
    if opts.get("ioengine") in ENGINES:
        params["engine"] = opts["ioengine"]
        if params["engine"] in ("io_uring", "libaio"):
            params["poll"] = "0"   # fio sleeps for each completion: randio's --poll=0, not its default
    if "size" in opts:
        params["file-size"] = opts["size"].lower()
    if pattern == "randrw":
        params["rwmix"] = opts.get("rwmixread", str(100 - int(opts["rwmixwrite"])) if
                                   opts.get("rwmixwrite", "").isdigit() else "50")
    if "directory" in opts:
        params["dir"] = opts["directory"]
    return ImportedStep(f"fio job {name}", "randio", params, 1)


def _size_text(text: str) -> str:
    """fio's "4096B" / "1024KiB" / "4KiB" as a size parameter's text ("4k", "1m")."""
    n = parse_size(text)
    return size_arg(n) if n is not None else text.lower()


# -- normal text -------------------------------------------------------------
TEXT_VERSION = re.compile(r"^fio-(\d[\w.\-]*)\s*$", re.M)
# the job lines fio prints before its version line ("rr: (g=0): rw=randread, ...", "..." for numjobs > 1),
# which open the run
TEXT_JOB_LINES = re.compile(r"(?:^\S.*?: \(g=\d+\): rw=[^\n]*\n(?:\.\.\.\n)?)+", re.M)
# a job fio reported an error for says where: "err=27 (file:io_u.c:1876, func=io_u error, error=File too large): pid="
TEXT_RESULT = re.compile(r"^(\S.*?): \(groupid=\d+, jobs=(\d+)\): err=\s*(\d+)(?: \(.*\))?: pid=\d+: (.+)$", re.M)
# 3.x: "  read: IOPS=27.0k, BW=105MiB/s (111MB/s)(106MiB/1001msec)";
# 2.x: "  read : io=..., bw=..., iops=27011, runt= 1001msec"; "mixed": reads and writes together (unified_rw_reporting)
# with kb_base=1000, 3.x prints decimal units first: "BW=419MB/s (400MiB/s)(2097kB/5msec)"
TEXT_DIR3 = re.compile(r"^\s+(read|write|mixed)\s*: IOPS=([\d.]+)([kM]?), BW=([\d.]+)([kKMGT]?i?B)/s.*?"
                       r"\((\d+(?:\.\d+)?)([kKMGTP]?i?B)/(\d+)msec\)", re.M)
TEXT_DIR2 = re.compile(r"^\s+(read|write|mixed)\s*: io=([\d.]+)([KMGT]?B), bw=([\d.]+)([KMG]?B)/s, "
                       r"iops=(\d+)([KM]?), runt=\s*(\d+)msec", re.M)
SCALE = {"": 1, "k": 1e3, "M": 1e6}
SCALE2 = {"": 1, "K": 1e3, "M": 1e6}   # fio 2.x: iops=1234K (num2str's decimal suffixes)
# fio 2.x's KB, MB... are 2^10, 2^20 (kb_base=1024, its default); fio 3.x names those KiB, MiB, and its
# kB, MB, GB are 10^3, 10^6, 10^9 (kb_base=1000)
BYTES = {"B": 1, "KiB": 1024, "MiB": 1024**2, "GiB": 1024**3, "TiB": 1024**4, "KB": 1024, "MB": 1024**2,
         "GB": 1024**3, "TB": 1024**4}
BYTES3 = {"B": 1, "KiB": 1024, "MiB": 1024**2, "GiB": 1024**3, "TiB": 1024**4, "PiB": 1024**5,
          "kB": 1e3, "KB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12, "PB": 1e15}


def _mib_per_s(data_bytes: float, runtime_ms: int) -> float | None:
    """The rate of a text result line; None for fio's "0msec", which the
    plausibility gate then refuses as data moved in no time."""
    return data_bytes / 2**20 / (runtime_ms / 1000) if runtime_ms > 0 else None


def _parse_text(text: str) -> ImportedRun:
    text, cut = cut_short.whole_lines(text)
    servers = CLIENT_SERVER.findall(text)
    if servers:   # fio --client: the "<host> " before the servers' lines set aside (each line keeps its number)
        text = CLIENT_PREFIX.sub("", text)
    run = _text_run(text, 1, len(servers))
    if servers:
        run.version = run.version or servers[0][1]
        run.hosts = sorted({h for h, _ in servers})
    if cut:
        run.notes.append(cut)
    return run


def _text_run(text: str, first_line: int, servers: int = 0) -> ImportedRun:
    """One run of fio's normal output: `text` from its job lines to the
    next run's; `first_line` is the file's line it starts on."""
    v = TEXT_VERSION.search(text)
    run = ImportedRun("fio", v.group(1) if v else None, "text", None)
    heads = {m.group(1): m for m in TEXT_JOB.finditer(text)}
    results = list(TEXT_RESULT.finditer(text))
    if not results:
        raise Unreadable("no job result block (\"NAME: (groupid=N, jobs=N): err= ...\")")
    # the blocks of one job name (numjobs > 1 without group_reporting prints one per clone) are one
    # step, their rates summed, as the JSON's entries of one job are (_parse_json)
    blocks: dict[str, list[tuple[re.Match, str]]] = {}
    for i, r in enumerate(results):
        blocks.setdefault(r.group(1), []).append((r, text[r.end(): results[i + 1].start() if i + 1 < len(results)
                                                  else len(text)]))
    if servers:   # fio --client: fio's own sum of the servers' blocks, which would count each figure twice
        blocks.pop("All clients", None)
    for name, parts in blocks.items():
        head = heads.get(name)
        errors = [int(r.group(3)) for r, _ in parts if int(r.group(3))]
        if errors:
            run.notes.append(_errored(name, errors[0]))
            continue
        opts = {"rw": head.group(2), "bs": _size_text(head.group(3)), "ioengine": head.group(4),
                "iodepth": head.group(5)} if head else {}
        # a block per clone (numjobs without group_reporting), on each server (fio --client)
        per_server = len(parts) // servers if servers > 1 and len(parts) % servers == 0 else len(parts)
        if per_server > 1:
            opts["numjobs"] = str(per_server)
        step = ImportedStep(f"fio job {name}", "fio", opts, 1)
        figures: dict[str, list[tuple[float, float, int, int]]] = {}   # direction -> (IOPS, bytes, ms, line)
        for r, block in parts:
            at = first_line + text.count("\n", 0, r.end())
            # a figure of digits and dots that is none ("IOPS=27.0.7k") refused naming its line, not a ValueError
            for m in TEXT_DIR3.finditer(block):
                n = at + block.count("\n", 0, m.start(1))
                figures.setdefault(m.group(1), []).append((number_on_line(m.group(2), n) * SCALE[m.group(3)],
                                                           number_on_line(m.group(6), n) * BYTES3[m.group(7)],
                                                           int(m.group(8)), n))
            for m in TEXT_DIR2.finditer(block):
                n = at + block.count("\n", 0, m.start(1))
                figures.setdefault(m.group(1), []).append((number_on_line(m.group(6), n) * SCALE2[m.group(7)],
                                                           number_on_line(m.group(2), n) * BYTES[m.group(3)],
                                                           int(m.group(8)), n))
        if figures.keys() - {"mixed"}:   # unified_rw_reporting=both prints read, write and their mix: the first two
            figures.pop("mixed", None)
        for direction, each in figures.items():
            data, runtime_ms = sum(f[1] for f in each), max(f[2] for f in each)
            step.samples.append(measurement(direction, "n/a", sum(f[0] for f in each), "IOPS",
                                            seconds=runtime_ms / 1000, line=each[0][3], bytes=int(data),
                                            mib_per_s=_mib_per_s(data, runtime_ms),
                                            **({"jobs": len(each)} if len(each) > 1 else {})))
        if len(parts) > 1 and step.samples and servers > 1:
            opts["clients"] = str(servers)
            run.notes.append(f"job {name}: a result block per server of {servers} (fio --client): their IOPS and "
                             "bytes summed (fio's own \"All clients\" sum left out)")
        elif len(parts) > 1 and step.samples:
            run.notes.append(f"job {name}: {len(parts)} result blocks (numjobs without group_reporting): "
                             "their IOPS and bytes summed, as fio's group_reporting sums them")
        if re.search(r"issued r\w*: total=(\d+),(\d+)", parts[0][1]) and step.samples:
            run.notes.append("text output: IOPS as fio rounded them (3 figures); the JSON output has them exact")
        if step.samples:
            run.steps.append(step)
        for r, _ in parts:
            try:
                run.started = run.started or dt.datetime.strptime(r.group(4).strip(), "%a %b %d %H:%M:%S %Y") \
                    .replace(tzinfo=dt.timezone.utc)
            except ValueError:
                pass
    run.notes = list(dict.fromkeys(run.notes))
    if run.started:
        run.notes.append("text output: the date is fio's local time, stored as UTC")
    return run
