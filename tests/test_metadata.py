"""metadata under real mpiexec (2 ranks) on real directories in tmp_path: every
mdtest layout option gives the items the layout says, on disk (counted by
the listing hook after each create) and in the records (every phase's items
over every rank), with positive rates and nothing left; the stride makes a
rank read another rank's data (the writer's stamp read back from disk);
bad input is one line, exit 2, nothing left; a signal mid-run removes a
deep tree; `clusterbench mdtest` prints mdtest's SUMMARY table from the
stored run."""
from __future__ import annotations

import os
import re
import shlex
import time

import pytest

from conftest import tree

ITEM_PHASES = {"dirs": ["dir-create", "dir-stat", "dir-rename", "dir-remove"],
               "files": ["file-create", "file-stat", "file-read", "file-remove"]}


def run_md(run_cbk, mpiexec, tmp_path, n, *args):
    data = tmp_path / "target"
    data.mkdir(exist_ok=True)
    listing = tmp_path / "listing.txt"
    res = run_cbk("metadata", f"--dir={data}", *args, launcher=[mpiexec, "-n", str(n)], timeout=60,
                  env={"CBK_TEST_LISTING": str(listing)})
    seen = {}
    if listing.exists():
        for line in listing.read_text().splitlines():
            rep, kind, files, dirs = line.split()
            seen[(int(rep), kind)] = (int(files), int(dirs))
        listing.unlink()
    assert tree(data) == [], "items left behind"
    return res, seen


def tree_dirs(depth: int, b: int) -> int:
    return depth + 1 if b == 1 else (b ** (depth + 1) - 1) // (b - 1)


# (mdtest options as kernel args, items per rank, tree dirs, test dirs, trees, kinds)
LAYOUTS = [
    ("-n 12", ["--items=12"], 12, 1, 1, 1, ("dirs", "files")),
    ("-I 5", ["--items=0", "--items-per-dir=5"], 5, 1, 1, 1, ("dirs", "files")),
    ("-n 12 -I 4 (3 test dirs)", ["--items=12", "--items-per-dir=4"], 12, 1, 3, 1, ("dirs", "files")),
    ("-n 20 -z 2 -b 2", ["--items=20", "--depth=2", "--branching=2"], 14, 7, 1, 1, ("dirs", "files")),
    ("-I 3 -z 3 (b 1)", ["--items=0", "--items-per-dir=3", "--depth=3"], 12, 4, 1, 1, ("dirs", "files")),
    ("-n 20 -z 2 -b 2 -L", ["--items=20", "--depth=2", "--branching=2", "--leaf-only"], 20, 7, 1, 1,
     ("dirs", "files")),
    ("-n 10 -u", ["--items=10", "--unique-dir"], 10, 1, 1, 2, ("dirs", "files")),
    ("-I 2 -z 1 -b 3 -u", ["--items=0", "--items-per-dir=2", "--depth=1", "--branching=3", "--unique-dir"], 8, 4, 1, 2,
     ("dirs", "files")),
    ("-F -n 9 -w 4k -e 1k -y", ["--items=9", "--kind=files", "--write-bytes=4k", "--read-bytes=1k", "--fsync"], 9, 1, 1,
     1, ("files",)),
    ("-D -n 9 -Y", ["--items=9", "--kind=dirs", "--sync-phase"], 9, 1, 1, 1, ("dirs",)),
    ("-n 10 -N 1 -u -R", ["--items=10", "--stride=1", "--unique-dir", "--order=random"], 10, 1, 1, 2,
     ("dirs", "files")),
]


