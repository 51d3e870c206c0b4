"""pario under real mpiexec on real files in tmp_path: every API x strategy x
layout x fsync combination writes and verifies; the files on disk have the
sizes the parameters say; verify catches a flipped byte and names rank,
writer and offset; bad input fails on every rank with one message, exit 2,
nothing left behind."""
from __future__ import annotations

import subprocess

import pytest

import huge_pages
from conftest import tree

APIS = {"posix": ["split", "independent", "io-master"],
        "mpiio": ["split", "independent", "collective", "io-master"]}
COMBOS = [(api, st, layout, fsync)
          for api, strategies in APIS.items() for st in strategies
          for layout in ("contiguous", "strided") for fsync in ("none", "end", "each")]
BLOCK, TRANSFER, SEGMENTS, PIECES = 64 * 1024, 4096, 2, 4


def sizes_args(layout: str) -> list[str]:
    args = [f"--block-size={BLOCK}", f"--transfer-size={TRANSFER}", f"--segments={SEGMENTS}", f"--layout={layout}"]
    if layout == "strided":
        args.append(f"--blocks-per-rank={PIECES}")
    return args


def run_pario(run_cbk, mpiexec, tmp_path, n, *args, env=None):
    data = tmp_path / "target"
    data.mkdir(exist_ok=True)
    listing = tmp_path / "listing.txt"
    full_env = {"CBK_TEST_LISTING": str(listing), **(env or {})}
    res = run_cbk("pario", f"--dir={data}", "--cold=fadvise", *args, launcher=[mpiexec, "-n", str(n)],
                  timeout=60, env=full_env)
    files = []
    if listing.exists():
        files = [line.split() for line in listing.read_text().splitlines()]
        listing.unlink()
    assert tree(data) == [], "files left behind"
    return res, files


def expect_files(strategy: str, n: int) -> list[tuple[str, int]]:
    per_rank = BLOCK * SEGMENTS
    if strategy == "split":
        return sorted((f"data.{r:08d}", per_rank) for r in range(n))
    return [("data", per_rank * n)]


def check_run(res, files, api, strategy, layout, fsync, n):
    assert res.status == 0, res.stderr
    writes, reads = res.measurements("write"), res.measurements("read")
    modes = {"none": ["buffered"], "end": ["buffered", "fsync"], "each": ["fsync-each"]}[fsync]
    assert [w["mode"] for w in writes] == modes
    assert len(reads) == 1
    for rec in writes + reads:
        assert rec["bytes"] == BLOCK * SEGMENTS * n
        assert rec["ops"] == BLOCK * SEGMENTS * n // TRANSFER
        assert (rec["api"], rec["strategy"], rec["layout"]) == (api, strategy, layout)
        assert rec["blocks_per_rank"] == (PIECES if layout == "strided" else 1)
        # the buffered figure of fsync=end stops before fsync+close, which close_s_* still describe
        parts = ("open", "transfer") if fsync == "end" and rec["mode"] == "buffered" else ("open", "transfer", "close")
        for part in parts:
            assert 0 <= rec[f"{part}_s_min"] <= rec[f"{part}_s_max"] <= rec["seconds"] + 1e-9
        assert rec["rank_seconds_max"] <= rec["seconds"] + 1e-9
        # io-master: rank 0 gathers every rank's transfer into one buffer
        huge_pages.check_record(rec, TRANSFER * (n if strategy == "io-master" else 1))
    read = reads[0]
    assert read["verify"] is True and read["verify_ok"] is True
    assert read["read_from"] == "shifted" and read["read_shift"] == 1
    if fsync == "end":
        # the buffered figure stops before fsync and close: never longer
        assert writes[0]["seconds"] <= writes[1]["seconds"]
    assert sorted((name, int(size)) for _, name, size in files) == expect_files(strategy, n)


