"""The GPU kernels' own code, run where no GPU is: a cbk built on the test
runtime (kernels/gpu/runtime_test.c, scripts/build-gpu-test-cbk.sh), where
host memory stands in for GPU memory. What the kernels decide is real here:
the cases and sizes they plan, how many copies they time, the bytes they
count, the check of every copy and array (a planted fault must fail it), the
records and their warnings, the refusals; and clusterbench stores, shows and
reports what they measured, flagged as no GPU's figure. The figures are host
memory's; the GPU's own are tests/test_gpu_kernels.py's, marked gpu."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from gpu_records import error_message, measurements

GPU_KERNELS = ("gpucopy", "gpumem", "gpupeer")


def run(cbk: str, *args: str, gpus: int | str = 1, fault: str | None = None, env: dict | None = None,
        timeout: float = 120) -> subprocess.CompletedProcess:
    e = {k: v for k, v in os.environ.items() if not k.startswith("CBK_TEST_GPU") and k != "CUDA_VISIBLE_DEVICES"}
    e.update(CBK_TEST_GPUS=str(gpus), **(env or {}))
    if fault:
        e["CBK_TEST_GPU_FAULT"] = fault
    return subprocess.run([cbk, *args], capture_output=True, text=True, timeout=timeout, env=e)






def test_gpucopy_plans_every_case_once_and_checks_each_with_both_clocks(gpu_test_cbk):
    p = run(gpu_test_cbk, "gpucopy", "--sizes=8,1m", "--direction=h2d,d2h,bidir,d2d",
            "--host-memory=pinned,pageable", "--volume=8m")
    assert p.returncode == 0, p.stderr
    ms = measurements(p.stdout)
    cases = sorted((m["phase"], m["host_memory"], m["copy_bytes"]) for m in ms)
    # d2d has no host memory: once per size, not once per host memory
    assert cases == sorted([(d, h, s) for d in ("h2d", "d2h", "bidir") for h in ("pinned", "pageable")
                            for s in (8, 1 << 20)] + [("d2d", "none", s) for s in (8, 1 << 20)])
    for m in ms:
        assert m["validated"] is True and m["gpu_runtime"] == "test"
        assert m["gpu_name"] == "test GPU 0 (host memory)"
        legs = 2 if m["phase"] == "bidir" else 1
        assert m["bytes"] == m["copy_bytes"] * m["copies"] * legs and m["ops"] == m["copies"] * legs
        assert m["event_seconds"] > 0 and m["driver_seconds"] > 0
        assert m["driver_latency_us"] == pytest.approx(m["driver_seconds"] / m["copies"] * 1e6)
        assert any(w.startswith("pageable host memory") for w in m.get("warnings", [])) == (m["host_memory"] == "pageable")
        assert ("event_read_write_gb_per_s" in m) == (m["phase"] == "d2d")
    d2d = next(m for m in ms if m["phase"] == "d2d")
    assert d2d["event_read_write_gb_per_s"] == pytest.approx(2 * d2d["event_gb_per_s"])


def test_gpucopy_times_volume_over_size_copies_within_its_bounds(gpu_test_cbk):
    p = run(gpu_test_cbk, "gpucopy", "--sizes=8,1m,16m", "--direction=h2d", "--host-memory=pinned",
            "--volume=32m", "--iterations=100", "--min-iterations=3")
    assert p.returncode == 0, p.stderr
    copies = {m["copy_bytes"]: m["copies"] for m in measurements(p.stdout)}
    assert copies == {8: 100, 1 << 20: 32, 16 << 20: 3}   # capped, volume / size, floored


def test_gpucopy_copy_kernel_engine_is_measured_beside_the_copy_engine(gpu_test_cbk):
    p = run(gpu_test_cbk, "gpucopy", "--sizes=64k", "--direction=h2d,d2h", "--host-memory=pinned",
            "--engine=copy,kernel")
    assert p.returncode == 0, p.stderr
    ms = measurements(p.stdout)
    assert sorted((m["phase"], m["engine"]) for m in ms) == [("d2h", "copy"), ("d2h", "kernel"),
                                                             ("h2d", "copy"), ("h2d", "kernel")]
    assert all(m["validated"] for m in ms)


@pytest.mark.parametrize("direction", ["h2d", "d2h", "bidir", "d2d"])
def test_a_copy_that_moved_nothing_fails_its_check_and_says_which(gpu_test_cbk, direction):
    p = run(gpu_test_cbk, "gpucopy", "--sizes=64k", f"--direction={direction}", "--host-memory=pinned",
            fault="lost-copy")
    assert p.returncode == 1, p.stderr
    assert error_message(p.stderr) == (f"gpucopy: validation failed: after the {direction} copies of 65536 bytes "
                                       "(pinned memory, copy) a destination differs from its source")
    [m] = measurements(p.stdout)
    assert m["validated"] is False


def test_gpumem_counts_stream_bytes_and_checks_every_array(gpu_test_cbk):
    # no --array-size: the three arrays fill a quarter of the device's 96 MiB
    p = run(gpu_test_cbk, "gpumem", "--passes=3", env={"CBK_TEST_GPU_MEMORY": "96m"})
    assert p.returncode == 0, p.stderr
    ms = measurements(p.stdout)
    assert [m["phase"] for m in ms] == ["copy", "scale", "add", "triad", "dot"]
    n = (96 << 20) // 4 // 3 // 8
    touched = {"copy": 2, "scale": 2, "add": 3, "triad": 3, "dot": 2}
    for m in ms:
        assert m["array_elements"] == n and m["bytes"] == touched[m["phase"]] * 8 * n
        assert m["validated"] is True and m["avg_rel_error_a"] <= 1e-13 and m["rel_error_dot"] <= 1e-8
        assert m["passes"] == 3 and m["passes_counted"] == 2    # the first pass dropped, as STREAM's
        assert m["min_time_s"] <= m["max_time_s"]
        assert m["array_size_source"] == "0.25 of 96 MiB of device memory, in three arrays"
        assert "memory_peak_gb_per_s" not in m and "fraction_of_peak" not in m   # the runtime did not say


def test_gpumem_gives_its_fraction_of_the_peak_the_runtime_tells(gpu_test_cbk):
    p = run(gpu_test_cbk, "gpumem", "--array-size=8m", "--passes=2", env={"CBK_TEST_GPU_PEAK_GB_PER_S": "4000"})
    assert p.returncode == 0, p.stderr
    for m in measurements(p.stdout):
        assert m["memory_peak_gb_per_s"] == 4000
        assert m["fraction_of_peak"] == pytest.approx(m["best_mb_per_s"] / 1e3 / 4000)


def test_a_wrong_triad_fails_streams_check_in_one_line_with_the_errors(gpu_test_cbk):
    p = run(gpu_test_cbk, "gpumem", "--array-size=8m", "--passes=2", fault="triad")
    assert p.returncode == 1, p.stderr
    assert error_message(p.stderr).startswith("gpumem: validation failed: average relative errors a ")
    ms = measurements(p.stdout)
    assert len(ms) == 5 and not any(m["validated"] for m in ms)


# 24 MiB: the three arrays fill it exactly, and the reductions' partial sums need more
@pytest.mark.parametrize("memory", ["16m", "24m"])
def test_gpumem_arrays_that_do_not_fit_the_free_memory_are_refused_as_bad_input(gpu_test_cbk, memory):
    p = run(gpu_test_cbk, "gpumem", "--array-size=8m", env={"CBK_TEST_GPU_MEMORY": memory})
    assert p.returncode == 2 and p.stdout == "", p.stderr
    assert error_message(p.stderr) == (f"gpumem: three arrays of 8 MiB do not fit the {memory[:-1]} MiB free on test "
                                       "GPU 0 (host memory): lower --array-size or --memory-fraction")


@pytest.mark.parametrize("kernel,args", [("gpucopy", ["--sizes=64k"]), ("gpumem", ["--array-size=8m"]),
                                         ("gpupeer", ["--size=64k"])])
def test_device_memory_that_cannot_be_had_fails_in_one_line_before_any_figure(gpu_test_cbk, kernel, args):
    p = run(gpu_test_cbk, kernel, *args, gpus=2, fault="alloc")
    assert p.returncode == 1 and measurements(p.stdout) == [], p.stderr
    assert error_message(p.stderr) == f"{kernel}: allocating device memory: out of memory"


@pytest.mark.parametrize("kernel", GPU_KERNELS)
def test_no_device_visible_is_refused_in_one_line_with_exit_2(gpu_test_cbk, kernel):
    p = run(gpu_test_cbk, kernel, gpus=0)
    assert p.returncode == 2 and p.stdout == "", p.stderr
    assert error_message(p.stderr).startswith("no GPU visible to this process")


# As CUDA reads CUDA_VISIBLE_DEVICES (PyTorch's _parse_visible_devices mirrors it): the
# devices named, in that order, renumbered from 0; the list stops at an entry without
# digits or past the node's devices; a device named twice hides them all.
@pytest.mark.parametrize("visible, seen", [
    ("2", ["test GPU 2"]),
    ("2,0", ["test GPU 2", "test GPU 0"]),
    (" 1gpu,0", ["test GPU 1", "test GPU 0"]),   # strtoul: blanks, then the leading digits
    ("1,7,0", ["test GPU 1"]),
    ("1,x,0", ["test GPU 1"]),
    ("1,,0", ["test GPU 1"]),
    ("", []),
    ("7", []),
    ("GPU-8f3c2a1e", []),    # the test devices have no UUIDs
    ("0,2,0", []),
])
def test_the_runtime_sees_the_devices_cuda_visible_devices_names_as_cuda_does(gpu_test_cbk, visible, seen):
    """gpupeer opens every visible device and names each pair's devices; with one
    device gpupeer refuses, and gpucopy names the one it measured."""
    env = {"CUDA_VISIBLE_DEVICES": visible}
    if len(seen) == 1:
        p = run(gpu_test_cbk, "gpucopy", "--sizes=4k", "--direction=h2d", "--host-memory=pinned", gpus=3, env=env)
        assert p.returncode == 0, p.stderr
        assert {m["gpu_name"] for m in measurements(p.stdout)} == {f"{seen[0]} (host memory)"}
        return
    p = run(gpu_test_cbk, "gpupeer", "--size=4k", "--iterations=1", "--direction=unidir", "--peer=on", gpus=3, env=env)
    if not seen:
        assert p.returncode == 2 and p.stdout == "", p.stderr
        assert error_message(p.stderr) == (f"no GPU visible to this process (CUDA_VISIBLE_DEVICES={visible}): it "
                                           "leaves none of the test runtime's 3 devices (CBK_TEST_GPUS; a cbk for "
                                           "tests: docs/gpu.md)")
        return
    assert p.returncode == 0, p.stderr
    # the pair's GPU indices are the process's, its names the node's
    named = {m["gpus"]: (m["src_gpu_name"], m["dst_gpu_name"]) for m in measurements(p.stdout)}
    assert named == {"0>1": (f"{seen[0]} (host memory)", f"{seen[1]} (host memory)"),
                     "1>0": (f"{seen[1]} (host memory)", f"{seen[0]} (host memory)")}


def test_gpupeer_measures_every_pair_one_way_and_both_ways_with_each_gpus_own_data(gpu_test_cbk):
    p = run(gpu_test_cbk, "gpupeer", "--size=64k", "--iterations=2", gpus=3)
    assert p.returncode == 0, p.stderr
    ms = measurements(p.stdout)
    unidir = sorted((m["gpus"], m["peer"]) for m in ms if m["phase"] == "unidir")
    bidir = sorted((m["gpus"], m["peer"]) for m in ms if m["phase"] == "bidir")
    assert unidir == sorted((f"{i}>{j}", peer) for i in range(3) for j in range(3) if i != j for peer in ("on", "off"))
    assert bidir == sorted((f"{i}<>{j}", peer) for i in range(3) for j in range(i + 1, 3) for peer in ("on", "off"))
    for m in ms:
        assert m["validated"] is True and m["peer_possible"] is True and m["peer_direct"] == (m["peer"] == "on")
        assert m["src_gpu_bus_id"] != m["dst_gpu_bus_id"]
        assert m["bytes"] == 65536 * 2 * (2 if m["phase"] == "bidir" else 1)


def test_gpupeer_adjacent_pairs_only(gpu_test_cbk):
    p = run(gpu_test_cbk, "gpupeer", "--size=64k", "--iterations=1", "--pairs=adjacent", "--peer=on", gpus=4)
    assert p.returncode == 0, p.stderr
    pairs = sorted(m["gpus"] for m in measurements(p.stdout))
    assert pairs == sorted(["0>1", "1>0", "1>2", "2>1", "2>3", "3>2", "0<>1", "1<>2", "2<>3"])


def test_gpupeer_says_when_two_gpus_cannot_reach_each_other(gpu_test_cbk):
    p = run(gpu_test_cbk, "gpupeer", "--size=64k", "--iterations=1", "--direction=unidir", gpus=2, fault="no-peer")
    assert p.returncode == 0, p.stderr
    ms = measurements(p.stdout)
    assert len(ms) == 4
    for m in ms:
        assert m["peer_possible"] is False and m["peer_direct"] is False and m["validated"] is True
        assert any("cannot reach each other" in w for w in m.get("warnings", [])) == (m["peer"] == "on")


def test_gpupeer_a_copy_that_moved_nothing_fails_its_check(gpu_test_cbk):
    p = run(gpu_test_cbk, "gpupeer", "--size=64k", "--iterations=1", "--direction=unidir", "--peer=on", gpus=2,
            fault="lost-copy")
    assert p.returncode == 1, p.stderr
    assert error_message(p.stderr).startswith("gpupeer: validation failed: after the unidir copies of 65536 bytes "
                                              "between GPU 0 and GPU 1 (peer access on)")


def test_mpi_device_buffers_are_staged_and_labelled_where_the_runtime_is_not_cuda(gpu_test_cbk):
    import shutil

    mpiexec = shutil.which("mpiexec", path=os.path.dirname(sys.executable))
    if not mpiexec:
        pytest.skip("no mpiexec beside the test interpreter")
    out = {}
    for buffer in ("device", "managed"):
        p = run(mpiexec, "-n", "2", gpu_test_cbk, "mpi", "--op=pingpong,bw", f"--buffer={buffer}",
                "--sizes=8,64k", "--iterations=20", "--warmup=2")
        assert p.returncode == 0, p.stderr
        out[buffer] = measurements(p.stdout)
    for buffer, path in (("device", "staged"), ("managed", "managed")):
        ms = out[buffer]
        assert len(ms) == 4 and {(m["buffer"], m["buffer_path"]) for m in ms} == {(buffer, path)}
        for m in ms:
            assert any(w.startswith("staged:") for w in m.get("warnings", [])) == (path == "staged")
    assert {m["buffer_query"] for m in out["device"]} == {"not asked: the GPU runtime is not CUDA"}


# what gpubind reads a grant from: a test sets its own
GRANTS = ("CUDA_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "ZE_AFFINITY_MASK", "SGE_HGR_gpu", "SLURM_JOB_ID",
          "SLURM_STEP_GPUS", "SLURM_JOB_GPUS")


def cli_env(gpu_test_cbk: str, tmp_path, **extra: str) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CBK_TEST_GPU") and k not in GRANTS}
    env.update(CLUSTERBENCH_CBK=gpu_test_cbk, CLUSTERBENCH_DB=f"sqlite:///{tmp_path / 'results.db'}", COLUMNS="200",
               **extra)
    return env


def clusterbench(env: dict, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "clusterbench", *args], capture_output=True, text=True,
                          timeout=300, env=env)


def test_version_says_the_gpu_kernels_run_on_the_test_runtime(gpu_test_cbk, tmp_path):
    p = clusterbench(cli_env(gpu_test_cbk, tmp_path), "--version")
    assert p.returncode == 0, p.stderr
    assert ("GPU kernels: built in on the test runtime: host memory stands in for a GPU, nothing is measured on one "
            "(docs/gpu.md)") in p.stdout


TEST_RUNTIME_WARNING = "measured by a cbk built on the test runtime: host memory stood in for the GPU"


def test_a_gpucopy_run_is_stored_shown_reported_and_exported_flagged_as_no_gpus(gpu_test_cbk, tmp_path):
    env = cli_env(gpu_test_cbk, tmp_path)
    p = clusterbench(env, "run", "gpucopy", "--sizes=4k,1m", "--direction=h2d", "--host-memory=pinned,pageable",
                     "--volume=8m", "--repeat=2")
    assert p.returncode == 0, p.stdout + p.stderr
    shown = clusterbench(env, "show", "1")
    assert shown.returncode == 0, shown.stderr
    # the phase in gpucopy's own words (cbk --describe's phase_words)
    assert "host to device 1 MiB" in shown.stdout and "h2d 1 MiB" not in shown.stdout
    assert TEST_RUNTIME_WARNING in " ".join(shown.stdout.split())
    assert "pageable host memory" in shown.stdout
    md, js = tmp_path / "r.md", tmp_path / "r.json"
    for path in (md, js):
        r = clusterbench(env, "report", "1", "-o", str(path))
        assert r.returncode == 0, r.stderr
    assert TEST_RUNTIME_WARNING in md.read_text()
    assert "| host to device 1 MiB | pinned, copy |" in md.read_text()
    exported = json.loads(js.read_text())
    text = json.dumps(exported)
    assert TEST_RUNTIME_WARNING in text and '"copy_bytes"' in text
    # the data keeps the phase as the kernel wrote it
    [step] = exported["runs"][0]["steps"]
    assert {s["phase"] for s in step["samples"]} == {r["phase"] for r in step["summary"]} == {"h2d"}
    import csv
    import io

    rows = list(csv.DictReader(io.StringIO(clusterbench(env, "export", "1", "--format", "csv").stdout)))
    assert rows and {r["phase"] for r in rows} == {"h2d"}


def test_a_gpumem_figure_above_the_memory_peak_the_runtime_told_is_flagged_on_the_page(gpu_test_cbk, tmp_path):
    # host memory against a "GPU" that says its memory peaks at 1 GB/s: every figure is above it
    env = cli_env(gpu_test_cbk, tmp_path, CBK_TEST_GPU_PEAK_GB_PER_S="1")
    p = clusterbench(env, "run", "gpumem", "--array-size=8m", "--passes=2", "--repeat=2")
    assert p.returncode == 0, p.stdout + p.stderr
    md = tmp_path / "r.md"
    r = clusterbench(env, "report", "1", "-o", str(md))
    assert r.returncode == 0, r.stderr
    text = md.read_text()
    assert "GPU memory peak: above its 1.0 GB/s" in text
    assert "is above the GPU memory peak rate of 1.0 GB/s" in " ".join(text.split())


SUITE = """description = "a GPU whose memory takes the first step and not the second"
[[steps]]
name = "small arrays"
kernel = "gpumem"
params = { array-size = "8m", passes = 2 }
[[steps]]
name = "large arrays"
kernel = "gpumem"
params = { array-size = "64m", passes = 2 }
[[steps]]
name = "host to device"
kernel = "gpucopy"
params = { sizes = "4k", direction = "h2d", host-memory = "pinned" }
"""


def test_a_suite_step_this_machine_cannot_take_is_skipped_with_cbks_reason_and_the_rest_runs(gpu_test_cbk, tmp_path):
    suite = tmp_path / "gpu-small.toml"
    suite.write_text(SUITE)
    env = cli_env(gpu_test_cbk, tmp_path, CBK_TEST_GPU_MEMORY="96m")
    p = clusterbench(env, "run", str(suite))
    assert p.returncode == 0, p.stdout + p.stderr
    steps = json.loads(clusterbench(env, "export", "1", "--format", "json").stdout)["runs"][0]["steps"]
    assert [(s["name"], s["status"]) for s in steps] == [("small arrays", "ok"), ("large arrays", "skipped"),
                                                         ("host to device", "ok")]
    assert steps[1]["message"] == ("cbk refused its input on this machine: gpumem: three arrays of 64 MiB do not fit "
                                   "the 96 MiB free on test GPU 0 (host memory): lower --array-size or "
                                   "--memory-fraction")
    listed = clusterbench(env, "list")
    assert "ok (warning)" in listed.stdout
    assert "part of the suite skipped: large arrays: cbk refused its input on this machine" in \
        " ".join(clusterbench(env, "show", "1").stdout.split())


def test_a_run_whose_every_step_was_refused_here_fails_with_exit_2(gpu_test_cbk, tmp_path):
    env = cli_env(gpu_test_cbk, tmp_path, CBK_TEST_GPU_MEMORY="16m")
    p = clusterbench(env, "run", "gpumem", "--array-size=8m,16m")
    assert p.returncode == 2, p.stdout + p.stderr
    assert "Error: this run: every step was refused here, nothing measured (clusterbench show 1)" in p.stderr


def test_a_single_step_this_machine_cannot_take_is_refused_with_exit_2(gpu_test_cbk, tmp_path):
    env = cli_env(gpu_test_cbk, tmp_path, CBK_TEST_GPU_MEMORY="16m")
    p = clusterbench(env, "run", "gpumem", "--array-size=8m")
    assert p.returncode == 2, p.stdout + p.stderr
    assert "three arrays of 8 MiB do not fit the 16 MiB free" in p.stderr


def test_the_reports_headline_names_the_slowest_gpu_pair_one_way_with_peer_access(gpu_test_cbk, tmp_path):
    """A procurement document quotes what every pair of a node's GPUs reaches at least:
    the lowest median of gpupeer's one-way copies with peer access on, and which pair."""
    env = cli_env(gpu_test_cbk, tmp_path, CBK_TEST_GPUS="3")
    p = clusterbench(env, "run", "gpupeer", "--size=1m", "--iterations=2", "--direction=unidir", "--repeat=3")
    assert p.returncode == 0, p.stdout + p.stderr
    rows = json.loads(clusterbench(env, "export", "1").stdout)["runs"][0]["steps"][0]["summary"]
    peer_on = [r for r in rows if r["phase"] == "unidir" and r["mode"].endswith(", on")]
    assert len(peer_on) == 6
    slowest = min(peer_on, key=lambda r: r["median"])
    md = tmp_path / "r.md"
    assert clusterbench(env, "report", "1", "-o", str(md)).returncode == 0
    headline = next(line for line in md.read_text().splitlines() if line.startswith("| GPU to GPU copy"))
    assert headline.startswith(f"| GPU to GPU copy, one way (slowest pair: {slowest['mode']}) | ")


