"""cbk called directly with what a careful user tries to break it with:
values at and past their edges, products of parameters that do not fit,
target directories that cannot hold the run, its environment set to
garbage. Each is refused before anything is made (one line naming what is
wrong, exit 2, nothing left in --dir), or runs and says the truth."""
from __future__ import annotations

import json
import subprocess

import pytest

from conftest import tree


@pytest.mark.timeout(120)
@pytest.mark.parametrize("bound", ["inf", "1e300", "1e19"])
def test_an_unbounded_finalize_timeout_ends_the_run_instead_of_hanging(run_cbk, bound):
    """CBK_FINALIZE_TIMEOUT_S=inf (or any value past what a timespec holds)
    made the watchdog's deadline garbage: pthread_cond_timedwait answered
    EINVAL at once, the watchdog looped on it holding its mutex, and cbk hung
    at 100 % CPU after writing every record, until killed. An infinite bound
    is no bound: cbk ends as soon as MPI_Finalize returns."""
    try:
        r = run_cbk("null", "--seconds=0", "--repetitions=1", env={"CBK_FINALIZE_TIMEOUT_S": bound}, timeout=20)
    except subprocess.TimeoutExpired:
        pytest.fail(f"cbk null with CBK_FINALIZE_TIMEOUT_S={bound} did not end within 20 s")
    assert r.status == 0 and r.stderr == "", r.stderr
    assert len(r.measurements()) == 1 and r.run_record()


@pytest.mark.timeout(180)
def test_error_records_of_ranks_failing_at_once_are_each_one_whole_line(run_cbk, mpiexec):
    """stderr is unbuffered, and the JSON writer wrote an error record a few
    bytes per write(2) (129 writes for one record): two ranks failing at
    once interleaved theirs ('{"schema":1,"type":"error{","kernel":"seqi"schema"...',
    seen on a full disk), so neither could be read and the reason was lost.
    Each record now leaves in one write. (Hydra may still drop a rank's
    record when the other's MPI_Abort ends its proxy first, about 1 run in
    20 here: so whole lines in every run, and records seen over the runs.)"""
    seen = 0
    for _ in range(3):
        r = run_cbk("null", "--fail-at=0", launcher=[mpiexec, "-n", "2"], timeout=60)
        assert r.status == 1
        ours = [line for line in r.stderr.splitlines() if not line.startswith("Abort(")]   # MPICH's own line
        assert len(r.errors) == len(ours), r.stderr
        assert all(e["message"] == "null: failing at repetition 0 as asked" for e in r.errors), r.stderr
        seen += len(r.errors)
    assert seen >= 2


@pytest.mark.timeout(240)
@pytest.mark.parametrize("kernel, args", [
    ("seqio", "--file-size=768k --block-size=64k --write=buffered --read=none"),
    ("manyfiles", "--files=3 --file-size=256k --block-size=64k --write=buffered --read=none"),
    ("randio", "--file-size=768k --block-size=4k --direct=false --engine=psync --runtime=0.1 --ramp=0"),
])
def test_the_space_check_counts_every_rank_on_the_node(tmp_path, cbk_bin, mpiexec, kernel, args):
    """Each rank of seqio, manyfiles and randio writes its own files, but the
    space check asked the file system for one rank's bytes: two ranks of
    768 KiB on a 1 MiB tmpfs passed it, ran into ENOSPC mid-write (exit 1,
    'No space left on device'), and the rank the other's MPI_Abort killed left
    its directory full of data. The node's ranks share the file system, so
    the check asks for all of theirs, and refuses before anything is made."""
    from full_disk import run_on_full_disk

    one = run_on_full_disk(tmp_path, f'"{cbk_bin}" {kernel} --dir="$FULL" {args} >/dev/null; echo "rc=$?"; '
                                     f'ls -A "$FULL"', env=dict(__import__("os").environ))
    assert one.stdout == "rc=0\n", one.stderr   # one rank's files fit
    two = run_on_full_disk(tmp_path, f'"{mpiexec}" -n 2 "{cbk_bin}" {kernel} --dir="$FULL" {args} >/dev/null; '
                                     f'echo "rc=$?"; ls -A "$FULL"', env=dict(__import__("os").environ))
    assert two.stdout == "rc=2\n", two.stderr   # refused, nothing left in the directory
    (line,) = two.stderr.splitlines()
    assert line.endswith(f'"message":"not enough space in {tmp_path / "full"}: the run needs 1536 KiB, '
                         f'1024 KiB is free"}}'), line