@pytest.mark.timeout(100)
@pytest.mark.parametrize("api,strategy,layout,fsync", COMBOS, ids=["-".join(c) for c in COMBOS])
def test_every_combination_writes_and_verifies_on_two_ranks(run_cbk, mpiexec, tmp_path, api, strategy, layout, fsync,
                                                            machine_settings_steady):
    res, files = run_pario(run_cbk, mpiexec, tmp_path, 2, f"--api={api}", f"--strategy={strategy}",
                           f"--fsync={fsync}", "--verify", *sizes_args(layout))
    check_run(res, files, api, strategy, layout, fsync, 2)


FOUR = [("posix", "split", "contiguous", "end"), ("posix", "io-master", "strided", "none"),
        ("mpiio", "independent", "strided", "end"), ("mpiio", "collective", "strided", "none"),
        ("mpiio", "io-master", "contiguous", "each"), ("mpiio", "split", "strided", "none")]


@pytest.mark.timeout(100)
@pytest.mark.parametrize("api,strategy,layout,fsync", FOUR, ids=["-".join(c) for c in FOUR])
def test_four_ranks_oversubscribed_random_offsets(run_cbk, mpiexec, tmp_path, api, strategy, layout, fsync,
                                                  machine_settings_steady):
    res, files = run_pario(run_cbk, mpiexec, tmp_path, 4, f"--api={api}", f"--strategy={strategy}",
                           f"--fsync={fsync}", "--verify", "--offsets=random", *sizes_args(layout))
    check_run(res, files, api, strategy, layout, fsync, 4)


@pytest.mark.timeout(60)
def test_a_directory_rank_0_removed_on_ctrl_c_is_not_made_again_by_another_rank(run_cbk, mpiexec, tmp_path):
    # The order a loaded machine gave (a fresh-clone CI run, test_private_dirs): a Ctrl-C reached
    # rank 0 alone, which removed its private directory before rank 1 had looked for it; rank 1,
    # not finding it, made its own with its own stamp, and the launcher killed it at the next
    # barrier before it could remove it. The hook sets that order (pario.c, make_dir).
    target = tmp_path / "target"
    target.mkdir()
    r = run_cbk("pario", f"--dir={target}", "--block-size=1m", launcher=[mpiexec, "-n", "2"], timeout=60,
                env={"CBK_TEST_INTERRUPT_AFTER_DIR": "1"})
    assert r.status != 0, r.stderr
    assert tree(target) == [], "a private directory outlived the interrupted run"


@pytest.mark.timeout(90)
@pytest.mark.parametrize("strategy", ["split", "io-master"])
def test_every_ranks_transfer_buffer_is_on_huge_pages_by_default(run_cbk, mpiexec, tmp_path, strategy,
                                                                 machine_settings_steady):
    # io-master: rank 0's gather buffer, 2 x 1 MiB, is the one its record judges
    def run():
        res, _ = run_pario(run_cbk, mpiexec, tmp_path, 2, "--api=posix", "--direct", f"--strategy={strategy}",
                           "--block-size=2m", "--transfer-size=1m")
        assert res.status == 0, res.stderr
        recs = res.measurements("write") + res.measurements("read")
        for rec in recs:
            huge_pages.check_record(rec, 2**20 * (2 if strategy == "io-master" else 1))
        return recs
    huge_pages.gives_some(run)


@pytest.mark.timeout(60)
def test_small_pages_when_told_as_ior_uses(run_cbk, mpiexec, tmp_path):
    res, _ = run_pario(run_cbk, mpiexec, tmp_path, 2, "--api=posix", "--direct", "--block-size=2m",
                       "--transfer-size=1m", "--huge-pages=false")
    assert res.status == 0, res.stderr
    for rec in res.measurements("write") + res.measurements("read"):
        huge_pages.check_record(rec, 2**20, asked=False)


