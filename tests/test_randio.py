"""randio on real files: engines, patterns, queue depths, percentiles, bad input."""
from __future__ import annotations

import os
import signal
import subprocess
import time

import pytest

from conftest import tree, wait_for_data_file
from full_disk import run_on_full_disk


def available_engines(cbk_bin, tmp_path) -> list[str]:
    out = []
    for e in ("psync", "io_uring", "libaio"):
        r = subprocess.run([cbk_bin, "--check", "randio", f"--engine={e}", f"--dir={tmp_path}", "--file-size=1m"],
                           capture_output=True, text=True)
        if r.returncode == 0:
            out.append(e)
    return out


def test_psync_is_always_available_and_missing_engines_say_how_to_get_them(cbk_bin, tmp_path):
    engines = available_engines(cbk_bin, tmp_path)
    assert "psync" in engines
    for e in {"io_uring", "libaio"} - set(engines):
        r = subprocess.run([cbk_bin, "randio", f"--engine={e}", f"--dir={tmp_path}"], capture_output=True, text=True)
        assert r.returncode == 2 and "apt-get install" in r.stderr


@pytest.mark.timeout(240)
def test_an_engine_turned_off_at_build_says_so_not_install_the_library(cbk_minimal, tmp_path):
    """Spack's ~liburing builds with CBK_WITH_LIBURING=OFF on a host that may
    have liburing-dev: the refusal told the user to apt-get install it and
    reinstall, which changes nothing. The status line said 'liburing ,'.
    (cbk_minimal: every optional part off, the least to compile.)"""
    import json

    configure = (cbk_minimal.parent / "configure.txt").read_text()
    assert "-- cbk: liburing off (CBK_WITH_LIBURING=OFF), libaio off (CBK_WITH_LIBAIO=OFF)" in configure
    for engine, option, variant in (("io_uring", "CBK_WITH_LIBURING", "liburing"), ("libaio", "CBK_WITH_LIBAIO", "libaio")):
        r = subprocess.run([str(cbk_minimal), "--check", "randio", f"--engine={engine}", f"--dir={tmp_path}"],
                           capture_output=True, text=True, timeout=30)
        assert r.returncode == 2
        assert json.loads(r.stderr)["message"] == (f"engine {engine} not available: cbk was built with {option}=OFF "
                                                   f"(Spack: ~{variant}); rebuild with it ON (Spack: +{variant})")
    # and the build says what it lacks, in --describe and in each run's record
    described = json.loads(subprocess.run([str(cbk_minimal), "--describe"], capture_output=True, text=True,
                                          timeout=30).stdout)
    assert described["features"] == {"openmp": False, "liburing": False, "libaio": False, "cuda": False}
    run = subprocess.run([str(cbk_minimal), "null"], capture_output=True, text=True, timeout=30)
    assert json.loads(run.stdout.splitlines()[-1])["features"] == described["features"]


@pytest.mark.timeout(120)
@pytest.mark.parametrize("engine", ["psync", "io_uring", "libaio"])
@pytest.mark.parametrize("pattern", ["randread", "randwrite", "randrw"])
@pytest.mark.parametrize("depth", [1, 32])
def test_engines_patterns_depths(run_cbk, cbk_bin, tmp_path, engine, pattern, depth):
    if engine not in available_engines(cbk_bin, tmp_path):
        pytest.skip(f"{engine} not built in")
    # a 1 s window, not 0.4 s: beside a second suite a QD-32 O_DIRECT write window of 0.4 s once saw no
    # completion at all (ops 0), the VM's disk stalled longer than the window
    r = run_cbk("randio", f"--dir={tmp_path}", "--file-size=16m", f"--engine={engine}", f"--pattern={pattern}",
                f"--iodepth={depth}", "--runtime=1", "--ramp=0.1", "--rwmix=60", "--seed=42")
    assert r.status == 0, r.stderr
    phases = {m["phase"]: m for m in r.measurements()}
    expected = {"randread": {"randread"}, "randwrite": {"randwrite"}, "randrw": {"randread", "randwrite"}}[pattern]
    assert set(phases) == expected
    for m in phases.values():
        assert m["engine"] == engine and m["mode"] == "direct" and m["seed"] == 42
        assert m["iodepth"] == (depth if engine != "psync" else 1)
        assert m["ops"] > 0 and m["histogram_count"] == m["ops"] and m["errors"] == 0
        assert m["rate_unit"] == "IOPS" and m["rate"] == pytest.approx(m["ops"] / m["seconds"])
        assert m["bytes"] == m["ops"] * 4096
        assert 0 < m["lat_us_min"] <= m["lat_us_p50"] <= m["lat_us_p90"] <= m["lat_us_p99"] \
            <= m["lat_us_p99_9"] <= m["lat_us_p99_99"] <= m["lat_us_max"]
        assert isinstance(m["iops_per_s"], list)
    if pattern == "randrw":
        share = phases["randread"]["ops"] / (phases["randread"]["ops"] + phases["randwrite"]["ops"])
        assert 0.45 < share < 0.75  # rwmix=60
    assert tree(tmp_path) == []


