"""Compute kernels on this machine: himeno (serial, OpenMP, MPI), stream, cpufreq."""
from __future__ import annotations

import json
import os
import re
import subprocess

import pytest

# himenoBMTxpa.c, single precision, after exactly 3 sweeps (the figures)
REFERENCE_GOSA = {"XS": 6.227474194e-03, "S": 3.288627835e-03}


def allowed_cpus() -> int:
    return len(os.sched_getaffinity(0))


def openmp_built(cbk_bin) -> bool:
    out = subprocess.run([cbk_bin, "himeno", "--grid=5x5x5", "--iterations=1"], capture_output=True, text=True,
                         check=True).stdout
    return any(json.loads(line).get("openmp") for line in out.splitlines())


def one(r, phase):
    assert r.status == 0, r.stderr
    (m,) = r.measurements(phase)
    return m


@pytest.mark.timeout(60)
@pytest.mark.parametrize("size", ["XS", "S"])
def test_himeno_reference_order_reproduces_reference_gosa(run_cbk, size):
    m = one(run_cbk("himeno", f"--size={size}", "--iterations=3", "--gosa-order=reference"), "jacobi")
    assert f"{m['gosa']:.5e}" == f"{REFERENCE_GOSA[size]:.5e}"  # 6 significant digits
    assert m["iterations"] == 3 and m["ops"] == 3
    grid = {"XS": (32, 32, 64), "S": (64, 64, 128)}[size]
    assert m["grid"] == "x".join(map(str, grid)) and m["decomposition"] == "1x1x1"
    assert m["points"] == (grid[0] - 2) * (grid[1] - 2) * (grid[2] - 2)
    assert m["reference_points"] == (grid[0] - 3) * (grid[1] - 3) * (grid[2] - 3)
    # MFLOPS = 34 flops x interior points x sweeps / seconds
    assert m["rate_unit"] == "MFLOPS"
    assert m["rate"] == pytest.approx(34 * m["points"] * 3 / 1e6 / m["seconds"], rel=0.05)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("size", ["XS", "S"])
def test_himeno_default_and_threads_within_one_percent(run_cbk, cbk_bin, size):
    threads = [1] + ([2] if allowed_cpus() >= 2 and openmp_built(cbk_bin) else [])
    for t in threads:
        m = one(run_cbk("himeno", f"--size={size}", "--iterations=3", f"--threads={t}"), "jacobi")
        assert m["threads"] == t and len(m["cpus_rank0"].split(",")) == t
        assert m["gosa"] == pytest.approx(REFERENCE_GOSA[size], rel=0.01)


@pytest.mark.timeout(90)
@pytest.mark.parametrize("ranks,extra,dec", [(2, [], "2x1x1"), (4, [], "2x2x1"), (4, ["--decomposition=1x1x4"], "1x1x4"),
                                             (3, ["--decomposition=1x3x1"], "1x3x1")])
def test_himeno_mpi_matches_serial(run_cbk, mpiexec, ranks, extra, dec):
    serial = one(run_cbk("himeno", "--size=XS", "--iterations=3", "--gosa-order=reference"), "jacobi")
    m = one(run_cbk("himeno", "--size=XS", "--iterations=3", *extra,
                    launcher=[mpiexec, "-n", str(ranks)]), "jacobi")
    assert m["ranks"] == ranks and m["decomposition"] == dec
    assert m["gosa"] == pytest.approx(serial["gosa"], rel=0.01)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("threads", [1, 2])
def test_himeno_mpi_with_threads_and_uneven_split(run_cbk, mpiexec, cbk_bin, threads):
    if threads > 1 and (allowed_cpus() < 2 or not openmp_built(cbk_bin)):
        pytest.skip("MPI x OpenMP needs OpenMP and 2 CPUs")
    # 3 interior planes along I split over 2 ranks: 2 + 1, and 18 along J over 2 more
    serial = one(run_cbk("himeno", "--grid=5x20x33", "--iterations=7", "--gosa-order=reference"), "jacobi")
    m = one(run_cbk("himeno", "--grid=5x20x33", "--iterations=7", f"--threads={threads}", "--decomposition=2x2x1",
                    launcher=[mpiexec, "-n", "4"]), "jacobi")
    assert m["threads"] == threads and m["ranks"] == 4
    assert m["gosa"] == pytest.approx(serial["gosa"], rel=0.01)