@pytest.mark.timeout(60)
def test_file_size_divides_among_ranks_and_repetitions_each_leave_files(run_cbk, mpiexec, tmp_path):
    # transfer-size=0: one call per piece, 256 KiB / 4 ranks / 16 pieces = 4 KiB
    res, files = run_pario(run_cbk, mpiexec, tmp_path, 4, "--file-size=256k", "--transfer-size=0",
                           "--strategy=collective", "--api=mpiio", "--layout=strided", "--blocks-per-rank=16",
                           "--verify", "--repetitions=2", "--delay=0.01")
    assert res.status == 0, res.stderr
    assert [(w["repetition"], w["block_bytes"], w["transfer_bytes"]) for w in res.measurements("write")] == \
        [(0, 65536, 4096), (1, 65536, 4096)]
    assert files == [["0", "data", str(256 * 1024)], ["1", "data", str(256 * 1024)]]


@pytest.mark.timeout(60)
def test_a_run_with_a_deadline_is_not_refused_for_space_only_its_whole_block_would_need(cbk_bin, tmp_path):
    """io500's ior-easy asks IOR for 9.5 TiB per rank and stops it after -D
    300 s; IOR runs it, pario refused it for space the deadline never lets it
    use. Without a deadline the whole block is written, and checked for."""
    import subprocess

    def check(*extra: str) -> subprocess.CompletedProcess:
        return subprocess.run([cbk_bin, "--check", "pario", f"--dir={tmp_path}", f"--block-size={1 << 50}",
                               "--transfer-size=1m", *extra], capture_output=True, text=True, timeout=60)
    refused = check()
    assert refused.returncode == 2 and "not enough space" in refused.stderr + refused.stdout
    taken = check("--deadline=300")
    assert taken.returncode == 0, taken.stderr + taken.stdout
    assert tree(tmp_path) == []


@pytest.mark.timeout(60)
def test_memory_does_not_grow_with_the_transfers_a_rank_makes(cbk_bin, tmp_path):
    """io500's ior-hard makes 10 million transfers per rank. pario kept
    two tables of 8-byte offsets per transfer per rank (160 MB a rank, 20 GB
    on a 128-rank node); the offsets are now computed as they are moved.
    The rank runs with 64 MiB of data segment (RLIMIT_DATA: its heap and
    private mappings; the run needs under 32), where one of the old tables
    failed to allocate. Not its resident peak: Linux carries a parent's peak
    into the child it forks, and a test worker's grows with its tests. The
    deadline stops the run after a few transfers, so the file stays small."""
    import resource

    target = tmp_path / "target"
    target.mkdir()
    limit = 64 << 20
    r = subprocess.run([cbk_bin, "pario", f"--dir={target}", "--block-size=8", "--transfer-size=8",
                        "--segments=10000000", "--deadline=0.2", "--offsets=random"],
                       capture_output=True, text=True, timeout=60,
                       preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_DATA, (limit, limit)))
    assert r.returncode == 0, r.stderr
    assert tree(target) == []


@pytest.mark.timeout(60)
@pytest.mark.parametrize("phases,waits", [("both", 2), ("write-only", 1), ("read-only", 1)])
def test_delay_waits_before_each_write_and_each_read_as_ior_d_does(run_cbk, mpiexec, tmp_path, phases, waits):
    """IOR -d waits before the write and before the read of every repetition
    (TestIoSys's DelaySecs), the first included; pario waited only between
    repetitions, so IOR's -d 1 -i 1 waited not at all. A read-only run's
    untimed write waits for nothing, as IOR -r writes nothing."""
    res, _ = run_pario(run_cbk, mpiexec, tmp_path, 2, "--block-size=64k", "--transfer-size=16k", "--delay=0.5",
                       f"--phases={phases}")
    assert res.status == 0, res.stderr
    assert res.run_record()["seconds"] >= 0.5 * waits