# --gpus-per-rank end to end: clusterbench.launch.gpubind narrows each rank's
# CUDA_VISIBLE_DEVICES to its share of the grant, and the GPU kernels open what it leaves.
BOUND = [
    ("gpucopy", ("--sizes=4k", "--direction=h2d", "--host-memory=pinned", "--volume=64k")),
    ("gpumem", ("--array-size=64k", "--passes=2")),
    ("mpi", ("--buffer=device", "--op=pingpong", "--sizes=8", "--iterations=5", "--warmup=1")),
]


def bound_run(env: dict, kernel: str, args: tuple, *binding: str) -> subprocess.CompletedProcess:
    return clusterbench(env, "run", kernel, *args, "--np", "2", *binding, "--repeat", "1", "--quiet")


def stored_steps(env: dict) -> list[dict]:
    """The steps of run 1, [] when nothing was stored."""
    p = clusterbench(env, "export", "1", "--format", "json")
    return json.loads(p.stdout)["runs"][0]["steps"] if p.returncode == 0 else []


@pytest.mark.timeout(240)
@pytest.mark.parametrize("kernel, args", BOUND, ids=[k for k, _ in BOUND])
def test_each_rank_measures_the_gpu_its_binding_leaves_it(gpu_test_cbk, mpiexec, tmp_path, kernel, args):
    # the grant lists the node's GPU 1 first: rank 0 gets it, rank 1 GPU 0
    env = cli_env(gpu_test_cbk, tmp_path, CBK_TEST_GPUS="2", CUDA_VISIBLE_DEVICES="1,0")
    p = bound_run(env, kernel, args, "--gpus-per-rank", "1")
    assert p.returncode == 0, p.stdout + p.stderr
    [step] = stored_steps(env)
    assert step["build"]["gpu_devices"] == ["1", "0"]
    # a record names rank 0's device (the mpi kernel's name none)
    names = {s["record"].get("gpu_name") for s in step["samples"]}
    assert names == ({None} if kernel == "mpi" else {"test GPU 1 (host memory)"})
    assert "GPUs seen: rank 0: 1; rank 1: 0" in " ".join(clusterbench(env, "show", "1").stdout.split())


