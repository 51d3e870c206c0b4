"""cbk's common behaviour: self-description, parameter parsing, bad input."""
from __future__ import annotations

import json
import subprocess

import pytest

from conftest import tree


def describe(cbk_bin) -> dict:
    out = subprocess.run([cbk_bin, "--describe"], capture_output=True, text=True, check=True).stdout
    return json.loads(out)


def test_describe_is_valid_json_with_every_parameter_field(cbk_bin):
    d = describe(cbk_bin)
    assert d["schema"] == 1 and d["type"] == "describe"
    names = [k["name"] for k in d["kernels"]]
    assert {"seqio", "manyfiles", "null"} <= set(names)
    for k in d["kernels"]:
        assert k["summary"]
        for p in k["parameters"]:
            assert set(p) == {"name", "type", "default", "unit", "choices", "min", "max", "help", "role", "before"}
            assert p["type"] in {"size", "int", "real", "choice", "choice-list", "bool", "string", "path"}
            assert p["help"]
            if p["type"] == "choice":
                assert p["default"] in p["choices"]
            if p["type"] == "choice-list":
                assert set(p["default"].split(",")) <= set(p["choices"])


def test_describe_and_version_say_whether_mpi_is_built_in(cbk_bin):
    d = describe(cbk_bin)
    version = subprocess.run([cbk_bin, "--version"], capture_output=True, text=True, check=True).stdout
    if d["mpi"]:
        assert d["mpi_library"] and d["mpi_library"].split()[0] in version
    else:
        assert d["mpi_library"] is None and "MPI: none" in version


def test_python_catalogue_matches_describe(cbk_bin):
    from clusterbench import catalogue

    d = describe(cbk_bin)
    cat = catalogue.load(cbk_bin)
    assert list(cat.kernels) == [k["name"] for k in d["kernels"]]
    for k in d["kernels"]:
        ours = cat.kernels[k["name"]]
        assert [p.name for p in ours.params] == [p["name"] for p in k["parameters"]]
        assert [p.default for p in ours.params] == [p["default"] for p in k["parameters"]]
        assert [p.unit for p in ours.params] == [p["unit"] for p in k["parameters"]]


@pytest.mark.timeout(60)
@pytest.mark.parametrize("args, message", [
    (["nosuchkernel"], "no such kernel"),
    (["seqio", "--nosuch=1"], "has no parameter --nosuch"),
    (["seqio", "--file-size=abc"], "is not a size"),
    (["seqio", "--file-size=10X"], "is not a size"),
    (["seqio", "--file-size=-1m"], "is not a size"),
    (["seqio", "--file-size=0"], "out of range"),
    (["seqio", "--block-size=0"], "out of range"),
    (["seqio", "--file-size=1m", "--block-size=4m"], "block size 4 MiB is larger than file size 1 MiB"),
    (["seqio", "--file-size=10m", "--block-size=3m"], "not a multiple of block size"),
    (["seqio", "--write=direct", "--block-size=1000", "--file-size=1000000"], "multiple of 512"),
    (["seqio", "--write=sometimes"], "is not one of"),
    (["seqio", "--verify=maybe"], "is not a boolean"),
    (["seqio", "--repetitions=0"], "out of range"),
    (["manyfiles", "--files=0"], "out of range"),
    (["manyfiles", "--files=many"], "is not an integer"),
    (["seqio", "stray"], "unexpected argument"),
])
def test_bad_input_gives_one_error_record_exit_2_and_creates_nothing(run_cbk, tmp_path, args, message):
    kernel_args = args[1:] + ([f"--dir={tmp_path}"] if args[0] != "nosuchkernel" else [])
    r = run_cbk(args[0], *kernel_args)
    assert r.status == 2
    assert len(r.errors) == 1 and message in r.errors[0]["message"], r.stderr
    assert r.stderr.strip().count("\n") == 0
    assert r.records == []
    assert tree(tmp_path) == []