@pytest.mark.timeout(60)
@pytest.mark.parametrize("strategy,offset,writer,reader,name", [
    ("collective", 70000, 1, 0, "data"),        # rank 1's block starts at 64 KiB; rank 0 reads it (shift 1)
    ("io-master", 5000, 0, 1, "data"),
    ("split", 7000, 0, 1, "data.00000000"),     # the hook corrupts rank 0's own file
])
def test_verify_names_rank_writer_and_offset(run_cbk, mpiexec, tmp_path, strategy, offset, writer, reader, name):
    res, _ = run_pario(run_cbk, mpiexec, tmp_path, 2, f"--strategy={strategy}", "--api=mpiio", "--verify",
                       "--block-size=64k", "--transfer-size=16k", env={"CBK_TEST_CORRUPT_OFFSET": str(offset)})
    assert res.status == 1
    assert len(res.errors) == 1, res.stderr
    err = res.errors[0]
    assert (err["rank"], err["writer_rank"], err["offset"]) == (reader, writer, offset)
    assert f"offset {offset}" in err["message"] and name in err["message"] and f"rank {reader}" in err["message"]
    assert res.measurements("read")[0]["verify_ok"] is False


@pytest.mark.timeout(30)
def test_without_verify_a_corrupt_byte_passes_unnoticed(run_cbk, mpiexec, tmp_path):
    res, _ = run_pario(run_cbk, mpiexec, tmp_path, 2, "--block-size=64k", "--transfer-size=16k",
                       env={"CBK_TEST_CORRUPT_OFFSET": "100"})
    assert res.status == 0 and "verify_ok" not in res.measurements("read")[0]


BAD = [
    (["--block-size=10k", "--transfer-size=4k"], "not a multiple of transfer size"),
    (["--layout=strided", "--blocks-per-rank=3", "--block-size=64k", "--transfer-size=4k"], "cut into 3 blocks per rank"),
    (["--layout=strided", "--blocks-per-rank=32", "--block-size=64k", "--transfer-size=4k"], "cut into 32 blocks per rank"),
    (["--file-size=262146", "--transfer-size=4k"], "does not divide evenly among 4 ranks"),
    (["--strategy=collective", "--api=posix"], "needs api mpiio"),
    (["--blocks-per-rank=4"], "needs layout=strided"),
]


@pytest.mark.timeout(60)
@pytest.mark.parametrize("args,message", BAD, ids=[m for _, m in BAD])
def test_bad_input_fails_on_every_rank_with_one_message(run_cbk, mpiexec, tmp_path, args, message):
    res, _ = run_pario(run_cbk, mpiexec, tmp_path, 4, *args)
    assert res.status == 2
    assert len(res.errors) == 1 and res.errors[0]["rank"] == 0, res.stderr
    assert message in res.errors[0]["message"]
    assert res.measurements() == []


def mpmd(mpiexec, cbk_bin, dirs, *args):
    """One rank per directory: rank 0's target is not the others' (node-local storage)."""
    cmd = [mpiexec]
    for i, d in enumerate(dirs):
        if i:
            cmd.append(":")
        cmd += ["-n", "1", cbk_bin, "pario", f"--dir={d}", "--cold=none", *args]
    return cmd


@pytest.mark.timeout(60)
@pytest.mark.parametrize("args,message", [
    (["--strategy=independent"], "needs one file all ranks open"),
    (["--strategy=io-master"], "needs one file all ranks open"),
    (["--strategy=split"], "use read=same"),
])
def test_target_not_shared(cbk_bin, mpiexec, tmp_path, args, message):
    import json
    import subprocess
    dirs = [tmp_path / "node0", tmp_path / "node1"]
    for d in dirs:
        d.mkdir()
    p = subprocess.run(mpmd(mpiexec, cbk_bin, dirs, *args), capture_output=True, text=True, timeout=50)
    errors = [json.loads(line) for line in p.stderr.splitlines() if line.startswith("{")]
    assert p.returncode == 2 and len(errors) == 1, p.stderr
    assert errors[0]["rank"] == 0 and message in errors[0]["message"] and "rank 1 does not see" in errors[0]["message"]
    assert tree(tmp_path) == ["node0", "node1"]