def _mount_type(path: str) -> str | None:
    """The type of the file system `path` is on, from /proc/self/mounts (the
    last mount of the longest mount point above it)."""
    from pathlib import Path

    best, kind = "", None
    for line in Path("/proc/self/mounts").read_text().splitlines():
        point, fstype = line.split()[1:3]
        if (path == point or path.startswith(point.rstrip("/") + "/")) and len(point) >= len(best):
            best, kind = point, fstype
    return kind


@pytest.mark.timeout(60)
@pytest.mark.parametrize("kernel, target, fstype", [
    ("seqio", "/proc", "proc"), ("metadata", "/proc", "proc"), ("seqio", "/sys", "sysfs"),
    ("seqio", "/dev/pts", "devpts"),
])
def test_a_directory_on_a_pseudo_file_system_is_refused_by_its_type(run_cbk, kernel, target, fstype):
    """statvfs of /proc, /sys or /dev/pts says 0 blocks, and cbk said 'not
    enough space in /proc: the run needs 1 MiB, 0 MiB is free' (metadata,
    which writes no bytes, went on and failed to make its directory: 'No
    such file or directory'): a full disk, where there is no disk. It names
    the file system's type (statfs f_type) and says it holds no files."""
    if _mount_type(target) != fstype:
        pytest.skip(f"{target} is not a {fstype} mount here")
    args = ["--file-size=1m", "--block-size=64k", "--write=buffered", "--read=none"] if kernel == "seqio" else []
    r = run_cbk(kernel, f"--dir={target}", *args)
    assert r.status == 2 and r.records == [], r.stderr
    (e,) = r.errors
    assert e["message"] == f"target directory {target} is on a {fstype} file system, which does not hold files"


@pytest.mark.timeout(60)
@pytest.mark.parametrize("mount", ["-t tmpfs -o size=0", "-t ramfs"], ids=["tmpfs-size-0", "ramfs"])
def test_a_file_system_without_a_size_is_written_not_taken_for_full(tmp_path, cbk_bin, mount):
    """ramfs and a tmpfs mounted with size=0 hold files with no limit and say
    0 blocks: the space check read that as '0 MiB is free' and refused every
    run there. With no size to compare with, it passes, as the inode check
    does where f_files is 0."""
    import os

    from full_disk import run_on_full_disk

    r = run_on_full_disk(tmp_path, f'umount "$FULL" && mount {mount} cbtest "$FULL" || exit 99; '
                                   f'"{cbk_bin}" seqio --dir="$FULL" --file-size=1m --block-size=64k --write=buffered '
                                   f'--read=none >/dev/null; echo "rc=$?"; ls -A "$FULL"', env=dict(os.environ))
    assert r.stdout == "rc=0\n", r.stderr
    assert r.stderr == ""


