"""Run conditions on the real machine: memory cgroups capping the page
cache, system settings changed for a run and restored after (on Ctrl-C,
and by the next command after kill -9), refusals that change nothing.

Other test sessions share this machine: every setting touched here is
written back by the fixtures even when a test fails, the sysctl is one no
benchmark depends on (vm.dirty_expire_centisecs, moved by 1 centisecond),
and the disk whose scheduler and read-ahead change is a loop device made
for the test."""
from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import struct
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import store_rows, terminal_sigint, run_bounded
from unprivileged import CLI_SCRIPT

from clusterbench.conditions import cgroup

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="run conditions are tested as root (CI runs as root)")

EXPIRE = Path("/proc/sys/vm/dirty_expire_centisecs")
THP = Path("/sys/kernel/mm/transparent_hugepage/enabled")
MiB = 1 << 20


def selected(path: Path) -> str:
    text = path.read_text()
    return text[text.index("[") + 1:text.index("]")] if "[" in text else text.strip()


@pytest.fixture
def state_dir(tmp_path, monkeypatch) -> Path:
    d = tmp_path / "state"
    monkeypatch.setenv("CLUSTERBENCH_STATE_DIR", str(d))
    return d / "restore"


@pytest.fixture
def keep_settings(machine_settings_changed):
    """Writes back every value a test may change, even when it fails; read
    and written back under the machine's settings lock."""
    files = [EXPIRE, THP]
    before = {f: selected(f) for f in files if f.exists()}
    yield before
    for f, v in before.items():
        if selected(f) != v:
            f.write_text(v)


@pytest.fixture
def memory_parent(machine_settings_changed) -> Path:
    """The cgroup under which runs make theirs; held under the machine's
    settings lock, as the tests compare every clusterbench cgroup there."""
    try:
        return cgroup.find().parent
    except cgroup.CgroupUnavailable as e:
        pytest.skip(str(e))


def our_cgroups(parent: Path) -> set[str]:
    return {p.name for p in parent.iterdir() if p.name.startswith("clusterbench-")}


def journals(state: Path) -> list[Path]:
    return sorted(state.glob("*.json")) if state.is_dir() else []


def run_env(cbk_bin, store_url) -> dict:
    return dict(os.environ, CLUSTERBENCH_CBK=cbk_bin, CLUSTERBENCH_DB=store_url, COLUMNS="200",
                PATH=str(Path(cbk_bin).parent) + os.pathsep + os.environ.get("PATH", ""))


def start(cbk_bin, store_url, *args) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "clusterbench", "run", *args, "--quiet"],
                            env=run_env(cbk_bin, store_url), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True,
                            preexec_fn=terminal_sigint)


