"""Benchmark data is never left behind (#20 finding 1): a run stopped by a
signal to its process group, or by kill -9 of any one of its processes
(Python, cbk, one MPI rank), leaves the user's directory as it was once
`clusterbench clean DIR` or the next run in DIR has run: same listing, same
checksums, no cbk-* directory. Directories without cbk's owner stamp, and
those of a live owner, are never touched."""
from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import terminal_sigint, run_bounded
from kill_and_reap import KILL_AND_REAP

# small sizes, many repetitions: the run is busy in its private directory
# when the fault comes, and a repetition is short
KERNEL_ARGS = {
    "seqio": ["--file-size=2m", "--block-size=64k", "--write=buffered", "--read=none", "--repeat", "100000"],
    "manyfiles": ["--files=16", "--file-size=64k", "--write=buffered", "--read=none", "--repeat", "100000"],
    "randio": ["--file-size=1m", "--direct=false", "--engine=psync", "--iodepth=1", "--ramp=0", "--runtime=60"],
    "pario": ["--np", "2", "--block-size=1m", "--fsync=none", "--repeat", "100000"],
}
# Every kernel under Ctrl-C and under kill -9 of the directory's owner (cbk,
# pario's rank 0); the other faults on one serial and the MPI kernel: cbk's
# signal path is one function for all kernels, the Python side one runner.
# Recovery: `clean DIR`, or the next run in DIR (slower: two cases).
CASES = [
    ("seqio", "SIGINT", "clean"), ("manyfiles", "SIGINT", "clean"), ("randio", "SIGINT", "clean"),
    ("pario", "SIGINT", "clean"), ("seqio", "SIGTERM", "clean"), ("pario", "SIGTERM", "clean"),
    ("seqio", "kill-9-python", "clean"), ("pario", "kill-9-python", "clean"),
    ("manyfiles", "kill-9-python", "clean"), ("randio", "kill-9-python", "clean"),
    ("seqio", "kill-9-cbk", "next-run"), ("manyfiles", "kill-9-cbk", "clean"), ("randio", "kill-9-cbk", "clean"),
    ("pario", "kill-9-cbk", "next-run"), ("pario", "kill-9-other-rank", "clean"),
]


def snapshot(root: Path) -> dict[str, str]:
    """Every entry below root with the checksum of each file's content."""
    out = {}
    for dirpath, dirs, files in os.walk(root):
        for name in dirs + files:
            path = os.path.join(dirpath, name)
            if os.path.islink(path):
                out[os.path.relpath(path, root)] = "-> " + os.readlink(path)
            elif os.path.isdir(path):
                out[os.path.relpath(path, root)] = "dir"
            else:
                out[os.path.relpath(path, root)] = hashlib.sha256(Path(path).read_bytes()).hexdigest()
    return out


@pytest.fixture
def user_dir(tmp_path) -> Path:
    """A scratch directory holding the user's own files, among them one
    named like ours but without a stamp, and an empty one."""
    d = tmp_path / "scratch"
    (d / "results").mkdir(parents=True)
    (d / "results" / "notes.txt").write_bytes(os.urandom(3000))
    (d / "input.dat").write_bytes(b"user data\n" * 100)
    (d / "cbk-seqio-AAAAAA").mkdir()
    (d / "cbk-seqio-AAAAAA" / "data").write_bytes(b"not the toolkit's\n")
    (d / "cbk-pario-BBBBBB").mkdir()
    return d


def processes() -> dict[int, tuple[int, str]]:
    """Every live process: pid -> (parent pid, command name)."""
    found = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            text = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        fields = text[text.rindex(")") + 2:].split()
        if fields[0] not in "ZX":
            found[int(entry)] = (int(fields[1]), text[text.index("(") + 1:text.rindex(")")])
    return found


def descendants(pid: int) -> dict[int, str]:
    """The live processes below pid (mpiexec's proxies and ranks are in
    process groups of their own): pid -> command name."""
    table, found, todo = processes(), {}, [pid]
    while todo:
        parent = todo.pop()
        for child, (ppid, comm) in table.items():
            if ppid == parent and child not in found:
                found[child] = comm
                todo.append(child)
    return found