@pytest.mark.timeout(120)
@pytest.mark.parametrize("kernel, many, fits", [
    ("metadata", "--items=400 --kind=files --write-bytes=100 --phases=create", "--items=200 --kind=files "
                                                                                "--write-bytes=100 --phases=create"),
    ("manyfiles", "--files=300 --file-size=512 --block-size=512 --write=buffered --read=none",
     "--files=200 --file-size=512 --block-size=512 --write=buffered --read=none"),
], ids=["metadata", "manyfiles"])
def test_the_space_check_counts_each_file_in_whole_blocks(tmp_path, cbk_bin, kernel, many, fits):
    """A file of 100 or 512 bytes takes a whole 4 KiB block, but the space
    check added the files' bytes: 400 files of 100 bytes (40 KB) passed on a
    1 MiB tmpfs and failed at the 256th file, exit 1, 'No space left on
    device'. Each file is counted in whole blocks of the file system, and a
    count that fits still runs."""
    import os

    from full_disk import run_on_full_disk

    r = run_on_full_disk(tmp_path, f'"{cbk_bin}" {kernel} --dir="$FULL" {fits} >/dev/null; echo "rc=$?"; '
                                   f'"{cbk_bin}" {kernel} --dir="$FULL" {many} >/dev/null; echo "rc=$?"; ls -A "$FULL"',
                         env=dict(os.environ))
    assert r.stdout == "rc=0\nrc=2\n", r.stderr   # refused, nothing left in the directory
    (line,) = r.stderr.splitlines()
    need = {"metadata": 1600, "manyfiles": 1200}[kernel]
    assert json.loads(line)["message"] == f"not enough space in {tmp_path / 'full'}: the run needs {need} KiB, " \
                                          f"1024 KiB is free", line


@pytest.mark.timeout(60)
def test_pario_refuses_a_block_size_times_segments_past_64_bits(run_cbk, tmp_path):
    """16 TiB x 2^20 segments is 2^64 bytes: the product wrapped to 0, passed
    the space check, and the run failed later, exit 1, 'pario: out of memory
    (140737488355328 bytes)' for the offsets of 2^44 transfers."""
    r = run_cbk("pario", f"--dir={tmp_path}", "--block-size=16t", "--segments=1048576", "--transfer-size=1m")
    assert r.status == 2 and r.records == [], r.stderr
    (e,) = r.errors
    assert e["message"] == "block size 16 TiB x 1048576 segments is more than 16 EiB per rank", e
    assert tree(tmp_path) == []


@pytest.mark.timeout(60)
@pytest.mark.parametrize("engine", ["libaio", "io_uring"])
def test_randio_refuses_queue_buffers_larger_than_memory_before_laying_out_its_file(run_cbk, tmp_path, engine):
    """Each job holds --iodepth buffers of --block-size, touched as they are
    made. 32768 x 64 MiB (2 TiB) a job was found too large only in setup, after the
    file was laid out (minutes for a large one), as a failed measurement, exit 1;
    a product just above memory got the OOM killer instead. It is refused
    first, as stream and himeno refuse theirs."""
    r = run_cbk("randio", f"--dir={tmp_path}", "--file-size=64m", "--block-size=64m", "--iodepth=32768",
                "--jobs=2", f"--engine={engine}", "--direct=false", "--runtime=0.1", "--ramp=0")
    if r.status == 2 and "--engine" not in r.errors[0]["message"] and "--iodepth" not in r.errors[0]["message"]:
        pytest.skip(f"{engine}: {r.errors[0]['message']}")   # the engine is not usable here
    assert r.status == 2 and r.records == [], r.stderr
    (e,) = r.errors
    assert e["message"].startswith("--jobs=2 x --iodepth=32768 x --block-size=64 MiB: buffers of 4096 GiB on this "
                                   "node, but only "), e
    assert e["message"].endswith(" GiB is available"), e
    assert tree(tmp_path) == []


def _address_space_at_most_8_gib():
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (8 << 30, 8 << 30))


