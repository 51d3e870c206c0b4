"""docs/records.md names every field cbk writes, and nothing cbk does not.

Every kernel runs here briefly, once per mode that adds fields (a buffered
write's `sync_seconds`, a verify that finds a wrong byte, randio's read/write
mix, himeno's timed run, MPI-IO's hints and a stonewall, tcp's rr test, pairs
and server, a stop by a signal); every key of every record it prints, a
nested one as `parent.child`, must be one the page lists for that record type
(a measurement's: the driver's table or that kernel's line). The reverse: a
field the page lists that no run here wrote is stale, but for the few named
in NOT_RUN_HERE, whose mode needs what this machine may lack (a GPU).

How the page is read (the notation it keeps, stated in its rules): a field
is a backticked name outside parentheses, which hold its meaning;
`lat_us_p50/p90` is `lat_us_p50` and `lat_us_p90`; a list item
"`parent`: `a`, `b`" (indented under a kernel or record type) lists the
fields of the object `parent`, or of each object of the array `parent`."""
from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import pytest


ROOT = Path(__file__).resolve().parent.parent
RECORDS_MD = ROOT / "docs" / "records.md"
# Objects whose keys are names, not fields (a kernel's parameters, the
# environment's MPI tuning variables, the kernels a build left out): the
# page documents the object, and these keys are data.
NAME_MAPS = {("run", "parameters"), ("measurement", "library_tuning"), ("describe", "left_out"),
             ("run", "phase_words"), ("describe", "kernels.phase_words")}   # phase -> its words
# Documented fields no launch here writes, and why: checked only where they can run.
NOT_RUN_HERE = {
    ("measurement", "mpi"): ({"buffer", "buffer_path", "buffer_query"}, "--buffer=device needs a GPU"),
    ("measurement", "linkmatrix"): ({"tcp_bytes_sent", "tcp_bytes_retransmitted", "tcp_segments_sent",
                                     "tcp_segments_duplicated"},
                                    "link_retransmits needs ranks on two addresses whose MPI links are TCP "
                                    "(tests/test_cluster_run.py runs it on the test cluster)"),
}
ENVELOPE = ("schema", "type", "kernel")  # every record's first keys: the page's rules, above its first section
# Records the page lists that cbk does not write: the runner's wrapper prints them into the same stream.
NOT_CBKS = {"memory-cgroup"}


@dataclass
class Launch:
    kernel: str
    args: list[str]
    ranks: int = 1
    env: dict = field(default_factory=dict)
    status: int = 0  # a verify that finds the byte a test hook changed fails the run, by design


# One brief launch per mode that adds fields; --dir={tmp} is the test's tmp_path.
LAUNCHES = [
    # buffered: sync_seconds and the buffered+sync record; a wrong byte: verify_ok false, its offset, an error
    Launch("seqio", ["--dir={tmp}", "--file-size=1m", "--block-size=256k", "--write=buffered", "--verify"],
           env={"CBK_TEST_CORRUPT_OFFSET": "1000"}, status=1),
    Launch("manyfiles", ["--dir={tmp}", "--files=2", "--file-size=256k", "--block-size=64k", "--write=buffered",
                         "--read=cold", "--verify"], env={"CBK_TEST_CORRUPT_OFFSET": "1000"}, status=1),
    Launch("randio", ["--dir={tmp}", "--file-size=1m", "--runtime=0.2", "--ramp=0", "--pattern=randrw"]),
    # time mode: calibration_seconds, target_seconds; a thread sweep: sweep
    Launch("himeno", ["--size=XS", "--mode=time", "--seconds=0.05", "--sweep=threads", "--threads=2"]),
    Launch("stream", ["--array-size=1m", "--passes=2"]),
    Launch("cpufreq", ["--seconds=0.05", "--max-busy=1"]),
    Launch("null", ["--bytes=1k"]),
    Launch("tcp", ["--duration=0.2", "--port=0", "--direction=bidir"]),
    Launch("tcp", ["--duration=0.2", "--port=0", "--test=rr"]),
    Launch("tcp", ["--role=pairs", "--duration=0.2", "--port=0"], ranks=2),
    Launch("tcp", ["--role=pairs", "--duration=0.2", "--port=0", "--test=rr"], ranks=2),
    # point-to-point, a window, a collective with its check
    Launch("mpi", ["--op=pingpong,bw,allreduce", "--sizes=8,1k", "--iterations=10", "--warmup=1"], ranks=2),
    # fsync at the end: the buffered and fsync records; a wrong byte: the error's writer_rank and offset
    Launch("pario", ["--dir={tmp}", "--block-size=256k", "--transfer-size=64k", "--fsync=end", "--verify"], ranks=2,
           env={"CBK_TEST_CORRUPT_OFFSET": "1000"}, status=1),
    Launch("pario", ["--dir={tmp}", "--block-size=256k", "--transfer-size=64k", "--api=mpiio", "--deadline=0.001",
                     "--wear-out"], ranks=2),
    # data written and read back: the fsync mode and rank0_read_data_of_rank
    Launch("metadata", ["--dir={tmp}", "--items=4", "--unique-dir", "--write-bytes=8", "--read-bytes=8", "--fsync"],
           ranks=2),
    Launch("linkmatrix", ["--size=64k", "--iterations=2", "--latency-iterations=5"], ranks=2),
]
# The GPU kernels, with cbk built with CUDA, where a GPU is visible; d2d adds event_read_write_gb_per_s.
GPU_LAUNCHES = [
    Launch("gpucopy", ["--sizes=8,64k", "--direction=h2d,d2d"]),
    Launch("gpumem", ["--array-size=8m", "--passes=2"]),
    Launch("gpupeer", ["--size=1m", "--iterations=2", "--direction=unidir"]),
    Launch("mpi", ["--op=pingpong", "--sizes=8", "--iterations=10", "--warmup=1", "--buffer=device"], ranks=2),
]