def ended(pid: int) -> bool:
    """Gone, or a zombie: dead, waiting for its parent to reap it."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0] == "Z"
    except (OSError, IndexError):
        return True


def wait_until(pred, timeout_s: float = 30) -> bool:
    deadline = time.time() + timeout_s
    while time.time() < deadline:
        if pred():
            return True
        time.sleep(0.05)
    return False


def environment_of(store_url: str, run_id: int = 1) -> dict:
    (data,) = store_rows(store_url, f"select e.data from environments e join run_hosts h "
                                    f"on h.environment_hash = e.hash where h.run_id = {run_id}")[0]
    return json.loads(data) if isinstance(data, str) else data


def records(store_url: str) -> list[dict]:
    return [json.loads(r) if isinstance(r, str) else r for (r,) in store_rows(store_url, "select record from samples")]


# --- a slow disk: a loop device throttled to 100 MB/s (cgroup v1 blkio on the root cgroup) ------------

BLKIO_WRITE = Path("/sys/fs/cgroup/blkio/blkio.throttle.write_bps_device")
SLOW_BYTES_PER_S = 100_000_000


@pytest.fixture
def loop_disk(tmp_path):
    """An ext4 file system on a loop device of its own, mounted for this test:
    its queue settings and throttle concern nobody else."""
    img, mnt = tmp_path / "disk.img", tmp_path / "mnt"
    mnt.mkdir()
    with open(img, "wb") as f:
        f.truncate(1200 * MiB)
    dev = subprocess.run(["losetup", "--find", "--show", str(img)], capture_output=True, text=True)
    if dev.returncode:
        pytest.skip(f"no loop device: {dev.stderr.strip()}")
    dev = dev.stdout.strip()
    try:
        subprocess.run(["mkfs.ext4", "-q", "-F", str(img)], check=True, capture_output=True)
        subprocess.run(["mount", dev, str(mnt)], check=True, capture_output=True)
        try:
            yield dev, mnt
        finally:
            subprocess.run(["umount", str(mnt)], capture_output=True)
    finally:
        subprocess.run(["losetup", "-d", dev], capture_output=True)


@pytest.fixture
def slow_disk(loop_disk):
    dev, mnt = loop_disk
    if not BLKIO_WRITE.exists():
        pytest.skip("no cgroup v1 blkio throttle to slow a disk down with")
    majmin = f"{os.major(os.stat(dev).st_rdev)}:{os.minor(os.stat(dev).st_rdev)}"
    BLKIO_WRITE.write_text(f"{majmin} {SLOW_BYTES_PER_S}")
    try:
        yield mnt
    finally:
        BLKIO_WRITE.write_text(f"{majmin} 0")


# --- --memory-limit --------------------------------------------------------------------------------------

@pytest.mark.timeout(240)
def test_memory_limit_caps_the_page_cache_of_a_buffered_write(cli, slow_disk, memory_parent, state_dir, store_url,
                                                               tmp_path):
    suite = tmp_path / "capped.toml"
    suite.write_text('memory-limit = "128m"\n'
                     '[[steps]]\nkernel = "seqio"\nrepeat = 1\n'
                     'params = { dir = "{dir}", file-size = "512m", write = ["buffered", "fsync"], read = "none" }\n')
    before = our_cgroups(memory_parent)
    r = cli("run", str(suite), f"--dir={slow_disk}")
    assert r.status == 0, r.stderr
    assert "memory limit 128 MiB" in r.stdout
    builds = [json.loads(b) if isinstance(b, str) else b for (b,) in store_rows(store_url, "select build from steps")]
    for build in builds:
        (report,) = build["memory_cgroups"]
        assert report["memory_limit_bytes"] == 128 * MiB
        # the cgroup's own high-water mark: page cache and all, never above the cap
        assert 0 < report["memory_peak_bytes"] <= 128 * MiB
    recs = records(store_url)
    assert recs and all(rec["memory_limit_bytes"] == 128 * MiB for rec in recs)
    rate = {rec["mode"]: rec["rate"] for rec in recs}
    # 128 MiB of cache absorbs a quarter of the file; the rest goes at the disk's pace, so the buffered
    # rate is at most about fsync x 512/384 = 1.33 x (uncapped it is 2.5-5 x fsync on this disk)
    assert rate["buffered"] < 1.6 * rate["fsync"], rate
    assert environment_of(store_url)["conditions.memory_limit_bytes"] == 128 * MiB
    md = cli("export", "1", "--format", "md").stdout
    assert "**Run conditions**: memory limit 128 MiB" in md and "memory limit 128 MiB (cgroup v" in md
    assert our_cgroups(memory_parent) == before
    assert journals(state_dir) == []


@pytest.mark.timeout(120)
def test_mpi_ranks_on_one_host_share_the_capped_cgroup(cli, mpiexec, memory_parent, state_dir, store_url):
    before = our_cgroups(memory_parent)
    seen: list[int] = []
    import threading

    def watch():
        deadline = time.time() + 60
        while time.time() < deadline and not seen:
            for name in our_cgroups(memory_parent) - before:
                n = len(cgroup.members(memory_parent / name))
                if n >= 2:
                    seen.append(n)
            time.sleep(0.05)

    t = threading.Thread(target=watch)
    t.start()
    r = cli("run", "null", "--np", "2", "--seconds=2", "--repeat", "1", "--memory-limit", "256m")
    t.join()
    assert r.status == 0, r.stderr
    assert seen == [2]  # both ranks' kernels inside, the wrappers outside
    (build,) = [json.loads(b) if isinstance(b, str) else b for (b,) in store_rows(store_url, "select build from steps")]
    assert [c["memory_limit_bytes"] for c in build["memory_cgroups"]] == [256 * MiB]
    assert our_cgroups(memory_parent) == before


@pytest.mark.timeout(120)
def test_a_kernel_whose_memory_does_not_fit_the_limit_is_refused_by_the_cgroup_not_killed(cli, memory_parent,
                                                                                         state_dir, store_url):
    """cbk's memory checks read the memory cgroup it runs in (here --memory-limit's; a Slurm job's or a
    container's alike), not only the machine's MemAvailable: three 128 MiB stream arrays under a 256 MiB
    cap met the OOM killer (17 GiB free on the machine); now one line names the cgroup, nothing killed."""
    before = our_cgroups(memory_parent)
    r = cli("run", "stream", "--array-size=128m", "--passes=2", "--threads=1", "--repeat", "1",
            "--memory-limit", "256m")
    assert r.status != 0, r.stdout
    assert "--array-size=128 MiB: three arrays need 0.38 GiB, more than half of the" in r.stderr, r.stderr
    assert "available under this process's memory cgroup limit" in r.stderr, r.stderr
    assert "out-of-memory killer" not in r.stderr, r.stderr
    # what fits the cap runs, under it
    ok = cli("run", "stream", "--array-size=16m", "--passes=2", "--threads=1", "--repeat", "1",
             "--memory-limit", "256m")
    assert ok.status == 0, ok.stderr
    assert our_cgroups(memory_parent) == before and journals(state_dir) == []


def memory_total_bytes() -> int:
    """This host's RAM, as /proc/meminfo says (read here, not through the code under test)."""
    (kib,) = [ln.split()[1] for ln in Path("/proc/meminfo").read_text().splitlines() if ln.startswith("MemTotal:")]
    return int(kib) * 1024