@pytest.mark.timeout(240)
@pytest.mark.parametrize("kernel, args", BOUND, ids=[k for k, _ in BOUND])
def test_a_grant_naming_more_gpus_than_the_node_has_is_refused_before_anything_is_stored(
        gpu_test_cbk, mpiexec, tmp_path, kernel, args):
    # two GPUs granted, one on the node: rank 1's CUDA_VISIBLE_DEVICES=1 leaves it none
    env = cli_env(gpu_test_cbk, tmp_path, CBK_TEST_GPUS="1", CUDA_VISIBLE_DEVICES="0,1")
    p = bound_run(env, kernel, args, "--gpus-per-rank", "1")
    assert p.returncode == 2, p.stdout + p.stderr
    assert p.stderr.strip() == (
        f"Error: {kernel}: no GPU visible to this process (CUDA_VISIBLE_DEVICES=1): it leaves none of the test "
        "runtime's 1 devices (CBK_TEST_GPUS; a cbk for tests: docs/gpu.md)")
    # found before the run: cbk's check runs under each rank's binding, not only under every granted GPU
    assert stored_steps(env) == []


@pytest.mark.timeout(120)
def test_more_gpus_per_rank_than_granted_is_refused_before_anything_is_stored(gpu_test_cbk, tmp_path):
    env = cli_env(gpu_test_cbk, tmp_path, CBK_TEST_GPUS="2", CUDA_VISIBLE_DEVICES="0,1")
    kernel, args = BOUND[0]
    p = bound_run(env, kernel, args, "--gpus-per-rank", "2")
    assert (p.returncode, p.stderr.strip()) == (2, "Error: --gpus-per-rank 2 x 2 rank(s) on a node needs 4 GPUs, "
                                                   "but CUDA_VISIBLE_DEVICES grants 2 (0 1): use fewer ranks per "
                                                   "node, or --share-gpus")
    assert stored_steps(env) == []


