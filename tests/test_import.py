"""clusterbench import: real output files of IOR, mdtest, fio, iperf3, OSU,
IMB, Himeno and STREAM (tests/fixtures/import, made as tests/fixtures/README says) read
into runs with the kernels' phase/mode/unit vocabulary, stored whole or
not at all, and shown as imported."""
from __future__ import annotations

import datetime as dt
import json
import re
import shutil
from pathlib import Path

import pytest

from conftest import REPO, store_rows

from clusterbench import importers
from clusterbench.analysis.stats import direction
from clusterbench.errors import BadInput
from clusterbench.importers import ImportedRun, mdtest_text
from clusterbench.importers.import_runs import Overrides, parse_file, store_runs
from clusterbench.store import Store

FIXTURES = REPO / "tests" / "fixtures" / "import"
ALL = sorted(p.name for p in FIXTURES.iterdir() if p.is_file())
FAILED_RUNS = {"ior-3.2.1-failed-run.json",    # IOR aborted before any result: refused
               "ior-csv-3.3.0-no-results.csv",  # IOR 3.3.0 writes no results in CSV (its CSV branches are empty)
               "mdtest-4.1.0+dev-time-table-only.txt",  # mdtest -Z prints no rates
               "iperf3-3.20-json-stream-error.json",    # the client could not connect: iperf3's error alone
               "iperf3-3.20-error.json", "iperf3-3.12-connect-refused.txt", "iperf3-3.12-connect-refused-verbose.txt",
               # STREAM's check failed; Himeno's Gosa 0 from the first sweeps: not the benchmark's arithmetic
               "stream-5.10-failed-validation.txt", "stream-5.9-copy-failed-validation.txt",
               "himeno-mpi-dynamic-XS-gosa-zero.txt",
               # dd: error writing '/dev/full': its figures cover what it did before; netperf: no netserver answered
               "dd-9.1-no-space.txt", "netperf-2.7.1-no-server.txt",
               "fio-1.58-terse2-randrw.txt"}            # fio 1.58's terse lines hold no IOPS


def one(name: str, fmt: str = "auto"):
    (run,) = parse_file(str(FIXTURES / name), fmt)
    return run


def figures(run) -> list[tuple]:
    return [(st.kernel, s.phase, s.condition, s.unit, s.repetition, s.size_bytes, s.value)
            for st in run.steps for s in st.samples]


# Outputs that print no version of their tool: IOR's CSV, iperf3's text without -V, iperf 2's output, dd,
# netperf (but transcripts holding `iperf -v`, `dd --version`, `netperf -V`), fio's terse version 2
NO_VERSION_PRINTED = {n for n in ALL if (n.startswith(("ior-csv", "iperf-", "dd-", "netperf-")) and "-version-" not in n)
                      or "-terse2-" in n or (n.startswith("iperf3") and n.endswith(".txt") and "verbose" not in n)}
# formats none of whose outputs print the tool's version (their fixtures' versions are in tests/fixtures/README)
VERSION_NEVER_PRINTED = {"ior-csv", "iperf2", "dd", "netperf"}


def test_at_least_thirty_real_files_every_format_at_two_versions():
    versions: dict[str, set[str]] = {}
    for name in ALL:
        if name in FAILED_RUNS or "damaged" in name:
            continue
        for run in parse_file(str(FIXTURES / name)):
            versions.setdefault(importers.detect((FIXTURES / name).read_text()), set()).add(run.version)
    assert sum(1 for n in ALL if "damaged" not in n) >= 30
    assert set(versions) == set(importers.names())
    # IOR's CSV names no version (only IOR 4.0 writes its result rows), nor do iperf 2 (2.0.6 and 2.1.8 here), dd and netperf
    assert all(len(v) >= 2 for f, v in versions.items() if f not in VERSION_NEVER_PRINTED), versions


@pytest.mark.parametrize("name", [n for n in ALL if n not in FAILED_RUNS])
def test_every_fixture_imports_with_its_tool_version_and_units(name):
    for run in parse_file(str(FIXTURES / name)):
        assert run.tool in ("IOR", "mdtest", "fio", "iperf3", "iperf", "dd", "netperf", "OSU", "IMB", "Himeno", "STREAM")
        assert run.version or name in NO_VERSION_PRINTED
        assert run.sample_count > 0
        for st in run.steps:
            for s in st.samples:
                assert s.unit in ("MiB/s", "IOPS", "items/s", "Gbit/s", "us", "MFLOPS", "transactions/s"), (name, s)
                # compare's faster/slower comes from the unit (mdtest's items/s had none)
                assert direction(s.unit) != 0, (name, s.unit)
                assert s.value is not None and s.value >= 0


def test_detection_reads_the_content_not_the_name(tmp_path):
    for name, fmt in (("ior-4.0.0-shared.json", "ior-json"), ("ior-3.3.0-posix-fpp.txt", "ior"),
                      ("mdtest-3.3.0.txt", "mdtest"), ("fio-3.33-randread.json", "fio"),
                      ("fio-3.33-randread.txt", "fio"), ("fio-3.33-terse4-randrw.txt", "fio"), ("iperf3-3.12-tcp.json", "iperf3"),
                      ("osu-7.4-bw.txt", "osu"), ("imb-2021.3-mpi1.txt", "imb"), ("imb-2017u2-mpi1.txt", "imb"),
                      ("mdtest-1.9.3-llnl.txt", "mdtest"), ("iperf3-3.12-tcp.txt", "iperf3"),
                      ("ior-csv-hermes-checkpoint.csv", "ior-csv"), ("himeno-xpa-XS.txt", "himeno"),
                      ("himeno-mpi-static-XS-1x1x2.txt", "himeno"), ("himeno-f90-XS.txt", "himeno"), ("himeno-f90-mpi-XS-2x1x1.txt", "himeno"),
                      ("stream-5.10-omp2.txt", "stream"), ("stream-f-5.6-omp2.txt", "stream")):
        misleading = tmp_path / "results.csv"
        shutil.copy(FIXTURES / name, misleading)
        assert importers.detect(misleading.read_text()) == fmt, name


def test_ior_text_rows_become_pario_samples_of_the_same_line():
    run = one("ior-3.3.0-posix-fpp.txt")
    assert (run.tool, run.version, run.hosts) == ("IOR", "3.3.0", ["vm"])
    assert run.started == dt.datetime(2026, 11, 23, 21, 20, 49, tzinfo=dt.timezone.utc)
    (st,) = run.steps
    assert st.kernel == "pario" and st.ranks == 2 and st.ranks_per_node is None
    assert st.params["strategy"] == "split" and st.params["fsync"] == "end" and st.params["block-size"] == "4m"
    assert figures(run) == [("pario", "write", "fsync", "MiB/s", 0, None, 488.44),
                            ("pario", "read", "unknown", "MiB/s", 0, None, 15200.0),
                            ("pario", "write", "fsync", "MiB/s", 1, None, 400.54),
                            ("pario", "read", "unknown", "MiB/s", 1, None, 15900.0)]
    read = st.samples[1]
    assert read.record["iops"] == 15557.0 and read.record["total_s"] == 0.000526
    assert any("does not empty the page cache" in w for w in read.warnings)
    # IOR 3.2 prints no IOPS/latency columns: found by heading, not place
    old = one("ior-3.2.1-posix-fpp.txt")
    assert figures(old)[0] == ("pario", "write", "fsync", "MiB/s", 0, None, 594.0)
    assert "iops" not in old.steps[0].samples[0].record


def test_ior_3_0_text_and_its_older_headings_keep_every_repetition():
    """IOR 3.0 and 3.1 print `Command line used:`, `Test 0 started:`, a `Summary:` block of
    `key = value` options and the results table with no `Results:` line before it. Read with
    3.2's headings only, the file lost its rows (the summary's mean became one sample) and its
    command line (an ior step, not the pario step of the same line)."""
    run = one("ior-3.0.1-posix-fpp.txt")
    assert (run.tool, run.version, run.hosts) == ("IOR", "3.0.1", ["vm"])
    assert run.command.endswith("ior -a POSIX -b 4m -t 1m -F -C -e -i 2 -o /tmp/pi/iorrun/t")
    assert (run.started, run.finished) == (dt.datetime(2026, 12, 7, 12, 13, 40, tzinfo=dt.timezone.utc),) * 2
    (st,) = run.steps
    assert st.kernel == "pario" and st.ranks == 2 and st.ranks_per_node is None
    assert st.params["strategy"] == "split" and st.params["fsync"] == "end" and st.params["block-size"] == "4m"
    assert figures(run) == [("pario", "write", "fsync", "MiB/s", 0, None, 529.80),
                            ("pario", "read", "unknown", "MiB/s", 0, None, 13609.0),
                            ("pario", "write", "fsync", "MiB/s", 1, None, 466.79),
                            ("pario", "read", "unknown", "MiB/s", 1, None, 40799.0)]
    assert st.samples[0].record["transfer_s"] == 0.014236 and run.notes == []
    # without its command line, the options block gives the ranks: "clients = 2 (4 per node)"
    text = (FIXTURES / "ior-3.0.1-posix-fpp.txt").read_text()
    text = re.sub(r"Command line used:.*\n", "", text).replace("2 (2 per node)", "8 (4 per node)")
    (run,) = importers.get("ior").parse(text)
    (st,) = run.steps
    assert (st.kernel, st.ranks, st.ranks_per_node, st.params["api"]) == ("ior", 8, 4, "POSIX")
    assert [s.repetition for s in st.samples] == [0, 0, 1, 1]


def test_ior_2_10_text_takes_its_summary_table_not_refused():
    """IOR 2.10.3 prints no row per repetition, only "Operation  Max (MiB)  Min (MiB)  Mean (MiB) ...
    Mean (s)" under its "Summary:" options block, and dates "Run began:"/"Run finished:": a real
    2.10.3 file was refused as holding no Results row and no Summary row."""
    run = one("ior-2.10.3-posix-fpp.txt")
    assert (run.version, run.hosts) == ("2.10.3", ["vm"])
    assert (run.started, run.finished) == (dt.datetime(2026, 12, 7, 12, 38, 41, tzinfo=dt.timezone.utc),) * 2
    (st,) = run.steps
    assert (st.kernel, st.ranks, st.params["fsync"], st.params["block-size"]) == ("pario", 2, "end", "4m")
    assert figures(run) == [("pario", "write", "fsync", "MiB/s", 0, None, 806.80),
                            ("pario", "read", "unknown", "MiB/s", 0, None, 18987.60)]
    write = st.samples[0]
    assert (write.record["max_mib_per_s"], write.record["min_mib_per_s"], write.record["repetitions"],
            write.seconds) == (965.60, 648.00, 2, 0.01032)
    assert any("the summary's mean over repetitions taken as one sample" in n for n in run.notes)


def test_ior_script_of_two_tests_is_two_steps_and_says_why_once():
    """`ior -f SCRIPT` (IOR 3.0.1, two RUNs): each test is an ior step with the parameters the output
    shows. The note saying why was written once per test: twice, word for word, in one run."""
    run = one("ior-3.0.1-script-two-tests.txt")
    assert [(st.kernel, st.params["blocksize"], [s.value for s in st.samples]) for st in run.steps] == [
        ("ior", "1 MiB", [1446.78, 2026.23]), ("ior", "2 MiB", [2666.28, 3351.31])]
    assert [n for n in run.notes if "script or hints file" in n] == [
        "the command line names a script or hints file, which the output does not hold: "
        "stored as an ior step with the parameters the output shows"]


def test_ior_json_versions_and_their_real_defects():
    new = one("ior-4.0.0-shared.json")
    assert figures(new) == [("pario", "write", "buffered", "MiB/s", 0, None, 2124.9086),
                            ("pario", "read", "unknown", "MiB/s", 0, None, 12501.6513)]
    assert new.notes == []
    # IOR 3.3 writes segmentCount/blockSize/transferSize twice in its summary
    mid = one("ior-3.3.0-shared.json")
    assert figures(mid)[0][-1] == 3551.1726 and any("'blockSize' written twice" in n for n in mid.notes)
    # IOR 3.2: banner line before the document, a stray '[' before "Options", an unmatched ']',
    # empty repetition lists, two closing braces too many
    old = one("ior-3.2.1-shared.json")
    assert old.version == "3.2.1"
    assert [(f[1], f[4], f[6]) for f in figures(old)] == [("write", 0, 930.6814), ("read", 0, 858.3146),
                                                          ("write", 1, 531.6716), ("read", 1, 3608.5874)]
    assert {"damaged JSON: a stray '[' before a member was dropped", "damaged JSON: an unmatched ']' was dropped",
            "damaged JSON: text after the JSON document was ignored"} <= set(old.notes)


@pytest.mark.parametrize("name, note", [
    ("ior-4.0.0-damaged-strings.json", None),
    ("ior-4.0.0-damaged-commas.json", "missing commas between members were supplied"),
    ("ior-4.0.0-damaged-truncated.json", "the file is cut short"),
    ("ior-4.0.0-damaged-truncated-results.json", "the file is cut short"),
])
def test_hand_damaged_ior_json_keeps_every_figure_and_says_what_was_repaired(name, note):
    run = one(name)
    assert [f[-1] for f in figures(run)] == [2124.9086, 12501.6513]
    assert (note is None and run.notes == []) or any(note in n for n in run.notes)


def test_duplicate_keys_with_different_values_say_both():
    run = one("ior-3.3.0-damaged-duplicates.json")
    assert figures(run)[0][-1] == 1.0
    assert any("'bwMiB' written twice with different values (1.0, 3551.1726)" in n for n in run.notes)


def test_ior_text_without_results_rows_takes_the_summary_mean():
    text = (FIXTURES / "ior-4.0.0-posix-fpp.txt").read_text()
    kept = [line for line in text.splitlines()   # the Results rows (11 columns) left out, the Summary kept
            if not (line.startswith(("write ", "read ", "remove ")) and len(line.split()) <= 11)]
    (run,) = importers.get("ior").parse("\n".join(kept))
    summary = {line.split()[0]: float(line.split()[3]) for line in text.splitlines()
               if line.startswith(("write  ", "read  ")) and len(line.split()) > 20}
    assert [(s.phase, s.value) for s in run.steps[0].samples] == [("write", summary["write"]),
                                                                  ("read", summary["read"])]
    assert any("summary's mean" in n.lower() for n in run.notes)


def test_a_run_ior_aborted_is_refused_in_one_line():
    with pytest.raises(BadInput) as e:
        parse_file(str(FIXTURES / "ior-3.2.1-failed-run.json"))
    assert "no Results row" in e.value.message and "\n" not in e.value.message


def test_mdtest_summary_rows_become_metadata_phases():
    run = one("mdtest-4.0.0.txt")
    (st,) = run.steps
    assert (run.version, st.kernel, st.ranks, st.params["items"]) == ("4.0.0", "metadata", 2, "50")
    by_phase = {s.phase: s for s in st.samples}
    assert by_phase["dir-create"].value == 1528.119 and by_phase["dir-create"].unit == "items/s"
    assert by_phase["dir-create"].record["max_items_per_s"] == 1586.018
    assert by_phase["dir-create"].record["iterations"] == 2
    assert set(by_phase) == {"dir-create", "dir-stat", "dir-rename", "dir-remove", "file-create", "file-stat",
                             "file-read", "file-remove", "tree-create", "tree-remove"}
    old = one("mdtest-3.2.1.txt")   # mdtest 1.9.3's "Directory creation:" rows
    assert old.version == "1.9.3" and {s.phase: s.value for s in old.steps[0].samples}["file-stat"] == 876249.236