@pytest.mark.timeout(60)
@pytest.mark.parametrize("engine", ["io_uring", "libaio"])
@pytest.mark.parametrize("batch, effective", [(1, 1), (8, 8), (64, 16)])
def test_submit_batch_is_recorded_and_capped_at_the_depth(run_cbk, cbk_bin, tmp_path, engine, batch, effective):
    if engine not in available_engines(cbk_bin, tmp_path):
        pytest.skip(f"{engine} not built in")
    r = run_cbk("randio", f"--dir={tmp_path}", "--file-size=8m", f"--engine={engine}", "--iodepth=16",
                f"--submit-batch={batch}", "--runtime=0.3", "--ramp=0", "--pattern=randwrite")
    assert r.status == 0, r.stderr
    (m,) = r.measurements()
    assert m["submit_batch"] == effective
    assert m["ops"] > 0 and m["histogram_count"] == m["ops"] and m["errors"] == 0
    assert tree(tmp_path) == []


def sleeps_and_record(run_cbk, *args: str) -> tuple[int, dict]:
    """The run's voluntary context switches (times a thread slept) and its record."""
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_nvcsw
    r = run_cbk("randio", *args)
    assert r.status == 0, r.stderr
    (m,) = r.measurements()
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_nvcsw - before, m


@pytest.mark.timeout(60)
@pytest.mark.parametrize("engine", ["io_uring", "libaio"])
def test_a_job_that_polls_does_not_sleep_for_each_io_and_its_cpu_use_is_recorded(run_cbk, cbk_bin, tmp_path,
                                                                                   engine):
    """--poll (#39): a job asks for completions without sleeping for that long
    before it sleeps, so at QD 1 it no longer sleeps once per I/O (and pays
    its CPU's wake-up from idle); --poll=0 sleeps whenever its I/O is not done yet, as fio."""
    if engine not in available_engines(cbk_bin, tmp_path):
        pytest.skip(f"{engine} not built in")
    common = (f"--dir={tmp_path}", "--file-size=8m", f"--engine={engine}", "--iodepth=1", "--runtime=0.5",
              "--ramp=0")
    slept, m = sleeps_and_record(run_cbk, *common, "--poll=0")
    assert m["poll_us"] == 0 and m["ops"] > 100
    # alone, nearly every I/O sleeps; on a busy machine the job is often preempted after a
    # submission and finds the completion waiting (27 % slept beside the suite's other worker)
    assert slept > 0.1 * m["ops"], (slept, m["ops"])
    # a second is far longer than any I/O here: every completion is found by polling; the set-up
    # (laying the file out, fsync, starting the thread) sleeps about 30 times on its own
    slept, m = sleeps_and_record(run_cbk, *common, "--poll=1000000")
    assert m["poll_us"] == 1000000 and m["ops"] > 100
    assert slept < 0.05 * m["ops"] + 100, (slept, m["ops"])
    assert 0 < m["job_cpu_percent"] <= 110
    (m,) = run_cbk("randio", *common).measurements()
    assert m["poll_us"] == 50  # the default
    (m,) = run_cbk("randio", f"--dir={tmp_path}", "--file-size=8m", "--engine=psync", "--runtime=0.2",
                   "--ramp=0").measurements()
    assert m["poll_us"] == 0  # psync has nothing to poll: each I/O is one system call
    assert tree(tmp_path) == []