@pytest.mark.timeout(60)
@pytest.mark.parametrize("limit", ["100t", "just-above"])
def test_memory_limit_not_below_this_hosts_memory_is_refused_before_anything_runs(cli, memory_parent, state_dir,
                                                                                 store_url, limit):
    """A cgroup capped above the RAM caps nothing: 100t ran, and every record
    carried memory_limit_bytes as if the cap had held."""
    before = our_cgroups(memory_parent)
    if limit == "just-above":
        limit = f"{memory_total_bytes() // MiB + 1}m"
    r = cli("run", "null", "--repeat", "1", "--memory-limit", limit)
    assert r.status == 2 and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert f"--memory-limit {limit}" in r.stderr and "caps nothing" in r.stderr, r.stderr
    assert "this host has" in r.stderr, r.stderr
    if os.path.exists(store_url.removeprefix("sqlite:///")):
        assert store_rows(store_url, "select count(*) from runs") == [(0,)]
    assert our_cgroups(memory_parent) == before and journals(state_dir) == []


@pytest.mark.timeout(60)
def test_a_rank_on_a_host_with_less_memory_than_the_limit_fails_without_starting_the_kernel(memory_parent, tmp_path):
    """Where the steps run on other hosts this host's RAM says nothing of
    theirs: the wrapper each rank runs under refuses on its own host."""
    import socket

    before, ran = our_cgroups(memory_parent), tmp_path / "ran"
    p = subprocess.run([sys.executable, "-m", "clusterbench.conditions.cgexec",
                        f"--memory-limit={memory_total_bytes() + MiB}", f"--cgroup=clusterbench-ram-{os.getpid()}",
                        "--", "touch", str(ran)], capture_output=True, text=True, timeout=30)
    assert p.returncode == 2, p.stderr
    (e,) = [json.loads(ln) for ln in p.stderr.splitlines()]
    assert e["type"] == "error" and e["message"].startswith(f"host {socket.gethostname()}: "), e
    assert "caps nothing" in e["message"], e
    assert not ran.exists() and our_cgroups(memory_parent) == before


@pytest.mark.timeout(60)
def test_a_limit_at_or_above_the_cgroup_it_runs_in_is_refused(cbk_bin, store_url, memory_parent, state_dir):
    """v1 makes the run's cgroup a child of the caller's (a Slurm job's, a container's): a --memory-limit
    above that one's limit capped nothing more, and the run was recorded as capped at a limit that did not
    hold (2 GiB under a 512 MiB job: 2 GiB in every record). One line, nothing run; below it, it runs."""
    if cgroup.find().version != 1:
        pytest.skip("cgroup v2 puts the run's cgroup at the top: no limit above it")
    before, job = our_cgroups(memory_parent), memory_parent / f"cbk-test-job-{os.getpid()}"
    job.mkdir()
    try:
        (job / "memory.limit_in_bytes").write_text(str(512 * MiB))

        def in_job(*args):   # the command started inside the capped cgroup, as a batch job's would be
            return run_bounded(["sh", "-c", f'echo $$ > {job / "cgroup.procs"} && exec "$@"', "sh", sys.executable,
                                "-m", "clusterbench", "run", "null", "--seconds=0.2", "--repeat", "1", *args],
                               timeout=50, env=run_env(cbk_bin, store_url))

        r = in_job("--memory-limit", "2g")
        assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1, r.stderr
        assert f"the cgroup this runs in ({job}) is already capped at 0.50 GiB" in r.stderr, r.stderr
        assert "caps nothing (give less than 512m)" in r.stderr, r.stderr
        ok = in_job("--memory-limit", "256m")
        assert ok.returncode == 0, ok.stderr
        assert [rec["memory_limit_bytes"] for rec in records(store_url)] == [256 * MiB]
    finally:
        assert wait_until(lambda: not cgroup.members(job), 10)
        job.rmdir()
    assert our_cgroups(memory_parent) == before and journals(state_dir) == []


# --- --setting -----------------------------------------------------------------------------------------

def other_thp(current: str) -> str:
    return "never" if current != "never" else "madvise"


@pytest.mark.timeout(120)
def test_settings_hold_during_the_run_are_recorded_and_restored(cli, keep_settings, state_dir, store_url):
    expire, thp = keep_settings[EXPIRE], keep_settings[THP]
    new_expire, new_thp = str(int(expire) + 1), other_thp(thp)
    r = cli("run", "null", "--seconds=0.1", "--repeat", "2",
            f"--setting=vm.dirty_expire_centisecs={new_expire}", "--setting", f"thp={new_thp}")
    assert r.status == 0, r.stderr
    env = environment_of(store_url)
    # the snapshot, taken during the run, sees the new values: they held
    assert env["vm.dirty_expire_centisecs"] == int(new_expire) and env["thp.enabled"] == new_thp
    assert env["conditions.setting.vm.dirty_expire_centisecs"] == new_expire
    assert env["conditions.setting.vm.dirty_expire_centisecs.before"] == expire
    assert env["conditions.setting.thp"] == new_thp and env["conditions.setting.thp.before"] == thp
    assert all(rec["settings"] == {"vm.dirty_expire_centisecs": new_expire, "thp": new_thp}
               for rec in records(store_url))
    assert selected(EXPIRE) == expire and selected(THP) == thp
    assert journals(state_dir) == []
    md = cli("export", "1", "--format", "md")
    assert f"vm.dirty_expire_centisecs={new_expire} (was {expire})" in md.stdout and "**Run conditions**" in md.stdout


VM = Path("/proc/sys/vm")