def test_mdtest_after_4_0_rate_table_in_ops_per_sec_is_read():
    # IOR's master after 4.0.0 heads its tables "SUMMARY rate (in ops/sec):"; it was refused "no SUMMARY table"
    run = one("mdtest-4.1.0+dev.txt")
    (st,) = run.steps
    assert (run.version, st.kernel, st.ranks, st.params["items"]) == ("4.1.0+dev", "metadata", 2, "50")
    by_phase = {s.phase: s for s in st.samples}
    assert len(by_phase) == 10 and {s.unit for s in st.samples} == {"items/s"}
    # the file's "Directory removal  480.730  356.296  418.513  87.988" and "File stat" rows
    assert by_phase["dir-remove"].value == 418.513
    assert (by_phase["dir-remove"].record["max_items_per_s"], by_phase["dir-remove"].record["min_items_per_s"],
            by_phase["dir-remove"].record["stddev_items_per_s"]) == (480.730, 356.296, 87.988)
    assert by_phase["file-stat"].value == 277860.630 and by_phase["tree-remove"].value == 208.979
    assert all(s.record["iterations"] == 2 and "seconds" not in s.record for s in st.samples)


def test_mdtest_time_table_headed_ms_per_op_holds_each_phases_seconds():
    # "SUMMARY time (in ms/op)" (mdtest -P since IOR commit dcc4e40) prints the phase's seconds: its
    # "Directory removal  0.182  0.168  0.175" is 100 items over the rate table's 548.233 and 595.859 ops/s
    run = one("mdtest-4.1.0+dev-rate-and-time.txt")
    by_phase = {s.phase: s for s in run.steps[0].samples}
    remove = by_phase["dir-remove"]
    assert remove.value == 572.046 and remove.unit == "items/s"
    assert (remove.record["seconds"], remove.record["max_seconds"], remove.record["min_seconds"]) == (0.175, 0.182,
                                                                                                       0.168)
    assert round(100 / remove.record["min_items_per_s"], 3) == remove.record["max_seconds"]
    assert by_phase["file-create"].record["seconds"] == 0.012 and by_phase["tree-remove"].record["seconds"] == 0.004
    assert not any("time table" in n for n in run.notes)


def test_mdtest_time_table_that_is_not_seconds_per_phase_is_left_out_with_a_note(tmp_path):
    # Were a later mdtest to print what its heading says (ms per operation: seconds * 1000 / 100 items),
    # the figures would not be the phase's seconds: the table is left out, the rates kept
    text = (FIXTURES / "mdtest-4.1.0+dev-rate-and-time.txt").read_text()
    head, table = text.split("SUMMARY time")
    scaled = re.sub(r"\d+\.\d{3}", lambda m: f"{float(m.group()) * 10:.3f}", table)
    (tmp_path / "md.txt").write_text(head + "SUMMARY time" + scaled)
    run = one_file(tmp_path / "md.txt")
    assert all("seconds" not in s.record for s in run.steps[0].samples)
    assert {s.phase: s.value for s in run.steps[0].samples}["dir-remove"] == 572.046
    assert any("SUMMARY time table does not read as each phase's seconds" in n for n in run.notes)


def test_mdtest_stonewall_keeps_the_time_table_and_what_the_ranks_created_at_the_limit():
    # mdtest -W 1 -F -i 3 -P: the limit stopped file creation in each iteration ("Continue stonewall hit
    # min: 280 max: 362 avg: 321.0"), the ranks went on to 362 each: the file phases did 724 items, not the
    # 200000 of "2 tasks, 200000 files", so the time table, checked against 200000, was left out
    run = one("mdtest-4.1.0+dev-stonewall.txt")
    by_phase = {s.phase: s for s in run.steps[0].samples}
    create = by_phase["file-create"]
    assert create.value == 667.148 and create.unit == "items/s"
    assert (create.record["seconds"], create.record["max_seconds"], create.record["min_seconds"]) == (1.164, 1.344,
                                                                                                       1.031)
    assert round(724 / create.record["max_seconds"], 1) == round(create.record["min_items_per_s"], 1)
    assert by_phase["file-stat"].record["seconds"] == 0.017
    assert {k: v for k, v in create.record.items() if k.startswith("stonewall")} == {
        "stonewall_limit_seconds": 1.0, "stonewall_stopped_iterations": 3, "stonewall_items_done": [724, 734, 838],
        "stonewall_rank_items_least": [280, 365, 395], "stonewall_rank_items_most": [362, 367, 419],
        "stonewall_rank_items_mean": [321.0, 366.0, 407.0]}
    assert not any("time table" in n for n in run.notes)
    (note,) = [n for n in run.notes if n.startswith("stonewall (-W)")]
    assert "stopped file creation in 3 of 3 iteration(s)" in note and "did 724, 734, 838 items" in note
    assert "not the count of the line '2 tasks, 200000 files'" in note
    # 4.0.0 prints the same lines without a time table; 3.3.0 adds a "File create (stonewall)" row to each
    # table: the items created before the limit over the time to it (1394 items in 1.990 s), summed over both
    older = one("mdtest-4.0.0-stonewall.txt").steps[0].samples
    assert {s.phase: s.record.get("stonewall_items_done") for s in older} == {
        "file-create": [562, 960], "file-stat": None, "file-read": None, "file-remove": None, "tree-create": None,
        "tree-remove": None}
    oldest = {s.phase: s for s in one("mdtest-3.3.0-stonewall.txt").steps[0].samples}
    assert (oldest["file-create"].record["stonewall_items_per_s"],
            oldest["file-create"].record["stonewall_seconds_total"]) == (700.648, 1.990)
    assert oldest["file-create"].record["seconds"] == 1.223 and oldest["file-create"].value == 616.321
    # IOR 3.2.1's mdtest 1.9.3 prints the same lines (its "Command line used" quotes with ")
    first = one("mdtest-3.2.1-stonewall.txt")
    (create,) = [s for s in first.steps[0].samples if s.phase == "file-create"]
    assert (first.version, create.record["stonewall_items_done"], create.record["stonewall_limit_seconds"]) == (
        "1.9.3", [5768, 2726], 1.0)
    # -v adds per-iteration lines ("File creation (stonewall):  1.047 sec,  0.000 ops/sec", its ops/sec
    # mdtest's item sum, 0 on this rank): not read as rows
    verbose = one("mdtest-4.1.0+dev-stonewall-verbose.txt")
    by_phase = {s.phase: s for s in verbose.steps[0].samples}
    assert len(by_phase) == 6 and by_phase["file-create"].value == 284.913
    assert by_phase["file-create"].record["stonewall_items_done"] == [356, 334]
    # -W 5 on 50 files: never stopped; the limit is kept, 3.3.0's row (printed for every -W run) too
    for name, fields in (("mdtest-4.1.0+dev-stonewall-not-reached.txt", {}),
                         ("mdtest-3.3.0-stonewall-not-reached.txt", {"stonewall_items_per_s": 3631.118})):
        run = one(name)
        (create,) = [s for s in run.steps[0].samples if s.phase == "file-create"]
        assert {k: v for k, v in create.record.items() if k.startswith("stonewall")} == {
            "stonewall_limit_seconds": 5.0, "stonewall_stopped_iterations": 0, **fields}
        assert not any(n.startswith("stonewall") for n in run.notes)


def test_mdtest_stonewall_status_file_counts_are_what_the_reading_run_did():
    # -W 1 -C -x sw then -T -E -r -x sw, appended to one log: the first run wrote 734 (its "Continue stonewall
    # hit min: 632 max: 734"), the second read it and did 734 x 2 = 1468 items per phase, not the 200000 of
    # "2 tasks, 200000 files": its time table reads as seconds of those (1468 / 854934.5/s = 0.0017 s,
    # printed 0.002), where checked against 200000 it was left out
    create, later = parse_file(str(FIXTURES / "mdtest-4.1.0+dev-stonewall-file-two-runs.txt"))
    assert create.steps[0].samples[0].record["stonewall_status_file"] == "/tmp/mdx-work/sw-2.txt"
    assert create.steps[0].samples[0].record["stonewall_items_done"] == [1468]
    by_phase = {s.phase: s for s in later.steps[0].samples}
    assert set(by_phase) == {"file-stat", "file-read", "file-remove", "tree-remove"}
    assert (by_phase["file-stat"].value, by_phase["file-read"].value, by_phase["file-remove"].value) == (
        854934.5, 583237.499, 232497.764)
    assert (by_phase["file-stat"].record["seconds"], by_phase["file-remove"].record["seconds"]) == (0.002, 0.006)
    assert round(1468 / 232497.764, 3) == 0.006
    for phase in ("file-stat", "file-read", "file-remove"):
        assert {k: v for k, v in by_phase[phase].record.items() if k.startswith("stonewall")} == {
            "stonewall_status_file": "/tmp/mdx-work/sw-2.txt", "stonewall_status_file_items_per_rank": 734,
            "stonewall_status_file_items": 1468}
    assert not any("time table" in n for n in later.notes)
    (note,) = [n for n in later.notes if n.startswith("stonewall status file (-x /tmp/mdx-work/sw-2.txt)")]
    assert "read 734 items per rank from it (what the run at line 1 of this log wrote to it)" in note
    assert "did 1468 items per iteration, not the count of the line '2 tasks, 200000 files'" in note
    # 4.0.0 with -v prints what it read ("Read stonewall status; items: 590"; its -C run wrote 590)
    verbose = {s.phase: s for s in one("mdtest-4.0.0-stonewall-file-read-verbose.txt").steps[0].samples}
    assert verbose["file-stat"].value == 818333.122
    assert verbose["file-remove"].record["stonewall_status_file_items"] == 1180
    # alone, without -v, the count read is in no line: the rates stand, no count is made up; 3.3.0's time
    # table (-P: 0.002 s at 991818.810/s is ~1983 items, its -C run wrote 754 x 2 = 1508) cannot be checked
    for name, stat_rate in (("mdtest-4.0.0-stonewall-file-read.txt", 861811.207),
                            ("mdtest-3.3.0-stonewall-file-read.txt", 991632.642)):
        run = one(name)
        by_phase = {s.phase: s for s in run.steps[0].samples}
        assert by_phase["file-stat"].value == stat_rate
        assert "stonewall_status_file_items" not in by_phase["file-stat"].record
        assert all("seconds" not in s.record for s in run.steps[0].samples)
        assert any(n.startswith("stonewall status file (-x ") and "their item count is unknown" in n
                   for n in run.notes)
    assert any(n.startswith("the SUMMARY time table cannot be checked against the file phases' item count")
               for n in one("mdtest-3.3.0-stonewall-file-read.txt").notes)
    # a file mdtest could not read ("WARNING: Could not read stonewall status file"): -n's 100 stand
    missing = one("mdtest-4.1.0+dev-stonewall-file-missing.txt")
    assert {s.phase: s.value for s in missing.steps[0].samples}["file-stat"] == 526922.613
    assert any(n.endswith("mdtest could not read it (its WARNING), so the file phases did the count of the line "
                          "'2 tasks, 100 files'") for n in missing.notes)
    # one run doing every phase with -W -x only writes the file: a -W run as before (587 x 2 items)
    every = {s.phase: s for s in one("mdtest-4.1.0+dev-stonewall-file-all-phases.txt").steps[0].samples}
    assert every["file-create"].record["stonewall_items_done"] == [1174]
    assert every["file-stat"].record["seconds"] == 0.001 and "stonewall_status_file" not in every["file-stat"].record


def test_mdtest_phases_it_warned_failed_items_in_are_left_out(tmp_path):
    # mdtest -n 450 -W 1 with directories: the limit stopped directory creation at 1.001 s, 236 directories
    # never made; mdtest printed "Directory creation 899.336" (all 900 counted) and stat/rename/remove
    # rates of calls that failed at once, one "WARNING: unable to stat directory ..." each: all were stored
    run = one("mdtest-4.1.0+dev-stonewall-directories.txt")
    by_phase = {s.phase: s for s in run.steps[0].samples}
    assert set(by_phase) == {"file-create", "file-stat", "file-read", "file-remove", "tree-create", "tree-remove"}
    (note,) = [n for n in run.notes if n.startswith("mdtest warned")]
    assert note.startswith("mdtest warned of 706 failed item operation(s) (dir-remove 236, dir-rename 234, "
                           "dir-stat 236)")
    assert "rates of dir-create, dir-remove, dir-rename, dir-stat are not of operations done" in note
    # the file phases' times stand: 590 files (295 x 2 ranks) over 454.898/s is the 1.297 s printed
    assert by_phase["file-create"].record["seconds"] == 1.297 and round(590 / 454.898, 3) == 1.297
    # without the stonewall, only the phase of the failed items; the test directory's removal is no item
    text = (FIXTURES / "mdtest-4.0.0.txt").read_text()
    warned = text.replace("\nSUMMARY", "\nWARNING: unable to stat file /tmp/md/test-dir.0-0/mdtest_tree.0/file.mdtest."
                          "1.7\nWARNING: unable to remove directory /tmp/md/test-dir.0-0\n\nSUMMARY", 1)
    (tmp_path / "md.txt").write_text(warned)
    run = one_file(tmp_path / "md.txt")
    assert "file-stat" not in {s.phase for s in run.steps[0].samples} and len(run.steps[0].samples) == 9
    assert any(n.startswith("mdtest warned of 1 failed item operation(s) (file-stat 1)") and
               n.endswith("the rates of file-stat are not of operations done, left out") for n in run.notes)


def test_mdtest_phases_that_did_no_operation_are_left_out_with_a_note():
    # mdtest -n 0 prints 0.000 for every file and directory phase, -C for every phase but the creations:
    # they were stored as rates of 0 items/s, which compare took for real (and infinitely slower) figures
    run = one("mdtest-4.1.0+dev-no-items.txt")
    assert {s.phase: s.value for s in run.steps[0].samples} == {"tree-create": 5153.029, "tree-remove": 2200.916}
    assert any(n.startswith("8 phase(s) printed a rate of 0 (no operation done") and "dir-create" in n
               for n in run.notes)
    created = one("mdtest-4.1.0+dev-create-only.txt")
    assert {s.phase: s.value for s in created.steps[0].samples} == {"dir-create": 4945.355, "file-create": 4245.376,
                                                                    "tree-create": 913.195}
    assert any(n.startswith("7 phase(s) printed a rate of 0") and n.endswith("file-remove, tree-remove")
               for n in created.notes)


def test_mdtest_output_whose_every_phase_did_nothing_is_refused(tmp_path):
    text = (FIXTURES / "mdtest-4.1.0+dev-no-items.txt").read_text()
    nothing = re.sub(r"(Tree \w+) +[\d. ]+\n", lambda m: f"{m.group(1):<22}" + "  0.000" * 4 + "\n", text)
    (tmp_path / "md.txt").write_text(nothing)
    with pytest.raises(BadInput) as e:
        parse_file(str(tmp_path / "md.txt"))
    assert "every phase printed 0: no operation was done" in e.value.message


MDTEST_V_LINE = re.compile(r"^V-1: .*?((?:Directory|File|Tree) \w+)\s*:\s+[\d.]+ sec,\s+([\d.]+) ops/sec$", re.M)


def _printed_iterations(name: str) -> dict[str, list[float]]:
    """Each phase's per-iteration rates as mdtest -v printed them in the fixture."""
    out: dict[str, list[float]] = {}
    for m in MDTEST_V_LINE.finditer((FIXTURES / name).read_text()):
        out.setdefault(m.group(1), []).append(float(m.group(2)))
    return out


@pytest.mark.parametrize("name,iterations", [("mdtest-4.0.0-verbose-iterations.txt", 3),
                                             ("mdtest-4.0.0-vv-iterations.txt", 2),
                                             ("mdtest-3.3.0-verbose-iterations.txt", 2),
                                             ("mdtest-4.1.0+dev-verbose-iterations.txt", 3)])