@pytest.mark.timeout(240)
@pytest.mark.parametrize("kernel, args", BOUND[:2], ids=[k for k, _ in BOUND[:2]])
def test_two_ranks_sharing_one_gpu_measure_it_both_and_every_figure_says_so(gpu_test_cbk, mpiexec, tmp_path,
                                                                            kernel, args):
    import socket

    env = cli_env(gpu_test_cbk, tmp_path, CBK_TEST_GPUS="2", CUDA_VISIBLE_DEVICES="1")
    p = bound_run(env, kernel, args, "--gpus-per-rank", "1", "--share-gpus")
    assert p.returncode == 0, p.stdout + p.stderr
    [step] = stored_steps(env)
    assert step["build"]["gpu_devices"] == ["1", "1"]
    assert {s["record"]["gpu_name"] for s in step["samples"]} == {"test GPU 1 (host memory)"}
    # asked for: said once under the step, in plain words, not a warning on every figure
    shared = (f"Ranks 0 and 1 on {socket.gethostname()} share GPU 1, the only GPU they had there: each figure is a "
              "share of it.")
    assert not any("share" in w for row in step["summary"] for w in row["warnings"])
    assert shared in " ".join(clusterbench(env, "show", "1").stdout.split())


def gpu_suite_mpi_step(tmp_path) -> str:
    """The last step of the shipped gpu suite (MPI from GPU memory, 2 ranks), as
    it is written there, at two small sizes: no --gpus-per-rank, no binding key."""
    import tomllib
    from pathlib import Path

    import clusterbench.suites

    shipped = tomllib.loads((Path(clusterbench.suites.__file__).parent / "gpu.toml").read_text())
    step = next(s for s in shipped["steps"] if s["kernel"] == "mpi")
    assert "gpus-per-rank" not in step and step["np"] == 2 and step["params"]["buffer"] == "device"
    ops = step["params"]["op"]
    suite = tmp_path / "gpu_mpi.toml"
    suite.write_text(f'[[steps]]\nname = "{step["name"]}"\nkernel = "mpi"\nnp = 2\nrepeat = 1\n'
                     f'requires = ["mpi", "gpu"]\nparams = {{ op = "{ops}", buffer = "device", sizes = "8,1k", '
                     f'iterations = 5, warmup = 1 }}\n')
    return str(suite)