@pytest.mark.timeout(60)
def test_split_on_node_local_storage_with_read_same(cbk_bin, mpiexec, tmp_path):
    import json
    import subprocess
    dirs = [tmp_path / "node0", tmp_path / "node1"]
    for d in dirs:
        d.mkdir()
    p = subprocess.run(mpmd(mpiexec, cbk_bin, dirs, "--strategy=split", "--read=same", "--verify",
                            "--block-size=64k", "--transfer-size=4k"), capture_output=True, text=True, timeout=50)
    assert p.returncode == 0, p.stderr
    recs = [json.loads(line) for line in p.stdout.splitlines() if line.startswith("{")]
    read = [r for r in recs if r.get("phase") == "read"][0]
    assert read["verify_ok"] is True and read["read_from"] == "same"
    assert tree(tmp_path) == ["node0", "node1"]


@pytest.mark.timeout(60)
@pytest.mark.parametrize("sig,strategy", [("SIGTERM", "split"), ("SIGINT", "split"), ("SIGINT", "independent")])
def test_signal_removes_the_directory_on_every_rank(cbk_bin, mpiexec, tmp_path, sig, strategy):
    """A long run stopped by SIGTERM (as a scheduler does) or SIGINT (Ctrl-C at
    mpiexec, which forwards it to every rank) leaves nothing, whether each
    rank writes its own file or all share rank 0's directory."""
    import signal
    import subprocess
    import time
    data = tmp_path / "target"
    data.mkdir()
    p = subprocess.Popen([mpiexec, "-n", "2", cbk_bin, "pario", f"--dir={data}", "--cold=none", f"--strategy={strategy}",
                          "--block-size=1m", "--transfer-size=4k", "--fsync=each", "--repetitions=100000"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.time() + 20
        while time.time() < deadline and not list(data.glob("cbk-pario-*/data*")):
            time.sleep(0.05)
        assert list(data.glob("cbk-pario-*/data*")), "the run never created its files"
        p.send_signal(getattr(signal, sig))
        p.wait(timeout=20)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    deadline = time.time() + 5
    while time.time() < deadline and tree(data):
        time.sleep(0.05)
    assert tree(data) == []


@pytest.mark.timeout(30)
def test_read_only_and_write_only_report_one_phase(run_cbk, mpiexec, tmp_path):
    res, _ = run_pario(run_cbk, mpiexec, tmp_path, 2, "--phases=read-only", "--block-size=64k", "--transfer-size=16k")
    assert res.status == 0 and res.measurements("write") == [] and len(res.measurements("read")) == 1
    res, _ = run_pario(run_cbk, mpiexec, tmp_path, 2, "--phases=write-only", "--block-size=64k", "--transfer-size=16k")
    assert res.status == 0 and res.measurements("read") == [] and len(res.measurements("write")) == 1


@pytest.mark.timeout(120)
def test_quick_suite_pario_step_runs_through_the_cli(cli, mpiexec, tmp_path):
    """The parallel-io suite's parameters are valid pario parameters, and
    quick's pario step runs (shrunk to 1 MiB) through `clusterbench run`."""
    from clusterbench import suites

    for name in ("parallel-io", "quick"):
        steps = [s for s in suites.load(name, {"dir": str(tmp_path)}).steps if s.kernel == "pario"]
        assert steps
    step = steps[-1]
    params = {**step.params, "block-size": "1m", "transfer-size": "256k", "cold": "fadvise"}
    r = cli("run", "pario", "--np", str(step.ranks), "--repeat", "2", "--quiet",
            *[f"--{k}={v}" for k, v in params.items()])
    assert r.status == 0, r.stderr
    assert [p for p in tree(tmp_path) if not p.startswith("results.db")] == []