def test_mdtest_verbose_per_iteration_lines_of_one_rank_are_the_repetitions(name, iterations):
    """mdtest -v (-vv) prints each iteration's rate of each phase; they were not read, and the SUMMARY
    mean was stored as one sample. On one rank they are the iterations the SUMMARY row is of."""
    printed = _printed_iterations(name)
    run = one(name)
    by_phase: dict[str, list] = {}
    for s in run.steps[0].samples:
        by_phase.setdefault(s.phase, []).append(s)
    assert len(by_phase) == len(printed) >= 8
    for heading, rates in printed.items():
        samples = by_phase[mdtest_text.PHASES[heading]]
        assert [s.value for s in samples] == rates and len(rates) == iterations
        assert [s.repetition for s in samples] == list(range(iterations))
        # the SUMMARY row they give back (each figure printed to 3 decimals), kept beside them
        assert abs(sum(rates) / iterations - samples[0].record["mean_items_per_s"]) <= 0.0011
        assert (max(rates), min(rates)) == (samples[0].record["max_items_per_s"], samples[0].record["min_items_per_s"])
    if name == "mdtest-4.0.0-verbose-iterations.txt":   # the figures, as printed
        assert [s.value for s in by_phase["dir-create"]] == [7117.434, 7261.607, 7873.670]
        assert [s.record["iteration_seconds"] for s in by_phase["dir-remove"]] == [0.004, 0.036, 0.011]
        assert [s.value for s in by_phase["tree-remove"]] == [6288.312, 5592.405, 148.524]
        assert by_phase["dir-create"][0].record["max_items_per_s"] == 7873.670   # the SUMMARY row beside them
    assert not any("mean stored as one sample" in n for n in run.notes)


def test_mdtest_garbled_figure_in_a_per_iteration_or_stonewall_line_is_refused_naming_its_line(tmp_path):
    """'0.0.28' fits the lines' pattern of digits and dots: the import said "cannot read this file
    (ValueError: could not convert string to float: '0.0.28')"."""
    text = (FIXTURES / "mdtest-4.0.0-verbose-iterations.txt").read_text()
    garbled = text.replace("Directory creation:          0.001 sec", "Directory creation:          0.0.01 sec", 1)
    line = text[:text.index("Directory creation:          0.001 sec")].count("\n") + 1
    (tmp_path / "v.txt").write_text(garbled)
    with pytest.raises(BadInput) as e:
        parse_file(str(tmp_path / "v.txt"))
    assert e.value.message.endswith(f"mdtest: line {line}: '0.0.01' is not a number"), e.value.message
    wall = (FIXTURES / "mdtest-4.1.0+dev-stonewall.txt").read_text()
    hit = re.search(r"^Continue stonewall hit min: \d+ max: \d+ avg: ([\d.]+)", wall, re.M)
    (tmp_path / "w.txt").write_text(wall[:hit.start(1)] + "1.2." + wall[hit.start(1):])
    with pytest.raises(BadInput) as e:
        parse_file(str(tmp_path / "w.txt"))
    assert e.value.message.endswith(f"mdtest: line {wall[:hit.start()].count(chr(10)) + 1}: "
                                    f"'1.2.{hit.group(1)}' is not a number"), e.value.message
    # a SUMMARY row: its phase was dropped unsaid ("1.2.3"), or the row was no row (printf's nan, inf)
    summary = (FIXTURES / "mdtest-4.0.0.txt").read_text()
    row = next(line for line in summary.splitlines() if line.startswith("   Directory creation"))
    (tmp_path / "s.txt").write_text(summary.replace(row, row.replace("1528.119", "1.2.3")))
    with pytest.raises(BadInput) as e:
        parse_file(str(tmp_path / "s.txt"))
    assert e.value.message.endswith(f"mdtest: line {summary.splitlines().index(row) + 1}: '1.2.3' is not a number")
    # a SUMMARY of no iteration (mdtest runs one at least): max() of nothing, a ValueError, was the message
    (tmp_path / "0.txt").write_text(summary.replace("SUMMARY rate: (of 2 iterations)", "SUMMARY rate: (of 0 iterations)"))
    with pytest.raises(BadInput) as e:
        parse_file(str(tmp_path / "0.txt"))
    assert "': a SUMMARY of no iteration, which mdtest does not print" in e.value.message, e.value.message
    (tmp_path / "n.txt").write_text(summary.replace(row, row.replace("1528.119", "-nan")))
    (run,) = parse_file(str(tmp_path / "n.txt"))
    assert "dir-create" not in {s.phase for st in run.steps for s in st.samples}
    assert any("1 figure(s) not finite (nan, inf): not taken" in n for n in run.notes), run.notes


@pytest.mark.parametrize("name,ranks0,tree", [
    ("mdtest-4.0.0-verbose-two-ranks.txt", [405.415, 6180.819], [6061.133, 8.728]),
    ("mdtest-3.3.0-verbose-two-ranks.txt", [661.242, 907.523], [3987.638, 20.871])])
def test_mdtest_verbose_lines_of_several_ranks_are_rank_0s_kept_beside_the_summary_mean(name, ranks0, tree):
    """On more ranks the lines are rank 0's own (4.0 on: its items over its time; 3.3: its view of the
    iteration); the SUMMARY is over every rank: 4.0.0's dir-create lines 405.415 and 6180.819 beside a
    row of max 810.830, min 558.786. Taken as the repetitions they would be neither. The tree phases
    are rank 0's in both, and are the repetitions."""
    run = one(name)
    st = run.steps[0]
    (create,) = [s for s in st.samples if s.phase == "dir-create"]
    assert create.record["rank0_iteration_items_per_s"] == ranks0 == _printed_iterations(name)["Directory creation"]
    assert create.value == {"mdtest-4.0.0-verbose-two-ranks.txt": 684.808,
                            "mdtest-3.3.0-verbose-two-ranks.txt": 1034.872}[name]   # the SUMMARY mean
    assert [s.value for s in st.samples if s.phase == "tree-create"] == tree
    assert any("are rank 0's own figures, not the iteration's over the 2 ranks" in n for n in run.notes)


@pytest.mark.parametrize("name,row,figure", [
    ("ior-4.0.0-posix-fpp.txt", "write     840.06", "840.06"), ("osu-7.4-bw.txt", "1 ", "0.08"),
    ("imb-2021.3-mpi1.txt", "            0          100         1.00", "1.00"),
    ("ior-csv-4.0.0-posix.csv", "write,1157.3687", "1157.3687"),
    # these three ended in "ValueError: could not convert string to float"
    ("iperf3-3.12-server-tcp.txt", "[  5]   0.00-1.00   sec   839 MBytes  7.01 Gbits/sec                  receiver",
     "7.01"),
    ("iperf3-3.12-tcp.txt", "[  5]   0.00-2.01   sec  2.56 GBytes", "2.56"),
    ("fio-3.33-randread.txt", "  read: IOPS=27.0k", "27.0")])
def test_a_row_with_a_garbled_figure_is_refused_naming_its_line_not_skipped_unsaid(tmp_path, name, row, figure):
    """A figure of digits and two dots ("840.06.7": two lines run together, a hand edit) made its row no row:
    it was skipped as other output, and the import stored the rest without a word of it."""
    lines = (FIXTURES / name).read_text().split("\n")
    at = next(i for i, line in enumerate(lines) if line.startswith(row))
    lines[at] = lines[at].replace(figure, figure + ".7", 1)
    (tmp_path / name).write_text("\n".join(lines))
    with pytest.raises(BadInput) as e:
        parse_file(str(tmp_path / name))
    assert e.value.message.endswith(f": line {at + 1}: '{figure}.7' is not a number"), e.value.message


@pytest.mark.parametrize("name,figure", [("fio-2.19-randread.json", '"runtime" : 0'), ("osu-7.4-bw.txt", "0.08"),
                                         ("ior-3.3.0-posix-fpp.txt", "tasks               : 2"),
                                         ("iperf3-3.12-server-P2.txt", "578 MBytes"), ("imb-2021.3-mpi1.txt", "1.00")])
def test_a_number_past_any_a_tool_prints_is_refused_naming_its_line(tmp_path, name, figure):
    """A number of 330 digits (or 1e400) met each parser deep inside: 'cannot read this file (OverflowError: int
    too large to convert to float)', or '... cannot convert float infinity to integer'."""
    text = (FIXTURES / name).read_text()
    at = text.index(figure)
    digits = re.search(r"\d+(?:\.\d+)?", text[at:])
    (tmp_path / name).write_text(text[:at + digits.start()] + "9" * 330 + text[at + digits.end():])
    line = text[:at].count("\n") + 1
    with pytest.raises(BadInput) as e:
        parse_file(str(tmp_path / name))
    assert e.value.message.endswith(f": line {line}: 99999999999999999999... (330 characters) is past the largest "
                                    "number a tool prints (a double's 1.8e308)"), e.value.message
    # the same as an exponent, and a hexadecimal address holding one (an MPI dump) is no number
    (tmp_path / "e.txt").write_text(text[:at + digits.start()] + "1e400" + text[at + digits.end():])
    with pytest.raises(BadInput) as e:
        parse_file(str(tmp_path / "e.txt"))
    assert e.value.message.endswith(f": line {line}: 1e400 is past the largest number a tool prints (a double's "
                                    "1.8e308)"), e.value.message
    from clusterbench.importers.huge_numbers import refusal

    assert refusal(text + "\n[vm:1] segfault at 0x55d1e400a2b0\n") is None


def test_a_date_size_or_count_no_tool_writes_is_refused_or_left_out_not_a_python_error(tmp_path):
    """Each ended the import as 'cannot read this file (...)': fio's "timestamp" of 2^64 s and iperf3's "timesecs"
    of 1e308 ("OverflowError: timestamp out of range for platform time_t"), IMB's message size "inf" or "nan"
    (int() of it), IOR's "clients per node : inf" (int() of it)."""
    def refused(name, old, new):
        text = (FIXTURES / name).read_text()
        assert old in text, old
        (tmp_path / name).write_text(text.replace(old, new, 1))
        with pytest.raises(BadInput) as e:
            parse_file(str(tmp_path / name))
        return e.value.message.split(": ", 2)[-1]

    assert refused("fio-3.33-randread.json", '"timestamp" : 1795', '"timestamp" : 18446744073709551616 ,"x": 1795') \
        == '"timestamp" 18446744073709551616 is no date (seconds since 1970 past the year 9999)'
    assert refused("iperf3-3.12-udp.json", '"timesecs":\t1795469038', '"timesecs":\t1e308') == \
        '"timesecs" 1e+308 is no date (seconds since 1970 past the year 9999)'
    assert refused("imb-2021.3-mpi1.txt", "           64          100        30.37",
                   "           inf          100        30.37").endswith(": 'inf' is no message size in bytes")
    text = (FIXTURES / "ior-3.3.0-posix-fpp.txt").read_text()
    (tmp_path / "ior.txt").write_text(text.replace("clients per node    : 2", "clients per node    : inf"))
    (run,) = parse_file(str(tmp_path / "ior.txt"))   # no count: the ranks per node are not known, as without the line
    assert run.steps[0].ranks_per_node is None


def test_fio_run_times_are_kept_as_fio_was_given_them_not_in_exponent_notation():
    """runtime=1234567 (seconds) was the parameter "1.23457e+06": six digits of it, and no run of the same
    runtime matched it."""
    from clusterbench.importers.fio import _seconds

    assert [_seconds(v) for v in ("1234567", "1500ms", "2m", "30")] == ["1234567", "1.5", "120", "30"]


def test_fio_json_jobs_become_randio_steps():
    run = one("fio-3.33-randread.json")
    assert (run.version, run.form) == ("3.33", "JSON")
    (st,) = run.steps
    assert st.kernel == "randio"
    assert st.params == {"pattern": "randread", "block-size": "4k", "iodepth": "4", "jobs": "1", "runtime": "1",
                         "ramp": "0", "direct": "true", "engine": "io_uring", "poll": "0", "file-size": "16m",
                         "dir": "/tmp/importers-work"}
    (s,) = st.samples
    assert (s.phase, s.condition, s.unit, s.value) == ("randread", "direct", "IOPS", 33516.483516)
    clat = json.loads((FIXTURES / "fio-3.33-randread.json").read_text())["jobs"][0]["read"]["clat_ns"]
    assert s.record["clat_us_p99"] == clat["percentile"]["99.000000"] / 1000 and s.bytes == 137420800
    mixed = one("fio-3.33-randrw-group.json")
    assert mixed.steps[0].params["rwmix"] == "70" and mixed.steps[0].params["jobs"] == "2"
    assert [(s.phase, s.value) for s in mixed.steps[0].samples] == [("randread", 15304.695305),
                                                                    ("randwrite", 6733.266733)]
    # group_reporting: one entry for both jobs; its record said "jobs": 1 beside the step's --jobs=2
    assert [s.record["jobs"] for s in mixed.steps[0].samples] == [2, 2]
    plus = one("fio-3.33-randwrite.jsonplus")
    assert plus.form == "json+" and plus.steps[0].samples[0].record["clat_ns_bins"]


@pytest.mark.parametrize("elapsed,job_runtime,seconds", [
    (2, 1000, 2.0),        # elapsed: whole seconds, the ramp included
    (0, 1500, 1.5),        # a job under half a second says elapsed 0; its run time says more
    (0, None, 1.001),      # fio 2 and 3.5 have no job_runtime: the read's runtime (1001 ms here)
    (float("nan"), -5, 1.001),
])
def test_fio_runs_last_what_their_jobs_say_not_0_s_for_a_short_job(tmp_path, elapsed, job_runtime, seconds):
    doc = json.loads((FIXTURES / "fio-3.33-randread.json").read_text())
    job = doc["jobs"][0]
    job.pop("job_runtime", None)
    job["elapsed"] = elapsed
    if job_runtime is not None:
        job["job_runtime"] = job_runtime
    path = tmp_path / "fio.json"
    path.write_text(json.dumps(doc))
    (run,) = parse_file(str(path))
    assert run.finished == dt.datetime.fromtimestamp(doc["timestamp"], dt.timezone.utc)
    assert (run.finished - run.started).total_seconds() == pytest.approx(seconds)


def test_fio_2_json_reads_kib_and_microseconds():
    run = one("fio-2.19-randread.json")
    (s,) = run.steps[0].samples
    job = json.loads((FIXTURES / "fio-2.19-randread.json").read_text())["jobs"][0]["read"]
    assert "io_kbytes" not in job and s.bytes == job["io_bytes"] * 1024 and s.value == job["iops"]
    assert s.record["clat_us_p50"] == job["clat"]["percentile"]["50.000000"]   # fio 2.x: already in us
    jobs = one("fio-2.19-randrw-jobs.json")   # numjobs=2 without group_reporting: the two entries summed
    entries = json.loads((FIXTURES / "fio-2.19-randrw-jobs.json").read_text())["jobs"]
    assert jobs.steps[0].samples[0].value == pytest.approx(sum(e["read"]["iops"] for e in entries))
    assert jobs.steps[0].params["jobs"] == "2"


def test_fio_text_output_gives_the_main_figures():
    run = one("fio-3.33-randread.txt")
    (s,) = run.steps[0].samples
    assert (run.form, s.phase, s.value, s.seconds) == ("text", "read", 27000.0, 1.001)


