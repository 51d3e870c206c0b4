"""clusterbench import of mdtest: the item counts and tree shape of each
phase, LLNL's mdtest 1.7 to 1.9.3, and the runs whose item count is not
the one line mdtest prints (later iterations' directories, LLNL's -I -L).
Real outputs in tests/fixtures/import (tests/fixtures/README says how
each was made)."""
from __future__ import annotations

import pytest

from conftest import REPO, store_rows

from clusterbench.importers.import_runs import parse_file

FIXTURES = REPO / "tests" / "fixtures" / "import"


def phases(name: str, run_index: int = 0) -> dict:
    run = parse_file(str(FIXTURES / name))[run_index]
    (step,) = run.steps
    return {s.phase: s for s in step.samples}


@pytest.mark.parametrize("name, items_per_rank, tree_dirs, items_per_dir, iterations", [
    ("mdtest-4.0.0-tree-items-per-dir-times.txt", 35, 7, 5, 2),     # -I 5 -z 2 -b 2 -i 2 -P
    ("mdtest-3.2.1-files-only-tree.txt", 16, 4, 4, 2),              # -F -I 4 -z 1 -b 3 -i 2
    ("mdtest-4.1.0+dev-files-only-leaf.txt", 12, 7, 3, 1),          # -F -I 3 -z 2 -b 2 -L: 4 leaves
    ("mdtest-3.3.0-files-only-unique-iterations.txt", 20, 1, 20, 3),  # -F -n 20 -u -i 3
    ("mdtest-1.9.3-llnl-iterations.txt", 20, 1, 20, 3),             # LLNL's own build, -n 20 -i 3
    ("mdtest-1.8.4-llnl-iterations.txt", 20, 1, 20, 2),             # LLNL's, "on 1 nodes", -n 20 -i 2
    ("mdtest-4.0.0.txt", 50, 1, 50, 2),                             # -n 50 -i 2
    ("mdtest-4.1.0+dev-files-only-tree-times.txt", 294, 7, 42, 2),  # -F -n 300 -z 2 -b 2: 42 in each of 7
    ("mdtest-4.0.0-files-only-tree-leaf-times.txt", 300, 7, 75, 2),  # -F -n 300 -z 2 -b 2 -L: 4 leaves
    ("mdtest-3.3.0-dirs-only-tree-times.txt", 300, 4, 75, 2),       # -D -n 300 -z 1 -b 3
])
def test_mdtest_item_counts_and_tree_shape_are_in_each_phase_record(name, items_per_rank, tree_dirs,
                                                                    items_per_dir, iterations):
    by_phase = phases(name)
    for phase, s in by_phase.items():
        if phase.startswith("tree-"):   # its rate counts the tree's directories
            assert (s.record["tree_dirs"], "items_per_rank" in s.record) == (tree_dirs, False), phase
        else:
            assert (s.record["items_per_rank"], s.record["tree_dirs"], s.record["items_per_dir"]) == \
                (items_per_rank, tree_dirs, items_per_dir), phase
        assert s.record["iterations"] == iterations
    if name.endswith("-times.txt"):   # the counts check the time table (-P), which is kept
        assert all("seconds" in s.record for s in by_phase.values())
    if name == "mdtest-4.0.0-tree-items-per-dir-times.txt":
        assert by_phase["dir-create"].record["min_seconds"] == 0.018


def test_llnl_mdtest_with_items_per_dir_and_leaf_only_rates_are_of_the_items_it_made():
    # -F -I 3 -z 2 -b 2 -L on 2 ranks: LLNL's mdtest 1.9.3 prints "2 tasks, 42 files" (3 in each of the 7
    # tree directories) and its rates of 42, but made 24 (3 in each of the 4 leaves; counted after -C)
    old = phases("mdtest-1.9.3-llnl-files-only-leaf.txt")
    assert old["file-create"].value == 3073.462 == round(5378.559 * 4 / 7, 3)
    assert old["file-create"].record["max_items_per_s"] == 3073.462
    assert old["file-stat"].record["items_per_rank"] == 12
    assert old["tree-create"].value == 2887.553   # the tree is whole: its 7 directories over the time
    (run,) = parse_file(str(FIXTURES / "mdtest-1.9.3-llnl-files-only-leaf.txt"))
    assert any("only in the 4 leaves (24 items)" in n and "scaled by 4/7" in n for n in run.notes)
    # IOR's mdtest (here master's, 4.1.0+dev) counts the leaves: "2 tasks, 24 files", rates as printed
    new = phases("mdtest-4.1.0+dev-files-only-leaf.txt")
    assert new["file-create"].value == 21431.402 and new["file-create"].record["items_per_rank"] == 12


def test_llnl_mdtest_1_7_and_1_8_are_read():
    # "... on 1 nodes" (1.9 prints "node(s)"); LLNL's 1.7.4 calls itself 1.7.3 and has no file read
    # and no tree phases
    for name, version, count in (("mdtest-1.8.4-llnl-iterations.txt", "1.8.4", 9),
                                 ("mdtest-1.7.4-llnl-iterations.txt", "1.7.3", 6)):
        (run,) = parse_file(str(FIXTURES / name))
        (step,) = run.steps
        assert (run.version, step.ranks, step.kernel, len(step.samples)) == (version, 2, "metadata", count)
        assert {s.phase: s for s in step.samples}["file-stat"].record["iterations"] == 2
    assert phases("mdtest-1.8.4-llnl-iterations.txt")["dir-stat"].value == 1041259.138