@pytest.mark.timeout(60)
@pytest.mark.parametrize("name,args,per_rank,dirs_per_tree,loops,trees,kinds", LAYOUTS, ids=[t[0] for t in LAYOUTS])
def test_layout_items_accounted_for(run_cbk, mpiexec, tmp_path, name, args, per_rank, dirs_per_tree, loops, trees,
                                    kinds):
    n = 2
    res, seen = run_md(run_cbk, mpiexec, tmp_path, n, *args)
    assert res.status == 0, res.stderr
    skeleton = loops + loops * trees * dirs_per_tree  # test directories and the trees in them
    for kind in kinds:
        items = n * per_rank
        # on disk, right after the create: the items and the skeleton, nothing else
        assert seen[(0, kind)] == ((0, skeleton + items) if kind == "dirs" else (items, skeleton))
        for phase in ITEM_PHASES[kind]:
            (rec,) = res.measurements(phase)
            assert rec["ops"] == items and rec["items_per_rank"] == per_rank, phase
            assert rec["rate"] > 0 and rec["rate_unit"] == "items/s"
            assert 0 < rec["rank_items_per_s_min"] <= rec["rank_items_per_s_max"]
            # mdtest's figure: all items over (latest end - earliest start)
            assert rec["rate"] == pytest.approx(items / rec["seconds"])
    created, removed = res.measurements("tree-create"), res.measurements("tree-remove")
    assert created[0]["ops"] == removed[0]["ops"] == trees * dirs_per_tree * loops
    other = {"dirs": "files", "files": "dirs"}
    for kind in other:
        if kind not in kinds:
            assert all(not res.measurements(p) for p in ITEM_PHASES[kind])


@pytest.mark.timeout(60)
def test_write_and_read_bytes_are_counted(run_cbk, mpiexec, tmp_path):
    res, _ = run_md(run_cbk, mpiexec, tmp_path, 2, "--items=6", "--kind=files", "--write-bytes=3901",
                    "--read-bytes=3901")
    assert res.status == 0, res.stderr
    assert res.measurements("file-create")[0]["bytes"] == 2 * 6 * 3901
    assert res.measurements("file-read")[0]["bytes"] == 2 * 6 * 3901
    assert res.measurements("file-stat")[0]["bytes"] == 0


@pytest.mark.timeout(60)
@pytest.mark.parametrize("n,stride,stat_owner,read_owner,remove_owner", [
    (2, 0, 0, 0, 0), (2, 1, 1, 0, 1), (3, 1, 1, 2, 0)])
def test_stride_reads_another_ranks_items(run_cbk, mpiexec, tmp_path, n, stride, stat_owner, read_owner, remove_owner):
    """mdtest -N: phase k works on rank (r + k x N)'s items (stat 1, read 2,
    remove 3); the read proves it with the writer rank stamped in each file."""
    res, _ = run_md(run_cbk, mpiexec, tmp_path, n, "--items=6", "--kind=files", f"--stride={stride}",
                    "--write-bytes=64", "--read-bytes=8", "--unique-dir")
    assert res.status == 0, res.stderr
    assert res.measurements("file-stat")[0]["rank0_items_of_rank"] == stat_owner
    read = res.measurements("file-read")[0]
    assert read["rank0_items_of_rank"] == read["rank0_read_data_of_rank"] == read_owner
    assert res.measurements("file-remove")[0]["rank0_items_of_rank"] == remove_owner


@pytest.mark.timeout(60)
@pytest.mark.parametrize("phases,timed", [
    ("create", ["tree-create", "file-create"]),
    ("stat", ["file-stat"]),
    ("remove", ["file-remove", "tree-remove"]),
    ("create,stat,read,remove", ["tree-create", "file-create", "file-stat", "file-read", "file-remove", "tree-remove"]),
])
def test_phase_options_time_only_their_phases(run_cbk, mpiexec, tmp_path, phases, timed):
    """-C/-T/-E/-r: only those phases are reported; the rest still runs
    untimed, so every item is created and removed (nothing left)."""
    res, seen = run_md(run_cbk, mpiexec, tmp_path, 2, "--items=5", "--kind=files", f"--phases={phases}")
    assert res.status == 0, res.stderr
    assert [r["phase"] for r in res.measurements()] == timed
    assert seen[(0, "files")] == (10, 2)