@pytest.mark.timeout(60)
def test_cpus_pins_every_job_and_the_record_says_where_they_ran(run_cbk, tmp_path):
    cpu = max(os.sched_getaffinity(0))
    r = run_cbk("randio", f"--dir={tmp_path}", "--file-size=8m", "--jobs=3", f"--cpus={cpu}", "--runtime=0.3",
                "--ramp=0")
    assert r.status == 0, r.stderr
    (m,) = r.measurements()
    assert m["cpus_allowed"] == str(cpu) and m["cpus"] == ",".join([str(cpu)] * 3)
    r = run_cbk("randio", f"--dir={tmp_path}", "--file-size=8m", "--jobs=2", "--runtime=0.3", "--ramp=0")
    (m,) = r.measurements()
    assert m["cpus_allowed"] == "any"
    assert {int(c) for c in m["cpus"].split(",")} <= os.sched_getaffinity(0)


@pytest.mark.timeout(60)
def test_per_second_series_covers_the_runtime(run_cbk, tmp_path):
    r = run_cbk("randio", f"--dir={tmp_path}", "--file-size=8m", "--engine=psync", "--runtime=2.2", "--ramp=0")
    assert r.status == 0, r.stderr
    (m,) = r.measurements()
    assert len(m["iops_per_s"]) == 2 and all(v > 0 for v in m["iops_per_s"])
    assert sum(m["iops_per_s"]) <= m["ops"]


@pytest.mark.timeout(60)
def test_randrw_gives_reads_and_writes_each_their_own_per_second_series(run_cbk, tmp_path):
    """The randread record's series counts reads, the randwrite record's
    writes: both carried every completion, so each summed to more than its
    record's ops (the reads' and the writes' together)."""
    r = run_cbk("randio", f"--dir={tmp_path}", "--file-size=8m", "--engine=psync", "--pattern=randrw", "--rwmix=80",
                "--runtime=1.2", "--ramp=0")
    assert r.status == 0, r.stderr
    phases = {m["phase"]: m for m in r.measurements()}
    assert set(phases) == {"randread", "randwrite"}
    for m in phases.values():
        assert len(m["iops_per_s"]) == 1 and 0 < sum(m["iops_per_s"]) <= m["ops"], m
    assert phases["randread"]["iops_per_s"][0] > phases["randwrite"]["iops_per_s"][0]


@pytest.mark.timeout(60)
@pytest.mark.parametrize("rwmix, empty", [(0, "randread"), (100, "randwrite")])
def test_a_kind_of_io_that_never_completed_has_no_latency_and_says_so(run_cbk, tmp_path, rwmix, empty):
    """randrw with --rwmix=0 issues no reads (100: no writes): that record has
    0 IOPS, and no latency at all rather than 0 us, which no I/O can take."""
    r = run_cbk("randio", f"--dir={tmp_path}", "--file-size=8m", "--pattern=randrw", f"--rwmix={rwmix}",
                "--runtime=0.2", "--ramp=0")
    assert r.status == 0, r.stderr
    phases = {m["phase"]: m for m in r.measurements()}
    none, some = phases.pop(empty), phases.popitem()[1]
    assert none["ops"] == 0 and none["histogram_count"] == 0
    for key in ("lat_us_p50", "lat_us_p90", "lat_us_p99", "lat_us_p99_9", "lat_us_p99_99", "lat_us_min",
                "lat_us_max", "lat_us_mean"):
        assert none[key] is None, (key, none[key])
        assert some[key] > 0
    assert any("no I/O of this kind completed" in w for w in none["warnings"]), none["warnings"]
    assert not any("no I/O" in w for w in some["warnings"])
    assert tree(tmp_path) == []


@pytest.mark.timeout(60)
def test_buffered_mode_is_labelled(run_cbk, tmp_path):
    r = run_cbk("randio", f"--dir={tmp_path}", "--file-size=8m", "--direct=false", "--runtime=0.3", "--ramp=0")
    assert r.status == 0, r.stderr
    (m,) = r.measurements()
    assert m["mode"] == "buffered" and any("page cache" in w for w in m["warnings"])