@pytest.fixture
def keep_dirty_limits(machine_settings_changed):
    """vm.dirty_bytes and vm.dirty_ratio (and the background pair) are one
    limit given two ways: writing one zeroes the other. Puts back whichever
    of each pair was in force."""
    before = {n: (VM / n).read_text().strip() for n in
              ("dirty_bytes", "dirty_ratio", "dirty_background_bytes", "dirty_background_ratio")}
    yield before
    for by_bytes, by_ratio in (("dirty_bytes", "dirty_ratio"), ("dirty_background_bytes", "dirty_background_ratio")):
        in_force = by_bytes if before[by_bytes] != "0" else by_ratio
        if (VM / in_force).read_text().strip() != before[in_force] or (VM / by_bytes).read_text().strip() != before[by_bytes]:
            (VM / in_force).write_text(before[in_force])


@pytest.mark.timeout(120)
@pytest.mark.parametrize("setting, partner, value", [
    ("dirty_bytes", "dirty_ratio", str(2 << 30)),
    ("dirty_background_bytes", "dirty_background_ratio", str(1 << 30)),
])
def test_a_dirty_limit_given_in_bytes_is_restored_to_the_ratio_in_force_before(cli, keep_dirty_limits, state_dir,
                                                                               store_url, setting, partner, value):
    """Writing vm.dirty_bytes zeroes vm.dirty_ratio, and the kernel refuses 0
    for dirty_bytes: putting back "0" failed, and the machine kept the run's
    byte limit with no ratio (exit 0, a journal no command could replay)."""
    before = keep_dirty_limits
    if before[setting] != "0":
        pytest.skip(f"vm.{setting} is in force on this machine; the test starts from the ratio")
    r = cli("run", "null", "--seconds=0.1", "--repeat", "1", f"--setting=vm.{setting}={value}")
    assert r.status == 0, r.stderr
    assert environment_of(store_url)[f"conditions.setting.vm.{setting}"] == value   # it held during the run
    assert "could not restore" not in r.stderr, r.stderr
    assert (VM / setting).read_text().strip() == "0" and (VM / partner).read_text().strip() == before[partner]
    assert journals(state_dir) == []


def pm_qos_target() -> int:
    with open("/dev/cpu_dma_latency", "rb") as f:
        return struct.unpack("i", f.read(4))[0]


@pytest.mark.timeout(120)
@pytest.mark.skipif(not Path("/dev/cpu_dma_latency").exists(), reason="no /dev/cpu_dma_latency")
def test_cpu_latency_is_held_for_the_run_only_and_dropped_when_the_process_dies(cbk_bin, state_dir, store_url,
                                                                             machine_settings_changed):
    before = pm_qos_target()
    assert before > 0, "another process holds every CPU awake already: nothing to see"
    p = start(cbk_bin, store_url, "null", "--seconds=3", "--repeat", "1", "--setting", "cpu-latency=0")
    assert wait_until(lambda: pm_qos_target() == 0), "the request never took effect"
    out, err = p.communicate(timeout=60)
    assert p.returncode == 0, err
    assert pm_qos_target() == before and journals(state_dir) == []
    env = environment_of(store_url)
    assert env["conditions.setting.cpu-latency"] == "0"
    assert env["conditions.setting.cpu-latency.before"] == ("none" if before == 2_000_000_000 else str(before))
    assert all(rec["settings"] == {"cpu-latency": "0"} for rec in records(store_url))
    # kill -9: no handler runs, yet the kernel drops the request with the process; the journal
    # it leaves is replayed by the next command without writing anything
    p = start(cbk_bin, store_url, "null", "--seconds=60", "--repeat", "1", "--setting", "cpu-latency=5us")
    try:
        assert wait_until(lambda: pm_qos_target() == 5)
        p.kill()
        p.wait()
        assert wait_until(lambda: pm_qos_target() == before)
        assert len(journals(state_dir)) == 1
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(p.pid, signal.SIGKILL)
    r = run_bounded([sys.executable, "-m", "clusterbench", "clean"], timeout=120, env=run_env(cbk_bin, store_url))
    assert r.returncode == 0, r.stderr
    assert "cpu-latency: the request ended with its process" in r.stderr
    assert journals(state_dir) == [] and pm_qos_target() == before


@pytest.mark.timeout(120)
@pytest.mark.parametrize("how", ["Ctrl-C to the process group", "kill (SIGTERM) of the Python process"])
def test_ctrl_c_or_kill_restores_settings_and_removes_the_cgroup(cbk_bin, keep_settings, memory_parent, state_dir,
                                                                 store_url, how):
    expire, thp = keep_settings[EXPIRE], keep_settings[THP]
    before = our_cgroups(memory_parent)
    p = start(cbk_bin, store_url, "null", "--seconds=30", "--repeat", "1", "--memory-limit", "64m",
              f"--setting=vm.dirty_expire_centisecs={int(expire) + 1}", f"--setting=thp={other_thp(thp)}")
    try:
        assert wait_until(lambda: any(cgroup.members(memory_parent / n) for n in our_cgroups(memory_parent) - before))
        assert selected(EXPIRE) != expire and selected(THP) != thp
        if how.startswith("Ctrl-C"):
            os.killpg(p.pid, signal.SIGINT)  # what a terminal's Ctrl-C does
        else:
            p.terminate()
        out, err = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
    assert p.returncode == (130 if how.startswith("Ctrl-C") else 143), err   # 128 + the signal's number
    assert selected(EXPIRE) == expire and selected(THP) == thp
    assert our_cgroups(memory_parent) == before
    assert journals(state_dir) == []
    assert store_rows(store_url, "select status from runs") == [("interrupted",)]