@pytest.mark.timeout(60)
def test_repetitions_each_report_every_phase(run_cbk, mpiexec, tmp_path):
    res, seen = run_md(run_cbk, mpiexec, tmp_path, 2, "--items=4", "--repetitions=3")
    assert res.status == 0, res.stderr
    assert len(res.measurements("dir-rename")) == len(res.measurements("file-remove")) == 3
    assert sorted(seen) == [(r, k) for r in range(3) for k in ("dirs", "files")]


@pytest.mark.timeout(60)
def test_the_pre_delay_pauses_before_each_test_of_each_repetition_outside_every_timing(run_cbk, mpiexec, tmp_path):
    """mdtest -p: a pause before the directory test and before the file test of
    every iteration (DelaySecs), the phases' barriers after it: no phase's time holds it."""
    started = time.monotonic()
    res, _ = run_md(run_cbk, mpiexec, tmp_path, 2, "--items=4", "--repetitions=2", "--pre-delay=1.5")
    assert res.status == 0, res.stderr
    assert time.monotonic() - started >= 4 * 1.5   # two tests in each of two repetitions
    timed = res.measurements()
    assert len(res.measurements("file-create")) == 2 and all(m["seconds"] < 1.5 for m in timed), timed


@pytest.mark.timeout(60)
def test_a_shared_tree_is_timed_over_its_makers_work_alone(run_cbk, mpiexec, tmp_path):
    """Rank 0 alone makes and removes a shared tree: the other rank reports rank 0's
    interval, so the phase is not stretched by that rank's start (its clock and
    barrier exit differ from rank 0's by milliseconds on a busy machine)."""
    res, _ = run_md(run_cbk, mpiexec, tmp_path, 2, "--items=9", "--depth=1", "--branching=2")
    assert res.status == 0, res.stderr
    for phase in ("tree-create", "tree-remove"):
        (m,) = res.measurements(phase)
        assert m["ops"] == 3 and m["tree"] == "shared"
        assert m["rank_seconds_min"] == m["rank_seconds_max"] == m["seconds"] > 0, m


@pytest.mark.timeout(60)
def test_a_rank_late_out_of_the_repetitions_barrier_does_not_stretch_a_phase(run_cbk, mpiexec, tmp_path):
    """Each rank took its time origin as it left the repetition's barrier: rank 1,
    descheduled there for 2 s (as on a loaded node, for milliseconds), began each
    phase 2 s "earlier", and every phase's span over the ranks (latest end minus
    earliest begin) held those 2 s. A node's ranks now share the earliest origin."""
    data = tmp_path / "target"
    data.mkdir()
    res = run_cbk("metadata", f"--dir={data}", "--items=4", "--kind=files", "--unique-dir", "--phases=create,stat",
                  launcher=[mpiexec, "-n", "2"], timeout=60, env={"CBK_TEST_LATE_ORIGIN": "1:2"})
    assert res.status == 0, res.stderr
    for phase in ("file-create", "file-stat"):
        (m,) = res.measurements(phase)
        assert m["seconds"] < 2 and m["rank_seconds_max"] < 2, m


BAD = [
    (["--items=0"], "nothing to create"),
    (["--items=10", "--items-per-dir=3"], "not a multiple of items-per-dir"),
    (["--items=10", "--items-per-dir=5", "--unique-dir"], "not both"),
    (["--items=3", "--depth=2", "--branching=2"], "less than one per directory"),
    (["--kind=files", "--write-bytes=10", "--read-bytes=20"], "read-bytes 20 B is more than write-bytes 10 B"),
    (["--phases=create,list"], "unknown phase 'list'"),
    (["--depth=9", "--branching=100"], "more than 10000000 directories"),
    (["--depth=33"], "depth"),
]