def test_mdtest_directories_of_later_iterations_do_the_stonewall_count():
    # IOR 4.0.0, -n 200 -W 1 -w 1048576 -y -i 2 -P with directories: the first iteration's hit (most 133)
    # became mdtest's item count, so the second iteration made 266 directories, not 400 (0.398 s x
    # 667.567/s): the time table holds each phase's seconds and is kept
    by_phase = phases("mdtest-4.0.0-stonewall-directories-iterations.txt")
    create = by_phase["dir-create"].record
    assert (create["min_seconds"], create["max_seconds"]) == (0.398, 0.665)
    assert "items_per_rank" not in create   # 200, then 133: not one count
    (run,) = parse_file(str(FIXTURES / "mdtest-4.0.0-stonewall-directories-iterations.txt"))
    assert not any("time table" in n for n in run.notes)


def test_mdtest_status_file_with_directories_counts_each_kind_of_item():
    # two runs without -F in one log: -C -W 1 -x wrote 195 (its hit's most); -T -E -r -x read it: the
    # directory phases did -n's 200 per rank, the file phases the file's 195
    writer = phases("mdtest-4.1.0+dev-stonewall-file-with-directories.txt", 0)
    reader = phases("mdtest-4.1.0+dev-stonewall-file-with-directories.txt", 1)
    assert writer["dir-create"].record["items_per_rank"] == 200
    assert writer["file-create"].record["items_per_rank"] == 195
    assert reader["dir-stat"].record["items_per_rank"] == 200 and reader["dir-remove"].record["seconds"] == 0.927
    assert (reader["file-stat"].record["items_per_rank"], reader["file-stat"].record["stonewall_status_file_items"]) \
        == (195, 390)


def test_import_of_llnl_mdtest_1_8_stores_it_and_a_cut_one_is_refused_in_one_line(cli, store_url, tmp_path):
    good = FIXTURES / "mdtest-1.8.4-llnl-iterations.txt"
    assert cli("import", str(good)).status == 0
    assert store_rows(store_url, "select count(*) from runs") == [(1,)]
    cut = tmp_path / "mdtest.out"
    cut.write_text(good.read_text().split("SUMMARY")[0])   # the job was killed before mdtest's table
    bad = cli("import", str(cut))
    assert bad.status == 2 and bad.stderr.strip().count("\n") == 0 and "no SUMMARY table" in bad.stderr
    assert store_rows(store_url, "select count(*) from runs") == [(1,)]


def test_mdtest_status_file_count_equal_to_the_line_is_not_called_another():
    # IOR 4.0.0, the same two runs: the limit did not stop -C's creation (no "Continue stonewall hit"), so
    # it wrote -n's 200, and the reading run did the 400 its line says
    reader = parse_file(str(FIXTURES / "mdtest-4.0.0-stonewall-file-not-reached-with-directories.txt"))[1]
    (note,) = [n for n in reader.notes if n.startswith("stonewall status file")]
    assert note.endswith("its file phases did 400 items per iteration, the count of the line "
                         "'2 tasks, 400 files/directories'")
    assert {s.phase: s for s in reader.steps[0].samples}["file-stat"].record["items_per_rank"] == 200


def test_mdtest_rank_statistics_columns_are_each_ranks_own_rates():
    # --showRankStatistics (IOR 4.0.0 and later) puts the max, min and mean of every rank's own rate before
    # the usual four columns, in both tables; the tree rows' are rank 0's alone (the same figures)
    for name, create in (("mdtest-4.0.0-rank-statistics.txt", (1602.247, 964.709, 795.026, 848.486)),
                         ("mdtest-4.1.0+dev-rank-statistics.txt", (1321.279, 901.21, 580.087, 751.037))):
        by_phase = phases(name)
        r = by_phase["dir-create"].record
        assert (by_phase["dir-create"].value, r["rank_items_per_s_max"], r["rank_items_per_s_min"],
                r["rank_items_per_s_mean"]) == create
        assert "seconds" in r and r["items_per_rank"] == 50   # the time table's iteration columns still check
        assert len(by_phase) == 10 and "rank_items_per_s_max" not in by_phase["tree-create"].record


def test_mdtest_time_table_alone_is_refused_in_one_line(cli, store_url):
    # mdtest -Z prints only "SUMMARY time (in ms/op)": no rates to store
    assert cli("import", str(FIXTURES / "mdtest-4.1.0+dev.txt")).status == 0
    bad = cli("import", str(FIXTURES / "mdtest-4.1.0+dev-time-table-only.txt"))
    assert bad.status == 2 and bad.stderr.strip().count("\n") == 0
    assert "only the SUMMARY time table (mdtest -Z)" in bad.stderr
    assert store_rows(store_url, "select count(*) from runs") == [(1,)]


@pytest.mark.parametrize("exists_here", [True, False])
def test_an_imported_mdtest_steps_directory_is_the_runs_not_what_this_machine_has_at_that_path(tmp_path, exists_here):
    """-d /tmp/mdt-work/d-1.8.4 was stored as /tmp/mdt-work where that path
    was missing on the importing machine and as itself where it existed:
    the same file gave two steps that differ in where they ran."""
    workdir = tmp_path / "mdtest-work"
    if exists_here:
        workdir.mkdir()
    text = (FIXTURES / "mdtest-1.8.4-llnl-iterations.txt").read_text()
    assert "-d /tmp/mdt-work/d-1.8.4" in text
    copy = tmp_path / "mdtest.txt"
    copy.write_text(text.replace("-d /tmp/mdt-work/d-1.8.4", f"-d {workdir}/"))
    (run,) = parse_file(str(copy))
    (step,) = run.steps
    assert step.kernel == "metadata" and step.params["dir"] == str(workdir)