@pytest.mark.timeout(60)
def test_missing_directory_and_file_as_directory_are_rejected(run_cbk, tmp_path):
    r = run_cbk("seqio", f"--dir={tmp_path}/absent")
    assert r.status == 2 and "No such file or directory" in r.errors[0]["message"]
    f = tmp_path / "plain"
    f.write_text("x")
    r = run_cbk("seqio", f"--dir={f}")
    assert r.status == 2 and "is not a directory" in r.errors[0]["message"]
    assert tree(tmp_path) == ["plain"]


def test_check_mode_validates_without_running(cbk_bin, tmp_path):
    ok = subprocess.run([cbk_bin, "--check", "seqio", f"--dir={tmp_path}", "--file-size=1g"],
                        capture_output=True, text=True)
    assert ok.returncode == 0 and ok.stdout == "" and tree(tmp_path) == []
    bad = subprocess.run([cbk_bin, "--check", "seqio", f"--dir={tmp_path}", "--file-size=1m", "--block-size=2m"],
                         capture_output=True, text=True)
    assert bad.returncode == 2 and "larger than file size" in bad.stderr


@pytest.mark.timeout(60)
def test_sizes_take_binary_suffixes(run_cbk, tmp_path):
    r = run_cbk("seqio", f"--dir={tmp_path}", "--file-size=2m", "--block-size=64k", "--read=none")
    assert r.status == 0, r.stderr
    (w,) = r.measurements("write")
    assert w["bytes"] == 2 * 1024 * 1024 and w["block_bytes"] == 64 * 1024 and w["ops"] == 32
    params = r.run_record()["parameters"]
    assert params["file-size"] == 2097152 and params["block-size"] == 65536


def test_run_record_describes_build_and_run(run_cbk, cbk_bin, tmp_path):
    r = run_cbk("null", "--seconds=0", "--repetitions=2")
    assert r.status == 0
    run = r.run_record()
    for key in ("cbk_version", "compiler", "compiler_flags", "mpi", "mpi_library", "ranks", "ranks_per_node",
                "hosts", "timer_resolution_s", "parameters"):
        assert key in run
    assert run["ranks"] == 1 and len(run["hosts"]) == 1
    assert 0 < run["timer_resolution_s"] < 1e-3
    # the optional parts built in, as --describe states them (test_randio builds one with all of them off)
    assert run["features"] == describe(cbk_bin)["features"]
    assert set(run["features"]) == {"openmp", "liburing", "libaio", "cuda"}
    assert all(isinstance(on, bool) for on in run["features"].values())
    assert [m["repetition"] for m in r.measurements()] == [0, 1]


@pytest.mark.timeout(60)
def test_null_kernel_under_mpiexec_reduces_over_ranks(run_cbk, mpiexec):
    r = run_cbk("null", "--seconds=0.05", "--bytes=1m", launcher=[mpiexec, "-n", "2"])
    assert r.status == 0, r.stderr
    (m,) = r.measurements()
    assert m["ranks"] == 2 and m["bytes"] == 2 * 2**20
    assert m["rank_seconds_min"] >= 0.05 and m["seconds"] >= m["rank_seconds_max"]
    assert m["slowest_rank"] in (0, 1)
    assert r.run_record()["ranks"] == 2 and len(r.run_record()["hosts"]) == 2


@pytest.mark.timeout(60)
def test_failure_inside_a_kernel_is_one_error_record_and_exit_1(run_cbk):
    r = run_cbk("null", "--fail-at=1", "--repetitions=3")
    assert r.status == 1
    assert len(r.measurements()) == 1
    assert "failing at repetition 1" in r.errors[0]["message"]