def test_fio_2_2_json_without_job_options_says_its_parameters_are_unknown():
    """fio 2.2 (before 2.3) writes no "job options" into its JSON: a randread job became a fio step
    "read" with no parameter at all, and nothing said why."""
    run = one("fio-2.2.10-randread.json")
    (st,) = run.steps
    (s,) = st.samples
    assert (run.version, st.kernel, st.params, s.phase, s.value) == ("2.2.10", "fio", {}, "read", 12800.0)
    assert (s.record["bytes"], s.record["mib_per_s"], s.seconds) == (1024 * 1024, 50.0, 0.02)   # io_bytes in KiB
    assert any("no job options (fio before 2.3 writes none)" in n for n in run.notes), run.notes
    assert not any("job options" in n for n in one("fio-2.19-randread.json").notes)


def test_fio_2_json_plus_bins_are_latencies_in_ns_not_bin_indices():
    """fio 2.x's json+ names its histogram bins by index ("0" ... "1215") beside FIO_IO_U_PLAT_BITS and
    _VAL, which map an index to its latency in us (stat.c plat_idx_to_val); fio 3 names each bin by its
    latency in ns. The 2.x indices were stored as if ns (bin 173, 219 us, as 173 ns), the constants as
    bins, and the file called JSON, not json+."""
    clat = json.loads((FIXTURES / "fio-2.19-randwrite.jsonplus").read_text())["jobs"][0]["write"]["clat"]
    run = one("fio-2.19-randwrite.jsonplus")
    (s,) = run.steps[0].samples
    bins = s.record["clat_ns_bins"]
    assert run.form == "json+" and "FIO_IO_U_PLAT_BITS" not in bins
    assert bins["2000"] == clat["bins"]["2"] and bins["219000"] == clat["bins"]["173"]   # 128 + 45.5 x 2 us
    assert sum(bins.values()) == s.record["ops"] == 256
    assert min(map(int, bins)) == clat["min"] * 1000 and max(map(int, bins)) <= clat["max"] * 1000 * 1.05


def test_fio_2_json_percentile_padding_is_no_0th_percentile():
    """fio 2.x fills its percentile list up to 20 entries with "0.00": 0 (stat.c: `if (i >= len)
    json_object_add_value_int(percentile_object, "0.00", 0)`): that was stored as clat_us_p0 = 0 us,
    a latency no I/O had."""
    for name in ("fio-2.19-randread.json", "fio-2.2.10-randread.json"):
        doc = json.loads((FIXTURES / name).read_text())["jobs"][0]["read"]["clat"]["percentile"]
        assert doc["0.00"] == 0 and doc["1.000000"] > 0
        record = one(name).steps[0].samples[0].record
        assert "clat_us_p0" not in record and record["clat_us_p1"] == doc["1.000000"], name


def test_fio_2_text_of_2_18_and_older_is_fio_text():
    """fio 2.18 and older (Ubuntu 16.04's 2.2.10) print their job lines `bs=4K-4K/4K-4K/4K-4K`,
    not 2.19's `bs=(R) 4096B-4096B, ...`: their normal output was no known format."""
    data = (FIXTURES / "fio-2.2.10-randread.txt").read_text()
    assert importers.detect(data) == "fio"
    run = one("fio-2.2.10-randread.txt")
    (st,) = run.steps
    (s,) = st.samples
    assert (run.version, st.params) == ("2.2.10", {"rw": "randread", "bs": "4k", "ioengine": "psync", "iodepth": "1"})
    assert (s.phase, s.value, s.record["bytes"], s.seconds) == ("read", 13473.0, 1024 * 1024, 0.019)
    jobs = one("fio-2.2.10-randrw-jobs.txt")   # numjobs=2 without group_reporting: the two blocks summed
    assert [(s.phase, s.value, s.record["bytes"]) for s in jobs.steps[0].samples] == [
        ("read", 54200.0, 2 * 1084 * 1024), ("write", 48200.0, 2 * 987136)]
    # above 999,999, fio 2.x's num2str writes iops=1234K
    (big,) = importers.get("fio").parse(data.replace("iops=13473,", "iops=1234K,"))
    assert big.steps[0].samples[0].value == 1234000.0


def test_fio_3_text_with_kb_base_1000_is_read_in_decimal_units():
    """fio 3.x with kb_base=1000 prints decimal units first: `BW=419MB/s (400MiB/s)(2097kB/5msec)`.
    `kB` was not read (the file was refused as holding no measurement), and fio 3's MB, GB (10^6,
    10^9) would have been taken as fio 2's (2^20, 2^30): 4.9 % and 7.4 % too much data."""
    run = one("fio-3.33-seqread-kb1000.txt")
    (s,) = run.steps[0].samples
    assert (s.phase, s.value, s.record["bytes"], s.seconds) == ("read", 6400.0, 2097000, 0.005)
    assert s.record["mib_per_s"] == pytest.approx(2097000 / 2**20 / 0.005)   # fio's own (400MiB/s)
    text = (FIXTURES / "fio-3.33-seqread-kb1000.txt").read_text().replace("(2097kB/5msec)", "(2097MB/5001msec)")
    (big,) = importers.get("fio").parse(text)
    assert big.steps[0].samples[0].record["bytes"] == 2097 * 10**6
    # fio 2.x's KB and MB are 2^10 and 2^20 (its kb_base 1024 default), as before
    assert one("fio-2.2.10-randread.txt").steps[0].samples[0].record["bytes"] == 1024 * 1024


def test_fio_client_server_json_is_taken_without_fios_all_clients_sum():
    """fio --client=HOST writes its jobs as "client_stats" (each with the server's hostname and port),
    not "jobs": such files were refused. With two servers fio adds an "All clients" entry summing
    the others, which must not be added to them."""
    one_server = one("fio-3.33-client.json")
    (st,) = one_server.steps
    assert (one_server.hosts, st.kernel, st.params["pattern"]) == (["127.0.0.1"], "randio", "randread")
    assert [(s.phase, s.value) for s in st.samples] == [("randread", 17066.666667)]
    doc = json.loads((FIXTURES / "fio-3.33-two-clients.json").read_text())
    servers = [c for c in doc["client_stats"] if c["jobname"] != "All clients"]
    assert len(servers) == 2 and len(doc["client_stats"]) == 3
    run = one("fio-3.33-two-clients.json")
    (st,) = run.steps
    (s,) = st.samples
    # one job on two servers is no randio step of one node's jobs
    assert (st.kernel, st.params["rw"], st.params["clients"]) == ("fio", "randread", "2")
    assert s.value == pytest.approx(sum(c["read"]["iops"] for c in servers))
    assert s.record["bytes"] == sum(c["read"]["io_bytes"] for c in servers) == 2 * 2**20
    assert any("the jobs of 2 servers" in n and "All clients" in n for n in run.notes), run.notes


def test_fio_client_server_text_is_read_without_fios_all_clients_block():
    """fio --client's normal output starts with a "hostname=..., fio=fio-3.33" line per server and
    prefixes the servers' lines with "<host> ": it was no known format. Its "All clients" block sums
    the servers' blocks and must not be added to them."""
    data = (FIXTURES / "fio-3.33-two-clients.txt").read_text()
    assert importers.detect(data) == "fio" and "All clients: (groupid=0, jobs=2)" in data
    run = one("fio-3.33-two-clients.txt")
    (st,) = run.steps
    (s,) = st.samples
    assert (run.version, run.hosts) == ("3.33", ["vm"])
    assert (st.params["rw"], st.params["clients"], "numjobs" in st.params) == ("randread", "2", False)
    assert (s.phase, s.value, s.record["bytes"]) == ("read", 12800.0 + 18300.0, 2 * 2**20)
    assert any("a result block per server of 2 (fio --client)" in n for n in run.notes), run.notes


def test_fio_unified_rw_reporting_mixed_figures_are_taken_not_refused():
    """fio --unified_rw_reporting=1 reports reads and writes as one "mixed" direction (JSON member and
    text line, fio 2.x and 3.x): the file was refused as holding no measurement."""
    doc = json.loads((FIXTURES / "fio-3.33-unified-randrw.json").read_text())["jobs"][0]["mixed"]
    run = one("fio-3.33-unified-randrw.json")
    (st,) = run.steps
    (s,) = st.samples
    # reads and writes together are no randio phase: a fio step with fio's options
    assert (st.kernel, st.params["rw"], st.params["unified_rw_reporting"]) == ("fio", "randrw", "1")
    assert (s.phase, s.condition, s.unit, s.value) == ("mixed", "buffered", "IOPS", doc["iops"])
    assert (s.record["bytes"], s.seconds, s.record["mib_per_s"]) == (2097152, 0.013, doc["bw"] / 1024)
    assert s.record["clat_us_p50"] == doc["clat_ns"]["percentile"]["50.000000"] / 1e3
    text = one("fio-3.33-unified-randrw.txt")
    (s,) = text.steps[0].samples
    assert (s.phase, s.value, s.record["bytes"], s.seconds) == ("mixed", 39400.0, 2048 * 1024, 0.013)


def _terse_fields(name: str) -> list[list[str]]:
    """The fixture's terse lines split as fio's HOWTO ("Terse output") numbers them: 5 head fields, then a
    41-field block per direction (47 in version 5)."""
    return [line.split(";") for line in (FIXTURES / name).read_text().splitlines()]


def test_fio_terse_lines_give_iops_bandwidth_and_latency_percentiles_as_fio_printed_them():
    """fio --minimal / --output-format=terse (versions 3, 4, 5: a line of ;-separated fields per job) was
    refused as no known format."""
    (f,) = _terse_fields("fio-3.33-terse3-randread.txt")
    run = one("fio-3.33-terse3-randread.txt")
    assert (run.tool, run.version, run.form, f[:5]) == ("fio", "3.33", "terse v3", ["3", "fio-3.33", "rr", "0", "0"])
    (st,) = run.steps
    (s,) = st.samples
    assert (st.kernel, st.name, s.phase, s.unit) == ("fio", "fio job rr", "read", "IOPS")
    # read block: KiB, KiB/s, IOPS, ms; slat, clat (min max mean stdev); 20 "P%=us"; lat; bw
    assert (s.value, s.record["mib_per_s"], s.record["bytes"], s.seconds) == (
        11130.0, 44521 / 1024, 2048 * 1024, 0.046) == (float(f[7]), int(f[6]) / 1024, int(f[5]) * 1024, int(f[8]) / 1e3)
    assert f[13:17] == ["39", "7189", "87.574580", "420.719818"] and f[29] == "99.000000%=259"
    assert (s.record["clat_us_min"], s.record["clat_us_max"], s.record["clat_us_mean"]) == (39, 7189, 87.57458)
    assert (s.record["clat_us_p50"], s.record["clat_us_p99"], s.record["clat_us_p99_99"]) == (46, 259, 7176)
    assert s.record["lat_us_mean"] == float(f[39]) == 87.597412
    assert "clat_us_p0" not in s.record        # fio pads its 20 places with "0%=0"
    assert "slat_us_min" not in s.record       # psync: fio printed 0;0;0;0, no submission latency measured
    assert any("holds no job options" in n for n in run.notes)
    # version 4 adds a trim block after write; the write block starts at field 5 + 41
    (f,) = _terse_fields("fio-3.33-terse4-randrw.txt")
    run = one("fio-3.33-terse4-randrw.txt")
    assert run.form == "terse v4" and len(f) == 5 + 3 * 41 + 5 + 7 + 10 + 12 + 9
    read, write = run.steps[0].samples
    assert [(s.phase, s.value) for s in (read, write)] == [("read", 13538.0), ("write", 6153.0)]
    assert (write.value, write.record["bytes"], write.record["clat_us_p99"]) == (
        float(f[46 + 2]), int(f[46]) * 1024, 10) and f[46 + 12 + 12] == "99.000000%=10"
    (f,) = _terse_fields("fio-3.33-terse5-randread.txt")   # version 5: 47 fields a direction
    (s,) = one("fio-3.33-terse5-randread.txt").steps[0].samples
    assert (s.value, s.record["clat_us_p99"]) == (float(f[7]), 1499) and len(f) == 5 + 3 * 47 + 5 + 7 + 10 + 12 + 9
    # numjobs=2 without group_reporting: a line per clone, summed as the JSON's entries are
    lines = _terse_fields("fio-3.33-terse3-numjobs2.txt")
    run = one("fio-3.33-terse3-numjobs2.txt")
    (s,) = run.steps[0].samples
    assert s.value == sum(float(f[7]) for f in lines) == 40172.0 and s.record["jobs"] == 2
    assert s.record["bytes"] == sum(int(f[5]) for f in lines) * 1024 and "clat_us_p99" not in s.record
    # unified_rw_reporting=1: one block, the mixed one
    (f,) = _terse_fields("fio-3.33-terse3-unified-randrw.txt")
    (s,) = one("fio-3.33-terse3-unified-randrw.txt").steps[0].samples
    assert (s.phase, s.value, len(f)) == ("mixed", float(f[7]), 5 + 41 + 5 + 7 + 10 + 12 + 9)


def test_fio_terse_version_2_lines_are_read_in_each_layout_fio_gave_them():
    """--terse-version=2 ("2;JOB;GROUP;ERROR;...": no fio version) was no known format. Today's fio prints
    read, write and trim blocks of version 4's; fio 2.0.9 read and write alone (and its bandwidth field was
    bytes/ms before 2.0.8); fio 1.58 20 fields a direction, without IOPS, refused in one line."""
    (f,) = _terse_fields("fio-3.33-terse2-randrw.txt")
    run = one("fio-3.33-terse2-randrw.txt")
    assert (run.version, run.form, len(f)) == (None, "terse v2", 4 + 3 * 41 + 5 + 7 + 10 + 12)
    read, write = run.steps[0].samples
    assert (read.value, read.record["bytes"], read.record["mib_per_s"], read.seconds) == (
        float(f[6]), int(f[4]) * 1024, int(f[5]) / 1024, int(f[7]) / 1000)
    assert (write.value, write.record["clat_us_p99"]) == (float(f[4 + 41 + 2]), float(f[4 + 41 + 24].split("=")[1]))
    (f, _blank) = _terse_fields("fio-2.0.9-terse2-randrw.txt")   # fio 2.0.9 also prints a ';' line per job
    run = one("fio-2.0.9-terse2-randrw.txt")
    assert len(f) == 4 + 2 * 41 + 5 + 7 + 10 + 12 and f[16] == "1.00%=32"
    read, write = run.steps[0].samples
    assert [(s.phase, s.value) for s in (read, write)] == [("read", float(f[6])), ("write", float(f[4 + 41 + 2]))]
    assert read.record["clat_us_p1"] == 32 and read.record["clat_us_p99_5"] == float(f[29].split("=")[1])
    # KiB over the run time: its field (KiB/s in 2.0.9, bytes/ms before 2.0.8) is not what tells
    assert read.record["mib_per_s"] == int(f[4]) / 1024 / (int(f[7]) / 1000)
    assert any("fio 2.0 to 2.0.9 (no trim block)" in n for n in run.notes)
    with pytest.raises(BadInput) as e:
        parse_file(str(FIXTURES / "fio-1.58-terse2-randrw.txt"))
    assert e.value.message.endswith("fio: line 2: terse version 2 of fio 1.58 or older (20 fields a direction: no "
                                    "IOPS, no latency percentiles) is not read; fio 2.0 and later print IOPS in it")


def test_fio_terse_line_of_another_field_count_is_refused_in_one_line(tmp_path):
    (f,) = _terse_fields("fio-3.33-terse3-randread.txt")
    (tmp_path / "terse.txt").write_text(";".join(f[:20] + f[21:]) + "\n")   # a read percentile taken out
    with pytest.raises(BadInput) as e:
        parse_file(str(tmp_path / "terse.txt"))
    assert "line 1: 129 fields do not fall into terse version 3's blocks of 41 per direction" in e.value.message
    assert "\n" not in e.value.message
    # a count past what fio's %llu prints (one past a double ended the import as Python's OverflowError)
    (tmp_path / "huge.txt").write_text(";".join(f[:7] + ["1" + "0" * 24] + f[8:]) + "\n")
    with pytest.raises(BadInput) as e:
        parse_file(str(tmp_path / "huge.txt"))
    assert e.value.message.endswith("fio: line 1: 10000000000000000000... (25 digits) is past the largest count fio "
                                    "prints (2^64 - 1)"), e.value.message