@pytest.mark.timeout(60)
@pytest.mark.parametrize("args, what", [
    (["--streams=128", "--message-size=1g"], "--streams=128 x --message-size=1 GiB x 2 ends (client and server "
                                             "in this process): buffers of 256 GiB"),
    (["--streams=128", "--message-size=1g", "--direction=bidir"],
     "--streams=128 x 2 directions x --message-size=1 GiB x 2 ends (client and server in this process): "
     "buffers of 512 GiB"),
    (["--streams=128", "--test=rr", "--request-size=1g", "--response-size=1"],
     "--streams=128 x --request-size=1 GiB x 2 ends (client and server in this process): buffers of 256 GiB"),
])
def test_tcp_refuses_stream_buffers_larger_than_memory(cbk_bin, args, what):
    """A loopback run holds a buffer of --message-size per stream at each
    end, touched as made: --streams=128 --message-size=1g asked for 256 GiB
    and met the OOM killer on a smaller node (under an 8 GiB address-space
    limit, which keeps this test safe unfixed: exit 1, 'the server ... failed
    before the start: out of memory for the buffers of 128 data connections',
    or when the client's wait won, 'nothing received within 10 s' ten
    seconds later). Refused first, in one line, as randio's queues."""
    from pathlib import Path

    avail_kib = next(int(line.split()[1]) for line in Path("/proc/meminfo").read_text().splitlines()
                     if line.startswith("MemAvailable:"))
    if avail_kib > 500 << 20:
        pytest.skip("this node holds the buffers")
    p = subprocess.run([cbk_bin, "tcp", "--port=0", "--duration=0.1", *args], capture_output=True, text=True,
                       timeout=40, preexec_fn=_address_space_at_most_8_gib)
    assert p.returncode == 2 and p.stdout == "", p.stderr
    (line,) = p.stderr.splitlines()
    assert json.loads(line)["message"].startswith(what + " on this node, but only "), line


def _address_space_at_most_1_gib():
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))


@pytest.mark.timeout(120)
def test_mpi_refuses_host_buffers_of_every_rank_on_the_node_larger_than_memory(cbk_bin, mpiexec):
    """Each rank of `mpi` allocates and touches its send and receive buffers
    at the largest size (allreduce: 1 GiB each, and 3 GiB more for the result
    check), and no check counted them: 128 ranks of 2 GiB messages on one
    node met the OOM killer. The ranks of the node (MPI_Comm_split_type
    SHARED) x what each allocates is refused first, as randio's queues are.
    (A 1 GiB address-space limit keeps this test safe unfixed: the ranks'
    allocations fail, exit 1, 'cannot allocate host buffers'.)"""
    import math
    from pathlib import Path

    avail_kib = next(int(line.split()[1]) for line in Path("/proc/meminfo").read_text().splitlines()
                     if line.startswith("MemAvailable:"))
    ranks = math.ceil(avail_kib / (5 << 20)) + 1   # 5 GiB a rank, more than the node has, with a rank to spare
    if ranks > 8:
        pytest.skip("this node holds the buffers of 8 ranks")
    p = subprocess.run([mpiexec, "-n", str(ranks), cbk_bin, "mpi", "--op=allreduce", "--sizes=1g"],
                       capture_output=True, text=True, timeout=90, preexec_fn=_address_space_at_most_1_gib)
    # nothing measured: stdout holds only the `started` record every rank past MPI_Init gives
    assert p.returncode == 2 and [json.loads(r)["type"] for r in p.stdout.splitlines()] == ["started"], p.stderr
    (line,) = p.stderr.splitlines()
    assert json.loads(line)["message"].startswith(
        f"{ranks} ranks x --op=allreduce at messages up to 1 GiB (send, receive and result-check buffers, 5.0 GiB "
        f"a rank): buffers of {5 * ranks} GiB on this node, but only "), line