@pytest.mark.timeout(60)
@pytest.mark.parametrize("args", [
    ["null", "--seconds=0", "--repetitions=3"],
    ["seqio", "--file-size=64k", "--block-size=4k", "--write=buffered", "--read=warm", "--repetitions=2"],
    ["--describe"], ["--version"], ["--help"], ["seqio", "--help"],
])
def test_records_that_cannot_be_written_are_exit_1_with_the_reason_and_leave_nothing(cbk_bin, tmp_path, args):
    """`cbk seqio ... > records.json` on a full disk (/dev/full fails every
    write with ENOSPC): the records were lost and cbk said exit 0."""
    if args[0] == "seqio" and args[1] != "--help":
        args = [*args, f"--dir={tmp_path}"]
    with open("/dev/full", "w") as full:
        p = subprocess.run([cbk_bin, *args], stdout=full, stderr=subprocess.PIPE, text=True, timeout=60)
    assert p.returncode == 1, p.stderr
    (line,) = p.stderr.strip().splitlines()
    error = json.loads(line)
    assert error["type"] == "error" and error["status"] == 1
    assert "standard output" in error["message"] and "No space left on device" in error["message"]
    assert tree(tmp_path) == []


def _close_stdout():
    import os

    os.close(1)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("stdout, message", [
    ("closed", "standard output is closed, and cbk writes its records there: give it a file or a pipe "
               "(> records.json)"),
    ("read-only", "standard output is open for reading only, and cbk writes its records there: give it a file or "
                  "a pipe (> records.json)"),
])
def test_a_stdout_that_cannot_take_records_is_refused_before_any_work(cbk_bin, tmp_path, stdout, message):
    """`cbk seqio ... >&-` (or `1</dev/null`) ran the whole measurement,
    minutes of I/O for a large file, and failed only at its first record,
    exit 1, 'cannot write the records to standard output: Bad file
    descriptor'. Descriptor 1 is checked at start-up: one line, exit 2,
    nothing made."""
    args = [cbk_bin, "seqio", f"--dir={tmp_path}", "--file-size=64m", "--block-size=1m"]
    if stdout == "closed":
        p = subprocess.run(args, stderr=subprocess.PIPE, text=True, timeout=60, preexec_fn=_close_stdout)
    else:
        with open("/dev/null") as read_only:
            p = subprocess.run(args, stdout=read_only, stderr=subprocess.PIPE, text=True, timeout=60)
    assert p.returncode == 2, p.stderr
    (line,) = p.stderr.splitlines()
    assert json.loads(line)["message"] == message
    assert tree(tmp_path) == []


@pytest.mark.timeout(120)
@pytest.mark.parametrize("closed_rank, status", [(0, 2), (1, 0)])
def test_under_mpiexec_the_stdout_of_rank_0_decides_for_every_rank(cbk_bin, mpiexec, closed_rank, status):
    """Rank 0 writes the records: its closed stdout refuses the run on every
    rank at once (a rank that left before MPI_Init kept the others waiting
    there until killed); another rank's closed stdout changes nothing."""
    rank = "${PMI_RANK:-$OMPI_COMM_WORLD_RANK}"
    script = (f'if [ "{rank}" = {closed_rank} ]; then exec "$0" null --seconds=0 >&-; '
              f'else exec "$0" null --seconds=0; fi')
    p = subprocess.run([mpiexec, "-n", "2", "sh", "-c", script, cbk_bin], capture_output=True, text=True, timeout=90)
    assert p.returncode == status, p.stderr
    if status:
        assert p.stdout == ""
        (line,) = p.stderr.splitlines()
        assert json.loads(line)["message"].startswith("standard output is closed")
    else:
        assert [json.loads(line)["type"] for line in p.stdout.splitlines()] == ["started", "measurement", "run"], \
            p.stdout