def test_fio_terse_job_name_holding_semicolons_is_one_name_not_a_refused_line():
    """fio prints the job name raw: --name='rd;4k;p=1' made the line three fields longer, refused as cut."""
    run = one("fio-3.33-terse3-name-with-semicolons.txt")
    (st,) = run.steps
    (s,) = st.samples
    f = _terse_fields("fio-3.33-terse3-name-with-semicolons.txt")[0]
    assert (st.name, s.phase, s.value) == ("fio job rd;4k;p=1", "read", float(f[9]))
    # fio keeps 127 bytes of a name: the longest a line can hold, and the bound on the fields joined
    (st,) = one("fio-3.33-terse3-longest-name.txt").steps
    assert st.name == "fio job " + ";".join(["ab"] * 50)[:127] and st.samples[0].phase == "read"


def test_fio_json_and_terse_in_one_file_is_read_from_the_json():
    """--output-format=json,terse prints the terse line first: it was read, and the JSON's job options, date
    and latency lost ('terse output holds no job options' of a file that holds them)."""
    run = one("fio-3.33-json-terse.txt")
    assert (run.form, run.started is not None) == ("JSON", True)
    (st,) = run.steps
    assert (st.kernel, st.params["pattern"], st.params["block-size"]) == ("randio", "randread", "4k")
    assert st.samples[0].value == float(_terse_fields("fio-3.33-json-terse.txt")[0][7])
    assert any("its terse lines with json,terse" in n for n in run.notes)


def test_fio_terse_and_normal_in_one_file_takes_the_lines_figures_and_the_texts_options_and_date(tmp_path):
    """--output-format=terse,normal prints each job's terse line, then the normal text: it was read from the
    lines alone, a fio step with no parameter and no date, though the text beside them names both."""
    (f,) = [line.split(";") for line in (FIXTURES / "fio-3.33-terse3-normal-randrw.txt").read_text().splitlines()
            if line.startswith("3;fio-")]
    run = one("fio-3.33-terse3-normal-randrw.txt")
    assert (run.form, run.started) == ("terse v3 and text", dt.datetime(2026, 12, 7, 17, 54, 21, tzinfo=dt.timezone.utc))
    (st,) = run.steps
    assert st.params == {"rw": "randrw", "bs": "4k", "ioengine": "psync", "iodepth": "1"}
    read, write = st.samples
    # the lines' exact figures (the text printed read IOPS=18.1k), their percentiles too
    assert [(read.phase, read.value), (write.phase, write.value)] == [("read", float(f[7])), ("write", float(f[48]))]
    assert read.record["clat_us_p99"] == float(f[29].partition("%=")[2])
    assert not any("holds no job options" in n for n in run.notes)
    # a text of other figures is no twin of the lines: refused in one line
    text = (FIXTURES / "fio-3.33-terse3-normal-randrw.txt").read_text()
    (tmp_path / "other.txt").write_text(text.replace("read: IOPS=18.1k", "read: IOPS=28.1k"))
    with pytest.raises(BadInput) as e:
        parse_file(str(tmp_path / "other.txt"))
    assert e.value.message.endswith("fio: fio job mix read: its terse line says 18050 IOPS, 5840896 bytes, its "
                                    "normal text 28100 IOPS, 5840896 bytes: not one run's (--output-format="
                                    "terse,normal prints the same results twice)"), e.value.message


def test_iperf3_sums_directions_and_old_single_stream_files():
    run = one("iperf3-3.12-bidir.json")
    (st,) = run.steps
    assert st.kernel == "tcp" and st.params == {"role": "loopback", "streams": "1", "duration": "1", "message-size": "128k",
                                                "direction": "bidir"}
    assert [(s.phase, s.condition, s.unit) for s in st.samples] == [("send", "receiver", "Gbit/s"),
                                                                   ("receive", "receiver", "Gbit/s")]
    assert run.facts["import.system_info"].startswith("Linux vm")
    rev = one("iperf3-3.1.3-tcp-reverse.json")
    assert rev.version == "3.1.3" and rev.steps[0].samples[0].phase == "receive"
    # iperf3 3.0 wrote no sum_sent/sum_received for one stream: the stream's figures stand in
    doc = json.loads((FIXTURES / "iperf3-3.1.3-tcp.json").read_text())
    expected = doc["end"]["sum_received"]["bits_per_second"] / 1e9
    del doc["end"]["sum_sent"], doc["end"]["sum_received"]
    (old,) = importers.get("iperf3").parse(json.dumps(doc))
    assert old.steps[0].samples[0].value == pytest.approx(expected)
    assert any("summed from the streams" in n for n in old.notes)
    udp = one("iperf3-3.12-udp.json")
    assert udp.steps[0].kernel == "iperf3" and "jitter_ms" in udp.steps[0].samples[0].record


# iperf3 3.1.3's UDP client end lines, as its iperf_locale.c formats them (report_bw_udp_format; trailing
# blanks dropped), with the figures of iperf3-3.1.3-udp.json: the transfer and rate are the 1377 datagrams
# sent, the loss the server's
IPERF3_31_UDP_TEXT = """Connecting to host 127.0.0.1, port 15321
{starting}[  4] local 127.0.0.1 port 41234 connected to 127.0.0.1 port 15321
[ ID] Interval           Transfer     Bandwidth       Total Datagrams
[  4]   0.00-1.00   sec  10.8 MBytes  90.2 Mbits/sec  1377
- - - - - - - - - - - - - - - - - - - - - - - - -
[ ID] Interval           Transfer     Bandwidth       Jitter    Lost/Total Datagrams
[  4]   0.00-1.00   sec  10.8 MBytes  90.2 Mbits/sec  0.027 ms  372/1263 (29%)
[  4] Sent 1263 datagrams

iperf Done.
"""


def test_iperf3_udp_before_3_5_is_the_receivers_rate_not_the_senders():
    """iperf3 3.1's UDP `sum` (and its text end line) gives the bytes sent and their rate beside the
    receiver's loss: 90.2 Mbit/s was stored as the receiver's figure while 372 of 1263 datagrams were
    lost. The receiver's is its datagrams times the block size: 891 x 8 KiB in 1.00028 s."""
    (s,) = one("iperf3-3.1.3-udp.json").steps[0].samples
    assert s.value == pytest.approx(891 * 8192 * 8 / 1.00028 / 1e9) and s.bytes == 891 * 8192  # 58.38 Mbit/s
    assert s.record["sender_gbit_per_s"] == pytest.approx(0.090217798220868) and s.condition == "n/a"
    # 3.12 writes sum_received, the same count: 382 datagrams of 32 KiB, none lost
    (new,) = one("iperf3-3.12-udp.json").steps[0].samples
    assert new.value == pytest.approx(0.10010727399414387) and new.bytes == 382 * 32768
    # the text: with -V's block size the same figure, without it the sender's, said to be so
    verbose = importers.get("iperf3").parse(IPERF3_31_UDP_TEXT.format(
        starting="Starting Test: protocol: UDP, 1 streams, 8192 byte blocks, omitting 0 seconds, 1 second test\n"))
    (v,) = verbose[0].steps[0].samples
    assert v.value == pytest.approx(891 * 8192 * 8 / 1.0 / 1e9) and v.record["sender_gbit_per_s"] == 0.0902
    (plain,) = importers.get("iperf3").parse(IPERF3_31_UDP_TEXT.format(starting=""))[0].steps[0].samples
    assert (plain.value, plain.condition) == (0.0902, "sender")
    # two streams: the [SUM] line (report_sum_bw_udp_format), not the first stream's
    two = IPERF3_31_UDP_TEXT.format(starting="").replace(
        "372/1263 (29%)\n", "372/1263 (29%)\n[  6]   0.00-1.00   sec  10.8 MBytes  90.2 Mbits/sec  0.031 ms  "
        "10/1300 (0.77%)\n[SUM]   0.00-1.00   sec  21.6 MBytes   180 Mbits/sec  0.029 ms  382/2563 (15%)\n")
    (both,) = importers.get("iperf3").parse(two)[0].steps[0].samples
    assert (both.value, both.record["packets"], both.record["lost_packets"]) == (0.18, 2563, 382)


def test_iperf3_udp_json_up_to_3_10_is_read_from_its_sum_and_the_note_names_the_right_versions():
    """iperf3 wrote UDP's sum_sent/sum_received from 3.11 on: 3.2-3.10 write only `sum`, the sender's
    bytes and rate with the receiver's loss and time (receiver_time). The note said the file was
    iperf3 3.1 or older, of a real 3.9 output."""
    run = one("iperf3-3.9-udp.json")
    (s,) = run.steps[0].samples
    assert run.version == "3.9"
    assert s.value == pytest.approx(382 * 32768 * 8 / 1.039981 / 1e9) and s.bytes == 382 * 32768
    assert s.record["sender_gbit_per_s"] == pytest.approx(0.1001311977665742)
    assert any("no sum_received (iperf3 before 3.11)" in n for n in run.notes), run.notes


def test_iperf3_text_with_a_bytes_format_is_read_in_bits():
    """iperf3 -f M (K, G, T) prints rates in its 1024-based bytes per second (units.c's
    conversion_bytes): `2677 MBytes/sec`. Such a file was refused as holding no end-of-test line."""
    run = one("iperf3-3.20-tcp-format-MBytes.txt")
    (s,) = run.steps[0].samples
    assert (s.phase, s.condition) == ("send", "receiver")
    assert s.value == pytest.approx(2677 * 2**20 * 8 / 1e9)   # 22.46 Gbit/s
    assert s.record["sender_gbit_per_s"] == pytest.approx(2681 * 2**20 * 8 / 1e9)
    # the transfer it states, 2.62 GBytes in 1.00 s, is the same rate to iperf3's 3 figures
    assert s.value == pytest.approx(2.62 * 2**30 * 8 / 1e9, rel=0.01)


def test_iperf3_text_with_timestamps_is_read_and_dated_by_them():
    """iperf3 --timestamps (3.9 on) puts "Mon Dec  7 12:33:42 2026 " before every line: such a log
    was no known format. The time on its "Connecting to host" line dates the run (local time)."""
    data = (FIXTURES / "iperf3-3.20-tcp-timestamps.txt").read_text()
    assert importers.detect(data) == "iperf3"
    run = one("iperf3-3.20-tcp-timestamps.txt")
    (s,) = run.steps[0].samples
    assert (s.phase, s.condition, s.value, s.record["sender_gbit_per_s"]) == ("send", "receiver", 15.0, 15.0)
    assert run.started == dt.datetime(2026, 12, 7, 12, 33, 42, tzinfo=dt.timezone.utc)
    assert any("--timestamps" in n and "local time" in n for n in run.notes), run.notes


def test_iperf3_server_json_of_a_reverse_test_stores_the_senders_rate_not_0():
    """iperf3 -s -J of a -R test (the server sends) is never told what the client received: its
    sum_received is 0 bits/s, which was stored as the test's receiver rate, 0 Gbit/s."""
    end = json.loads((FIXTURES / "iperf3-3.20-server-reverse.json").read_text())["end"]
    assert end["sum_received"]["bits_per_second"] == 0 and end["sum_sent"]["bytes"] > 0
    run = one("iperf3-3.20-server-reverse.json")
    (s,) = run.steps[0].samples
    assert (s.phase, s.condition, s.unit) == ("receive", "sender", "Gbit/s")
    assert s.value == end["sum_sent"]["bits_per_second"] / 1e9 > 1
    assert any("holds no receiver figure" in n for n in run.notes), run.notes


def test_iperf3_server_json_is_the_server_side_not_a_client():
    """iperf3 -s -J names no server ("connecting_to") but the client it accepted: it was stored as
    role client, on the server's host, repeating the client's file's test with nothing said."""
    run = one("iperf3-3.20-server-reverse.json")
    assert run.steps[0].params["role"] == "loopback" and run.facts["import.client"] == "127.0.0.1"
    assert any("the server's side of the test (iperf3 -s, client 127.0.0.1)" in n for n in run.notes), run.notes
    doc = json.loads((FIXTURES / "iperf3-3.20-server-reverse.json").read_text())
    doc["start"]["accepted_connection"]["host"] = "198.18.0.5"
    (remote,) = importers.get("iperf3").parse(json.dumps(doc))
    assert (remote.steps[0].params["role"], remote.hosts) == ("server", ["vm"])
    assert one("iperf3-3.12-tcp.json").steps[0].params["role"] == "loopback"   # a client's file, as before
    assert "import.client" not in one("iperf3-3.12-tcp.json").facts


def test_iperf3_omitted_warm_up_intervals_are_not_among_the_interval_rates():
    """iperf3 -O 1 reports its warm-up second as an interval marked "omitted", which the end-of-test sums
    leave out: a 2 s test listed 3 interval rates, the warm-up's first."""
    doc = json.loads((FIXTURES / "iperf3-3.20-tcp-omit.json").read_text())
    assert [iv["sum"]["omitted"] for iv in doc["intervals"]] == [True, False, False]
    (s,) = one("iperf3-3.20-tcp-omit.json").steps[0].samples
    assert s.record["interval_gbit_per_s"] == [iv["sum"]["bits_per_second"] / 1e9 for iv in doc["intervals"][1:]]


def test_iperf3_json_stream_events_are_one_run_as_its_json_document():
    """iperf3 --json-stream (3.17 on) writes one JSON object per line, {"event": "start" | "interval" |
    "end", "data": ...}: a real 3.20 file was refused as holding no end-of-test result."""
    events = [json.loads(line) for line in (FIXTURES / "iperf3-3.20-tcp-json-stream.json").read_text().splitlines()]
    assert [e["event"] for e in events] == ["start", "interval", "end"]
    end = events[-1]["data"]
    run = one("iperf3-3.20-tcp-json-stream.json")
    (st,) = run.steps
    (s,) = st.samples
    assert (run.version, run.hosts, st.kernel, st.params["direction"]) == ("3.20", ["vm"], "tcp", "send")
    assert (s.phase, s.value) == ("send", end["sum_received"]["bits_per_second"] / 1e9)
    assert s.record["retransmits"] == end["sum_sent"]["retransmits"]
    assert s.record["interval_gbit_per_s"] == [events[1]["data"]["sum"]["bits_per_second"] / 1e9]
    # 3.20 on: "timemillisecs", the start to the millisecond
    assert run.started == dt.datetime.fromtimestamp(events[0]["data"]["timestamp"]["timemillisecs"] / 1e3,
                                                    dt.timezone.utc)
    # two tests' events appended to one log: a run per "start" event
    text = (FIXTURES / "iperf3-3.20-tcp-json-stream.json").read_text()
    assert len(importers.get("iperf3").parse(text + text)) == 2


def test_iperf3_server_text_says_a_test_that_ended_before_its_results(tmp_path):
    """A server log whose first client was killed mid-test stored the second test alone, saying nothing of
    the first."""
    (run,) = parse_file(str(FIXTURES / "iperf3-3.12-server-client-killed.txt"))
    assert [s.value for st in run.steps for s in st.samples] == [10.9]
    assert ("1 of the 2 tests the server accepted ended before their results (client stopped, or the file cut?), "
            "not taken: accepted at line 4 (127.0.0.1: 'the client has unexpectedly closed the connection')"
            in run.notes)
    # a server no client reached (its log up to the first accepted test) was "not any known format"
    text = (FIXTURES / "iperf3-3.12-server-client-killed.txt").read_text()
    (tmp_path / "listening.txt").write_text(text[:text.index("Accepted connection from")])
    with pytest.raises(BadInput) as e:
        parse_file(str(tmp_path / "listening.txt"))
    assert e.value.message.endswith("iperf3: no \"Accepted connection from\" line: the server ran no test"), \
        e.value.message