@pytest.mark.timeout(120)
@pytest.mark.parametrize("value, store_run", [("007", 7), ("12abc", None), ("-5", None), ("1" * 70, None), ("42", 42)])
def test_a_garbage_store_run_id_never_makes_the_owner_stamp_unreadable(cbk_bin, tmp_path, value, store_run):
    """cbk copies CLUSTERBENCH_RUN into its owner stamp as a JSON number, as
    far as its digits went: '007' wrote "store_run":007, which no JSON parser
    reads, so a run killed with -9 left a directory `clusterbench clean` could
    never prove was cbk's and never removed; '12abc' claimed store run 12, and
    70 digits were cut to 63, another number. A value that is not a run id is
    null. The stamp is read the moment it appears: it was created empty and
    written after, and a reader under load (or a kill -9 then) found it empty."""
    import os
    import signal
    import time

    from clusterbench.run.private_dirs import orphans

    p = subprocess.Popen([cbk_bin, "seqio", f"--dir={tmp_path}", "--file-size=1m", "--block-size=64k",
                          "--write=buffered", "--read=none", "--repetitions=100000"],
                         env=dict(os.environ, CLUSTERBENCH_RUN=value), stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while not list(tmp_path.glob("cbk-seqio-*/.cbk-owner")) and time.monotonic() < deadline:
            time.sleep(0.02)
        (stamp,) = tmp_path.glob("cbk-seqio-*/.cbk-owner")   # read at once: it appears whole
        assert json.loads(stamp.read_text())["store_run"] == store_run
    finally:
        p.send_signal(signal.SIGKILL)
        p.wait()
    (left,) = orphans(tmp_path, {"seqio"})   # clean can prove it is cbk's, and its owner gone
    assert left.path == stamp.parent


def _deep_dir(root, length: int):
    """A path of `length` characters under root, in components of 200."""
    path = str(root)
    while len(path) + 201 < length:
        path += "/" + "d" * 200
    path += "/" + "e" * (length - len(path) - 1)
    return path


@pytest.mark.timeout(60)
@pytest.mark.parametrize("length, exists, reason", [
    (4000, False, "target directory {dir}: No such file or directory"),
    (4070, True, "seqio: cannot create a directory in {dir}: File name too long"),
])
def test_an_error_about_a_long_path_keeps_its_reason(run_cbk, tmp_path, length, exists, reason):
    """Messages were cut at 1023 bytes: with a --dir of 4000 characters the
    error named most of the path and never said what was wrong with it."""
    import os

    d = _deep_dir(tmp_path, length)
    if exists:
        os.makedirs(d)
    r = run_cbk("seqio", f"--dir={d}", "--file-size=64k", "--block-size=4k", "--write=buffered", "--read=none")
    assert r.status == 2 and r.records == [], r.stderr
    (e,) = r.errors
    assert e["message"] == reason.format(dir=d), e["message"][-200:]
    assert not exists or os.listdir(d) == []


@pytest.mark.timeout(60)
@pytest.mark.parametrize("kernel, arg, message", [
    ("manyfiles", "--files=9223372036854775808", "--files=9223372036854775808 is out of range [1, 1000000] (count)"),
    ("manyfiles", "--files=-99999999999999999999", "--files=-99999999999999999999 is out of range [1, 1000000] (count)"),
    ("randio", "--seed=99999999999999999999", "--seed=99999999999999999999 is out of range [0, 9223372036854775807]"),
    ("seqio", "--file-size=16777216t", "--file-size=16777216t is out of range [4k, 18446744073709551615] (bytes)"),
    ("seqio", "--file-size=18446744073709551616", "--file-size=18446744073709551616 is out of range "
                                                  "[4k, 18446744073709551615] (bytes)"),
    ("mpi", "--max-size=99999999999999999999k", "--max-size=99999999999999999999k is out of range [0, 1g] (bytes)"),
    ("null", "--seconds=1e400", "--seconds=1e400 is out of range [0, 3600] (s)"),
    ("tcp", "--duration=1e-400", "--duration=1e-400 is out of range [0.01, 86400] (s)"),
])
def test_a_number_past_its_type_is_out_of_range_not_malformed(run_cbk, tmp_path, kernel, arg, message):
    """A count of 2^63, a size past 2^64 bytes or a real past a double was
    'is not an integer' / 'is not a size (use a number with an optional k, m,
    g or t suffix ...)' / 'is not a number': the value was well formed, too
    large, and the line did not say which values are taken."""
    dirs = [f"--dir={tmp_path}"] if kernel in ("manyfiles", "randio", "seqio") else []
    r = run_cbk(kernel, arg, *dirs)
    assert r.status == 2 and r.records == [], r.stderr
    (e,) = r.errors
    assert e["message"] == message
    assert tree(tmp_path) == []


@pytest.mark.timeout(120)
def test_manyfiles_refuses_more_files_than_the_file_system_has_inodes_for(tmp_path, cbk_bin):
    """The space check counted bytes only: 50 files on a file system with 20
    inodes passed it and failed at the 18th file, exit 1, 'open .../f0000017:
    No space left on device'. The files (and the private directory and its
    stamp) are counted against the free inodes before anything is made; a
    count that fits still runs."""
    import os

    args = "--file-size=4k --block-size=4k --write=buffered --read=none"
    script = (f'mount -o remount,nr_inodes=20 "$FULL" || exit 99; '
              f'"{cbk_bin}" manyfiles --dir="$FULL" --files=10 {args} >/dev/null; echo "rc=$?"; '
              f'"{cbk_bin}" manyfiles --dir="$FULL" --files=50 {args} >/dev/null; echo "rc=$?"; ls -A "$FULL"')
    from full_disk import run_on_full_disk

    r = run_on_full_disk(tmp_path, script, env=dict(os.environ))
    assert r.stdout == "rc=0\nrc=2\n", r.stderr
    (line,) = r.stderr.splitlines()
    assert json.loads(line)["message"].startswith(
        f"not enough inodes in {tmp_path / 'full'}: the run makes 52 files and directories, "), line


@pytest.mark.timeout(120)
def test_metadata_refuses_more_items_than_the_file_system_has_inodes_for(tmp_path, cbk_bin, mpiexec):
    """metadata had a space check and no inode check: 2 ranks x 20 items on a
    file system with 30 inodes failed in the create phase, exit 1, 'mkdir
    .../dir.mdtest.1.12: No space left on device'. Every rank's items of one
    kind (the directory test removes its items before the file test), the
    trees, the test directory, the private directory and its stamp are
    counted against the free inodes before anything is made; a count that
    fits still runs."""
    import os

    from full_disk import run_on_full_disk

    run = f'"{mpiexec}" -n 2 "{cbk_bin}" metadata --dir="$FULL" --kind=both'
    script = (f'mount -o remount,nr_inodes=30 "$FULL" || exit 99; '
              f'{run} --items=10 >/dev/null; echo "rc=$?"; {run} --items=20 >/dev/null; echo "rc=$?"; ls -A "$FULL"')
    r = run_on_full_disk(tmp_path, script, env=dict(os.environ))
    assert r.stdout == "rc=0\nrc=2\n", r.stderr
    (line,) = r.stderr.splitlines()
    assert json.loads(line)["message"].startswith(
        f"not enough inodes in {tmp_path / 'full'}: the run makes 44 files and directories, "), line


@pytest.mark.timeout(60)
@pytest.mark.parametrize("kernel, given, says", [
    ("mpi", "--sizes=8,,16", "--sizes=8,,16 has an empty item (a comma too many?)"),
    ("mpi", "--sizes=,8", "--sizes=,8 has an empty item (a comma too many?)"),
    ("mpi", "--sizes=8,1m,", "--sizes=8,1m, has an empty item (a comma too many?)"),
    ("mpi", "--sizes=" + ",".join(["8"] * 600), "--sizes is 1199 characters long, more than the 1023 it may have"),
    ("metadata", "--phases=create,,stat", "--phases=create,,stat has an empty item (a comma too many?)"),
])
def test_a_kernels_comma_list_with_an_empty_item_or_too_long_is_refused(cbk_bin, tmp_path, kernel, given, says):
    """strtok_r skipped the empty item of --sizes=8,,16 in silence (a typo
    measured 8 and 16 as if meant), and a list longer than the kernel's copy
    was cut mid-item (1048576 read as 1048)."""
    p = subprocess.run([cbk_bin, "--check", kernel, given, f"--dir={tmp_path}"] if kernel == "metadata" else
                       [cbk_bin, "--check", kernel, given], capture_output=True, text=True, timeout=30)
    assert p.returncode == 2, p.stderr
    assert json.loads(p.stderr)["message"] == says


@pytest.mark.timeout(60)
def test_gpucopy_sizes_with_an_empty_item_are_refused(cuda_cbk):
    """The same list check in the GPU kernel (its validation needs no GPU)."""
    p = subprocess.run([cuda_cbk, "--check", "gpucopy", "--sizes=8,,16"], capture_output=True, text=True, timeout=30)
    assert p.returncode == 2, p.stderr
    assert json.loads(p.stderr)["message"] == "--sizes=8,,16 has an empty item (a comma too many?)"


@pytest.mark.parametrize("value,says", [
    ("0x10", "--seconds=0x10 is not a number"),          # strtod's hexadecimal: ran 16 s, stored as typed
    ("0x1p-3", "--seconds=0x1p-3 is not a number"),
    (" 1", "--seconds= 1 is not a number"),               # a blank strtod skips
    ("\u0663", "--seconds=\u0663 is not a number"),       # an Arabic-Indic 3
])
def test_a_real_parameter_is_decimal_digits_only(cbk_bin, value, says):
    p = subprocess.run([cbk_bin, "--check", "null", f"--seconds={value}"], capture_output=True, text=True, timeout=30)
    assert p.returncode == 2 and json.loads(p.stderr.splitlines()[-1])["message"] == says, p.stderr


@pytest.mark.parametrize("value", ["1e-3", ".5", "+2", "1.5e+1", "3"])
def test_a_real_parameter_in_decimal_notation_is_taken(cbk_bin, value):
    p = subprocess.run([cbk_bin, "--check", "null", f"--seconds={value}"], capture_output=True, text=True, timeout=30)
    assert p.returncode == 0, p.stderr


def test_an_integer_parameter_with_a_leading_blank_is_refused(cbk_bin):
    p = subprocess.run([cbk_bin, "--check", "null", "--repetitions= 3"], capture_output=True, text=True, timeout=30)
    assert p.returncode == 2 and "--repetitions= 3 is not an integer" in p.stderr, p.stderr


def test_a_query_given_an_argument_is_refused_not_answered_as_if_it_were_taken(cbk_bin):
    """`cbk --gpus 2` printed the count and exit 0, as if 2 had been taken; --version, --describe alike."""
    said = {}
    for query in ("--gpus", "--version", "--describe", "--help"):
        p = subprocess.run([cbk_bin, query, "2"], capture_output=True, text=True, timeout=30)
        said[query] = (p.returncode, p.stdout, json.loads(p.stderr.splitlines()[-1])["message"] if p.stderr else "")
    assert said == {q: (2, "", f"cbk {q} takes no argument (given: '2')")
                    for q in ("--gpus", "--version", "--describe", "--help")}


@pytest.mark.parametrize("knob,value", [("CBK_WAIT_NOTE_S", "5s"), ("CBK_FINALIZE_TIMEOUT_S", "0x10"),
                                        ("CBK_WAIT_NOTE_S", "-1")])
def test_a_seconds_knob_set_to_no_number_of_seconds_is_refused_not_taken_as_its_default(cbk_bin, knob, value):
    """CBK_WAIT_NOTE_S=5s (a unit typed in) waited the default 30 s before a rank's first note, said nowhere;
    CBK_FINALIZE_TIMEOUT_S=0x10 was 20 s. Refused as a parameter is: by --check, before anything runs."""
    import os

    p = subprocess.run([cbk_bin, "--check", "null"], capture_output=True, text=True, timeout=30,
                       env={**os.environ, knob: value})
    assert (p.returncode, json.loads(p.stderr.splitlines()[-1])["message"] if p.stderr else "") == (
        2, f"{knob}={value} is no number of seconds (a decimal number of 0 or more, or inf)")
    taken = subprocess.run([cbk_bin, "--check", "null"], capture_output=True, text=True, timeout=30,
                           env={**os.environ, knob: "inf"})
    assert taken.returncode == 0, taken.stderr