@pytest.mark.timeout(120)
@pytest.mark.parametrize("next_command", [("list",), ("clean",)])
def test_after_kill_9_the_next_command_restores_and_removes(cli, cbk_bin, keep_settings, memory_parent, state_dir,
                                                            store_url, next_command):
    expire, thp = keep_settings[EXPIRE], keep_settings[THP]
    before = our_cgroups(memory_parent)
    p = start(cbk_bin, store_url, "null", "--seconds=60", "--repeat", "1", "--memory-limit", "64m",
              f"--setting=vm.dirty_expire_centisecs={int(expire) + 1}", f"--setting=thp={other_thp(thp)}")
    try:
        assert wait_until(lambda: any(cgroup.members(memory_parent / n) for n in our_cgroups(memory_parent) - before))
        (left,) = our_cgroups(memory_parent) - before
        kernel_pids = cgroup.members(memory_parent / left)
        p.kill()  # SIGKILL to the Python process only: no handler, no finally
        p.wait()
        assert selected(EXPIRE) != expire and len(journals(state_dir)) == 1  # still changed, and journalled
        r = cli(*next_command)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(p.pid, signal.SIGKILL)  # the orphaned wrapper and kernel, should the test fail
    assert r.status == 0, r.stderr
    assert "ended without restoring" in r.stderr and "restored vm.dirty_expire_centisecs" in r.stderr
    assert selected(EXPIRE) == expire and selected(THP) == thp
    assert our_cgroups(memory_parent) == before
    # the killed run's kernel was stopped: gone, or dead and not yet reaped by the orphaned wrapper, which
    # a loaded machine may not have run yet (CI at 9aeb3e3 found it there, its cgroup already removed)
    assert wait_until(lambda: all(ended(pid) for pid in kernel_pids), 10)
    assert journals(state_dir) == []


@pytest.mark.timeout(60)
@pytest.mark.parametrize("setting, message", [
    ("vm.no_such_knob=1", "no such setting (no /proc/sys/vm/no_such_knob)"),
    ("vm.dirty_ratio=500", "vm.dirty_ratio=500: the kernel refused it (invalid argument"),
    ("thp=sometimes", "not one of always, madvise, never"),
    ("turbo=on", "no such setting (settings: tuned, governor"),
    ("vm.dirty_ratio", "expected NAME=VALUE"),
    ("cpu-latency=low", "give the latency in microseconds"),
    # the same setting twice: the last value won silently, and the stored command line showed both
    ("vm.dirty_expire_centisecs=1", "vm.dirty_expire_centisecs is given twice"),
    ("cpu-latency=99999999999", "cpu-latency=99999999999: at most 2000000000 us"),   # was struct.error, a traceback
    # read-only sysctls: the write was tried, "needs root" said to root, and the journal of a
    # restore that could not be written either was replayed, failing, by every later command
    ("fs.file-nr=5", "fs.file-nr=5: read-only"),
    ("kernel.osrelease=x", "kernel.osrelease=x: read-only"),
])
def test_a_refused_setting_is_one_line_exit_2_and_changes_nothing(cli, keep_settings, state_dir, store_url,
                                                                  setting, message):
    expire, ratio = keep_settings[EXPIRE], Path("/proc/sys/vm/dirty_ratio").read_text()
    # a valid setting first: when the second is refused, the first must be undone
    r = cli("run", "null", "--repeat", "1", f"--setting=vm.dirty_expire_centisecs={int(expire) + 1}",
            f"--setting={setting}")
    assert r.status == 2
    assert message in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert selected(EXPIRE) == expire and Path("/proc/sys/vm/dirty_ratio").read_text() == ratio
    assert journals(state_dir) == []
    if os.path.exists(store_url.removeprefix("sqlite:///")):
        assert store_rows(store_url, "select count(*) from runs") == [(0,)]




@pytest.mark.timeout(60)
@pytest.mark.parametrize("args, message", [
    (["null", "--repeat", "1", "--setting=vm.dirty_expire_centisecs=1234"], "changing system settings needs root"),
    (["null", "--repeat", "1", "--memory-limit=64m"], "--memory-limit needs root or a delegated cgroup"),
    # run cluster checks its memory limit as run does, before its store is opened (#34)
    (["cluster", "--hostfile={home}/hosts", "--memory-limit=64m"], "--memory-limit needs root or a delegated cgroup"),
])
def test_without_root_one_line_exit_2(cbk_bin, keep_settings, memory_parent, args, message):
    import shutil
    import tempfile

    expire = keep_settings[EXPIRE]
    home = Path(tempfile.mkdtemp(prefix="cb-nobody-", dir="/tmp"))  # pytest's tmp_path is root's only
    try:
        os.chmod(home, 0o777)
        (home / "hosts").write_text("n01\nn02\n")
        env = dict(run_env(cbk_bin, f"sqlite:///{home / 'r.db'}"), HOME=str(home),
                   CLUSTERBENCH_STATE_DIR=str(home / "state"), CLUSTERBENCH_TESTBED="", SLURM_JOB_ID="")
        p = subprocess.run([sys.executable, "-c", CLI_SCRIPT, "run", *(a.format(home=home) for a in args)], cwd=home,
                           env=env, capture_output=True, text=True, timeout=60)
        created = sorted(x.name for x in home.iterdir())
    finally:
        shutil.rmtree(home)
    assert p.returncode == 2, p.stderr
    assert message in p.stderr and len(p.stderr.strip().splitlines()) == 1, p.stderr
    assert selected(EXPIRE) == expire
    assert created == ["hosts"]  # no store, no state: nothing created