def test_iperf3_server_text_gives_the_receivers_sum_and_per_stream_rates_as_the_server_printed_them():
    """What `iperf3 -s` prints (to the terminal or --logfile; real 3.12 and 3.20 runs between two test bed
    namespaces) was refused as no known format."""
    run = one("iperf3-3.12-server-tcp.txt")
    (st,) = run.steps
    (s,) = st.samples
    assert (run.tool, run.form, run.facts["import.client"]) == ("iperf3", "server text", "198.18.0.1")
    assert (st.kernel, st.params) == ("tcp", {"role": "server", "streams": "1", "duration": "1", "direction": "send"})
    # "[  5]   0.00-1.00   sec   839 MBytes  7.01 Gbits/sec   receiver"
    assert (s.phase, s.condition, s.value, s.bytes, s.seconds) == ("send", "receiver", 7.01, 839 * 2**20, 1.0)
    assert any("the server's side of the test" in n for n in run.notes)
    # -P 2: the [SUM] receiver line, each stream's beside it; the client's own file says the same
    (s,) = one("iperf3-3.12-server-P2.txt").steps[0].samples
    assert (s.value, s.record["stream_gbit_per_s"], s.record["streams"], s.seconds) == (4.76, [2.40, 2.36], 2, 1.02)
    (c,) = one("iperf3-3.12-server-P2-its-client.txt").steps[0].samples
    assert c.value == s.value and c.bytes == s.bytes
    # 3.20 prints a last short interval after a second rule: the end lines are the receiver's, not it
    (s,) = one("iperf3-3.20-server-P2.txt").steps[0].samples
    assert (s.value, s.record["stream_gbit_per_s"]) == (9.21, [5.53, 3.68])
    # -R: the server sent, and prints only its sender line
    (s,) = one("iperf3-3.12-server-reverse.txt").steps[0].samples
    assert (s.phase, s.condition, s.value, s.record["retransmits"]) == ("receive", "sender", 4.66, 2)
    st = one("iperf3-3.12-server-bidir.txt").steps[0]   # [RX-S] is the client's send half, [TX-S] its receive
    assert st.params["direction"] == "bidir" and st.params["streams"] == "1"
    assert [(s.phase, s.condition, s.value) for s in st.samples] == [("send", "receiver", 4.31),
                                                                      ("receive", "sender", 4.04)]
    (s,) = one("iperf3-3.12-server-udp.txt").steps[0].samples
    assert (s.value, s.record["jitter_ms"], s.record["lost_packets"], s.record["packets"]) == (0.0984, 0.006, 132, 8630)
    verbose = one("iperf3-3.12-server-verbose.txt")   # -V: version, uname, time, the test's parameters
    assert (verbose.version, verbose.hosts, verbose.started) == (
        "3.12", ["vm"], dt.datetime(2026, 12, 7, 15, 15, 10, tzinfo=dt.timezone.utc))
    assert verbose.steps[0].params["message-size"] == "128k" and verbose.steps[0].samples[0].value == 5.66
    # a server left running, --logfile: a run per test it served
    first, second = parse_file(str(FIXTURES / "iperf3-3.12-server-logfile-two-tests.txt"))
    assert [r.steps[0].samples[0].value for r in (first, second)] == [5.64, 7.90]
    assert second.steps[0].samples[0].record["stream_gbit_per_s"] == [4.03, 3.87]
    (s,) = one("iperf3-3.20-server-logfile.txt").steps[0].samples
    assert s.value == 3.60


@pytest.mark.parametrize("name", ["iperf3-3.20-json-stream-error.json", "iperf3-3.20-error.json"])
def test_iperf3_file_holding_only_its_connect_error_is_refused_with_iperf3s_words_and_nothing_stored(
        cli, store_url, name):
    """iperf3 -c to a closed port (3.20, --json-stream: an "error" event and an empty "end") was refused as no
    known format, which says nothing of why."""
    assert cli("import", str(FIXTURES / "iperf3-3.12-tcp.json")).status == 0
    r = cli("import", str(FIXTURES / name))
    assert r.status == 2 and r.stderr.strip().count("\n") == 0, r.stderr
    assert ("the file holds no result, only iperf3's error: \"unable to connect to server - server may have "
            "stopped running or use a different port, firewall issue, etc.: Connection refused\"") in r.stderr
    assert store_rows(store_url, "select count(*) from runs") == [(1,)]


@pytest.mark.parametrize("name", ["iperf3-3.12-connect-refused.txt", "iperf3-3.12-connect-refused-verbose.txt"])
def test_iperf3_text_holding_only_its_connect_error_is_refused_with_iperf3s_words(cli, name):
    """The text twin of the above: iperf3 -c to a closed port prints its error line alone (after -V's version
    and uname), refused as no known format where the JSON said why."""
    r = cli("import", str(FIXTURES / name))
    assert r.status == 2 and r.stderr.strip().count("\n") == 0, r.stderr
    assert ("the file holds no result, only iperf3's error: \"unable to connect to server: Connection refused\""
            in r.stderr)


def test_json_cut_inside_a_string_says_where_in_one_at(tmp_path):
    """json's own message ends in "at": it read "Unterminated string starting at at line 10 column 11"."""
    text = (FIXTURES / "iperf3-3.20-error.json").read_text()
    (tmp_path / "cut.json").write_text(text[:text.index("unable to connect") + 6])
    with pytest.raises(BadInput) as e:
        parse_file(str(tmp_path / "cut.json"))
    assert e.value.message.endswith("iperf3: not complete JSON: Unterminated string starting at line 10 column 11")


def test_osu_tables_become_mpi_sweeps():
    lat = one("osu-5.3-latency.txt")
    (st,) = lat.steps
    assert (st.kernel, st.params, st.ranks) == ("mpi", {"op": "pingpong"}, 2)
    assert [(s.size_bytes, s.value) for s in st.samples[:2]] == [(0, 33.66), (1, 8.12)]
    assert st.samples[0].condition == "library" and st.samples[0].unit == "us"
    bw = one("osu-7.4-bw.txt")
    s = bw.steps[0].samples[-1]
    assert s.unit == "MiB/s" and s.record["rate_decimal_unit"] == "MB/s"
    assert s.value == pytest.approx(s.record["rate_decimal"] * 1e6 / 2**20)
    full = one("osu-7.4-allreduce-full.txt")
    assert full.steps[0].ranks == 0 and any("--np" in n for n in full.notes)
    first = full.steps[0].samples[0]
    assert (first.size_bytes, first.value, first.record["t_min_us"], first.record["iterations"]) == (4, 0.31, 0.28, 100)
    assert one("osu-7.4-barrier.txt").steps[0].samples[0].size_bytes == 0
    gather = one("osu-7.4-gather.txt").steps[0]
    assert gather.kernel == "osu" and gather.samples[0].phase == "gather-latency"


def _osu_on(tmp_path, fixture: str, accelerator: str, buffers: str | None) -> ImportedRun:
    """A real OSU file as `-d ACCELERATOR` prints it (util/osu_util.c's
    print_header: "MPI-CUDA" in the title, then "# Send Buffer on ... and
    Receive Buffer on ...")."""
    text = (FIXTURES / fixture).read_text().replace("# OSU MPI ", f"# OSU MPI-{accelerator} ", 1)
    if buffers:
        text = text.replace("# Datatype:", f"# {buffers}\n# Datatype:", 1)
    path = tmp_path / f"{accelerator}-{fixture}"
    path.write_text(text)
    (run,) = parse_file(str(path))
    return run


def test_osu_rows_whose_validation_failed_are_not_taken():
    """OSU's -c checks the data each size moved and prints Pass or Fail in a Validation column: a
    size whose data came out wrong was stored as a latency like any other."""
    run = one("osu-7.4-allreduce-validate.txt")   # a real -c run: every row Pass
    assert [(s.size_bytes, s.value) for s in run.steps[0].samples][:3] == [(4, 0.24), (8, 0.23), (16, 4.41)]
    assert len(run.steps[0].samples) == 7 and not any("validation" in n for n in run.notes)
    text = (FIXTURES / "osu-7.4-allreduce-validate.txt").read_text()
    text = text.replace("4.41              Pass", "4.41              Fail")
    (bad,) = importers.get("osu").parse(text)
    assert [s.size_bytes for s in bad.steps[0].samples] == [4, 8, 32, 64, 128, 256]
    assert "OSU Allreduce Latency: 1 row(s) whose validation (-c) failed, not taken (line 7)" in bad.notes


def test_osu_tail_latency_columns_are_kept():
    """OSU 7.x -z prints each size's P50/P90/P99 over the iterations ("P99 Tail Lat(us)"): the columns
    were read past, the figures lost."""
    run = one("osu-7.4-latency-tail.txt")
    s = run.steps[0].samples[0]   # "1   5.49   1.18   18.37   28.52"
    assert (s.size_bytes, s.value) == (1, 5.49)
    assert (s.record["tail_p50_us"], s.record["tail_p90_us"], s.record["tail_p99_us"]) == (1.18, 18.37, 28.52)
    assert not any(k.startswith("tail_") for k in one("osu-7.4-latency.txt").steps[0].samples[0].record)


def test_osu_one_sided_window_and_synchronization_are_parameters():
    """OSU's one-sided tests print how the window was made and how each operation was synchronised:
    osu_put_latency -s flush and -s lock (0.14 us and 12,309.83 us for 1 byte) became steps of the
    same parameters, which compare matched as one measurement."""
    flush, lock = one("osu-7.4-put-latency-flush.txt"), one("osu-7.4-put-latency-lock.txt")
    assert flush.steps[0].params == {"test": "MPI_Put Latency", "window-creation": "MPI_Win_allocate",
                                     "synchronization": "MPI_Win_flush"}
    assert lock.steps[0].params["synchronization"] == "MPI_Win_lock/unlock"
    assert (flush.steps[0].samples[0].value, lock.steps[0].samples[0].value) == (0.14, 12309.83)
    assert "synchronization" not in one("osu-7.4-latency.txt").steps[0].params


def test_osu_one_sided_tests_ran_on_two_ranks_not_an_unknown_count():
    """osu_put_latency (and every one-sided test but the Multi ones) requires exactly two processes:
    it was stored as 0 ranks with a note calling it a collective ("give --np")."""
    run = one("osu-7.4-put-latency-flush.txt")
    assert run.steps[0].ranks == 2
    assert not any("rank count" in n for n in run.notes), run.notes


def test_osu_on_gpu_buffers_is_the_mpi_kernel_on_those_buffers_never_on_host_memory(tmp_path):
    # an osu_latency -d cuda D D was stored as the mpi kernel's pingpong on host memory (its default
    # buffer), so `compare` set GPU-to-GPU latencies against host ones as the same measurement
    (st,) = _osu_on(tmp_path, "osu-7.4-latency.txt", "CUDA",
                    "Send Buffer on DEVICE (D) and Receive Buffer on DEVICE (D)").steps
    assert (st.kernel, st.params) == ("mpi", {"op": "pingpong", "buffer": "device"})
    (st,) = _osu_on(tmp_path, "osu-7.4-bw.txt", "ROCM",
                    "Send Buffer on MANAGED (M) and Receive Buffer on MANAGED (M)").steps
    assert (st.kernel, st.params) == ("mpi", {"op": "bw", "buffer": "managed"})
    # host to device: no buffer setting of the kernel; a collective: OSU does not say where its buffers are
    (st,) = _osu_on(tmp_path, "osu-7.4-latency.txt", "CUDA",
                    "Send Buffer on HOST (H) and Receive Buffer on DEVICE (D)").steps
    assert st.kernel == "osu" and st.params == {"test": "Latency", "accelerator": "cuda", "send-buffer": "host",
                                                  "receive-buffer": "device"}
    (st,) = _osu_on(tmp_path, "osu-7.4-allreduce.txt", "CUDA", None).steps
    assert st.kernel == "osu" and st.params == {"test": "Allreduce Latency", "accelerator": "cuda"}
    assert st.samples[0].phase == "allreduce-latency"


def test_imb_sections_become_steps_per_benchmark():
    run = one("imb-2021.3-mpi1.txt")
    steps = {st.name: st for st in run.steps}
    assert run.command.endswith("Barrier Allgather") and run.started.year == 2026
    pp = steps["IMB PingPong np 2"]
    assert pp.kernel == "mpi" and pp.params == {"op": "pingpong"}
    assert (pp.samples[-1].size_bytes, pp.samples[-1].value, pp.samples[-1].record["bandwidth_mb_s"]) == \
        (4096, 1.53, 2681.12)
    ar = steps["IMB Allreduce np 2"]
    assert ar.params == {"op": "allreduce", "sync": "none"} and ar.samples[0].size_bytes == 4
    assert steps["IMB Barrier np 2"].samples[0].size_bytes == 0
    assert steps["IMB Sendrecv np 2"].kernel == "imb"
    assert one("imb-2019.1-mpi1.txt").version == "2019u1"
    # -npmin 2 on 4 ranks: a section per process count, the idle ranks' line skipped
    groups = {(st.name, st.ranks): len(st.samples) for st in one("imb-2021.3-groups.txt").steps}
    assert groups == {("IMB PingPong np 2", 2): 8, ("IMB Allreduce np 2", 2): 5, ("IMB Allreduce np 4", 4): 5,
                      ("IMB Barrier np 2", 2): 1, ("IMB Barrier np 4", 4): 1}


def test_stored_run_is_marked_dated_and_its_environment_unavailable(tmp_path):
    store = Store(f"sqlite:///{tmp_path / 's.db'}")
    path = str(FIXTURES / "iperf3-3.12-tcp.json")
    (run,) = parse_file(path)
    (run_id,) = store_runs(store, [run], path, Overrides(label="net-2024"))
    row = store.run(run_id)
    assert row.imported_from.startswith("iperf3 3.12 JSON, file ") and row.host == "vm"
    stamp = json.loads((FIXTURES / "iperf3-3.12-tcp.json").read_text())["start"]["timestamp"]["timesecs"]
    started = dt.datetime.fromtimestamp(stamp, dt.timezone.utc)
    assert row.started.replace(tzinfo=dt.timezone.utc) == started
    (env,) = store.environments_of(run_id).values()
    assert env["cpu.model_error"] == "imported from iperf3 3.12 JSON: not recorded"
    assert env["import.system_info"].startswith("Linux vm") and "cpu.model" not in env
    # the history counts it at its own date
    assert [r.id for r in store.list_runs(until=started + dt.timedelta(seconds=1))] == [run_id]
    assert store.list_runs(until=started) == []


@pytest.mark.parametrize("name, version, reason", [
    ("dd-9.1-transcript.txt", None, "GNU dd prints no version beside its figures"),
    ("iperf-2.1.8-tcp-client.txt", None, "iperf 2 prints its version only for iperf -v"),
    ("iperf-2.1.8-csv-P2-client.csv", None, "iperf 2's -y C rows name no version"),
    ("netperf-2.7.1-tcp-stream.txt", None, "netperf prints its version only for netperf -V"),
    ("ior-csv-4.0.0-posix.csv", None, "IOR's CSV names no version"),
    ("iperf3-3.12-tcp.txt", None, "iperf3's text states its version only with -V"),
    ("iperf3-3.12-server-tcp.txt", None, "iperf3's server text states its version only with -V"),
    ("fio-3.33-terse2-randrw.txt", None, "fio's terse version 2 names no fio version"),
    # the tool's own version line in the transcript: `dd --version` (Debian's "dd (coreutils) 9.1"),
    # `iperf -v`, `netperf -V` (its -k LOCAL_VERSION printed "Deprecated": not a version)
    ("dd-9.1-version-transcript.txt", "9.1", None),
    ("iperf-2.1.8-version-transcript.txt", "2.1.8", None),
    ("netperf-2.7.1-version-transcript.txt", "2.7.1", None)])
