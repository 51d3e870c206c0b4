"""Compute kernels on this machine: himeno (serial, OpenMP, MPI), stream, cpufreq."""
from __future__ import annotations

import json
import os
import subprocess

import pytest

# RIKEN's himenoBMTxps.c (C+MPI, static arrays), single precision, one rank,
# after exactly 3 sweeps: its rehearsal line prints these (XS, S, M)
REFERENCE_GOSA = {"XS": 6.227474194e-03, "S": 3.288627835e-03, "M": 1.733593e-03}
# the same program on 2 ranks split 2x1x1: each rank sums its half in a float
REFERENCE_GOSA_2X1X1 = {"M": 1.667420e-03}


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
@pytest.mark.parametrize("size", ["XS", "S", "M"])
def test_himeno_reference_order_reproduces_reference_gosa(run_cbk, size):
    m = one(run_cbk("himeno", f"--size={size}", "--iterations=3", "--gosa-order=reference"), "jacobi")
    assert f"{m['gosa']:.5e}" == f"{REFERENCE_GOSA[size]:.5e}"  # 6 significant digits
    assert m["iterations"] == 3 and m["ops"] == 3
    grid = {"XS": (32, 32, 64), "S": (64, 64, 128), "M": (128, 128, 256)}[size]
    assert m["grid"] == "x".join(map(str, grid)) and m["decomposition"] == "1x1x1"
    assert m["points"] == (grid[0] - 2) * (grid[1] - 2) * (grid[2] - 2)
    assert m["reference_points"] == (grid[0] - 3) * (grid[1] - 3) * (grid[2] - 3)
    # MFLOPS = 34 flops x interior points x sweeps / seconds
    assert m["rate_unit"] == "MFLOPS"
    assert m["rate"] == pytest.approx(34 * m["points"] * 3 / 1e6 / m["seconds"], rel=0.05)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("size", ["XS", "S", "M"])
def test_himeno_default_order_is_the_reference_order_on_one_thread(run_cbk, cbk_bin, size):
    """The vectorised sweep sums GOSA point by point in one float, as the reference does."""
    ref = one(run_cbk("himeno", f"--size={size}", "--iterations=3", "--gosa-order=reference"), "jacobi")
    m = one(run_cbk("himeno", f"--size={size}", "--iterations=3"), "jacobi")
    assert m["gosa"] == ref["gosa"]
    if allowed_cpus() >= 2 and openmp_built(cbk_bin):
        m = one(run_cbk("himeno", f"--size={size}", "--iterations=3", "--threads=2"), "jacobi")
        assert m["threads"] == 2 and len(m["cpus_rank0"].split(",")) == 2
        # two float partial sums: the reference's own spread between splits
        assert m["gosa"] == pytest.approx(REFERENCE_GOSA[size], rel=0.05)


@pytest.mark.timeout(60)
def test_himeno_two_threads_and_two_ranks_sum_as_the_reference_on_two_ranks(run_cbk, cbk_bin, mpiexec):
    m = one(run_cbk("himeno", "--size=M", "--iterations=3", launcher=[mpiexec, "-n", "2"]), "jacobi")
    assert m["decomposition"] == "2x1x1"
    assert f"{m['gosa']:.5e}" == f"{REFERENCE_GOSA_2X1X1['M']:.5e}"
    if allowed_cpus() >= 2 and openmp_built(cbk_bin):
        m = one(run_cbk("himeno", "--size=M", "--iterations=3", "--threads=2"), "jacobi")
        assert f"{m['gosa']:.5e}" == f"{REFERENCE_GOSA_2X1X1['M']:.5e}"


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


def last_level_cache_bytes() -> int:
    """The sum of the highest-level caches, each counted once by its shared_cpu_list (0: sysfs has none)."""
    from pathlib import Path

    caches: dict[int, dict[str, int]] = {}
    for index in Path("/sys/devices/system/cpu").glob("cpu[0-9]*/cache/index[0-9]*"):
        try:
            level, size = int((index / "level").read_text()), (index / "size").read_text().strip()
            shared = (index / "shared_cpu_list").read_text().strip()
        except (OSError, ValueError):
            continue
        if (index / "type").exists() and (index / "type").read_text().strip() == "Instruction":
            continue
        bytes_ = int(size[:-1]) * {"K": 2**10, "M": 2**20, "G": 2**30}[size[-1]] if size[-1] in "KMG" else int(size)
        caches.setdefault(level, {})[shared] = bytes_
    return sum(caches[max(caches)].values()) if caches else 0