def wait_for_stamp(d: Path, proc: subprocess.Popen, timeout_s: float = 30) -> dict:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        for stamp in d.glob("cbk-*/.cbk-owner"):
            try:
                return json.loads(stamp.read_text())
            except (OSError, ValueError):  # being written, or removed between glob and read
                pass
        if proc.poll() is not None:
            pytest.fail(f"the run ended before its private directory appeared: {proc.communicate()[1]}")
        time.sleep(0.05)
    pytest.fail("no private directory with an owner stamp appeared")


def wait_gone(pids: dict[int, str], timeout_s: float = 60) -> None:
    deadline = time.monotonic() + timeout_s
    while alive := [p for p in pids if p in processes()]:
        if time.monotonic() > deadline:
            for p in alive:
                os.kill(p, signal.SIGKILL)
            pytest.fail(f"processes of the run outlived the fault: {alive}")
        time.sleep(0.05)


def seqio_stopped(cbk_bin: str, user_dir: Path, meanwhile=lambda private: None, env: dict | None = None,
                  ended_by: int = signal.SIGINT) -> tuple[dict, Path]:
    """cbk seqio run alone in user_dir, and stopped by SIGINT once its private directory is
    stamped, after meanwhile(private directory); its owner stamp and its directory."""
    cbk = subprocess.Popen([cbk_bin, "seqio", f"--dir={user_dir}", *KERNEL_ARGS["seqio"][:-2], "--repetitions=100000"],
                           env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        stamp = wait_for_stamp(user_dir, cbk)
        (private,) = [d for d in user_dir.glob("cbk-seqio-*") if (d / ".cbk-owner").exists()]
        meanwhile(private)
        cbk.send_signal(signal.SIGINT)
        assert cbk.wait(timeout=60) == -ended_by
    finally:
        if cbk.poll() is None:
            cbk.kill()
            cbk.wait()
    return stamp, private


@pytest.mark.timeout(180)
def test_a_kill_9_of_clusterbench_lets_mpiexec_wait_for_its_ranks_to_remove_their_files(cbk_bin, store_url,
                                                                                      user_dir):
    """After a kill -9 of clusterbench during `run pario`, the ranks' last
    record ('stopped') reached mpiexec, whose write to the dead reader's pipe
    killed it (SIGPIPE); Hydra's proxy then SIGKILLed the ranks 3 ms after
    their stop, and pario's directory stayed in about half of the kills.
    mpiexec now holds a reader of its own output: it is never ended by
    SIGPIPE, and the directory is gone once every process has ended."""
    before = snapshot(user_dir)
    env = dict(os.environ, CLUSTERBENCH_CBK=cbk_bin, CLUSTERBENCH_DB=store_url, COLUMNS="1000")
    run = [sys.executable, "-m", "clusterbench", "run", "pario", f"--dir={user_dir}", "--quiet", *KERNEL_ARGS["pario"]]
    r = run_bounded([sys.executable, "-c", KILL_AND_REAP, str(user_dir), *run], timeout=150, env=env)
    assert r.returncode == 0, r.stderr
    ended = json.loads(r.stdout)
    assert snapshot(user_dir) == before, ended
    # not ended by SIGPIPE while its proxy still ran: once (four workers, a fresh-clone CI run, 2026-12-08)
    # mpiexec died of SIGPIPE after its proxy had exited 0, the ranks ended and the directory gone; what
    # it wrote to then was not its output (kept open) but, likely, the proxy's closed socket
    assert "mpiexec" in ended, ended
    assert f"signal {int(signal.SIGPIPE)}" not in ended["mpiexec"] or ended.get("hydra_pmi_proxy") == ["exit 0"], ended


@pytest.mark.timeout(180)
@pytest.mark.parametrize("kernel,fault,recovery", CASES, ids=[f"{k}-{f}-{r}" for k, f, r in CASES])
def test_a_stopped_run_leaves_the_directory_as_it_was(cbk_bin, store_url, user_dir, kernel, fault, recovery):
    before = snapshot(user_dir)
    env = dict(os.environ, CLUSTERBENCH_CBK=cbk_bin, CLUSTERBENCH_DB=store_url, COLUMNS="1000")
    run = [sys.executable, "-m", "clusterbench", "run", kernel, f"--dir={user_dir}", "--quiet"]
    p = subprocess.Popen([*run, *KERNEL_ARGS[kernel]], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         start_new_session=True, preexec_fn=terminal_sigint)
    try:
        stamp = wait_for_stamp(user_dir, p)
        assert stamp["host"] and stamp["store_run"] == 1 and stamp["pid"] != p.pid
        tree = descendants(p.pid)
        if fault in ("SIGINT", "SIGTERM"):  # a terminal's Ctrl-C, a batch system's stop: the whole group
            os.killpg(p.pid, getattr(signal, fault))
        elif fault == "kill-9-python":
            os.kill(p.pid, signal.SIGKILL)
        elif fault == "kill-9-cbk":  # the stamp's owner: cbk, or pario's rank 0
            os.kill(stamp["pid"], signal.SIGKILL)
        else:
            others = [pid for pid, comm in tree.items() if comm == "cbk" and pid != stamp["pid"]]
            assert others, tree
            os.kill(others[0], signal.SIGKILL)
        p.communicate(timeout=60)
        wait_gone(tree)
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
    if fault in ("SIGINT", "SIGTERM", "kill-9-python"):
        # a signal, or cbk seeing the clusterbench that started it gone (kernels/core/orchestrator_watch.c),
        # leaves cbk time to remove its files itself: asserted before anything cleans. Under MPI too:
        # mpiexec keeps a reader of its own output (launch/kept_output.py), so the ranks' last records
        # no longer end it by SIGPIPE, and its proxy no longer SIGKILLs the ranks mid-removal (pario's
        # directory stayed in about half of these kills)
        left_now = snapshot(user_dir)
        if kernel == "pario" and fault == "kill-9-python" and left_now != before:
            # the race the launcher's kept reader narrowed is not closed: the proxy's SIGKILL still won it
            # once in a full suite run under load (2026-12-07). What is left must be a directory cbk
            # stamped (removed by `clean` below, which must name it), and nothing else changed
            extra = {k for k in left_now if k not in before}
            stamped = {d.parent.name for d in user_dir.glob("cbk-pario-*/.cbk-owner")}   # the stamp in its directory
            for beside in user_dir.glob("cbk-pario-*.cbk-owner"):   # or moved beside it, the removal cut short
                stamped |= {beside.name, beside.name.removesuffix(".cbk-owner")}
            assert {k.split("/")[0] for k in extra} <= stamped, (extra, left_now)
            assert {k: v for k, v in left_now.items() if k not in extra} == before
        else:
            assert left_now == before
    left = sorted(str(s.parent.name) for s in user_dir.glob("cbk-*/.cbk-owner"))
    if recovery == "clean":
        r = run_bounded([sys.executable, "-m", "clusterbench", "clean", str(user_dir)], timeout=60, env=env)
        assert r.returncode == 0, r.stderr
        said = r.stdout
    else:
        small = [a for a in KERNEL_ARGS[kernel] if a not in ("100000", "--repeat", "--runtime=60")]
        r = subprocess.run([*run[:-1], *small, "--runtime=1"] if kernel == "randio" else [*run[:-1], *small],
                           env=env, capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stderr
        said = r.stderr + r.stdout
    for name in left:
        assert f"{name}' " in said and "MiB" in said, said
    if fault == "kill-9-cbk":  # the case that cannot clean up after itself
        assert left, "kill -9 of the owner left nothing to find: the test proves nothing"
    assert snapshot(user_dir) == before


def test_clean_dry_run_lists_and_removes_nothing_and_spares_live_foreign_and_unknown_kernel_owners(cli, tmp_path,
                                                                                                  user_dir):
    def plant(name: str, **stamp_fields) -> Path:
        d = user_dir / name
        d.mkdir()
        (d / "data.00000000").write_bytes(b"x" * 2**20)
        stamp = {"owner": "cbk", "host": os.uname().nodename, "boot_id": "", "pid": 2**22 + 1, "start_ticks": 0,
                 "started_unix_s": 0, "run_id": "00", "store_run": None, **stamp_fields}
        (d / ".cbk-owner").write_text(json.dumps(stamp))
        return d

    dead = plant("cbk-pario-dead01")  # a pid above pid_max's default: no such process
    plant("cbk-pario-alive1", pid=os.getpid())  # this very process: its owner lives
    plant("cbk-pario-other1", host="another-host")  # nothing here can tell: left alone
    plant("cbk-zzz-dead02")   # a dead owner's stamp, but cbk has no kernel zzz: not cbk's
    (user_dir / "link").symlink_to(dead)
    os.symlink(dead, user_dir / "cbk-seqio-link01")  # a symlink named like ours is not ours
    before = snapshot(user_dir)
    r = cli("clean", "--dry-run", str(user_dir))
    assert r.status == 0, r.stderr
    assert "would remove" in r.stdout and "cbk-pario-dead01" in r.stdout and "1.0 MiB" in r.stdout
    assert "alive1" not in r.stdout and "other1" not in r.stdout and "link01" not in r.stdout
    assert "zzz" not in r.stdout
    assert snapshot(user_dir) == before
    r = cli("clean", str(user_dir))
    assert r.status == 0 and "removed" in r.stdout
    after = snapshot(user_dir)
    assert {k for k in before if k not in after} == {"cbk-pario-dead01", "cbk-pario-dead01/data.00000000",
                                                      "cbk-pario-dead01/.cbk-owner"}
    r = cli("clean", str(tmp_path / "no-such-dir"))
    assert r.status == 2 and len(r.stderr.strip().splitlines()) == 1


def test_a_stamp_beside_a_directory_proves_it_as_one_inside_and_only_a_gone_owners_goes(cli, user_dir):
    """cbk moves a directory's stamp beside it ("<dir>.cbk-owner") before removing it, and removes
    the stamp last (kernels/core/cleanup.c): `clean` takes a stamp beside a directory, or beside
    none, as the stamp of that directory. A live owner's, another host's, a link, and a stamp of a
    kernel cbk does not have are left alone; so is a directory with neither stamp."""
    def stamp(**fields) -> str:
        return json.dumps({"owner": "cbk", "host": os.uname().nodename, "boot_id": "", "pid": 2**22 + 1,
                           "start_ticks": 0, "started_unix_s": 0, "run_id": "00", "store_run": None, **fields})

    (user_dir / "cbk-pario-gone01").mkdir()              # a dead owner's, its stamp beside it
    (user_dir / "cbk-pario-gone01" / "data.00000000").write_bytes(b"x" * 2**20)
    (user_dir / "cbk-pario-gone01.cbk-owner").write_text(stamp())
    (user_dir / "cbk-pario-gone02.cbk-owner").write_text(stamp())   # its directory already gone
    (user_dir / "cbk-pario-alive1").mkdir()
    (user_dir / "cbk-pario-alive1.cbk-owner").write_text(stamp(pid=os.getpid()))
    (user_dir / "cbk-pario-alive2.cbk-owner").write_text(stamp(pid=os.getpid()))
    (user_dir / "cbk-pario-other1.cbk-owner").write_text(stamp(host="another-host"))
    (user_dir / "cbk-zzz-gone03.cbk-owner").write_text(stamp())     # cbk has no kernel zzz
    (user_dir / "elsewhere").write_text(stamp())
    (user_dir / "cbk-pario-link01").mkdir()
    (user_dir / "cbk-pario-link01.cbk-owner").symlink_to(user_dir / "elsewhere")
    before = snapshot(user_dir)
    r = cli("clean", "--dry-run", str(user_dir))
    assert r.status == 0 and snapshot(user_dir) == before, r.stderr
    assert "cbk-pario-gone01' (1.0 MiB)" in r.stdout and "cbk-pario-gone02' (0.0 MiB)" in r.stdout, r.stdout
    r = cli("clean", str(user_dir))
    assert r.status == 0, r.stderr
    after = snapshot(user_dir)
    assert {k for k in before if k not in after} == {
        "cbk-pario-gone01", "cbk-pario-gone01/data.00000000", "cbk-pario-gone01.cbk-owner",
        "cbk-pario-gone02.cbk-owner"}
    assert after.keys() <= before.keys()


def test_a_reused_pid_or_a_zombie_is_no_owner_and_clean_follows_no_link(cli, tmp_path, user_dir):
    """An owner is gone when no live process has the stamp's pid AND start
    time (this very, live, process's pid with another start time is a reused
    pid; an exited child not yet reaped is a zombie), or its boot id is not
    this boot's; another user's directory is left alone. Removing such a
    directory never follows a link inside it (O_NOFOLLOW), and one holding
    only its stamp (a removal interrupted before its last step) goes too."""
    def stat_fields(pid: int) -> list[str]:
        text = Path(f"/proc/{pid}/stat").read_text()
        return text[text.rindex(")") + 2:].split()   # fields[0] is proc(5)'s field 3

    def plant(name: str, pid: int, ticks: int, data: bool = True, boot: str = "") -> Path:
        d = user_dir / name
        d.mkdir()
        if data:
            (d / "data.00000000").write_bytes(b"x" * 4096)
        stamp = {"owner": "cbk", "host": os.uname().nodename, "boot_id": boot, "pid": pid, "start_ticks": ticks,
                 "started_unix_s": 0, "run_id": "00", "store_run": None}
        (d / ".cbk-owner").write_text(json.dumps(stamp))
        return d

    mine = int(stat_fields(os.getpid())[19])
    plant("cbk-pario-alive1", os.getpid(), mine)              # alive: kept
    plant("cbk-pario-reused", os.getpid(), mine + 1)          # same pid, another process's start: gone
    plant("cbk-pario-oboot1", os.getpid(), mine, boot="0" * 8 + "-another-boot")   # a previous boot's: gone
    if os.geteuid() == 0:   # another user's directory is never ours to remove, whatever its stamp says
        os.chown(plant("cbk-pario-nobody", 2**22 + 1, 0), 65534, 65534)
    child = subprocess.Popen(["true"])
    deadline = time.monotonic() + 10
    while stat_fields(child.pid)[0] != "Z":                   # exited, not reaped (no wait() yet)
        assert time.monotonic() < deadline, "the child did not exit"
        time.sleep(0.01)
    plant("cbk-seqio-zombie", child.pid, int(stat_fields(child.pid)[19]))
    bare = plant("cbk-seqio-stamp1", 2**22 + 1, 0, data=False)   # only the stamp is left
    theirs = tmp_path / "theirs"
    (theirs / "sub").mkdir(parents=True)
    (theirs / "sub" / "keep.txt").write_text("the user's\n")
    (theirs / "file.txt").write_text("the user's too\n")
    linked = plant("cbk-pario-links1", 2**22 + 1, 0)
    (linked / "to-dir").symlink_to(theirs / "sub")
    (linked / "to-file").symlink_to(theirs / "file.txt")
    (linked / "nested").mkdir()
    (linked / "nested" / "to-dir").symlink_to(theirs)
    theirs_before = snapshot(theirs)
    try:
        r = cli("clean", str(user_dir))
    finally:
        child.wait()
    assert r.status == 0, r.stderr
    left = sorted(p.name for p in user_dir.iterdir())
    assert "cbk-pario-alive1" in left and ("cbk-pario-nobody" in left) == (os.geteuid() == 0)
    for gone in ("cbk-pario-reused", "cbk-pario-oboot1", "cbk-seqio-zombie", bare.name, linked.name):
        assert gone not in left and gone in r.stdout, (gone, r.stdout)
    assert snapshot(theirs) == theirs_before


@pytest.mark.timeout(60)
def test_cbk_removes_its_files_and_ends_when_the_process_it_watches_ends(cbk_bin, user_dir):
    """kernels/core/orchestrator_watch.c alone: a stand-in orchestrator (sleep)
    ends mid-run; cbk ends by SIGTERM with its directory removed. One that
    names another boot's process is not watched."""
    from clusterbench.run.private_dirs import boot_id, start_ticks

    before = snapshot(user_dir)
    args = [cbk_bin, "seqio", f"--dir={user_dir}", *KERNEL_ARGS["seqio"][:-2], "--repetitions=100000"]
    watched = subprocess.Popen(["sleep", "2"])
    env = dict(os.environ, CLUSTERBENCH_ORCHESTRATOR=f"{boot_id()} {watched.pid} {start_ticks(watched.pid)}")
    cbk = subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    assert wait_for_stamp(user_dir, cbk)
    watched.wait()
    assert cbk.wait(timeout=30) == -signal.SIGTERM
    assert snapshot(user_dir) == before
    # another host's orchestrator (another boot id) is not watched: cbk runs on
    env["CLUSTERBENCH_ORCHESTRATOR"] = f"00000000-0000-0000-0000-000000000000 {os.getpid() + 10**6} 1"
    cbk = subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        assert wait_for_stamp(user_dir, cbk)
        time.sleep(1)
        assert cbk.poll() is None
    finally:
        cbk.send_signal(signal.SIGINT)
        cbk.wait(timeout=30)
    assert snapshot(user_dir) == before


@pytest.mark.timeout(120)
def test_a_directory_cbk_cannot_remove_whole_keeps_its_stamp_for_clean(cbk_bin, cli, user_dir):
    """cbk's clean-up removed the owner stamp, then the directory: where the rmdir failed (another
    rank's file written meanwhile: pario's ranks share rank 0's directory) an unstamped
    cbk-pario-XXXXXX stayed, which `clean` may not touch (a suite run: left after `clean`). Now the
    stamp is moved beside the directory, which stays proven cbk's. Here what cbk cannot remove is a
    tree deeper than it descends (CBK_CLEANUP_DEPTH, 48): deterministic, where another rank's file
    is a race."""
    def too_deep(private: Path) -> None:
        deep = private.joinpath(*["d"] * 50)
        deep.mkdir(parents=True)
        (deep / "f").write_bytes(b"x")

    before = snapshot(user_dir)
    stamp, private = seqio_stopped(cbk_bin, user_dir, too_deep)
    assert not (private / ".cbk-owner").exists()
    assert json.loads((user_dir / f"{private.name}.cbk-owner").read_text())["pid"] == stamp["pid"]
    r = cli("clean", str(user_dir))
    assert r.status == 0 and private.name in r.stdout, r.stdout + r.stderr
    assert snapshot(user_dir) == before


# Kills cbk with SIGKILL as it removes its private directory, at the rmdir:
# a launcher's SIGKILL lands there when the ranks' clean-up races it.
KILL_AT_RMDIR = r"""
#define _GNU_SOURCE
#include <dlfcn.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
int rmdir(const char *path)
{
    int (*real)(const char *) = (int (*)(const char *))dlsym(RTLD_NEXT, "rmdir");
    const char *when = getenv("KILL_AT_RMDIR"), *base = strrchr(path, '/');
    int ours = when && base && !strncmp(base + 1, "cbk-", 4);
    if (ours && !strcmp(when, "before"))
        kill(getpid(), SIGKILL);
    int rc = real(path);
    if (ours && !strcmp(when, "after"))
        kill(getpid(), SIGKILL);
    return rc;
}
"""


@pytest.mark.timeout(120)
@pytest.mark.parametrize("when", ["before", "after"])
def test_a_removal_killed_at_its_rmdir_leaves_what_clean_can_prove_cbks(cbk_bin, cli, tmp_path, user_dir, when):
    """cbk took its owner stamp out of the private directory, then removed the directory: a SIGKILL
    between the two (Hydra's proxy killing the ranks of a clusterbench killed by -9, as they clean
    up) left an empty cbk-pario-XXXXXX without a stamp, which `clean` may not touch (a CI run,
    2026-12-07; 4 in 250 such kills). The stamp now moves beside the directory first, and goes
    last: killed before the rmdir, the directory is left with its stamp beside it; after, the
    stamp alone. `clean` removes both, and the user's files are as they were."""
    import shutil

    cc = shutil.which("cc") or shutil.which("gcc")
    if not cc:
        pytest.skip("no C compiler")
    (tmp_path / "kill_at_rmdir.c").write_text(KILL_AT_RMDIR)
    shim = tmp_path / "kill_at_rmdir.so"
    subprocess.run([cc, "-shared", "-fPIC", "-o", str(shim), str(tmp_path / "kill_at_rmdir.c"), "-ldl"],
                   check=True, capture_output=True, timeout=60)
    before = snapshot(user_dir)
    stamp, private = seqio_stopped(cbk_bin, user_dir, env=dict(os.environ, LD_PRELOAD=str(shim), KILL_AT_RMDIR=when),
                                   ended_by=signal.SIGKILL)
    left = {k: v for k, v in snapshot(user_dir).items() if k not in before}
    stamp_beside = f"{private.name}.cbk-owner"
    assert left.keys() == ({private.name, stamp_beside} if when == "before" else {stamp_beside}), left
    assert json.loads((user_dir / stamp_beside).read_text())["pid"] == stamp["pid"]
    r = cli("clean", str(user_dir))
    assert r.status == 0 and private.name in r.stdout, r.stdout + r.stderr
    assert snapshot(user_dir) == before


@pytest.mark.timeout(120)
def test_a_users_file_where_the_stamp_moves_is_never_replaced(cbk_bin, cli, user_dir):
    """The stamp moves beside its directory, to "<dir>.cbk-owner", as a hard link (rename(2) would
    replace a file found there). A file of the user's that holds that name stays as it was: cbk
    leaves the directory stamped, `clean` says why it cannot remove it, and once the file is gone
    `clean` removes the directory."""
    def users_file_at_the_place(private: Path) -> None:
        (user_dir / f"{private.name}.cbk-owner").write_bytes(b"the user's\n")

    before = snapshot(user_dir)
    stamp, private = seqio_stopped(cbk_bin, user_dir, users_file_at_the_place)
    users = user_dir / f"{private.name}.cbk-owner"
    assert users.read_bytes() == b"the user's\n"
    assert json.loads((private / ".cbk-owner").read_text())["pid"] == stamp["pid"]
    r = cli("clean", str(user_dir))
    assert r.status == 2 and f"cannot remove '{private}'" in r.stderr and "File exists" in r.stderr, r.stderr
    assert users.read_bytes() == b"the user's\n" and (private / ".cbk-owner").exists()
    users.unlink()
    r = cli("clean", str(user_dir))
    assert r.status == 0 and private.name in r.stdout, r.stdout + r.stderr
    assert snapshot(user_dir) == before


@pytest.mark.timeout(120)
@pytest.mark.parametrize("kernel", ["seqio", "pario"])
def test_a_stop_signal_that_reaches_only_cbk_is_stored_interrupted(cbk_bin, store_url, user_dir, kernel):
    """Started without job control (SIGINT ignored, as a background job of a
    script), a Ctrl-C that reaches cbk alone: cbk removes its files and
    ends by SIGINT, and the run is stored interrupted, not failed."""
    before = snapshot(user_dir)
    env = dict(os.environ, CLUSTERBENCH_CBK=cbk_bin, CLUSTERBENCH_DB=store_url, COLUMNS="1000")
    p = subprocess.Popen([sys.executable, "-m", "clusterbench", "run", kernel, f"--dir={user_dir}", "--quiet",
                          *KERNEL_ARGS[kernel]], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         start_new_session=True, text=True,
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
    try:
        stamp = wait_for_stamp(user_dir, p)
        tree = descendants(p.pid)
        os.kill(stamp["pid"], signal.SIGINT)
        out, err = p.communicate(timeout=60)
        wait_gone(tree)
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
    from conftest import failed_steps, store_rows

    # pario once stored failed here in a fresh-clone run (1 of 3 that day) and never alone or beside busy
    # loops: the step's own message says what ended it
    assert p.returncode == 130 and "stored as interrupted" in err and "Traceback" not in err, \
        err + failed_steps(store_url)
    assert snapshot(user_dir) == before

    assert store_rows(store_url, "select status from runs") == [("interrupted",)]
    assert store_rows(store_url, "select status, message from steps") == [("interrupted", "cbk ended by SIGINT")]


@pytest.mark.timeout(120)
def test_a_live_cbk_working_in_the_same_directory_is_a_warning_on_every_figure_it_shares(run_cbk, user_dir):
    """Two `run seqio --dir=D` at once stored both runs ok, each at part of
    the device's rate, with no word. A live owner's private directory beside
    this run's (another cbk run id, this host) is now a warning on each record
    written while it is there; a dead owner's, another host's or this run's
    own ranks' is not."""
    from clusterbench.run.private_dirs import boot_id, start_ticks

    other = subprocess.Popen(["sleep", "60"])
    try:
        def plant(name: str, **fields) -> None:
            d = user_dir / name
            d.mkdir()
            stamp = {"owner": "cbk", "host": os.uname().nodename, "boot_id": boot_id(), "pid": other.pid,
                     "start_ticks": start_ticks(other.pid), "started_unix_s": 0, "run_id": "00000000000000aa",
                     "store_run": 7, **fields}
            (d / ".cbk-owner").write_text(json.dumps(stamp) + "\n")

        def warnings(r) -> list[list[str]]:
            assert r.status == 0, r.stderr
            return [rec["warnings"] for rec in r.measurements()]

        args = (f"--dir={user_dir}", "--file-size=1m", "--block-size=256k", "--repetitions=2")
        plant("cbk-seqio-dead01", pid=2**22 + 1)     # no such process
        plant("cbk-seqio-other1", host="another-host")  # a shared file system's: not judged from here
        plant("cbk-seqio-start1", start_ticks=1)     # the pid reused by another process
        assert [w for w in warnings(run_cbk("seqio", *args)) if w] == []
        plant("cbk-seqio-alive1")
        said = warnings(run_cbk("seqio", *args))
        assert len(said) == 4 and all(w == [f"another cbk (pid {other.pid}, run 7) works beside this run in "
                                            f"{user_dir}: its I/O shares the device, so this figure is not the "
                                            f"device's alone"] for w in said), said
    finally:
        other.kill()
        other.wait()
    assert [w for w in warnings(run_cbk("seqio", *args)) if w] == []   # its owner gone: nothing said


@pytest.mark.timeout(60)
def test_cbk_started_for_a_clusterbench_already_gone_says_why_it_stops(cbk_bin, user_dir):
    """A CLUSTERBENCH_ORCHESTRATOR naming a process that is gone (its pid
    reused: the start ticks differ) stops cbk at once; it said only
    'stopped SIGTERM', which left a person calling cbk by hand guessing."""
    import json

    from clusterbench.run.private_dirs import boot_id

    before = snapshot(user_dir)
    env = dict(os.environ, CLUSTERBENCH_ORCHESTRATOR=f"{boot_id()} {os.getpid()} 1")
    r = subprocess.run([cbk_bin, "seqio", f"--dir={user_dir}", *KERNEL_ARGS["seqio"][:-2]], env=env,
                       capture_output=True, text=True, timeout=50)
    assert r.returncode == -signal.SIGTERM, r.stderr
    errors = [json.loads(line) for line in r.stderr.splitlines() if '"type":"error"' in line]
    assert len(errors) == 1, r.stderr
    assert errors[0]["message"].startswith(f"CLUSTERBENCH_ORCHESTRATOR names process {os.getpid()}, which is no "
                                           "longer running"), errors[0]
    assert snapshot(user_dir) == before