@pytest.mark.timeout(60)
def test_himeno_time_mode_calibrates_and_runs_about_the_target(run_cbk):
    m = one(run_cbk("himeno", "--size=XS", "--mode=time", "--seconds=0.5"), "jacobi")
    assert m["run_length"] == "time" and m["qualifiers"] == ["run_length"] and m["calibration_seconds"] > 0
    assert m["iterations"] >= 1 and m["seconds"] > 0.1


@pytest.mark.timeout(60)
@pytest.mark.parametrize("args,needle", [
    (["--size=XXL"], "--size"),
    (["--iterations=0"], "--iterations"),
    (["--threads=100000"], "--threads"),
    (["--threads=1025"], "--threads"),
    (["--decomposition=2x1x1"], "decomposition"),
    (["--grid=3x40x40"], None),  # valid: one interior plane
    (["--grid=2x40x40"], "--grid"),
    (["--threads=2", "--gosa-order=reference"], "--gosa-order|without OpenMP"),
])
def test_himeno_bad_input_exits_2_with_one_line(run_cbk, args, needle):
    r = run_cbk("himeno", "--iterations=1", *args)
    if needle is None:
        assert r.status == 0, r.stderr
        return
    assert r.status == 2 and r.records == []
    assert len(r.stderr.strip().splitlines()) == 1 and any(n in r.errors[0]["message"] for n in needle.split("|"))


@pytest.mark.timeout(60)
def test_himeno_more_threads_than_cpus_is_bad_input(run_cbk):
    r = run_cbk("himeno", "--size=XS", f"--threads={allowed_cpus() + 1}")
    assert r.status == 2 and len(r.stderr.strip().splitlines()) == 1


@pytest.mark.timeout(60)
def test_himeno_decomposition_that_does_not_divide_the_grid(run_cbk, mpiexec):
    r = run_cbk("himeno", "--grid=3x40x40", "--decomposition=2x1x1", launcher=[mpiexec, "-n", "2"])
    assert r.status == 2 and "does not divide the grid" in r.stderr
    r = run_cbk("himeno", "--size=XS", "--decomposition=3x1x1", launcher=[mpiexec, "-n", "2"])
    assert r.status == 2 and "3 parts but there are 2 ranks" in r.stderr


STREAM_BYTES = {"copy": 2, "scale": 2, "add": 3, "triad": 3}


@pytest.mark.timeout(60)
def test_stream_validates_and_counts_bytes_as_stream(run_cbk):
    r = run_cbk("stream", "--array-size=16m", "--passes=4", "--threads=1")
    assert r.status == 0, r.stderr
    n = 16 * 2**20 // 8
    for phase, arrays in STREAM_BYTES.items():
        m = one(r, phase)
        assert m["validated"] is True and m["array_elements"] == n
        assert m["bytes"] == arrays * 8 * n and m["passes_counted"] == 3
        assert m["method"] == "based on a variant of the STREAM benchmark"
        assert m["seconds"] == pytest.approx(m["min_time_s"])
        assert m["best_mb_per_s"] >= m["median_mb_per_s"] > 0
        assert m["min_time_s"] <= m["avg_time_s"] <= m["max_time_s"]


@pytest.mark.timeout(60)
def test_stream_all_threads_and_default_size_source(run_cbk):
    r = run_cbk("stream", "--array-size=8m", "--passes=3")
    m = one(r, "triad")
    assert m["threads"] == allowed_cpus() or m["threads"] == 1
    assert len(m["cpus"].split(",")) == m["threads"]


@pytest.mark.timeout(60)
def test_stream_detects_a_corrupted_element(run_cbk):
    r = run_cbk("stream", "--array-size=8m", "--passes=3", env={"CBK_TEST_CORRUPT_STREAM": "1"})
    assert r.status == 1
    assert "validation failed" in r.errors[0]["message"]
    assert all(m["validated"] is False for m in r.measurements())


@pytest.mark.timeout(60)
def test_stream_bad_input(run_cbk):
    for args in (["--passes=1"], ["--array-size=1k"], ["--threads=100000"], ["--array-size=100t"]):
        r = run_cbk("stream", *args)
        assert r.status == 2 and r.records == [] and len(r.stderr.strip().splitlines()) == 1, args


def nominal_mhz() -> tuple[float, str]:
    text = open("/proc/cpuinfo").read()
    m = re.search(r"model name\s*:.*@\s*([\d.]+)GHz", text)
    if m:
        return float(m.group(1)) * 1000, "model name"
    return float(re.search(r"cpu MHz\s*:\s*([\d.]+)", text).group(1)), "cpu MHz (no GHz in the model name)"


