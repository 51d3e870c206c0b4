"""The GPU kernels (gpucopy, gpumem, gpupeer): compiled with CUDA from PyPI's nvcc on
every CI run (scripts/build-cuda-cbk.sh), their parameters checked from
their tables, and a host without a GPU refused in one line, exit 2, nothing
stored. The tests marked gpu run only where a GPU is visible (the device
script, scripts/gpu-check.sh); CI skips them."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import run_bounded
from gpu_records import error_message, measurements

GPU_KERNELS = ("gpucopy", "gpumem", "gpupeer")
# a quick, valid parameter of each, for the refusal tests
SMALL = {"gpucopy": "--sizes=8", "gpumem": "--passes=2", "gpupeer": "--size=1m"}


def run(cbk: str, *args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([cbk, *args], capture_output=True, text=True, timeout=timeout)


def describe(cbk: str) -> dict:
    return {k["name"]: k for k in json.loads(run(cbk, "--describe").stdout)["kernels"]}




def test_the_cuda_build_describes_the_gpu_kernels_with_their_parameters(cuda_cbk):
    kernels = describe(cuda_cbk)
    assert set(GPU_KERNELS) <= set(kernels)
    copy_params = {p["name"]: p for p in kernels["gpucopy"]["parameters"]}
    assert copy_params["direction"]["choices"] == ["h2d", "d2h", "bidir", "d2d"]
    assert copy_params["host-memory"]["choices"] == ["pinned", "pageable"]
    assert copy_params["engine"]["choices"] == ["copy", "kernel"]
    mem_params = {p["name"] for p in kernels["gpumem"]["parameters"]}
    assert {"array-size", "memory-fraction", "passes"} <= mem_params
    peer_params = {p["name"]: p for p in kernels["gpupeer"]["parameters"]}
    assert peer_params["peer"]["choices"] == ["on", "off"] and peer_params["pairs"]["choices"] == ["all", "adjacent"]
    assert peer_params["direction"]["choices"] == ["unidir", "bidir"]
    # one process over every GPU of the node: no ranks to bind GPUs to
    assert kernels["gpupeer"]["parallel"] is False and kernels["gpucopy"]["parallel"] is True


def test_a_build_without_cuda_names_the_gpu_kernels_it_left_out_and_why(cbk_bin):
    if "gpucopy" in describe(cbk_bin):
        pytest.skip("this cbk was built with CUDA (nvcc on PATH at build time)")
    left_out = json.loads(run(cbk_bin, "--describe").stdout)["left_out"]
    assert set(GPU_KERNELS) <= set(left_out)
    p = run(cbk_bin, "gpucopy")
    assert p.returncode == 2
    assert error_message(p.stderr).startswith("gpucopy is not in this cbk: this cbk was built without CUDA")
    # and cbk --help lists them, with why, where it was silent about them
    listed = run(cbk_bin, "--help").stdout
    for name in GPU_KERNELS:
        assert re.search(rf"^  {name} +\(not in this cbk: this cbk was built without CUDA", listed, re.M), listed


def test_version_says_whether_the_gpu_kernels_are_built_in(cbk_bin, cuda_cbk, cli):
    """A CPU-only cbk and a CUDA one printed the same --version."""
    plain = cli("--version").stdout
    with_cuda = cli("--version", env={"CLUSTERBENCH_CBK": cuda_cbk}).stdout
    assert "GPU kernels: built in" in with_cuda, with_cuda
    # and the optional parts of each build on one line
    assert re.search(r"^Built in: [a-z, ]*\bcuda\b", with_cuda, re.M), with_cuda
    if "gpucopy" not in describe(cbk_bin):
        assert re.search(r"^Built in: .*; left out: [a-z, ]*\bcuda\b", plain, re.M), plain
        assert "GPU kernels: not built in (this cbk was built without CUDA" in plain, plain


def test_the_kernel_list_names_the_kernels_this_cbk_left_out_and_why(cbk_bin, cli):
    """`clusterbench kernels` listed what cbk has and said nothing of the GPU
    kernels it was built without: they looked like kernels that do not exist."""
    if "gpucopy" in describe(cbk_bin):
        pytest.skip("this cbk was built with CUDA (nvcc on PATH at build time)")
    r = cli("kernels")
    assert r.status == 0
    caption = r.stdout[r.stdout.index("not in this cbk: "):].replace("\n", " ")
    assert all(k in caption for k in GPU_KERNELS) and "built without CUDA" in caption, caption


@pytest.mark.parametrize("args,says", [
    (["gpucopy", "--sizes=1m,64k"], "--sizes must increase"),
    (["gpucopy", "--sizes=8,lots"], "'lots' is not a size"),
    (["gpucopy", "--min-size=1m", "--max-size=4k"], "is larger than --max-size"),
    (["gpucopy", "--engine=kernel"], "must be pinned"),
    (["gpucopy", "--direction=sideways"], "sideways"),
    (["gpucopy", "--min-iterations=50", "--iterations=10"], "--min-iterations=50 is more than --iterations=10"),
    (["gpumem", "--memory-fraction=2"], "memory-fraction"),
    (["gpumem", "--array-size=4k"], "at least 1000 doubles"),
    (["gpumem", "--passes=1"], "passes"),
    (["gpupeer", "--size=1k"], "--size=1k is out of range"),
    (["gpupeer", "--peer=maybe"], "maybe"),
    (["gpupeer", "--pairs=some"], "some"),
    (["gpupeer", "--iterations=0"], "--iterations=0 is out of range"),
])
def test_check_names_a_bad_parameter_before_looking_for_a_device(cuda_cbk, args, says):
    p = run(cuda_cbk, "--check", *args)
    assert p.returncode == 2, p.stderr
    message = error_message(p.stderr)
    assert says in message and "no GPU" not in message, message


def test_mpi_device_buffers_are_refused_in_one_line_where_they_cannot_be_had(cbk_bin, cuda_cbk):
    for cbk in (cbk_bin, cuda_cbk):
        p = run(cbk, "--check", "mpi", "--op=pingpong,allreduce", "--buffer=device")
        assert p.returncode == 2 and error_message(p.stderr) == \
            "--buffer=device: only pingpong, bw and bibw take GPU buffers so far, not allreduce"
    if "gpucopy" not in describe(cbk_bin):
        p = run(cbk_bin, "--check", "mpi", "--buffer=managed")
        assert p.returncode == 2 and error_message(p.stderr).startswith("--buffer=managed needs a cbk built with CUDA")
    assert run(cuda_cbk, "--check", "mpi", "--buffer=host").returncode == 0


@pytest.mark.no_gpu
def test_mpi_device_buffers_without_a_gpu_are_refused_in_one_line(cuda_cbk):
    p = run(cuda_cbk, "--check", "mpi", "--op=pingpong,bw", "--buffer=device")
    assert p.returncode == 2 and error_message(p.stderr).startswith("no GPU visible to this process")


@pytest.mark.no_gpu
@pytest.mark.parametrize("kernel", GPU_KERNELS)
def test_a_host_without_a_gpu_is_refused_in_one_line_with_exit_2(cuda_cbk, kernel):
    for args in (["--check", kernel, SMALL[kernel]], [kernel]):
        p = run(cuda_cbk, *args)
        assert p.returncode == 2, p.stderr
        assert p.stdout == "" and p.stderr.count("\n") == 1, p.stderr
        assert error_message(p.stderr).startswith("no GPU visible to this process"), p.stderr


@pytest.mark.no_gpu
def test_clusterbench_run_gpucopy_without_a_gpu_says_one_line_and_stores_nothing(cuda_cbk, tmp_path):
    db = tmp_path / "results.db"
    env = dict(os.environ, CLUSTERBENCH_CBK=cuda_cbk, CLUSTERBENCH_DB=f"sqlite:///{db}", COLUMNS="200")
    p = run_bounded([sys.executable, "-m", "clusterbench", "run", "gpucopy", "--sizes=8,1m"], timeout=120, env=env)
    assert p.returncode == 2, p.stdout + p.stderr
    lines = [line for line in (p.stdout + p.stderr).splitlines() if line.strip()]
    assert len(lines) == 1 and "no GPU visible" in lines[0], lines
    assert "Traceback" not in p.stderr
    assert not db.exists() or not _runs(db), "a refused run was stored"


@pytest.mark.parametrize("kernel", GPU_KERNELS)
def test_clusterbench_run_of_a_gpu_kernel_this_cbk_left_out_says_why_not_no_such_kernel(cbk_bin, tmp_path, kernel):
    if kernel in describe(cbk_bin):
        pytest.skip("this cbk was built with CUDA (nvcc on PATH at build time)")
    db = tmp_path / "results.db"
    env = dict(os.environ, CLUSTERBENCH_CBK=cbk_bin, CLUSTERBENCH_DB=f"sqlite:///{db}", COLUMNS="200")
    p = run_bounded([sys.executable, "-m", "clusterbench", "run", kernel], timeout=120, env=env)
    assert p.returncode == 2, p.stdout + p.stderr
    lines = [line for line in (p.stdout + p.stderr).splitlines() if line.strip()]
    assert len(lines) == 1 and f"{kernel} is not in this cbk" in lines[0] and "built without CUDA" in lines[0], lines
    assert "no such kernel" not in lines[0]
    assert not db.exists() or not _runs(db), "a refused run was stored"


def test_gpus_per_rank_is_refused_for_gpupeer_which_wants_every_gpu_in_one_process(cuda_cbk, tmp_path):
    db = tmp_path / "results.db"
    env = dict(os.environ, CLUSTERBENCH_CBK=cuda_cbk, CLUSTERBENCH_DB=f"sqlite:///{db}", COLUMNS="200")
    p = run_bounded([sys.executable, "-m", "clusterbench", "run", "gpupeer", "--gpus-per-rank", "1"], timeout=120,
                    env=env)
    assert p.returncode == 2, p.stdout + p.stderr
    lines = [line for line in (p.stdout + p.stderr).splitlines() if line.strip()]
    assert len(lines) == 1 and "gpupeer runs as one process, which sees every GPU of its node" in lines[0], lines
    assert not db.exists() or not _runs(db), "a refused run was stored"


def _runs(db: Path) -> list:
    import sqlite3

    with sqlite3.connect(db) as c:
        tables = {r[0] for r in c.execute("select name from sqlite_master where type='table'")}
        return c.execute("select id from runs").fetchall() if "runs" in tables else []


def gpu_suite_steps():
    from clusterbench import suites

    return suites.load("gpu", {}).steps + [s for s in suites.load("quick", {}).steps if "gpu" in s.requires]


def test_the_gpu_suites_steps_pass_their_kernels_checks(cuda_cbk):
    from clusterbench import catalogue

    cat = catalogue.load(cuda_cbk)
    steps = gpu_suite_steps()
    assert {s.kernel for s in steps} == {"gpucopy", "gpumem", "gpupeer", "mpi"} and all("gpu" in s.requires for s in steps)
    for s in steps:
        cat.check_params(cat.kernel(s.kernel), s.params)
        p = run(cuda_cbk, "--check", s.kernel, *s.cbk_args())
        # the parameters pass; only the device may be missing here
        assert p.returncode == 0 or error_message(p.stderr).startswith("no GPU visible"), (s.name, p.stderr)


@pytest.mark.no_gpu
@pytest.mark.parametrize("which", ["cuda", "plain"])
def test_the_gpu_suite_without_a_gpu_is_refused_in_one_line_and_stores_nothing(cuda_cbk, cbk_bin, tmp_path, which):
    """Every step of `run gpu` would be skipped: a run that measured nothing,
    stored as ok with exit 0 and a report of empty tables, was what a site
    without GPUs got. It is bad input there, as `run gpucopy` is."""
    cbk = cuda_cbk if which == "cuda" else cbk_bin
    if which == "plain" and "gpucopy" in describe(cbk_bin):
        pytest.skip("the default cbk was built with CUDA here")
    db = tmp_path / "results.db"
    env = dict(os.environ, CLUSTERBENCH_CBK=cbk, CLUSTERBENCH_DB=f"sqlite:///{db}", COLUMNS="200")
    p = run_bounded([sys.executable, "-m", "clusterbench", "run", "gpu"], timeout=300, env=env, cwd=tmp_path)
    assert p.returncode == 2, p.stdout + p.stderr
    lines = [line for line in (p.stdout + p.stderr).splitlines() if line.strip()]
    from clusterbench.environment.gpu import pci_gpus

    expected = ("no GPU visible to this process" if which == "cuda" else
                "no GPU on this host" if pci_gpus() == {} else "this cbk was built without CUDA")
    assert len(lines) == 1 and "suite gpu: every step would be skipped here" in lines[0] and expected in lines[0], lines
    assert "Traceback" not in p.stderr
    assert not db.exists() or not _runs(db), "a refused run was stored"
    assert list(tmp_path.iterdir()) in ([], [db]), list(tmp_path.iterdir())   # no report either


def test_a_suite_with_one_step_left_runs_and_keeps_the_skipped_ones(cbk_bin, tmp_path):
    """Only a suite of nothing but skipped steps is refused: quick's GPU steps
    are skipped beside the steps that run."""
    import sqlite3

    if "gpucopy" in describe(cbk_bin):
        pytest.skip("the default cbk was built with CUDA here")
    suite = tmp_path / "mixed.toml"
    suite.write_text('description = "t"\n[[steps]]\nkernel = "gpumem"\nrequires = ["gpu"]\n'
                     '[[steps]]\nkernel = "null"\nrepeat = 1\nparams = { seconds = "0.01" }\n')
    db = tmp_path / "results.db"
    env = dict(os.environ, CLUSTERBENCH_CBK=cbk_bin, CLUSTERBENCH_DB=f"sqlite:///{db}", COLUMNS="200")
    p = run_bounded([sys.executable, "-m", "clusterbench", "run", str(suite), "--quiet",
                     "--report-dir", str(tmp_path / "reports")], timeout=300, env=env)
    assert p.returncode == 0, p.stdout + p.stderr
    with sqlite3.connect(db) as c:
        assert [s for s, in c.execute("select status from steps order by position")] == ["skipped", "ok"]


# ---- on a GPU machine only ------------------------------------------------------------------------------------

@pytest.mark.gpu
def test_gpucopy_measures_every_case_validated_with_both_clocks(cuda_cbk):
    p = run(cuda_cbk, "gpucopy", "--sizes=8,1m,64m", "--host-memory=pinned,pageable", "--direction=h2d,d2h,bidir")
    assert p.returncode == 0, p.stderr
    ms = measurements(p.stdout)
    cases = {(m["phase"], m["host_memory"], m["copy_bytes"]) for m in ms}
    assert cases == {(d, h, s) for d in ("h2d", "d2h", "bidir") for h in ("pinned", "pageable")
                     for s in (8, 1 << 20, 64 << 20)}
    for m in ms:
        assert m["validated"] is True and m["sweep_key"] == "copy_bytes"
        assert 0 < m["event_seconds"] <= m["driver_seconds"] * 1.05, m
        assert m["event_gb_per_s"] > 0 and m["driver_latency_us"] > 0
        assert m["gpu_name"] and m["gpu_bus_id"] != "unknown"
        assert any("pageable" in w for w in m["warnings"]) == (m["host_memory"] == "pageable")
    big = {(m["phase"], m["host_memory"]): m for m in ms if m["copy_bytes"] == 64 << 20}
    # both directions at once move more than one alone on any full-duplex link
    assert big["bidir", "pinned"]["event_gb_per_s"] > 1.2 * big["h2d", "pinned"]["event_gb_per_s"]


@pytest.mark.gpu
def test_gpucopy_device_to_device_is_measured_once_and_far_above_the_link(cuda_cbk):
    p = run(cuda_cbk, "gpucopy", "--sizes=256m", "--direction=h2d,d2d", "--host-memory=pinned,pageable")
    assert p.returncode == 0, p.stderr
    ms = measurements(p.stdout)
    d2d = [m for m in ms if m["phase"] == "d2d"]
    assert len(d2d) == 1 and d2d[0]["host_memory"] == "none" and d2d[0]["validated"]
    assert d2d[0]["event_read_write_gb_per_s"] == pytest.approx(2 * d2d[0]["event_gb_per_s"])
    h2d = next(m for m in ms if m["phase"] == "h2d" and m["host_memory"] == "pinned")
    assert d2d[0]["event_gb_per_s"] > 5 * h2d["event_gb_per_s"]


@pytest.mark.gpu
def test_gpucopy_kernel_engine_copies_pinned_memory(cuda_cbk):
    p = run(cuda_cbk, "gpucopy", "--sizes=4k,16m", "--host-memory=pinned", "--engine=copy,kernel")
    assert p.returncode == 0, p.stderr
    ms = measurements(p.stdout)
    assert {m["engine"] for m in ms} == {"copy", "kernel"} and all(m["validated"] for m in ms)


@pytest.mark.gpu
def test_gpumem_reports_five_kernels_validated_below_the_memory_peak(cuda_cbk):
    p = run(cuda_cbk, "gpumem", "--array-size=256m", "--passes=5")
    assert p.returncode == 0, p.stderr
    ms = measurements(p.stdout)
    assert [m["phase"] for m in ms] == ["copy", "scale", "add", "triad", "dot"]
    for m in ms:
        assert m["validated"] is True and m["avg_rel_error_a"] <= 1e-13 and m["rel_error_dot"] <= 1e-8
        if "memory_peak_gb_per_s" in m:
            assert 0.2 < m["fraction_of_peak"] < 1.0, m


def gpu_count() -> int:
    listed = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=30)
    return sum(line.startswith("GPU ") for line in listed.stdout.splitlines())


@pytest.mark.gpu
def test_gpupeer_copies_between_every_pair_or_refuses_a_single_gpu_in_one_line(cuda_cbk):
    p = run(cuda_cbk, "gpupeer", "--size=64m", "--iterations=5")
    n = gpu_count()
    if n < 2:
        assert p.returncode == 2 and p.stdout == "", p.stderr
        assert error_message(p.stderr).startswith(f"gpupeer copies between GPUs and this process sees {n}")
        return
    assert p.returncode == 0, p.stderr
    ms = measurements(p.stdout)
    unidir = [m for m in ms if m["phase"] == "unidir"]
    bidir = [m for m in ms if m["phase"] == "bidir"]
    assert len(unidir) == 2 * n * (n - 1) and len(bidir) == n * (n - 1)    # peer on and off each
    for m in ms:
        assert m["validated"] is True and m["copy_bytes"] == 64 << 20 and m["event_gb_per_s"] > 0
        assert m["peer_direct"] == (m["peer"] == "on" and m["peer_possible"])
        assert any("cannot reach each other" in w for w in m["warnings"]) == (m["peer"] == "on" and not m["peer_possible"])
        assert m["src_gpu_bus_id"] != m["dst_gpu_bus_id"]


@pytest.mark.gpu
@pytest.mark.parametrize("buffer", ["device", "managed"])
def test_mpi_moves_gpu_buffers_and_says_how(cuda_cbk, buffer):
    import shutil

    mpiexec = shutil.which("mpiexec", path=str(Path(cuda_cbk).parent) + os.pathsep + os.environ.get("PATH", ""))
    assert mpiexec, "no mpiexec"
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    p = subprocess.run([mpiexec, "-n", "2", cuda_cbk, "mpi", "--op=pingpong,bw", f"--buffer={buffer}",
                        "--sizes=8,64k,4m", "--iterations=50", "--warmup=5"],
                       capture_output=True, text=True, timeout=300, env=env)
    assert p.returncode == 0, p.stderr
    ms = measurements(p.stdout)
    assert len(ms) == 6 and all(m["buffer"] == buffer for m in ms)
    paths = {m["buffer_path"] for m in ms}
    assert paths == ({"managed"} if buffer == "managed" else paths & {"cuda-aware", "staged"}) and len(paths) == 1
    for m in ms:
        assert any(w.startswith("staged:") for w in m["warnings"]) == (m["buffer_path"] == "staged")


@pytest.mark.gpu
def test_clusterbench_run_gpumem_stores_and_shows_the_figures(cuda_cbk, tmp_path):
    env = dict(os.environ, CLUSTERBENCH_CBK=cuda_cbk, CLUSTERBENCH_DB=f"sqlite:///{tmp_path / 'results.db'}",
               COLUMNS="200")
    cli = [sys.executable, "-m", "clusterbench"]
    p = subprocess.run([*cli, "run", "gpumem", "--array-size=64m", "--passes=3"], capture_output=True, text=True,
                       timeout=300, env=env)
    assert p.returncode == 0, p.stdout + p.stderr
    shown = subprocess.run([*cli, "show", "1"], capture_output=True, text=True, timeout=120, env=env)
    assert shown.returncode == 0 and "triad" in shown.stdout, shown.stdout + shown.stderr


def test_pci_gpus_counts_gpu_vendor_display_controllers_only(tmp_path):
    """What `run gpu` and quick's GPU steps say on a host with no GPU: a
    cbk without CUDA told a laptop to rebuild it with nvcc."""
    from clusterbench.environment.gpu import pci_gpus
    from clusterbench.environment.sources import Context

    def device(bus, cls, vendor):
        d = tmp_path / "sys" / "bus" / "pci" / "devices" / bus
        d.mkdir(parents=True)
        (d / "class").write_text(cls + "\n")
        (d / "vendor").write_text(vendor + "\n")

    assert pci_gpus(Context(tmp_path)) is None   # no PCI bus visible: nothing can be said
    device("0000:00:01.0", "0x020000", "0x10de")   # an NVIDIA network controller: no GPU
    device("0000:00:02.0", "0x030000", "0x8086")   # Intel graphics: not a GPU clusterbench measures
    assert pci_gpus(Context(tmp_path)) == {}
    device("0000:65:00.0", "0x030200", "0x10de")   # an NVIDIA 3D controller
    assert pci_gpus(Context(tmp_path)) == {"0000:65:00.0": "NVIDIA"}