@pytest.mark.timeout(240)
def test_cbk_builds_without_mpi(cbk_minimal, tmp_path):
    cbk = cbk_minimal
    d = json.loads(subprocess.run([str(cbk), "--describe"], capture_output=True, text=True, check=True).stdout)
    assert d["mpi"] is False
    names = {k["name"] for k in d["kernels"]}
    assert {"seqio", "manyfiles"} <= names
    target = tmp_path / "target"
    target.mkdir()
    r = subprocess.run([str(cbk), "seqio", f"--dir={target}", "--file-size=1m", "--block-size=64k"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert tree(target) == []


BINDING_PROGRAM = """
#include "cbk.h"
enum colour { RED, GREEN };
static const char *const colour_names[] = { "red", "green", NULL };
struct options { uint64_t block_bytes; int64_t count; enum colour colour; const char *dir; char tiny;
                 struct cbk_choice_list colours; };
static const struct cbk_param params[] = {
    { .name = "x", %s },
    { 0 },
};
const struct cbk_param *table(void) { return params; }
"""


@pytest.mark.parametrize("binding, builds", [
    ("CBK_AT_SIZE(struct options, block_bytes)", True),
    ("CBK_AT_CHOICE(struct options, colour, colour_names)", True),
    ("CBK_AT_PATH(struct options, dir)", True),
    ("CBK_AT_SIZE(struct options, block_byte)", False),   # a misspelt field
    ("CBK_AT_INT(struct options, block_bytes)", False),   # an int parameter on a size field
    ("CBK_AT_STRING(struct options, count)", False),      # text into an integer
    ("CBK_AT_CHOICE(struct options, tiny, colour_names)", False),  # a choice index needs an int-sized field
    ("CBK_AT_CHOICE_LIST(struct options, colours, colour_names)", True),
    ("CBK_AT_CHOICE_LIST(struct options, colour, colour_names)", False),  # one choice is not a list
])
def test_a_parameter_bound_to_a_missing_or_mistyped_field_fails_the_build(tmp_path, binding, builds):
    import shutil

    from conftest import REPO

    cc = shutil.which("cc") or shutil.which("gcc")
    if not cc:
        pytest.skip("no C compiler")
    src = tmp_path / "binding.c"
    src.write_text(BINDING_PROGRAM % binding)
    p = subprocess.run([cc, "-std=c11", "-fsyntax-only", "-Werror", f"-I{REPO / 'kernels' / 'core'}", str(src)],
                       capture_output=True, text=True)
    assert (p.returncode == 0) == builds, p.stderr


def test_the_sources_of_a_build_with_every_option_off_compile_without_warnings():
    """-Wall -Wextra clean (docs/design.md) holds for the build a site without
    MPI, OpenMP, liburing or libaio gets, not only for the full one the tests
    run: code behind `#ifdef CBK_HAVE_MPI` left a parameter unused in the other
    branch (driver.c's cbk_reduce_histogram). Syntax only: a second each."""
    import shutil

    from conftest import REPO

    cc = shutil.which("cc") or shutil.which("gcc")
    if not cc:
        pytest.skip("no C compiler")
    kernels = REPO / "kernels"
    sources = [p for p in sorted(kernels.rglob("*.c")) if p.relative_to(kernels).parts[0] not in ("mpi", "gpu")]
    assert kernels / "core" / "driver.c" in sources
    warned = {}
    for src in sources:
        # the definitions CMakeLists.txt always gives, and none of the optional ones
        p = subprocess.run([cc, "-std=c11", "-D_GNU_SOURCE", "-Wall", "-Wextra", "-fsyntax-only",
                            '-DCBK_COMPILER_FLAGS=""', '-DCBK_BUILD_TYPE="Release"', str(src)],
                           capture_output=True, text=True, timeout=60)
        if p.returncode or "warning:" in p.stderr:
            warned[str(src.relative_to(kernels))] = p.stderr.strip()
    assert warned == {}


def test_every_measurement_declares_its_mode_sweep_key_and_qualifiers(run_cbk, tmp_path):
    """docs/records.md: mode is a cache state or n/a; the sweep key and the
    qualifiers name fields of the same record."""
    runs = [("null", "--bytes=1k"), ("stream", "--array-size=1m", "--passes=2"),
            ("himeno", "--size=XS", "--iterations=2"), ("cpufreq", "--seconds=0.05", "--max-busy=1"),
            ("seqio", f"--dir={tmp_path}", "--file-size=64k", "--block-size=16k", "--read=warm")]
    modes = set()
    for args in runs:
        r = run_cbk(*args)
        assert r.status == 0, r.stderr
        for m in r.measurements():
            modes.add(m["mode"])
            assert all(q in m for q in m["qualifiers"]), m
            assert m["sweep_key"] is None or m["sweep_key"] in m, m
    assert modes == {"n/a", "fsync", "warm"}