@pytest.mark.timeout(240)
@pytest.mark.parametrize("gpus, devices", [("2", ["0", "1"]), ("1", ["0", "0"])], ids=["two-gpus", "one-gpu"])
def test_the_gpu_suites_two_ranks_get_a_gpu_each_where_the_node_has_two_and_share_the_one_said_plainly(
        gpu_test_cbk, mpiexec, tmp_path, gpus, devices):
    """No option and no grant variable (outside a batch job): the node's own GPUs are
    the grant. Both ranks opened device 0 before, and GPU 0 talked to itself."""
    import socket

    env = cli_env(gpu_test_cbk, tmp_path, CBK_TEST_GPUS=gpus)
    p = clusterbench(env, "run", gpu_suite_mpi_step(tmp_path), "--quiet")
    assert p.returncode == 0, p.stdout + p.stderr
    [step] = stored_steps(env)
    assert step["build"]["gpu_devices"] == devices
    shown = " ".join(clusterbench(env, "show", "1").stdout.split())
    assert f"GPUs seen: rank 0: {devices[0]}; rank 1: {devices[1]}" in shown
    md = tmp_path / "r.md"
    assert clusterbench(env, "report", "1", "-o", str(md)).returncode == 0
    said = (f"Ranks 0 and 1 on {socket.gethostname()} share GPU 0, the only GPU they had there: each figure is a "
            "share of it.")
    # one line under the step, nothing a user could act on, and no figure flagged for it
    assert (said in shown, md.read_text().count(said)) == ((True, 1) if gpus == "1" else (False, 0))
    assert not any("GPU" in w and "share" in w for row in step["summary"] for w in row["warnings"])
    assert "--gpus-per-rank" not in shown