@pytest.mark.timeout(60)
@pytest.mark.parametrize("args,message", BAD, ids=[m for _, m in BAD])
def test_bad_input_one_line_exit_2_nothing_left(run_cbk, mpiexec, tmp_path, args, message):
    res, _ = run_md(run_cbk, mpiexec, tmp_path, 2, *args)
    assert res.status == 2, res.stderr
    assert len(res.errors) == 1 and message in res.errors[0]["message"], res.stderr
    assert res.measurements() == []


@pytest.mark.timeout(60)
def _glob_live(root, pattern: str) -> list:
    """glob over a tree the running kernel renames and removes: a directory
    that vanishes during the walk means "not there yet", not an error."""
    try:
        return list(root.glob(pattern))
    except FileNotFoundError:
        return []


def test_sigterm_mid_run_removes_a_deep_tree(cbk_bin, mpiexec, tmp_path):
    """The tree goes down 12 levels below the private directory: cleanup
    descends all of them, on a signal as at the end."""
    import signal
    import subprocess
    import time
    data = tmp_path / "target"
    data.mkdir()
    p = subprocess.Popen([mpiexec, "-n", "2", cbk_bin, "metadata", f"--dir={data}", "--items-per-dir=2", "--items=0",
                          "--depth=9", "--repetitions=100000", "--unique-dir"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline, made = time.time() + 20, False
        while time.time() < deadline and not _glob_live(data, "cbk-metadata-*/#test-dir.*/*/*/*/*/*/*/*/*/*/*/*"):
            # the tree is made and removed each repetition: seen at some poll, not at the last one (a loaded
            # machine's polls can miss its deepest level for 20 s and then look between repetitions)
            made = made or bool(_glob_live(data, "cbk-metadata-*/#test-dir.*/*"))
            time.sleep(0.02)
        assert made or _glob_live(data, "cbk-metadata-*/#test-dir.*/*"), "the run never made its tree"
        p.send_signal(signal.SIGTERM)
        p.wait(timeout=20)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    deadline = time.time() + 5
    while time.time() < deadline and tree(data):
        time.sleep(0.05)
    assert tree(data) == []


ROW = re.compile(r"^   (\S.{0,21}?)\s+(\d+\.\d{3}) +(\d+\.\d{3}) +(\d+\.\d{3}) +(\d+\.\d{3})$")


def summary_rows(text: str, what: str = "rate") -> dict[str, tuple[float, ...]]:
    """Rows of mdtest's SUMMARY table, read as a script reading mdtest's output would."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"SUMMARY {what}: (of "))
    assert lines[start + 1].split() == ["Operation", "Max", "Min", "Mean", "Std", "Dev"]
    rows = {}
    for line in lines[start + 3:]:
        m = ROW.match(line)
        if not m:
            break
        rows[m.group(1).strip()] = tuple(float(x) for x in m.groups()[1:])
    return rows


@pytest.mark.timeout(120)
def test_clusterbench_mdtest_prints_mdtests_summary_and_stores_the_run(cli, mpiexec, tmp_path):
    data = tmp_path / "md"
    data.mkdir()
    r = cli("mdtest", "mpiexec", "-n", "2", "mdtest", "-n", "8", "-z", "1", "-b", "2", "-i", "2", "-w", "512",
            "-e", "512", "-N", "1", "-P", "-d", str(data / "out"))
    assert r.status == 0, r.stderr
    assert "mdtest-4.0.0 was launched with 2 total task(s) on 1 node(s)" in r.stdout
    assert "Command line used: mdtest '-n' '8' '-z' '1'" in r.stdout
    assert "2 tasks, 12 files/directories" in r.stdout  # 8 over 3 directories: 2 each
    rates, times = summary_rows(r.stdout, "rate"), summary_rows(r.stdout, "time")
    assert list(rates) == ["Directory creation", "Directory stat", "Directory rename", "Directory removal",
                           "File creation", "File stat", "File read", "File removal", "Tree creation", "Tree removal"]
    for name, (mx, mn, mean, sd) in rates.items():
        assert mx >= mean >= mn > 0 and sd >= 0, name
        assert times[name][0] >= times[name][1] >= 0  # seconds, printed to 1 ms as mdtest does
    run_id = int(re.search(r"stored as run (\d+)", r.stderr).group(1))
    shown = cli("export", "--format", "json", str(run_id))
    assert shown.status == 0 and '"dir-create"' in shown.stdout
    assert tree(data) == []


@pytest.mark.timeout(120)
def test_clusterbench_mdtests_stdout_is_mdtests_output_alone_with_quiet_too(cli, mpiexec, tmp_path):
    """As `clusterbench ior`'s: our table, notes and run number came first on
    stdout, so a script reading mdtest's output read ours first; and --quiet
    printed no mdtest output at all, only "stored as run N"."""
    for quiet in ((), ("--quiet",)):
        r = cli("mdtest", *quiet, "mpiexec", "-n", "2", "mdtest", "-F", "-n", "4", "-d", str(tmp_path / "out"))
        assert r.status == 0, r.stderr
        lines = r.stdout.splitlines()
        assert lines[0].startswith("-- started at ") and lines[-1].startswith("-- finished at "), r.stdout
        assert list(summary_rows(r.stdout)) == ["File creation", "File stat", "File read", "File removal",
                                                "Tree creation", "Tree removal"]
        assert "stored as run" not in r.stdout and "note:" not in r.stdout and "┃" not in r.stdout, r.stdout
        said = r.stderr.splitlines()
        assert re.fullmatch(r"stored as run \d+ in \S+" + ("" if quiet else r" \(clusterbench show \d+: .*"),
                            said[-1]), r.stderr
        # -d names the parent: the items are made in a private directory under it, and a note says so
        assert any(line.startswith("note: -d ") for line in said) != bool(quiet), r.stderr


@pytest.mark.timeout(120)
def test_a_line_that_stores_no_item_phase_still_says_its_item_count(cli, mpiexec, tmp_path):
    """-D -E: directories only, read only; mdtest reads no directory, so no
    record carried the count and the line said "2 tasks, 0 directories"
    where mdtest says 20."""
    r = cli("mdtest", "mpiexec", "-n", "2", "mdtest", "-D", "-E", "-n", "10", "-d", str(tmp_path / "out"))
    assert r.status == 0, r.stderr
    assert "2 tasks, 20 directories" in r.stdout, r.stdout


@pytest.mark.timeout(60)
def test_clusterbench_mdtest_refuses_every_unsupported_option_at_once(cli, tmp_path):
    r = cli("mdtest", "--np", "2", "-n", "10", "-S", "-c", "-W", "5", "--verify-read", "-K", "-d", str(tmp_path))
    assert r.status == 2
    line = r.stderr.strip().splitlines()[-1]
    for opt in ("-S:", "-c:", "-W:", "--verify-read:", "-K: unknown option"):
        assert opt in line, line
    assert tree(tmp_path) == []


MDTEST_LINES = [
    ("mpiexec -n 4 mdtest -n 1000 -u -d /tmp", 4, {"items": "1000", "unique-dir": "true", "dir": "/tmp"}, 1),
    ("mdtest -I 10 -z 5 -b 2 -L -i 3", None, {"items": "0", "items-per-dir": "10", "depth": "5", "branching": "2",
                                              "leaf-only": "true"}, 3),
    ("mdtest -F -C -T -r -n 100 -w 3901 -e 3901 -N 1", None,
     {"items": "100", "kind": "files", "phases": "create,stat,remove", "write-bytes": "3901", "read-bytes": "3901",
      "stride": "1"}, 1),
    ("mdtest -D -n100 -R --random-seed=7 -y -Y -v -vv", None,
     {"items": "100", "kind": "dirs", "order": "random", "seed": "7", "fsync": "true", "sync-phase": "true"}, 1),
    ("mdtest -F -D -n 5 -E", None, {"items": "5", "phases": "read"}, 1),
    ("mdtest -Cn 5", None, {"items": "5", "phases": "create"}, 1),
    # mdtest 4.1's -U selects the directory rename phase, as -C the create phase; it was "-U: unknown option"
    ("mdtest -D -C -U -r -n 5", None, {"items": "5", "kind": "dirs", "phases": "create,rename,remove"}, 1),
    # -n and -I are sizes to mdtest's parser (string_to_bytes): 1k is 1024 items
    ("mdtest -n 1k", None, {"items": "1024"}, 1),
    ("mdtest -I 2K -z 1", None, {"items": "0", "items-per-dir": "2048", "depth": "1"}, 1),
    # string_to_bytes reads the first letter after the number and nothing after it: 1kb, 4KiB as mdtest runs them
    ("mdtest -F -n 1kb -w 4KiB -e 4KiB", None, {"items": "1024", "kind": "files", "write-bytes": "4096",
                                                 "read-bytes": "4096"}, 1),
    # mdtest takes a negative seed and, without -R, orders nothing at random with it
    ("mdtest -n 10 --random-seed=-5", None, {"items": "10"}, 1),
    ("mdtest -n 10 --random-seed -5 -R", None, "refused", None),
    # -p: mdtest's pause before its directory test and its file test, in whole seconds
    ("mdtest -n 5 -p 2", None, {"items": "5", "pre-delay": "2"}, 1),
    ("mdtest -n 5 -p 0", None, {"items": "5"}, 1),
]


@pytest.mark.timeout(10)
@pytest.mark.parametrize("line,ranks,params,reps", MDTEST_LINES, ids=[t[0] for t in MDTEST_LINES])
def test_mdtest_lines_translate(line, ranks, params, reps):
    from clusterbench.errors import BadInput
    from clusterbench.tools.mdtest_args import translate
    if params == "refused":
        # mdtest adds the rank to the seed and orders at random only where that is above 0: a mix of orders
        with pytest.raises(BadInput) as e:
            translate(shlex.split(line))
        assert e.value.message.startswith("mdtest line refused: -R with --random-seed=-5: mdtest adds the rank")
        return
    t = translate(shlex.split(line))
    assert t.params == {"dir": ".", **params}
    assert (t.ranks, t.repetitions) == (ranks, reps)


@pytest.mark.parametrize("line,shown", [
    ("mdtest -n 5 -P", ("rate", "time")), ("mdtest -n 5 -Z", ("time",)), ("mdtest -n 5 -Z -P", ("rate", "time")),
    # -P wins wherever it stands (mdtest.c summarize_results: print_rate_and_time before print_time);
    # a -Z after it printed the time table alone, and a script reading the rate table found none
    ("mdtest -n 5 -P -Z", ("rate", "time")), ("mdtest -n 5 -PZ", ("rate", "time"))])
def test_mdtest_summary_tables_as_mdtest_prints_them_whatever_the_order_of_p_and_z(line, shown):
    from clusterbench.tools.mdtest_args import translate
    assert translate(shlex.split(line)).show == shown


# Holds every file of repetition 0 open (an unlinked file keeps its inode
# while open), then lets the run on by reading its listing FIFO, as often as
# it comes back to it.
_HOLD_FILES = """
import glob, sys
held = [open(p) for p in glob.glob(sys.argv[1] + "/cbk-metadata-*/*/*/file.*")]
while True:
    open(sys.argv[1] + "/listing").read()
"""


@pytest.mark.timeout(120)
def test_a_file_system_that_runs_out_of_inodes_mid_run_is_a_failed_measurement(cbk_bin, tmp_path):
    """ENOSPC while the items are made is the run failing, exit 1, as seqio's
    full disk is (docs/reliability.md), with the private tree removed: it
    was exit 2, bad input, which the runner takes as 'nothing was made' and
    which ended a suite at the step. A file system with too few inodes from
    the start is refused before the run (test_cbk_hostile_cli.py), so here
    they go while it runs: after repetition 0's create phase the run waits to
    open its listing (a FIFO) while another process opens its 20 files; their
    unlink then frees no inode, and repetition 1 runs out."""
    import json

    from full_disk import run_on_full_disk

    # each process bounded (cbk 60 s, its SIGTERM to end it; the holder 90 s), and what was on the file
    # system said where cbk did not end as expected: once the script never ended (pytest's 120 s), its
    # holder deaf to `kill` (a test before, in the same pytest worker, had left SIGTERM ignored, which
    # every child inherits; conftest's signal_dispositions_kept puts the handlers back after each test)
    script = ('mount -o remount,nr_inodes=40 "$FULL" || exit 99; mkfifo "$FULL/listing"; '
              f'CBK_TEST_LISTING="$FULL/listing" timeout 60 "{cbk_bin}" metadata --dir="$FULL" --items=20 '
              '--kind=files --phases=create --repetitions=2 >/dev/null & cbk=$!; '
              'for i in $(seq 600); do [ "$(find "$FULL" -name "file.*" | wc -l)" = 20 ] && break; sleep 0.05; done; '
              'timeout 90 "$PY" -c "$HOLD" "$FULL" & holder=$!; '
              'wait $cbk; rc=$?; echo "rc=$rc"; kill $holder; ls -A "$FULL"; '
              '[ $rc = 1 ] || { echo "after $i looks: $(find "$FULL" | head -50)"; df -i "$FULL"; } >&2')
    r = run_on_full_disk(tmp_path, script, env=dict(os.environ, HOLD=_HOLD_FILES))
    assert r.stdout == "rc=1\nlisting\n", (r.stdout, r.stderr)
    (line,) = [ln for ln in r.stderr.splitlines() if '"type":"error"' in ln]
    assert "No space left on device" in json.loads(line)["message"], line


def test_mdtest_values_it_would_misread_are_refused_and_read_ones_are_noted():
    from clusterbench.errors import BadInput
    from clusterbench.tools.mdtest_args import translate

    with pytest.raises(BadInput) as e:
        translate(shlex.split("mdtest -n 1.5k -z 1x"))
    assert e.value.message == ("mdtest line refused: -n 1.5k: mdtest would read 1 and ignore '.5k'; give a whole "
                               "number with an optional k, m, g, t or p (binary multiples); -z 1x: mdtest would read "
                               "1 and ignore 'x'; give a whole number with an optional k, m, g, t or p (binary "
                               "multiples)")
    notes = translate(shlex.split("mdtest -n 1kb --random-seed=-5")).notes
    assert "-n 1kb read as 1024 items: mdtest takes the letter after the number as a binary multiple and reads " \
           "nothing after it" in notes
    assert "--random-seed=-5: stat and read stay in order, as mdtest keeps them for a seed below 1 without -R" in notes


def test_mdtest_4_1_options_are_refused_for_what_they_do_not_as_unknown():
    from clusterbench.errors import BadInput
    from clusterbench.tools.mdtest_args import translate

    with pytest.raises(BadInput) as e:
        translate(shlex.split("mdtest -n 5 --savePerOpDataCSV=ops --GPUid=1 --gpuDirect"))
    assert e.value.message == ("mdtest line refused: --savePerOpDataCSV: per-operation CSV files are not written; "
                               "export the run instead; --GPUid: GPU buffers are not implemented; --gpuDirect: GPU "
                               "buffers are not implemented")


def test_mdtest_i_0_is_refused_as_clusterbench_ior_refuses_it_not_run_once():
    """mdtest -i 0 runs no iteration (and prints a NaN summary); it silently ran one here."""
    from clusterbench.errors import BadInput
    from clusterbench.tools.mdtest_args import translate

    with pytest.raises(BadInput) as e:
        translate(shlex.split("mdtest -n 5 -i 0"))
    assert e.value.message == "mdtest line refused: -i 0: expected a count of at least 1"