@pytest.mark.timeout(60)
def test_stream_arrays_that_fit_in_the_last_level_cache_are_warned_as_cache_bandwidth(run_cbk):
    """`run stream --array-size=64k` stored 122,000 MiB/s of "memory
    bandwidth" on a two-core VM, without a word: the arrays sat in cache."""
    llc = last_level_cache_bytes()
    if not llc:
        pytest.skip("sysfs gives no cache sizes here")
    small = run_cbk("stream", "--array-size=64k", "--passes=2", "--threads=1")
    assert small.status == 0, small.stderr
    for m in small.measurements():
        (w,) = [w for w in m["warnings"] if "cache" in w]
        assert "192 KiB" in w and "not memory" in w and "--array-size=0" in w, w
    # three arrays larger than the caches: a memory figure, without the warning
    large = run_cbk("stream", f"--array-size={-(-llc // 2 // 4096) * 4096}", "--passes=2", "--threads=1")
    assert large.status == 0, large.stderr
    assert all(not any("cache" in w for w in m["warnings"]) for m in large.measurements())


@pytest.mark.timeout(60)
def test_stream_bad_input(run_cbk):
    for args in (["--passes=1"], ["--array-size=1k"], ["--threads=100000"], ["--array-size=100t"]):
        r = run_cbk("stream", *args)
        assert r.status == 2 and r.records == [] and len(r.stderr.strip().splitlines()) == 1, args


@pytest.mark.timeout(60)
def test_cpufreq_measures_every_busy_count_with_a_physical_clock(run_cbk):
    """Only what no machine can break: how far the clock is from the nominal
    one is a warning of the product (test_a_clock_far_from_nominal_is_a_warning),
    since a VM's reported clock is no bound (#33)."""
    r = run_cbk("cpufreq", "--seconds=0.3")
    assert r.status == 0, r.stderr
    records = r.measurements("clock")
    n = allowed_cpus()
    assert [m["busy_cpus"] for m in records] == list(range(1, n + 1))
    for m in records:
        per = [float(x) for x in m["mhz_per_thread"].split(",")]
        assert len(per) == m["busy_cpus"] == len(m["cpus"].split(","))
        assert m["mode"] == "n/a" and m["sweep_key"] == "busy_cpus"  # docs/records.md
        assert m["rate_unit"] == "MHz" and m["rate"] == pytest.approx(m["mhz_mean"], rel=1e-6)
        # a loaded machine slows a thread, never past these: no CPU runs a dependent add in 0.1 ns
        assert all(10 < x < 10_000 for x in per), per
        assert m["sysfs_cur_mhz"] and m["boost"]
    # in a VM without cpufreq sysfs the fields say why
    if not os.path.exists("/sys/devices/system/cpu/cpu0/cpufreq"):
        assert records[0]["sysfs_cur_mhz"].startswith("unavailable: ")


CLOCK_RECORD = {"schema": 1, "type": "measurement", "kernel": "cpufreq", "repetition": 0, "phase": "clock",
                "mode": "n/a", "sweep_key": "busy_cpus", "busy_cpus": 1, "rate_unit": "MHz"}


@pytest.mark.parametrize("mhz,env,words", [
    # recorded on this project's VM (#33): 4,158 MHz measured, /proc/cpuinfo said 2,596 and no GHz in the model
    (4158.0, {"cpu.model": "AMD EPYC", "cpu.freq_cur_mhz": 2596, "cpu.hypervisor": True},
     ["1.60x the nominal 2,596 MHz", "/proc/cpuinfo's cpu MHz", "virtual machine"]),
    (1100.0, {"cpu.model": "Intel(R) Xeon(R) Gold 6132 CPU @ 2.60GHz", "cpu.hypervisor": False},
     ["0.42x the nominal 2,600 MHz", "model name", "throttled"]),
    (2600.0, {"cpu.freq_max_mhz": 3700, "cpu.model": "Intel(R) Xeon(R) CPU @ 2.60GHz"}, None),
    (3650.0, {"cpu.freq_max_mhz": 3700}, None),
    (3000.0, {}, None),   # nothing to compare with: no warning, no guess
])
def test_a_clock_far_from_nominal_is_a_warning_not_a_failure(mhz, env, words):
    from clusterbench.limits import sample_warnings
    from clusterbench.results.sample import Sample

    sample = Sample.from_record({**CLOCK_RECORD, "rate": mhz, "mhz_mean": mhz})
    warnings = [w for w in sample_warnings(sample, env) if w.startswith("clock ")]
    if words is None:
        assert warnings == []
    else:
        assert len(warnings) == 1 and all(w in warnings[0] for w in words), warnings


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