@pytest.mark.timeout(120)
def test_a_grant_inside_a_batch_job_is_what_the_default_binding_splits(gpu_test_cbk, mpiexec, tmp_path):
    env = cli_env(gpu_test_cbk, tmp_path, CBK_TEST_GPUS="3", SGE_HGR_gpu="2 1")   # qsub -l gpu=2
    p = bound_run(env, *BOUND[2])
    assert p.returncode == 0, p.stdout + p.stderr
    assert stored_steps(env)[0]["build"]["gpu_devices"] == ["2", "1"]


@pytest.mark.timeout(120)
def test_the_default_binding_on_a_node_without_a_gpu_leaves_the_refusal_to_the_kernel(gpu_test_cbk, tmp_path):
    env = cli_env(gpu_test_cbk, tmp_path, CBK_TEST_GPUS="0")
    p = bound_run(env, *BOUND[2])
    assert (p.returncode, p.stderr.strip()) == (2, "Error: mpi: no GPU visible to this process: the test runtime was "
                                                   "given CBK_TEST_GPUS=0 (a cbk for tests: docs/gpu.md)")
    assert stored_steps(env) == []


def test_a_test_node_shaped_by_a_value_it_cannot_take_is_refused_naming_the_value_as_given(gpu_test_cbk, tmp_path):
    """CBK_TEST_GPUS=abc (or -3) was read by strtol as 0 devices, and the refusal said
    "CBK_TEST_GPUS=0"; 100 was 64 devices; a mistyped fault was a run with none planted."""
    refused = {value: error_message(run(gpu_test_cbk, "gpumem", "--array-size=64k", "--passes=2",
                                        "--repetitions=1", **shape).stderr)
               for value, shape in [("abc", {"gpus": "abc"}), ("100", {"gpus": "100"}), ("fault", {"fault": "tripple"}),
                                    ("memory", {"env": {"CBK_TEST_GPU_MEMORY": "lots"}})]}
    assert refused == {
        "abc": "the test runtime's CBK_TEST_GPUS=abc is no number of devices from 0 to 64 (a cbk for tests: "
               "docs/gpu.md)",
        "100": "the test runtime's CBK_TEST_GPUS=100 is no number of devices from 0 to 64 (a cbk for tests: "
               "docs/gpu.md)",
        "fault": "the test runtime's CBK_TEST_GPU_FAULT=tripple is no fault it plants (lost-copy, triad, alloc, "
                 "no-peer; a cbk for tests: docs/gpu.md)",
        "memory": "the test runtime's CBK_TEST_GPU_MEMORY=lots is no size in bytes above 0 (1g, 512m; a cbk for "
                  "tests: docs/gpu.md)"}
    counted = run(gpu_test_cbk, "--gpus", gpus="-3")
    assert (counted.stdout, counted.stderr) == ("0\n", "the test runtime's CBK_TEST_GPUS=-3 is no number of devices "
                                                        "from 0 to 64 (a cbk for tests: docs/gpu.md)\n")
    # through the default binding: the kernel's refusal is the one line, nothing stored
    env = cli_env(gpu_test_cbk, tmp_path, CBK_TEST_GPUS="abc")
    p = bound_run(env, *BOUND[1])
    assert (p.returncode, p.stderr.strip()) == (2, "Error: gpumem: the test runtime's CBK_TEST_GPUS=abc is no number "
                                                   "of devices from 0 to 64 (a cbk for tests: docs/gpu.md)")