def test_tool_version_is_the_files_or_stored_unavailable_with_the_reason(tmp_path, name, version, reason):
    """dd, iperf 2 and netperf print no version beside their figures: their runs stored none and said
    nothing of why. Now each stores the version its transcript printed, else import.tool_version_error."""
    store = Store(f"sqlite:///{tmp_path / 's.db'}")
    path = str(FIXTURES / name)
    runs = parse_file(path)
    for run_id in store_runs(store, runs, path, Overrides(host="vm", date=dt.datetime(2026, 12, 7))):
        (env,) = store.environments_of(run_id).values()
        assert env.get("import.tool_version") == version
        if reason:
            assert env["import.tool_version_error"].startswith(reason)
        else:
            assert "import.tool_version_error" not in env
        assert store.run(run_id).imported_from.startswith(" ".join(x for x in (runs[0].tool, version) if x) + " ")


def test_a_run_whose_file_gives_no_end_has_no_duration_not_zero_seconds(cli, store_url):
    # OSU prints no date: the run was stored as finished when it started, so `list` said it took 0.0 s and
    # `list --by`/the history counted a 0 s run in every group's median and time used
    osu, iperf3 = str(FIXTURES / "osu-7.4-bw.txt"), str(FIXTURES / "iperf3-3.12-tcp.json")
    assert cli("import", "--host", "n01", "--date", "2024-01-01", osu, iperf3).status == 0
    (osu_end,), (iperf3_start, iperf3_end) = (store_rows(store_url, "select finished from runs where id = 1")[0],
                                              store_rows(store_url, "select started, finished from runs where id = 2")[0])
    assert osu_end is None and iperf3_end > iperf3_start   # iperf3 states its duration
    assert store_rows(store_url, "select count(*) from steps where finished is null") == [(1,)]
    row = next(line for line in cli("list").stdout.splitlines() if line.startswith("│ 1 "))
    assert row.split("│")[5].strip() == "-", row


def test_list_by_shows_the_time_of_runs_without_an_end_as_unknown_not_zero(cli, store_url, tmp_path):
    """`list --by label` said an OSU run (no end in its file) used 0.0 s: a
    group's time used summed no duration to 0. Such a group's time used and
    median are unknown ('-'), and in a group beside a run with an end, only
    that run's time counts."""
    osu, iperf3 = str(FIXTURES / "osu-7.4-bw.txt"), str(FIXTURES / "iperf3-3.12-tcp.json")
    assert cli("import", "--label", "osu-only", "--date", "2024-01-01", osu).status == 0
    assert cli("import", "--again", "--label", "mixed", "--date", "2024-01-01", osu, iperf3).status == 0
    by_label = cli("list", "--by", "label").stdout
    cells = {row[0]: row[1:] for row in ([c.strip() for c in line.split("│")[1:-1]]
                                         for line in by_label.splitlines() if line.startswith("│"))}
    # runs, ok, failed, cut short, running, time used, median run
    assert cells["osu-only"] == ["1", "1", "0", "0", "0", "-", "-"], by_label
    from clusterbench.analysis.run_groups import summarise
    from clusterbench.store import Store

    groups = {g.key: g for g in summarise(Store(store_url).list_runs(), "label")}
    assert groups["osu-only"].total_s is None and groups["osu-only"].median_s is None
    mixed = groups["mixed"]
    assert mixed.runs == 2 and len(mixed.durations_s) == 1 and mixed.total_s == mixed.median_s > 0
    assert cells["mixed"][5] == cells["mixed"][6] != "-", by_label
    history = tmp_path / "h.html"
    assert cli("history", "-o", str(history)).status == 0
    # the page's month 2024-01 holds the two OSU runs alone (iperf3's is at its file's date): it said 0.0 s
    assert "0.0 s" not in history.read_text(), "a time used of 0 s on the history page"


def test_imported_steps_store_what_tells_them_from_their_siblings_as_measured_ones_do(cli, store_url):
    """steps.swept (0012) was NULL for every imported step, as for one stored
    before the fact: an IMB file's sections differ by benchmark and process
    count, which its steps now say (["op", "np"]), as a sweep's steps do; a
    step with no sibling (OSU's one, whose sizes are its samples') stores []."""
    from conftest import as_json

    imb, osu = str(FIXTURES / "imb-2021.3-groups.txt"), str(FIXTURES / "osu-7.4-bw.txt")
    assert cli("import", "--host", "n01", imb, osu).status == 0
    stored = {(name, ranks): as_json(swept) for name, ranks, swept in
              store_rows(store_url, "select name, ranks, swept from steps order by id")}
    assert stored == {("IMB PingPong np 2", 2): ["op", "np"], ("IMB Allreduce np 2", 2): ["op", "np"],
                      ("IMB Allreduce np 4", 4): ["op", "np"], ("IMB Barrier np 2", 2): ["op", "np"],
                      ("IMB Barrier np 4", 4): ["op", "np"], ("OSU Bandwidth", 2): []}, stored
    # the names are shown as the files gave them (they end in no bracket to put in words)
    shown = cli("show", "1").stdout
    assert "IMB Allreduce np 4 [ok]" in shown and "IMB Barrier np 2 [ok]" in shown, shown


def test_a_report_of_an_imported_run_leaves_out_what_the_file_does_not_say(cli, tmp_path):
    """An OSU file names no user and no command: the report said "by : ``"."""
    assert cli("import", "--host", "n01", str(FIXTURES / "osu-7.4-bw.txt")).status == 0
    lines = cli("report", "1", "--format", "md", "-o", "-").stdout.splitlines()
    md = lines[lines.index("## Run 1: ok") + 2]   # the run's heading, a blank line, its line
    assert md.endswith(" on n01"), md
    assert cli("report", "1", "-o", str(tmp_path / "r.html")).status == 0
    assert re.search(r"<p>[^<]* UTC on n01</p>", (tmp_path / "r.html").read_text())


def test_cli_imports_lists_shows_and_refuses_unknown_files(cli, tmp_path, store_url):
    r = cli("import", "--label", "old", str(FIXTURES / "fio-3.33-randread.json"),
            str(FIXTURES / "osu-5.3-allreduce.txt"), "--np", "2", "--host", "n01", "--date", "2019-05-01")
    assert r.status == 0, r.stderr
    assert "stored as run 1" in r.stdout and "stored as run 2" in r.stdout
    assert store_rows(store_url, "select host, started from runs order by id") == [
        ("n01", "2026-11-23 21:18:39.000000"), ("n01", "2019-05-01 00:00:00.000000")]
    assert store_rows(store_url, "select ranks from steps where run_id = 2") == [(2,)]
    listed = cli("list")
    assert listed.stdout.count("ok (imported)") == 2
    by_month = cli("list", "--by", "month")   # the history counts them at their own dates
    assert "2019-05" in by_month.stdout and "2026-11" in by_month.stdout
    shown = cli("show", "1")
    assert "imported from fio 3.33 JSON" in shown.stdout and "randread" in shown.stdout
    exported = json.loads(cli("export", "2", "--format", "json").stdout)
    assert exported["runs"][0]["imported_from"].startswith("OSU 5.3 text")
    junk = tmp_path / "notes.txt"
    junk.write_text("meeting notes\n")
    bad = cli("import", str(FIXTURES / "iperf3-3.12-tcp.json"), str(junk))
    assert bad.status == 2 and bad.stderr.strip().count("\n") == 0
    assert "not any known format (formats: ior-json, fio, iperf3, iperf2, dd, netperf, ior-csv, ior, mdtest, osu, imb, himeno, stream)" in bad.stderr
    assert store_rows(store_url, "select count(*) from runs") == [(2,)]   # the good file was not stored either
    dry = cli("import", "--dry-run", str(FIXTURES / "ior-4.0.0-shared.json"))
    assert dry.status == 0 and "would store" in dry.stdout and "write [buffered] 2124.9086 MiB/s" in dry.stdout
    assert store_rows(store_url, "select count(*) from runs") == [(2,)]
    # --dry-run shows what --np would store: it showed 'ranks 0' and the note asking for --np
    dry = cli("import", "--dry-run", "--again", "--np", "4", str(FIXTURES / "osu-5.3-allreduce.txt"))
    assert dry.status == 0 and "(ranks 4)" in dry.stdout and "--np" not in dry.stderr, (dry.stdout, dry.stderr)


def test_imb_io_aggregate_and_non_aggregate_sections_are_two_steps():
    """IMB-IO (and IMB-EXT) run each benchmark in two modes, `MODE: AGGREGATE` and `MODE:
    NON-AGGREGATE`, printed as two sections of one name: they were two steps of one name and the same
    parameters, which compare matched as one measurement (17.70 us and 2,543.66 us for 1 byte)."""
    run = one("imb-2021.9-io.txt")
    steps = {st.name: st for st in run.steps}
    assert list(steps) == ["IMB S_Write_Indv np 1 aggregate", "IMB S_Write_Indv np 1 non-aggregate",
                           "IMB P_Read_Shared np 2 aggregate"]
    agg, non = steps["IMB S_Write_Indv np 1 aggregate"], steps["IMB S_Write_Indv np 1 non-aggregate"]
    assert (agg.params, non.params) == ({"benchmark": "S_Write_Indv", "mode": "aggregate"},
                                        {"benchmark": "S_Write_Indv", "mode": "non-aggregate"})
    assert [s.value for s in agg.samples][1] == 17.70 and [s.value for s in non.samples][1] == 2543.66
    assert "mode" not in one("imb-2021.3-mpi1.txt").steps[0].params   # IMB-MPI1 prints no mode


def test_imb_nbc_overlap_tables_are_taken_not_refused():
    """IMB-NBC's tables have no t[usec] or t_avg[usec] but t_ovrl, t_pure, t_CPU and overlap[%]: a real
    IMB-NBC file was refused as holding no benchmark table. The sample is t_pure, the non-blocking
    collective alone (what IMB-MPI1's t_avg is of the blocking one)."""
    run = one("imb-2021.9-nbc.txt")
    steps = {st.name: st for st in run.steps}
    assert list(steps) == ["IMB Ibcast np 2", "IMB Iallreduce np 2"]
    ibcast = steps["IMB Ibcast np 2"]
    assert (ibcast.kernel, ibcast.params) == ("imb", {"benchmark": "Ibcast"})
    s = ibcast.samples[3]   # "4   20   4.25   2.61   1.80   6.18"
    assert (s.size_bytes, s.value, s.unit) == (4, 2.61, "us")
    assert (s.record["t_ovrl_us"], s.record["t_cpu_us"], s.record["overlap_percent"]) == (4.25, 1.80, 6.18)
    assert [x.size_bytes for x in steps["IMB Iallreduce np 2"].samples] == [0, 4, 8, 16]


def test_imb_multi_sections_are_taken_not_silently_dropped():
    """IMB-MPI1 -multi 0|1 heads a benchmark "# ( 2 groups of 2 processes each running simultaneous )"
    instead of "# #processes = 4": its Multi-PingPong section was left out with nothing said, the
    file stored with its Allreduce alone."""
    run = one("imb-2021.9-multi0.txt")
    steps = {st.name: st for st in run.steps}
    assert list(steps) == ["IMB Multi-PingPong np 4", "IMB Allreduce np 4"]
    multi = steps["IMB Multi-PingPong np 4"]
    assert (multi.kernel, multi.params, multi.ranks) == ("imb", {"benchmark": "Multi-PingPong", "groups": "2"}, 4)
    assert [(s.size_bytes, s.value, s.record["t_max_us"]) for s in multi.samples][1] == (1, 456.62, 1050.26)
    # -multi 1: a row per group and size
    (each,) = one("imb-2021.9-multi1.txt").steps
    assert [(s.size_bytes, s.record["group"], s.value) for s in each.samples][:2] == [(0, 0.0, 767.72), (0, 1.0, 637.13)]


def test_imb_uniband_and_biband_are_taken_not_silently_dropped():
    """IMB-MPI1's Uniband and Biband print no time, only Mbytes/sec and Msg/sec: their sections were
    left out with nothing said, the file stored with PingPong alone."""
    run = one("imb-2021.9-uniband.txt")
    steps = {st.name: st for st in run.steps}
    assert list(steps) == ["IMB PingPong np 2", "IMB Uniband np 2", "IMB Biband np 2"]
    uni = steps["IMB Uniband np 2"]
    assert (uni.kernel, uni.params) == ("imb", {"benchmark": "Uniband"})
    # "4   20   0.47   116897": MB/s (10^6) as MiB/s; the 0-byte row, a rate of 0 by definition, is left out
    s = uni.samples[2]
    assert (s.size_bytes, s.unit, s.value) == (4, "MiB/s", 0.47 * 1e6 / 2**20)
    assert (s.record["bandwidth_mb_s"], s.record["messages_per_s"], s.record["iterations"]) == (0.47, 116897, 20)
    assert [x.size_bytes for x in steps["IMB Biband np 2"].samples] == [1, 2, 4, 8]
    # a table of no column read is named in the note, not dropped unsaid
    text = (FIXTURES / "imb-2021.9-uniband.txt").read_text().replace("Mbytes/sec      Msg/sec", "Gbits/sec      Msg/sec")
    (cut,) = importers.get("imb").parse(text)
    assert [st.name for st in cut.steps] == ["IMB PingPong np 2"]
    assert "IMB Uniband: no row read (no t[usec], t_avg[usec], t_pure[usec] or Mbytes/sec column): not taken" \
        in cut.notes


def test_imb_2017_and_2018_banners_and_shell_prompts_around_them(tmp_path):
    run = one("imb-2017u2-mpi1.txt")   # "Intel (R) MPI Benchmarks 2017 update 2"
    assert (run.version, run.facts["import.system"].split()[:2]) == ("2017u2", ["Darwin", "16.7.0"])
    steps = {st.name: st for st in run.steps}
    assert set(steps) == {"IMB PingPong np 2", "IMB Allgather np 2", "IMB Allgather np 4", "IMB Alltoallv np 2",
                          "IMB Alltoallv np 4"}
    assert steps["IMB PingPong np 2"].samples[-1].value == 2.28 and steps["IMB Alltoallv np 4"].kernel == "imb"
    assert steps["IMB Allgather np 4"].samples[0].record["t_max_us"] == 0.07
    # the same output as pasted from a terminal: the prompt and the command line above it
    text = (FIXTURES / "imb-2017u2-mpi1.txt").read_text()
    pasted = tmp_path / "imb.log"
    pasted.write_text("[user@login01 ~]$ mpirun -n 4 IMB-MPI1 PingPong Allgather Alltoallv -npmin 2 -msglog 12\n"
                      + text + "[user@login01 ~]$ \n")
    assert [s.value for s in one_file(pasted).steps[0].samples] == [s.value for s in steps["IMB PingPong np 2"].samples]
    # a real run of IMB-MPI1 2018 (intel/mpi-benchmarks v2018.0 built against MPICH 4.0.2; "2018", no update)
    run = one("imb-2018.0-mpi1.txt")
    assert run.version == "2018" and run.facts["import.system"].startswith("Linux ")
    steps = {st.name: st for st in run.steps}
    assert {name: len(st.samples) for name, st in steps.items()} == \
        {"IMB PingPong np 2": 14, "IMB Sendrecv np 2": 14, "IMB Allreduce np 2": 11}
    last = steps["IMB PingPong np 2"].samples[-1]
    assert (last.size_bytes, last.value, last.record["bandwidth_mb_s"]) == (4096, 2.38, 1723.21)
    assert steps["IMB Allreduce np 2"].samples[0].record["t_max_us"] == 2.2