# --- the disk under --dir: scheduler and read-ahead ----------------------------------------------------

@pytest.mark.timeout(120)
def test_io_scheduler_and_read_ahead_of_the_target_disk(cli, loop_disk, state_dir, store_url):
    dev, mnt = loop_disk
    queue = Path("/sys/class/block") / Path(dev).name / "queue"
    sched, ra = selected(queue / "scheduler"), (queue / "read_ahead_kb").read_text().strip()
    new_sched = next(s.strip("[]") for s in (queue / "scheduler").read_text().split() if s.strip("[]") != sched)
    new_ra = "64" if ra != "64" else "256"
    r = cli("run", "seqio", f"--dir={mnt}", "--file-size=4m", "--repeat", "1",
            f"--setting=io-scheduler={new_sched}", f"--setting=read-ahead={new_ra}k")
    assert r.status == 0, r.stderr
    env = environment_of(store_url)
    assert env[f"target.{mnt}.scheduler"] == new_sched and env[f"target.{mnt}.read_ahead_kb"] == int(new_ra)
    assert env["conditions.setting.io-scheduler.before"] == sched
    assert env["conditions.setting.read-ahead.before"] == ra
    assert selected(queue / "scheduler") == sched and (queue / "read_ahead_kb").read_text().strip() == ra


# --- E5: one suite under two settings, compared ------------------------------------------------------

@pytest.mark.timeout(180)
def test_two_settings_in_one_command_end_in_their_comparison_setting_line_first(cli, keep_settings, state_dir,
                                                                                 store_url, tmp_path):
    expire = keep_settings[EXPIRE]
    a, b = str(int(expire) + 1), str(int(expire) + 2)
    suite = tmp_path / "ab.toml"
    suite.write_text('[[steps]]\nkernel = "null"\nrepeat = 3\nparams = { seconds = 0.05 }\n')
    r = cli("run", str(suite), f"--setting-a=vm.dirty_expire_centisecs={a}",
            f"--setting-b=vm.dirty_expire_centisecs={b}")
    assert r.status == 0, r.stderr
    assert store_rows(store_url, "select id, label from runs order by id") == [
        (1, f"vm.dirty_expire_centisecs={a}"), (2, f"vm.dirty_expire_centisecs={b}")]
    # the comparison table is the last thing printed; its environment table starts with the setting
    env_at = r.stdout.index("environment:")
    assert r.stdout.index("comparison, baseline") > env_at
    rows = [ln for ln in r.stdout[env_at:].splitlines() if ln.startswith("│")]
    # the key in words (environment/key_words.py)
    setting = "setting vm.dirty_expire_centisecs for the run (--setting)"
    assert setting in rows[0] and a in rows[0] and b in rows[0], r.stdout
    c = cli("compare", "1", "2")
    rows = [ln for ln in c.stdout.splitlines() if ln.startswith("│")]
    assert setting in rows[0], c.stdout
    assert selected(EXPIRE) == expire and journals(state_dir) == []


@pytest.mark.timeout(60)
def test_setting_a_equal_to_setting_b_is_refused_before_anything_runs(cli, keep_settings, state_dir, store_url):
    """Two runs under one condition, labelled alike, compared as if they differed: refused."""
    value = str(int(keep_settings[EXPIRE]) + 1)
    r = cli("run", "null", "--repeat", "1", "--setting-a", f"vm.dirty_expire_centisecs={value}",
            "--setting-b", f"vm.dirty_expire_centisecs={value}")
    assert r.status == 2 and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert "--setting-a and --setting-b are the same" in r.stderr
    assert selected(EXPIRE) == keep_settings[EXPIRE] and journals(state_dir) == []
    if os.path.exists(store_url.removeprefix("sqlite:///")):
        assert store_rows(store_url, "select count(*) from runs") == [(0,)]


@pytest.mark.timeout(180)
def test_two_settings_whose_runs_failed_before_any_sample_end_in_the_failure_not_in_no_comparison(
        cli, keep_settings, state_dir, store_url, tmp_path):
    """The comparison of runs without a sample raised 'no measurement with
    equal kernel and parameters' (exit 2: bad input), hiding the failure."""
    expire = keep_settings[EXPIRE]
    suite = tmp_path / "ab.toml"
    suite.write_text('[[steps]]\nkernel = "null"\nrepeat = 2\nparams = { seconds = 0.01, fail-at = 0 }\n')
    r = cli("run", str(suite), f"--setting-a=vm.dirty_expire_centisecs={int(expire) + 1}",
            f"--setting-b=vm.dirty_expire_centisecs={int(expire) + 2}")
    assert r.status == 1, r.stderr
    # the configuration given by run id is named "run 1 (its setting)", as every comparison names it
    assert re.search(r"no comparison: run 1 \(vm\.dirty_expire_centisecs=\d+\) has no measurement to compare: "
                     r"run 1 failed", r.stdout), r.stdout
    assert "steps failed" in r.stderr
    assert store_rows(store_url, "select status from runs order by id") == [("failed",), ("failed",)]
    assert selected(EXPIRE) == expire and journals(state_dir) == []