# ---------------------------------------------------------------- the records

def key_paths(record: dict, kind: str) -> set[str]:
    """Every key of a record, a nested one as parent.child (an array's
    objects' keys under the array's name); a name map's keys are not fields."""
    paths: set[str] = set()

    def walk(obj: dict, prefix: str) -> None:
        for key, value in obj.items():
            path = prefix + key
            paths.add(path)
            if (kind, path) in NAME_MAPS:
                continue
            items = value if isinstance(value, list) else [value]
            for item in items:
                if isinstance(item, dict):
                    walk(item, path + ".")

    walk(record, "")
    return paths


def parse(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines() if line.startswith("{")]


def run_launch(cbk: str, launch: Launch, tmp: Path, mpiexec: str | None) -> list[dict]:
    cmd = ([mpiexec, "-n", str(launch.ranks)] if launch.ranks > 1 else []) + [cbk, launch.kernel]
    cmd += [a.format(tmp=tmp) for a in launch.args]
    # Open MPI's mpiexec refuses root without these (a container, the GPU machine); MPICH ignores them
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", **launch.env)
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=100, env=env)
    assert p.returncode == launch.status, f"{' '.join(cmd)}: {p.stderr[-2000:]}"
    return parse(p.stdout) + parse(p.stderr)


def server_and_client(cbk: str) -> list[dict]:
    """tcp --role=server (its `listening` record) and a client to it."""
    server = subprocess.Popen([cbk, "tcp", "--role=server", "--port=0", "--idle-timeout=20"], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
    try:
        listening = json.loads(server.stdout.readline())
        client = subprocess.run([cbk, "tcp", "--role=client", "--server=127.0.0.1", f"--port={listening['port']}",
                                 "--duration=0.2"], capture_output=True, text=True, timeout=60)
        assert client.returncode == 0, client.stderr
        out, err = server.communicate(timeout=30)
        assert server.returncode == 0, err
        return [listening, *parse(out), *parse(err), *parse(client.stdout)]
    finally:
        if server.poll() is None:
            server.kill()
            server.communicate()


def stopped_by_a_signal(cbk: str) -> list[dict]:
    """cbk ended by SIGTERM mid-run: the `stopped` record on stderr."""
    p = subprocess.Popen([cbk, "null", "--seconds=0.2", "--repetitions=100"], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    try:
        first = p.stdout.readline()  # a measurement: the driver runs, its handlers are in place
        p.send_signal(signal.SIGTERM)
        out, err = p.communicate(timeout=30)
    finally:
        if p.poll() is None:
            p.kill()
            p.communicate()
    assert p.returncode == -signal.SIGTERM, err
    return parse(first + out) + parse(err)


Emitted = dict  # (record type, kernel or None) -> set of key paths


def collect(records: list[dict], into: Emitted) -> None:
    for rec in records:
        kind = rec["type"]
        scope = rec["kernel"] if kind == "measurement" else None
        into.setdefault((kind, scope), set()).update(key_paths(rec, kind))


@pytest.fixture(scope="module")
def emitted(cbk_bin, tmp_path_factory, request) -> tuple[Emitted, dict, bool]:
    """What every launch here wrote, cbk --describe, and whether the MPI launches ran."""
    described = json.loads(subprocess.run([cbk_bin, "--describe"], capture_output=True, text=True,
                                          check=True).stdout)
    try:
        mpiexec = request.getfixturevalue("mpiexec")
    except pytest.skip.Exception:  # a cbk without MPI, or no mpiexec: the one-rank launches still run
        mpiexec = None
    found: Emitted = {}
    collect([described], found)
    for launch in LAUNCHES:
        if launch.ranks > 1 and not mpiexec:
            continue
        collect(run_launch(cbk_bin, launch, tmp_path_factory.mktemp(launch.kernel), mpiexec), found)
    collect(server_and_client(cbk_bin), found)
    collect(stopped_by_a_signal(cbk_bin), found)
    return found, described, mpiexec is not None


# ---------------------------------------------------------------- the page

FIELD = re.compile(r"[a-z][a-z0-9_]*(?:\.[a-z][a-z0-9_]*)*(?:/[a-z0-9_]+)*")


def scan(text: str) -> list[str]:
    """The backticked words outside parentheses, and ':' where one stands
    outside backticks and parentheses (as the word ':')."""
    out, depth, i = [], 0, 0
    while i < len(text):
        ch = text[i]
        if ch == "`":
            end = text.find("`", i + 1)
            end = len(text) if end < 0 else end
            if depth == 0:
                out.append(text[i + 1:end])
            i = end + 1
            continue
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth = max(0, depth - 1)
        elif ch == ":" and depth == 0:
            out.append(":")
        i += 1
    return out


def names(words: list[str]) -> set[str]:
    """Field names among scanned words; `a_p50/p90` is a_p50 and a_p90."""
    found = set()
    for word in words:
        if not FIELD.fullmatch(word):
            continue
        first, *more = word.split("/")
        if more and "_" not in first:
            continue  # n/a and the like: a value, not fields
        found.add(first)
        found.update(first.rsplit("_", 1)[0] + "_" + m for m in more)
    return found


def list_items(lines: list[str]) -> list[tuple[int, str]]:
    """Markdown list items as (indent, text), continuation lines joined."""
    items: list[list] = []
    open_item = False
    for line in lines:
        m = re.match(r"^(\s*)- (.*)", line)
        if m:
            items.append([len(m.group(1)), m.group(2)])
            open_item = True
        elif open_item and line.strip() and line.startswith(" "):
            items[-1][1] += " " + line.strip()
        else:
            open_item = False
    return [(indent, text) for indent, text in items]


def nested(text: str) -> set[str]:
    """A nested item "`parent`, `other`: `a`, `b`": parent.a, parent.b, other.a, other.b."""
    words = scan(text)
    if ":" not in words:
        return set()
    at = words.index(":")
    return {f"{p}.{c}" for p in names(words[:at]) for c in names(words[at + 1:])}


def sections(text: str) -> dict[str, list[str]]:
    """The page's lines under each '## ' and '### ' heading, by heading text."""
    found: dict[str, list[str]] = {}
    current = ""
    for line in text.splitlines():
        if line.startswith("#"):
            current = line.lstrip("#").strip()
            found[current] = []
        else:
            found.setdefault(current, []).append(line)
    return found


def first_paragraph(lines: list[str]) -> str:
    para = []
    for line in lines:
        if not line.strip() or line.lstrip().startswith("- "):
            if para:
                break
            continue
        para.append(line)
    return " ".join(para)


def documented(text: str) -> tuple[Emitted, str]:
    """(record type, kernel or None; ('measurement', '*') for the driver's
    fields) -> the fields the page lists; and its rules' text."""
    doc: Emitted = {}
    by_heading = sections(text)
    heading = {re.match(r"`?([\w-]+)", h).group(1) if h else "": h for h in by_heading}
    # the driver's fields: the first cell of each row of the measurement section's table
    table = [line for line in by_heading[heading["measurement"]] if line.startswith("| `")]
    doc[("measurement", "*")] = names([w for row in table for w in scan(row.split("|")[1])])
    # each kernel's line: "- **kernel**: fields", its nested items below it
    kernel = None
    for indent, item in list_items(by_heading[heading["Kernel"]]):
        m = re.match(r"\*\*(\w+)\*\*", item)
        if indent == 0 and m:
            kernel = m.group(1)
            doc[("measurement", kernel)] = names(scan(item))
        elif kernel:
            doc[("measurement", kernel)] |= nested(item)
    # run, started, error, stopped: the first paragraph, and its list items as nested objects
    for kind in ("run", "started", "error", "stopped"):
        lines = by_heading[heading[kind]]
        doc[(kind, None)] = names(scan(first_paragraph(lines)))
        for _, item in list_items(lines):
            doc[(kind, None)] |= nested(item)
    # kernel-specific records: "- `type` (kernel): fields", nested items below
    kind = None
    for indent, item in list_items(by_heading[heading["Kernel-specific"]]):
        words = scan(item)
        if indent == 0:
            kind = words[0] if words else None
            doc[(kind, None)] = names(words[1:])
        elif kind:
            doc[(kind, None)] |= nested(item)
    return doc, text.split("\n## ", 1)[0]


def undocumented(found: Emitted, doc: Emitted, rules: str) -> dict[str, list[str]]:
    """Where (record type, and a measurement's kernel) -> the keys written there that the page does not list."""
    missing = {}
    driver = doc.get(("measurement", "*"), set())
    for (kind, kernel), keys in sorted(found.items(), key=str):
        where = f"{kind} {kernel or ''}".strip()
        if (kind, kernel) not in doc:
            missing[where] = ["(no section for this record type or kernel)"]
            continue
        listed = doc[(kind, kernel)] | (driver if kind == "measurement" else set())
        lacking = sorted(k for k in keys - listed if not (k in ENVELOPE and f"`{k}`" in rules))
        if lacking:
            missing[where] = lacking
    return missing


def stale(found: Emitted, doc: Emitted, skip_kernels: set[str]) -> dict[str, list[str]]:
    """Where -> the fields the page lists there that no launch wrote (NOT_RUN_HERE aside)."""
    out = {}
    measured = set().union(*(keys for (kind, _), keys in found.items() if kind == "measurement"))
    for (kind, kernel), listed in sorted(doc.items(), key=str):
        if kernel in skip_kernels or kind in NOT_CBKS:
            continue
        wrote = measured if kernel == "*" else found.get((kind, kernel), set())
        unrun = NOT_RUN_HERE.get((kind, kernel), (set(), ""))[0]
        extra = sorted(listed - wrote - unrun)
        if extra:
            out[f"{kind} {kernel or ''}".strip()] = extra
    return out


# ---------------------------------------------------------------- the tests

@pytest.mark.timeout(180)
def test_every_field_cbk_writes_is_in_records_md(emitted):
    found, _, _ = emitted
    doc, rules = documented(RECORDS_MD.read_text())
    missing = undocumented(found, doc, rules)
    assert not missing, "fields cbk writes that docs/records.md does not list:\n" + "\n".join(
        f"  {where}: {', '.join(keys)}" for where, keys in missing.items())


@pytest.mark.timeout(180)
def test_every_field_records_md_lists_is_one_cbk_writes(emitted):
    found, described, mpi_ran = emitted
    if not mpi_ran:
        pytest.skip("the MPI kernels did not run (no MPI in cbk, or no mpiexec): their fields would all look stale")
    doc, _ = documented(RECORDS_MD.read_text())
    # the GPU kernels' fields are checked where a GPU runs them (below)
    gpu = {k for k, v in described["left_out"].items() if v["family"] == "gpu"}
    gpu |= {k["name"] for k in described["kernels"] if k["family"] == "gpu"}
    extra = stale(found, doc, gpu)
    assert not extra, "fields docs/records.md lists that no kernel wrote in any mode run here (stale?):\n" + \
        "\n".join(f"  {where}: {', '.join(keys)}" for where, keys in extra.items())


def test_every_kernel_of_cbk_runs_here_and_has_its_line_in_records_md(cbk_bin):
    described = json.loads(subprocess.run([cbk_bin, "--describe"], capture_output=True, text=True,
                                          check=True).stdout)
    kernels = {k["name"]: k["family"] for k in described["kernels"]}
    kernels.update({name: v["family"] for name, v in described["left_out"].items()})
    launched = {launch.kernel for launch in LAUNCHES + GPU_LAUNCHES}
    assert sorted(set(kernels) - launched) == []
    doc, _ = documented(RECORDS_MD.read_text())
    assert sorted(k for k in kernels if ("measurement", k) not in doc) == []


def test_the_gpu_kernels_fields_in_their_source_are_the_ones_records_md_lists():
    """Where no GPU runs them, their sources stand in: each GPU kernel writes
    its fields by literal name in its one file (kernels/gpu/<name>.c)."""
    doc, _ = documented(RECORDS_MD.read_text())
    written = re.compile(r"(?:CBK_(?:U64|I64|REAL|TEXT|BOOL|PAIRS)|cbk_phase_qualifier\(&?\w+,)\s*\(?\s*\"(\w+)\"")
    for kernel in sorted({launch.kernel for launch in GPU_LAUNCHES} - {"mpi"}):
        in_source = set(written.findall((ROOT / "kernels" / "gpu" / f"{kernel}.c").read_text()))
        assert in_source, kernel
        assert (sorted(in_source - doc[("measurement", kernel)]), sorted(doc[("measurement", kernel)] - in_source)) \
            == ([], []), kernel


@pytest.mark.gpu
@pytest.mark.timeout(300)
def test_every_field_the_gpu_kernels_write_is_in_records_md_and_back(cuda_cbk, tmp_path):
    found: Emitted = {}
    gpus = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True).stdout.count("GPU ")
    # the mpiexec of the MPI this cbk was built with
    mpiexec = shutil.which("mpiexec", path=str(Path(cuda_cbk).parent) + os.pathsep + os.environ.get("PATH", ""))
    ran = set()
    for launch in GPU_LAUNCHES:
        if launch.kernel == "gpupeer" and gpus < 2:
            continue  # it copies between two GPUs, and refuses one
        assert mpiexec or launch.ranks == 1, "no mpiexec"
        collect(run_launch(cuda_cbk, launch, tmp_path, mpiexec), found)
        ran.add(launch.kernel)
    doc, rules = documented(RECORDS_MD.read_text())
    assert undocumented(found, doc, rules) == {}
    for kernel in ran - {"mpi"}:
        assert sorted(doc[("measurement", kernel)] - found[("measurement", kernel)]) == [], kernel
    mpi_gpu_only, why = NOT_RUN_HERE[("measurement", "mpi")]
    assert mpi_gpu_only <= found[("measurement", "mpi")], why


# ---------------------------------------------------------------- the reader

def test_the_reader_sees_a_missing_field_a_stale_one_and_the_notation():
    page = "\n".join([
        "# The records", "Rules for every record:", "- `schema` and `type` first; `kernel` follows.",
        "## `measurement`: one phase", "| field | meaning |", "| --- | --- |",
        "| `phase` | what was timed (not `mode`) |", "| `rate`, `rate_unit` | the figure |",
        "### Kernel fields", "- **toy**: `lat_us_p50/p99_9` (percentiles, `hidden` here), `gone`, `tree`;",
        "  reads: `verify`.", "  - `tree`: `leaf` (a leaf), `depth`",
        "## `run`: one per launch", "`hosts` (one per rank), `features` (built in):",
        "- `features`: `cuda`", "", "Not a field: `build`.",
        "## `started`: every rank is past MPI_Init", "`ranks`, `nodes`.",
        "## `error`: on stderr", "`status`, `message`.",
        "## `stopped`: on stderr", "`signal`.",
        "## Kernel-specific records", "- `toy_detail` (toy): `rows`: one object per row:",
        "  - `rows`: `rank`, `host`", "- `memory-cgroup` (not cbk's): `host`",
    ])
    doc, rules = documented(page)
    assert doc[("measurement", "*")] == {"phase", "rate", "rate_unit"}
    assert doc[("measurement", "toy")] == {"lat_us_p50", "lat_us_p99_9", "gone", "tree", "verify", "tree.leaf",
                                           "tree.depth"}
    assert doc[("run", None)] == {"hosts", "features", "features.cuda"}
    assert doc[("toy_detail", None)] == {"rows", "rows.rank", "rows.host"}
    found = {("measurement", "toy"): {"schema", "type", "kernel", "phase", "rate", "lat_us_p50", "lat_us_p99_9",
                                      "tree", "tree.leaf", "tree.depth", "verify", "hidden"},
             ("run", None): {"schema", "hosts", "features", "features.cuda", "build"},
             ("toy_detail", None): {"rows", "rows.rank", "rows.host", "rows.seconds"},
             ("listening", None): {"port"}}
    assert undocumented(found, doc, rules) == {"measurement toy": ["hidden"], "run": ["build"],
                                               "toy_detail": ["rows.seconds"],
                                               "listening": ["(no section for this record type or kernel)"]}
    assert stale(found, doc, set()) == {"error": ["message", "status"], "measurement *": ["rate_unit"],
                                        "measurement toy": ["gone"], "started": ["nodes", "ranks"],
                                        "stopped": ["signal"]}