def test_imb_before_2017_prints_mebibytes_and_its_mb_per_s_is_converted():
    """IMB 3.x and 4.x divide by 2^20 for Mbytes/sec (IMB_output.c MEGA = 1.0/1048576.0), IMB 2018 on
    by 10^6: a 4.1 file's figure was stored and shown as MB/s 4.6 % low (9,426 for 4 MiB in 424.35 us,
    which is 9,884 MB/s)."""
    run = one("imb-4.1-pingpong.txt")   # a real IMB 4.1 output (tests/fixtures/README)
    (step,) = run.steps
    assert (run.version, step.name, len(step.samples)) == ("4.1", "IMB PingPong np 2", 24)
    for s in step.samples:
        if s.record["bandwidth_mib_s"] >= 100:   # figures of 5 digits and more: t rounds to 0.01 us
            assert s.bandwidth_mb_s == pytest.approx(s.size_bytes / s.value, rel=0.003), s.size_bytes
    last = step.samples[-1]
    assert (last.size_bytes, last.value, last.record["bandwidth_mib_s"]) == (4194304, 424.35, 9426.16)
    assert last.record["bandwidth_mb_s"] == pytest.approx(9426.16 * 1.048576)
    assert any("2^20" in n for n in run.notes)
    # 2018's are 10^6 already (4096 B in 2.38 us is 1,721 MB/s; IMB printed 1723.21): kept as printed
    newer = one("imb-2018.0-mpi1.txt").steps[0].samples[-1]
    assert (newer.record["bandwidth_mb_s"], "bandwidth_mib_s" in newer.record) == (1723.21, False)


def one_file(path):
    (run,) = parse_file(str(path))
    return run


def test_mdtest_1_9_summary_header_without_rate():
    run = one("mdtest-1.9.3-llnl.txt")    # "SUMMARY: (of 1 iterations)", LLNL's mdtest before IOR took it in
    (st,) = run.steps
    assert (run.version, st.ranks, st.kernel) == ("1.9.3", 4, "metadata")
    by_phase = {s.phase: s.value for s in st.samples}
    assert by_phase["file-stat"] == 1785168.770 and by_phase["tree-create"] == 111.431 and len(by_phase) == 9
    files = one("mdtest-1.9.3-llnl-files-only.txt")   # "1 tasks, 0 files": its file phases print 0.000
    assert {s.phase for s in files.steps[0].samples} == {"tree-create", "tree-remove"}
    assert any(n.startswith("4 phase(s) printed a rate of 0") for n in files.notes)


def test_ior_csv_rows_become_samples(tmp_path):
    run = one("ior-csv-hermes-checkpoint.csv")
    assert (run.tool, run.form, run.version) == ("IOR", "CSV", None)
    (st,) = run.steps
    assert st.ranks == 48 and st.params == {"blocksize": "128m", "xfersize": "1m"}
    assert [(s.phase, s.value, s.seconds) for s in st.samples] == [("write", 30.312, 202.6921),
                                                                   ("read", 2012.0224, 3.0536)]
    assert st.samples[1].record["iops"] == 2026.8185 and st.samples[1].record["latency_s"] == 0.0158
    # IOR writing its CSV to stdout, after its text banner: the banner's version and command line are taken
    head = (FIXTURES / "ior-4.0.0-posix-fpp.txt").read_text().split("\n")[:3]
    both = tmp_path / "ior.out"
    both.write_text("\n".join(head) + "\n" + (FIXTURES / "ior-csv-hermes-checkpoint.csv").read_text())
    run = one_file(both)
    assert (run.version, run.form, run.steps[0].kernel, run.steps[0].samples[0].condition) == ("4.0.0", "CSV", "pario",
                                                                                               "fsync")


@pytest.mark.parametrize("name,zeros", [("ior-4.1.0+dev-zero-time.json", 2), ("ior-csv-4.1.0+dev-zero-time.csv", 1)])
def test_ior_json_and_csv_time_printed_as_0_is_too_short_to_print_not_refused(name, zeros):
    """IOR's JSON and CSV print times to 4 decimals (%.4f) and bandwidth from the time unrounded: a
    read of a small file from the page cache, under 50 us, prints totalTime 0.0000 beside 31,300 MiB/s.
    Real IOR outputs were refused as data moved in no time."""
    (run,) = parse_file(str(FIXTURES / name))
    samples = [s for st in run.steps for s in st.samples]
    assert len(samples) == 4
    zero = [s for s in samples if s.record["total_s"] == 0]
    assert len(zero) == zeros
    assert all(s.phase == "read" and s.seconds is None and s.value > 0 for s in zero)
    assert all(any("printed as 0" in w for w in s.warnings) for s in zero)
    assert all(s.seconds == s.record["total_s"] > 0 for s in samples if s not in zero)


def test_ior_4_csv_of_a_real_run_is_imported_and_ior_3_3_csv_holding_no_result_is_refused(tmp_path):
    """IOR 4.0.0 built from hpc/ior and run here with -O summaryFormat=CSV:
    every write/read row a sample. IOR 3.3.0's CSV output (same line) prints
    the header's values run together and no result row at all (ior-output.c's
    CSV branches are empty): nothing to import, one line."""
    run = one("ior-csv-4.0.0-posix.csv")
    (st,) = run.steps
    assert (run.form, st.ranks, st.params) == ("CSV", 2, {"blocksize": "2m", "xfersize": "256k"})
    assert [(s.phase, s.repetition, s.value) for s in st.samples] == [
        ("write", 0, 1157.3687), ("read", 0, 12652.5008), ("write", 1, 2587.0803), ("read", 1, 10584.9943)]
    assert st.samples[0].seconds == 0.0035 and st.samples[0].record["iops"] == 4726.975
    with pytest.raises(BadInput) as e:
        parse_file(str(FIXTURES / "ior-csv-3.3.0-no-results.csv"))
    assert "not any known format" in e.value.message and "\n" not in e.value.message


def test_two_ior_csv_tables_in_one_file_are_two_runs(tmp_path):
    # ior-csv-4.0.0-two-runs.csv: the same IOR line run twice, `>> results.csv`: one step held both runs'
    # rows, repetitions 0 and 1 twice each
    runs = parse_file(str(FIXTURES / "ior-csv-4.0.0-two-runs.csv"))
    assert [[(s.phase, s.repetition, s.value) for st in r.steps for s in st.samples] for r in runs] == [
        [("write", 0, 4094.001), ("read", 0, 18682.8686), ("write", 1, 4242.0268), ("read", 1, 345.0611)],
        [("write", 0, 1014.4646), ("read", 0, 18020.6402), ("write", 1, 723.3117), ("read", 1, 1030.9215)]]
    assert any(n.startswith("2 CSV tables and no IOR banner: each table taken as a run") for n in runs[0].notes)
    # with IOR's text banner (stdout holding both), the runs are cut at the banners, each with its version
    head = "\n".join((FIXTURES / "ior-4.0.0-posix-fpp.txt").read_text().split("\n")[:3]) + "\n"
    table = (FIXTURES / "ior-csv-4.0.0-posix.csv").read_text()
    later = head.replace(" 21:20:", " 22:20:")   # the second run an hour later (the same run twice is taken once)
    assert later != head
    (tmp_path / "ior.out").write_text(head + table + later + table)
    runs = parse_file(str(tmp_path / "ior.out"))
    assert [(r.version, len(r.steps), len(r.steps[0].samples)) for r in runs] == [("4.0.0", 1, 4), ("4.0.0", 1, 4)]


def test_iperf3_text_gives_what_its_json_gives():
    tcp = one("iperf3-3.12-tcp.txt")
    (s,) = tcp.steps[0].samples
    assert (s.phase, s.condition, s.unit, s.value) == ("send", "receiver", "Gbit/s", 11.0)
    assert s.record["sender_gbit_per_s"] == 11.0 and s.record["retransmits"] == 3 and s.bytes == round(2.56 * 2**30)
    verbose = one("iperf3-3.12-tcp-verbose.txt")   # -V: version, uname, time, block size
    assert (verbose.version, verbose.hosts) == ("3.12", ["vm"])
    assert verbose.steps[0].params == {"role": "loopback", "streams": "1", "duration": "2", "message-size": "128k",
                                       "direction": "send"}
    assert one("iperf3-3.12-tcp-P2.txt").steps[0].samples[0].value == 3.97       # the [SUM] receiver line
    bidir = one("iperf3-3.12-bidir.txt").steps[0]
    assert [(s.phase, s.value) for s in bidir.samples] == [("send", 5.34), ("receive", 5.47)]
    assert one("iperf3-3.12-tcp-reverse.txt").steps[0].samples[0].phase == "receive"
    udp = one("iperf3-3.12-udp.txt").steps[0]
    assert udp.kernel == "iperf3" and udp.samples[0].record["jitter_ms"] == 0.062
    # two runs of the client in one log (-R, then forward), from a public README
    rev, fwd = parse_file(str(FIXTURES / "iperf3-text-reverse-then-send.txt"))
    assert [(r.steps[0].samples[0].phase, r.steps[0].samples[0].value) for r in (rev, fwd)] == [
        ("receive", 0.403), ("send", 0.218)]
    assert rev.steps[0].samples[0].record["retransmits"] == 1769


def test_a_dash_for_standard_input_is_refused_saying_import_reads_saved_files(cli, store_url):
    r = cli("import", "-")   # said '-: cannot read: No such file or directory'
    assert r.status == 2 and r.stderr.count("\n") == 1, r.stderr
    assert "not standard input" in r.stderr and "No such file" not in r.stderr, r.stderr


@pytest.mark.parametrize("date", ["0001-01-01", "1969-12-31 23:59", "9999-12-31", "3000-01-01T00:00:00"])
def test_a_date_before_1970_or_past_tomorrow_is_refused_in_one_line(cli, store_url, date):
    """--date took year 1 and 9999: a typo stored a run dated then (and year 1
    was stored as '1-01-01', which broke every view of the store)."""
    r = cli("import", "--date", date, str(FIXTURES / "osu-7.4-bw.txt"))
    assert r.status == 2 and "Traceback" not in r.stderr, r.stderr
    (line,) = r.stderr.strip().splitlines()
    assert f"'{date}'" in line and "--date" in line and ("1970-01-01" in line or "a day from now" in line), line
    assert not Path(store_url.removeprefix("sqlite:///")).exists()   # refused before the store is opened


def test_the_dates_at_either_end_of_the_range_are_taken(cli, store_url):
    tomorrow = (dt.datetime.now(dt.timezone.utc) + dt.timedelta(hours=23)).strftime("%Y-%m-%d %H:%M")
    for date in ("1970-01-01", tomorrow):
        assert cli("import", "--again", "--date", date, str(FIXTURES / "osu-7.4-bw.txt")).status == 0
    assert [s[:16] for (s,) in store_rows(store_url, "select started from runs order by id")] == [
        "1970-01-01 00:00", tomorrow]


@pytest.mark.parametrize("mtime_s", [-100_000_000_000, 300_000_000_000])   # 1901 and 2446 once ext4 has kept them
def test_an_undated_file_whose_modification_time_is_out_of_range_asks_for_date(cli, store_url, tmp_path, mtime_s):
    """OSU prints no date: the run was stored at the file's modification
    time, also one of 1901 or 2446 (a copy that kept no time, a clock far off)."""
    import os

    osu = tmp_path / "osu.txt"
    shutil.copy(FIXTURES / "osu-7.4-bw.txt", osu)
    os.utime(osu, (mtime_s, mtime_s))
    for args in ([], ["--dry-run"]):
        r = cli("import", *args, str(osu))
        assert r.status == 2 and "Traceback" not in r.stderr, r.stderr
        (line,) = r.stderr.strip().splitlines()
        assert "the file gives no date, and its modification time" in line and "give --date" in line, line
    assert not Path(store_url.removeprefix("sqlite:///")).exists()
    assert cli("import", "--date", "2024-01-01", str(osu)).status == 0
    os.utime(osu, (0, 0))   # the epoch (a reproducible archive's time) is in range: stored, with the note
    assert cli("import", "--again", str(osu)).status == 0
    assert [s[:10] for (s,) in store_rows(store_url, "select started from runs order by id")] == [
        "2024-01-01", "1970-01-01"]


@pytest.mark.parametrize("timesecs", [99_999_999_999, -100])   # 5138 and 1969: the clock of the host that wrote it
def test_a_date_the_file_gives_out_of_range_is_refused_or_replaced_by_date(cli, store_url, tmp_path, timesecs):
    """iperf3's timesecs (fio's timestamp, IOR's Began) out of run_dates'
    range was stored as the run's date: year 5138 beside this year's runs."""
    doc = json.loads((FIXTURES / "iperf3-3.1.3-tcp.json").read_text())
    doc["start"]["timestamp"]["timesecs"] = timesecs
    iperf3 = tmp_path / "iperf3.json"
    iperf3.write_text(json.dumps(doc))
    for args in ([], ["--dry-run"]):
        r = cli("import", *args, str(iperf3))
        assert r.status == 2 and "Traceback" not in r.stderr, r.stderr
        (line,) = r.stderr.strip().splitlines()
        assert "the file dates its run" in line and "give --date" in line, line
    assert not Path(store_url.removeprefix("sqlite:///")).exists()
    assert cli("import", "--date", "2024-02-29 12:00", str(iperf3)).status == 0   # --date stands in for it
    assert store_rows(store_url, "select started, finished from runs") == [("2024-02-29 12:00:00.000000", None)]
    (said,) = store_rows(store_url, "select imported_from from runs")[0]
    assert "the file dates it" in said and "stored at --date" in said, said


def test_an_import_stopped_by_ctrl_c_between_files_says_what_it_stored_and_what_it_did_not(tmp_path, monkeypatch):
    """Ctrl-C during `import a b c ...` left some files' runs stored, the last of them stored but never said
    ("stored as run N" not printed), and said only "interrupted": the import run again was refused as
    "already imported" for files it had not said it stored. In-process, a real SIGINT as file 2 is stored."""
    import os
    import signal

    from click.testing import CliRunner

    from clusterbench.cli import cli
    from clusterbench.importers import import_runs

    names = ["fio-3.33-terse3-randread.txt", "fio-3.33-terse2-randrw.txt", "osu-7.4-bw.txt", "imb-2021.3-mpi1.txt"]
    real = import_runs.store_runs
    calls = []

    def store_then_ctrl_c(*args, **kwargs):
        ids = real(*args, **kwargs)
        calls.append(ids)
        if len(calls) == 2:
            # after the file's rows are written, before they are said; raised in this thread (os.kill may hand
            # it to pytest-xdist's I/O thread, and CPython 3.11 then runs the handler later)
            signal.raise_signal(signal.SIGINT)
        return ids

    monkeypatch.setattr(import_runs, "store_runs", store_then_ctrl_c)
    db = tmp_path / "s.db"
    r = CliRunner().invoke(cli, ["import", *(str(FIXTURES / n) for n in names), "--host", "h", "--date", "2026-01-01",
                                 "--db", str(db)])
    assert r.exit_code == 130, r.output
    assert len(re.findall(r"^stored as run \d+: ", r.output, re.M)) == 2 == len(calls)
    assert (f"note: stopped after 2 files of 4, stored as runs 1-2; {FIXTURES / names[2]} and the 1 after it not "
            "stored\n") in r.output, r.output
    assert store_rows(f"sqlite:///{db}", "select id from runs order by id") == [(1,), (2,)]