@pytest.mark.timeout(60)
def test_shipped_tuned_recipe_without_tuned_is_refused_before_anything_runs(cli, store_url):
    from clusterbench.conditions import settings

    if settings.tuned_adm():
        pytest.skip("tuned-adm is installed here")
    r = cli("run", "tuned-compare", "--dir=.")
    assert r.status == 2 and "tuned-adm is not installed" in r.stderr
    assert not os.path.exists(store_url.removeprefix("sqlite:///"))


# --- where the memory controller is ----------------------------------------------------------------------

def test_memory_hierarchy_is_found_in_v2_v1_and_a_v1_container():
    v1 = ("30 25 0:27 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n"
          "31 25 0:28 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n")
    h = cgroup.find(v1, "4:memory:/process_api/abc\n0::/\n")
    assert h == cgroup.Hierarchy(1, Path("/sys/fs/cgroup/memory/process_api/abc"))
    # a container without a cgroup namespace: its own cgroup is the mount's root
    docker = "30 25 0:27 /docker/x /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n"
    assert cgroup.find(docker, "4:memory:/docker/x/sub\n").parent == Path("/sys/fs/cgroup/memory/sub")
    with pytest.raises(cgroup.CgroupUnavailable):
        cgroup.find("31 25 0:28 / /nonexistent rw - cgroup2 cgroup2 rw\n", "0::/\n")


# --- suites ----------------------------------------------------------------------------------------------

def test_suite_conditions_keys_are_read_and_checked(tmp_path):
    from clusterbench import suites
    from clusterbench.errors import BadInput

    path = tmp_path / "s.toml"
    path.write_text('memory-limit = "1g"\nsettings = { "vm.dirty_ratio" = 5 }\n'
                    '[[conditions]]\nsettings = { tuned = "{a}" }\n'
                    '[[conditions]]\nname = "lowlat"\nsettings = { tuned = "latency-performance" }\nmemory-limit = "2g"\n'
                    '[[steps]]\nkernel = "null"\n')
    s = suites.load(str(path), {"a": "balanced"})
    assert s.conditions.memory_limit_bytes == 1 << 30 and s.conditions.settings == (("vm.dirty_ratio", "5"),)
    assert [v.settings for v in s.variants] == [(("tuned", "balanced"),), (("tuned", "latency-performance"),)]
    assert [v.title() for v in s.variants] == ["tuned=balanced", "lowlat"]
    merged = s.conditions.merged(s.variants[1])
    assert merged.memory_limit_bytes == 2 << 30 and dict(merged.settings) == {"vm.dirty_ratio": "5",
                                                                               "tuned": "latency-performance"}
    path.write_text('[[conditions]]\nsetting = { thp = "never" }\n[[steps]]\nkernel = "null"\n')
    with pytest.raises(BadInput, match="conditions block 1: unknown key"):
        suites.load(str(path), {})
    path.write_text('memory-limit = "lots"\n[[steps]]\nkernel = "null"\n')
    with pytest.raises(BadInput, match="memory-limit lots: give a size"):
        suites.load(str(path), {})
    # checked when the suite is read, not when a block's turn comes after others have run
    for block, says in (('settings = { "vm.dirty_ratio" = true }', "settings.vm.dirty_ratio = True: give"),
                        ('settings = { thp = ["never"] }', "settings.thp = ['never']: give"),
                        ('name = 5\nsettings = { thp = "never" }', "name = 5: give the condition's name as text")):
        path.write_text(f'[[conditions]]\nsettings = {{ thp = "never" }}\n[[conditions]]\n{block}\n'
                        '[[steps]]\nkernel = "null"\n')
        with pytest.raises(BadInput, match=re.escape(says)):
            suites.load(str(path), {})


@pytest.mark.parametrize("blocks", [
    '[[conditions]]\nmemory-limit = "1g"\n[[conditions]]\nmemory-limit = "1g"\n',
    '[[conditions]]\nname = "x"\nmemory-limit = "1g"\n[[conditions]]\nname = "x"\nmemory-limit = "2g"\n',
    # alike once merged with the suite's own settings: the second block only restates them
    'settings = { "vm.dirty_ratio" = 5 }\n[[conditions]]\nsettings = { "vm.dirty_ratio" = 5 }\n'
    '[[conditions]]\nmemory-limit = "1g"\n[[conditions]]\nmemory-limit = "1g"\n'
    'settings = { "vm.dirty_ratio" = "5" }\n',
], ids=["same-limit", "same-name", "same-once-merged"])
def test_two_conditions_blocks_alike_are_refused_before_the_store_is_opened(cli, store_url, tmp_path, blocks):
    """Each run of a suite's [[conditions]] is labelled with its conditions:
    two blocks alike ran the suite twice under one label, which every later
    `compare` of it pooled, and compared the two with each other (the
    command line's --setting-a and --setting-b alike were refused)."""
    suite = tmp_path / "twice.toml"
    suite.write_text(blocks + '[[steps]]\nkernel = "null"\n')
    r = cli("run", str(suite), "--repeat", "1")
    assert r.status == 2 and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert "suite twice: conditions blocks" in r.stderr and "nothing to compare" in r.stderr, r.stderr
    assert not os.path.exists(store_url.removeprefix("sqlite:///"))