@pytest.mark.timeout(60)
@pytest.mark.parametrize("args, message", [
    (["--iodepth=0"], "out of range"),
    (["--file-size=1000k", "--block-size=1000"], "multiple of 512"),
    (["--file-size=4k", "--block-size=8k"], "smaller than block size"),
    (["--file-size=10000", "--block-size=4k"], "not a multiple of block size"),
    (["--file-size=4k", "--block-size=1000", "--direct=false"], "not a multiple of block size"),
    (["--engine=spdk"], "is not one of"),
    (["--runtime=0"], "out of range"),
    (["--rwmix=101"], "out of range"),
    (["--cpus=99999"], "not a list of CPUs"),
    (["--cpus=3-1"], "not a list of CPUs"),
    (["--cpus=one"], "not a list of CPUs"),
])
def test_bad_input(run_cbk, tmp_path, args, message):
    r = run_cbk("randio", f"--dir={tmp_path}", *args)
    assert r.status == 2 and len(r.errors) == 1 and message in r.errors[0]["message"], r.stderr
    assert tree(tmp_path) == []


@pytest.mark.timeout(60)
@pytest.mark.parametrize("engine", ["io_uring", "auto"])
def test_a_depth_beyond_io_urings_ring_is_bad_input(run_cbk, cbk_bin, tmp_path, engine):
    """io_uring rings hold at most 32768 entries (IORING_MAX_ENTRIES): a deeper
    --iodepth, which the parameter's range allows for libaio, is refused before
    anything is created, not failed in a job's set-up with "Invalid argument"."""
    if "io_uring" not in available_engines(cbk_bin, tmp_path):
        pytest.skip("io_uring not built in")
    r = run_cbk("randio", f"--dir={tmp_path}", "--file-size=1m", f"--engine={engine}", "--iodepth=32769",
                "--runtime=0.1", "--ramp=0")
    assert r.status == 2 and len(r.errors) == 1, r.stderr
    assert "io_uring queues at most 32768 I/Os" in r.errors[0]["message"], r.errors[0]["message"]
    assert tree(tmp_path) == []


@pytest.mark.timeout(60)
def test_a_disk_that_fills_while_the_file_is_laid_out_is_a_failed_run_not_bad_input(cbk_bin, tmp_path):
    """A file exactly the free space passes the statvfs check, then the private
    directory takes its share and the layout hits ENOSPC: the disk filled
    mid-run, exit status 1 as seqio's write (cbk_io_status), and nothing left."""
    r = run_on_full_disk(tmp_path, '"$CBK" randio --dir="$FULL" --file-size=1m --direct=false --runtime=0.1 '
                         '--ramp=0 2>"$FULL/../err"; echo "status=$?"; ls -A "$FULL"', dict(os.environ, CBK=cbk_bin))
    err = (tmp_path / "err").read_text()
    assert "No space left on device" in err, err
    lines = r.stdout.split()
    assert lines == ["status=1"], (r.stdout, err)


@pytest.mark.timeout(120)
def test_randio_through_the_cli_stores_iops(cli, tmp_path, store_url):
    target = tmp_path / "t"
    target.mkdir()
    r = cli("run", "randio", f"--dir={target}", "--file-size=8m", "--runtime=0.3", "--ramp=0", "--repeat", "2")
    assert r.status == 0, r.stderr
    assert "IOPS" in r.stdout and "randread" in r.stdout
    assert "decimal" not in r.stdout  # IOPS has no MB/s twin: the table drops the empty column
    assert tree(target) == []


@pytest.mark.timeout(60)
def test_a_reader_that_goes_away_leaves_no_directory(cbk_bin, tmp_path):
    """`cbk randio ... | head -1`: the reader closes the pipe after the first record,
    the next write raises SIGPIPE, and cbk must still remove its private directory."""
    p = subprocess.Popen([cbk_bin, "randio", f"--dir={tmp_path}", "--file-size=4m", "--engine=psync",
                          "--runtime=0.2", "--ramp=0", "--repetitions=3"], stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL)
    assert p.stdout.readline().startswith(b"{")
    p.stdout.close()
    p.wait(timeout=30)
    assert p.returncode == -signal.SIGPIPE
    assert tree(tmp_path) == []


@pytest.mark.timeout(60)
def test_a_batch_systems_warning_signal_leaves_no_file(cbk_bin, tmp_path):
    p = subprocess.Popen([cbk_bin, "randio", f"--dir={tmp_path}", "--file-size=4m", "--engine=psync",
                          "--runtime=30", "--ramp=0"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    assert wait_for_data_file(tmp_path), "the run never started"
    time.sleep(0.3)
    p.send_signal(signal.SIGUSR1)  # e.g. sbatch --signal=USR1@60 before the time limit
    p.wait(timeout=30)
    assert p.returncode == -signal.SIGUSR1
    assert tree(tmp_path) == []