@pytest.mark.timeout(60)
def test_cpufreq_clock_is_near_nominal(run_cbk):
    r = run_cbk("cpufreq", "--seconds=0.3")
    assert r.status == 0, r.stderr
    records = r.measurements("clock")
    n = allowed_cpus()
    assert [m["busy_cpus"] for m in records] == list(range(1, n + 1))
    nominal, source = nominal_mhz()
    for m in records:
        per = [float(x) for x in m["mhz_per_thread"].split(",")]
        assert len(per) == m["busy_cpus"] == len(m["cpus"].split(","))
        assert m["mode"] == "n/a" and m["sweep_key"] == "busy_cpus"  # docs/records.md
        assert m["rate_unit"] == "MHz" and m["rate"] == pytest.approx(m["mhz_mean"], rel=1e-6)
        assert 0.5 * nominal < m["mhz_mean"] < 1.5 * nominal, (m["mhz_mean"], nominal, source)
        assert m["sysfs_cur_mhz"] and m["boost"]
    # in a VM without cpufreq sysfs the fields say why
    if not os.path.exists("/sys/devices/system/cpu/cpu0/cpufreq"):
        assert records[0]["sysfs_cur_mhz"].startswith("unavailable: ")


@pytest.mark.timeout(30)
def test_cpufreq_bad_input(run_cbk):
    r = run_cbk("cpufreq", f"--max-busy={allowed_cpus() + 1}")
    assert r.status == 2 and len(r.stderr.strip().splitlines()) == 1


@pytest.mark.timeout(60)
def test_himeno_thread_sweep_reports_every_count_on_distinct_cpus(run_cbk, cbk_bin):
    n = allowed_cpus() if openmp_built(cbk_bin) else 1
    r = run_cbk("himeno", "--size=XS", "--iterations=3", "--sweep=threads", "--threads=0")
    assert r.status == 0, r.stderr
    ms = r.measurements("jacobi")
    assert [m["threads"] for m in ms] == list(range(1, n + 1))
    for m in ms:
        cpus = m["cpus_rank0"].split(",")
        assert len(cpus) == m["threads"] == len(set(cpus))  # pinned, one CPU each
        # docs/records.md: the thread count is the declared sweep key, not part of the mode
        assert m["mode"] == "n/a" and m["sweep_key"] == "threads" and m["run_length"] == "iterations"
        assert m["gosa"] == pytest.approx(REFERENCE_GOSA["XS"], rel=0.01)


@pytest.mark.timeout(60)
def test_stream_thread_sweep(run_cbk, cbk_bin):
    n = allowed_cpus() if openmp_built(cbk_bin) else 1
    r = run_cbk("stream", "--array-size=8m", "--passes=3", "--sweep=threads")
    assert r.status == 0, r.stderr
    assert [m["threads"] for m in r.measurements("triad")] == list(range(1, n + 1))
    assert all(m["mode"] == "n/a" and m["sweep_key"] == "threads" and m["statistic"] == "best"
               and m["qualifiers"] == ["statistic"] for m in r.measurements())
    assert all(m["validated"] for m in r.measurements())


@pytest.mark.timeout(60)
@pytest.mark.parametrize("suite", ["quick", "node"])
def test_compute_suite_steps_pass_cbk_check(cbk_bin, suite):
    from clusterbench import catalogue, suites

    cat = catalogue.load(cbk_bin)
    steps = [s for s in suites.load(suite, {}).steps if s.kernel in ("himeno", "stream", "cpufreq")]
    assert {s.kernel for s in steps} == {"himeno", "stream", "cpufreq"}
    for s in steps:
        cat.check_params(cat.kernel(s.kernel), s.params)
        p = subprocess.run([cbk_bin, "--check", s.kernel, *s.cbk_args()], capture_output=True, text=True)
        assert p.returncode == 0, (s.name, p.stderr)


@pytest.mark.timeout(60)
def test_himeno_swap_update_gives_the_same_gosa_as_copy(run_cbk):
    copy = one(run_cbk("himeno", "--size=XS", "--iterations=10"), "jacobi")
    swap = one(run_cbk("himeno", "--size=XS", "--iterations=10", "--update=swap"), "jacobi")
    assert copy["update"] == "copy" and swap["update"] == "swap"
    assert swap["gosa"] == copy["gosa"]