def test_cbk_counts_the_gpus_its_process_sees(gpu_test_cbk):
    counts = [run(gpu_test_cbk, "--gpus", gpus=n).stdout.strip() for n in (0, 1, 2)]
    assert counts == ["0", "1", "2"]
    assert run(gpu_test_cbk, "--gpus", gpus=3, env={"CUDA_VISIBLE_DEVICES": "2"}).stdout.strip() == "1"


def test_a_stored_gpu_run_reads_in_its_kernels_words_where_cbk_has_no_gpu_kernels(gpu_test_cbk, cbk_bin, tmp_path):
    """The run record carries the words: a login node's cbk, built without the GPU
    kernels, still prints gpupeer's phases as gpupeer names them."""
    env = cli_env(gpu_test_cbk, tmp_path, CBK_TEST_GPUS="2")
    p = clusterbench(env, "run", "gpupeer", "--size=64k", "--iterations=1", "--peer=on", "--repeat=1", "--quiet")
    assert p.returncode == 0, p.stdout + p.stderr
    elsewhere = {**env, "CLUSTERBENCH_CBK": cbk_bin}
    described = json.loads(subprocess.run([cbk_bin, "--describe"], capture_output=True, text=True).stdout)
    assert "gpupeer" not in {k["name"] for k in described["kernels"]}
    shown = clusterbench(elsewhere, "show", "1")
    assert shown.returncode == 0, shown.stderr
    rows = [line for line in shown.stdout.splitlines() if "0>1" in line or "0<>1" in line]
    assert len(rows) == 2 and "one way" in rows[0] and "both ways" in rows[1], shown.stdout