FAKE_TUNED_ADM = """#!/bin/sh
# Stands in for tuned-adm, whose daemon (D-Bus, systemd) this test machine cannot run and whose
# profiles would retune the whole shared machine; prints what tuned-adm 2.20 prints.
state="$FAKE_TUNED_STATE"
case "$1" in
  list) printf 'Available profiles:\\n- balanced                    - General non-specialized tuned profile\\n'
        printf -- '- latency-performance         - Optimize for deterministic performance\\n'
        echo "Current active profile: $(cat "$state")";;
  active) echo "Current active profile: $(cat "$state")";;
  profile) echo "$2" > "$state"; echo "profile $2" >> "$state.log";;
  off) : > "$state"; echo off >> "$state.log";;
  *) exit 1;;
esac
"""


@pytest.mark.timeout(60)
def test_tuned_profile_switched_for_the_run_and_back(cbk_bin, tmp_path, state_dir, store_url):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "tuned-adm").write_text(FAKE_TUNED_ADM)
    (bin_dir / "tuned-adm").chmod(0o755)
    state = tmp_path / "tuned-state"
    state.write_text("balanced\n")
    env = run_env(cbk_bin, store_url)
    env.update(FAKE_TUNED_STATE=str(state), PATH=f"{bin_dir}{os.pathsep}{env['PATH']}")

    def cli(*args):
        return run_bounded([sys.executable, "-m", "clusterbench", *args], timeout=60, env=env)

    r = cli("run", "null", "--repeat", "1", "--setting", "tuned=latency-performance")
    assert r.returncode == 0, r.stderr
    env_ = environment_of(store_url)
    assert env_["conditions.setting.tuned"] == "latency-performance"
    assert env_["conditions.setting.tuned.before"] == "balanced"
    assert (tmp_path / "tuned-state.log").read_text().split("\n")[:2] == ["profile latency-performance",
                                                                         "profile balanced"]
    assert state.read_text().strip() == "balanced"
    r = cli("run", "null", "--repeat", "1", "--setting", "tuned=throughput-performance")
    assert r.returncode == 2 and "no such tuned profile" in r.stderr


@pytest.mark.timeout(120)
def test_a_limit_below_the_kernels_own_memory_fails_the_step_saying_so(cli, memory_parent, state_dir, store_url,
                                                                       tmp_path):
    before = our_cgroups(memory_parent)
    # a 64 MiB transfer buffer of anonymous memory in a 32 MiB cgroup: the out-of-memory killer ends cbk
    # (a kernel that checks its buffers against the cgroup refuses instead: the test above)
    r = cli("run", "seqio", f"--dir={tmp_path}", "--file-size=64m", "--block-size=64m", "--write=buffered",
            "--read=none", "--repeat", "1", "--memory-limit", "32m")
    assert r.status == 1
    (message,) = store_rows(store_url, "select message from steps")[0]
    assert "out-of-memory killer" in message and "--memory-limit 32 MiB is too small" in message
    assert our_cgroups(memory_parent) == before


@pytest.mark.timeout(60)
def test_governor_without_cpufreq_is_refused(cli, state_dir):
    import glob

    if glob.glob("/sys/devices/system/cpu/cpu[0-9]*/cpufreq/scaling_governor"):
        pytest.skip("this machine has cpufreq: changing its governor would disturb other jobs")
    r = cli("run", "null", "--repeat", "1", "--setting", "governor=performance")
    assert r.status == 2 and "no CPU frequency scaling here" in r.stderr
    assert journals(state_dir) == []


@pytest.mark.skipif(os.geteuid() != 0, reason="a read-only bind mount needs root")
def test_restoring_a_file_that_already_holds_its_value_writes_nothing(tmp_path):
    """On a read-only /proc/sys (a container) the change was refused, and its
    restore failed the same way: the journal stayed, and every later command
    replayed it and failed again. A file already as it was needs no write."""
    from clusterbench.conditions import settings

    f = tmp_path / "dirty_expire_centisecs"
    f.write_text("3000\n")
    subprocess.run(["mount", "--bind", str(f), str(f)], check=True)
    try:
        subprocess.run(["mount", "-o", "remount,bind,ro", str(f)], check=True)
        settings.restore({"kind": "file", "setting": "vm.dirty_expire_centisecs", "path": str(f), "before": "3000"})
        with pytest.raises(settings.SettingError, match="read-only file system"):
            settings.restore({"kind": "file", "setting": "vm.dirty_expire_centisecs", "path": str(f),
                              "before": "3001"})
    finally:
        subprocess.run(["umount", str(f)], check=True)
    assert f.read_text() == "3000\n"
