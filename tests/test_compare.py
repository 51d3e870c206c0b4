"""compare on real runs: a tmpfs directory against the disk, and N labels."""
from __future__ import annotations

import json
import os
import subprocess

import pytest


@pytest.fixture
def tmpfs_dir(tmp_path):
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    mnt = tmp_path / "tmpfs"
    mnt.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256m", "tmpfs", str(mnt)], check=True)
    yield mnt
    subprocess.run(["umount", str(mnt)], check=True)


@pytest.mark.timeout(180)
def test_compare_two_file_systems_shows_the_file_system_line_and_verdicts(cli, tmp_path, tmpfs_dir):
    disk = tmp_path / "disk"
    disk.mkdir()
    common = ["--file-size=16m", "--block-size=1m", "--write=fsync", "--read=warm", "--repeat", "5", "--quiet"]
    assert cli("run", "seqio", f"--dir={disk}", "--label", "disk", *common).status == 0
    assert cli("run", "seqio", f"--dir={tmpfs_dir}", "--label", "tmpfs", *common).status == 0
    r = cli("compare", "disk", "tmpfs")
    assert r.status == 0, r.stderr
    fs_line = next(line for line in r.stdout.splitlines() if "target directory, file system" in line)
    assert "tmpfs" in fs_line and "ext4" in fs_line or "xfs" in fs_line or "btrfs" in fs_line
    assert "seqio: write" in r.stdout and "seqio: read" in r.stdout
    assert "tmpfs/disk" in r.stdout
    assert any(v in r.stdout for v in ("faster", "slower", "no significant difference"))


@pytest.mark.timeout(180)
def test_compare_three_labels_and_steps_on_one_side_only(cli, tmp_path, tmpfs_dir):
    disk, disk2 = tmp_path / "disk", tmp_path / "disk2"
    disk.mkdir()
    disk2.mkdir()
    common = ["--file-size=8m", "--block-size=1m", "--write=buffered", "--read=warm", "--repeat", "5", "--quiet"]
    for label, d in (("disk", disk), ("tmpfs", tmpfs_dir), ("disk2", disk2)):
        assert cli("run", "seqio", f"--dir={d}", "--label", label, *common).status == 0
    assert cli("run", "seqio", f"--dir={disk}", "--label", "disk", "--file-size=4m", "--read=none",
               "--repeat", "5", "--quiet").status == 0
    r = cli("compare", "disk", "tmpfs", "disk2")
    assert r.status == 0, r.stderr
    assert "tmpfs/disk" in r.stdout and "disk2/disk" in r.stdout
    assert r.stdout.count("environment: disk vs") == 2
    assert "only in disk:" in r.stdout


@pytest.mark.timeout(60)
@pytest.mark.parametrize("setup, args, message", [
    ([], ["compare", "x", "y"], "no store at"),  # reading never creates a store (#20 finding 5)
    ([["run", "null", "--repeat", "5", "--label", "a", "--quiet"]], ["compare", "a", "zz"], "no run with id or label"),
    ([["run", "null", "--repeat", "5", "--label", "a", "--quiet"]], ["compare", "a"], "at least two"),
    ([["run", "null", "--repeat", "5", "--label", "a", "--quiet"],
      ["run", "seqio", "--file-size=1m", "--read=none", "--repeat", "5", "--label", "b", "--quiet"]],
     ["compare", "a", "b"], "no measurement with equal kernel and parameters"),
    # one configuration twice pooled its samples twice (n=10 for 5 repetitions, p=1, a narrower CI)
    ([["run", "null", "--repeat", "5", "--label", "a", "--quiet"]], ["compare", "a", "a"], "a is given twice"),
    ([["run", "null", "--repeat", "5", "--label", "a", "--quiet"]], ["compare", "a", "1"], "run 1 is in both a and run 1 (a)"),
])
def test_compare_bad_input_is_one_line_exit_2(cli, tmp_path, setup, args, message):
    for s in setup:
        s = [x.replace("--file-size=1m", f"--file-size=1m --dir={tmp_path}") for x in s]
        assert cli(*" ".join(s).split()).status == 0
    r = cli(*args)
    assert r.status == 2 and message in r.stderr and len(r.stderr.strip().splitlines()) == 1


@pytest.mark.timeout(120)
def test_sweep_prints_the_swept_parameter_as_rows_and_configurations_as_columns(cli, tmp_path):
    suite = tmp_path / "sweep.toml"
    suite.write_text('[[steps]]\nkernel = "null"\nrepeat = 5\n'
                     'params = { seconds = "0.001", bytes = ["1m", "2m", "4m", "8m"] }\n')
    for label in ("x", "y"):
        assert cli("run", str(suite), "--label", label, "--quiet", "--report", str(tmp_path / f"{label}.html")).status == 0
    r = cli("compare", "x", "y")
    assert r.status == 0, r.stderr
    sweep = r.stdout[r.stdout.index("sweep of bytes"):]
    lines = [line for line in sweep.splitlines() if line.strip().startswith("│")]
    assert [line.split("│")[1].strip() for line in lines[:4]] == ["1m", "2m", "4m", "8m"]
    assert "x median" in sweep and "y median" in sweep
    html = (tmp_path / "x.html").read_text()
    assert "Sweep of bytes" in html and html.count("<svg") >= 2


def test_different_rank_counts_do_not_pool(cli, mpiexec):
    for np_ in ("1", "2"):
        assert cli("run", "null", "--np", np_, "--seconds=0.001", "--repeat", "5", "--label", f"np{np_}",
                   "--quiet").status == 0
    r = cli("compare", "np1", "np2")
    assert r.status == 2 and "no measurement with equal kernel and parameters" in r.stderr


def test_excluding_outliers_is_stated_and_changes_the_figures(tmp_path):
    from clusterbench.analysis.comparison import Point
    from clusterbench.results.sample import SampleKey

    p = Point("s", "null", {}, SampleKey("null", "none", "MiB/s", None),
              {"a": [100, 101, 99, 100, 100, 500], "b": [100, 100, 101, 99, 100, 100]})
    assert p.summary("a").maximum == 500
    p.exclude_outliers = True
    assert p.summary("a").maximum == 101 and p.summary("a").excluded_outliers
    assert p.kept("a") == [100, 101, 99, 100, 100]


def test_compare_with_excluded_outliers_says_so(cli):
    for label in ("a", "b"):
        assert cli("run", "null", "--seconds=0.001", "--repeat", "5", "--label", label, "--quiet").status == 0
    r = cli("compare", "a", "b", "--exclude-outliers")
    assert r.status == 0 and "outliers excluded (modified Z-score > 18.6 at n = 5)" in r.stdout
    from jsonschema import validate

    from clusterbench.report.compare_data import schema
    for flag, rule in (("--exclude-outliers", "modified Z-score > 18.6 at n = 5"), (None, None)):
        r = cli("compare", "a", "b", "--format", "json", *([flag] if flag else []))
        doc = json.loads(r.stdout)
        validate(doc, schema())
        assert (doc["exclude_outliers"], doc["outlier_rule"]) == (flag is not None, rule)


@pytest.mark.timeout(60)
def test_a_comparisons_rates_are_shown_in_the_unit_their_steps_table_takes_and_json_keeps_the_records(
        tmp_path, cbk_bin, monkeypatch):
    """The golden stream sweep measures 122,519 MiB/s: its step's table (show, Markdown, HTML) reads
    119.6 GiB/s, but the comparison of the same runs printed 122,519 MiB/s. Every view of a comparison
    takes the step table's rule, one unit for a step's rows of a unit across every configuration;
    compare's JSON keeps the records' MiB/s and value."""
    import io

    from rich.console import Console
    from test_golden_reports import fill_store

    from clusterbench.report import compare_data, compare_markdown, render
    from clusterbench.report.compare_terminal import print_comparison
    from clusterbench.report.data import Report
    from clusterbench.store import Store

    monkeypatch.setenv("CLUSTERBENCH_CBK", cbk_bin)
    url = f"sqlite:///{tmp_path / 'results.db'}"
    fill_store(url)
    report = Report.of(Store(url), ["base", "tuned"], False)
    table = report.comparison
    console = Console(width=250, file=io.StringIO(), color_system=None)
    print_comparison(console, table)
    terminal, md, html = console.file.getvalue(), compare_markdown.render(table), render("html", report)
    stream = [line for line in terminal.splitlines() if "stream sweep:" in line]
    assert len(stream) == 8 and all("GiB/s" in line for line in stream)   # the step's every row, one unit
    assert "119.6 [117.3..122.0 (75%)] n=3" in terminal and "122,519" not in terminal
    assert "| GiB/s | 119.6 (128.5 GB/s); 117.3..122.0" in md and "122,519" not in md
    assert '<span class="fig">119.6</span><br><small class="fig">(128.5 GB/s)</small>' in html
    assert "122,519" not in html.split("<h2>Comparison")[1].split("</table>")[0]
    copy = next(p for p in compare_data.as_dict(table)["points"]
                if p["title"] == "stream sweep: copy" and p["mode"] == "best, 2 threads")
    assert copy["unit"] == "MiB/s" and round(copy["results"]["base"]["median"]) == 122519


@pytest.mark.timeout(180)
def test_two_steps_of_a_suite_that_differ_only_in_their_directory_are_two_figures(cli, tmp_path):
    """The match ignores the directory (the same measurement on two file
    systems is what compare compares), so a suite's seqio on a disk and
    its seqio on a tmpfs, run before and after a change, were pooled into
    one figure under the first step's name: n = 6 of 3 repetitions, the
    disk's and the memory's rates mixed in one median."""
    first, second = tmp_path / "first", tmp_path / "second"
    first.mkdir()
    second.mkdir()
    step = ('[[steps]]\nname = "{name}"\nkernel = "seqio"\nrepeat = 3\n'
            'params = {{ dir = "{dir}", file-size = "64k", block-size = "4k", write = "buffered", read = "warm" }}\n')
    suite = tmp_path / "two-dirs.toml"
    suite.write_text(step.format(name="first", dir=first) + step.format(name="second", dir=second))
    for label in ("before", "after"):
        assert cli("run", str(suite), "--label", label, "--quiet", "--report-dir", str(tmp_path)).status == 0
    r = cli("compare", "before", "after", "--format", "json")
    assert r.status == 0, r.stderr
    points = json.loads(r.stdout)["points"]
    assert {p["title"] for p in points} == {"first: read", "first: write", "second: read", "second: write"}
    assert {(p["title"], label): p["results"][label]["n"] for p in points for label in ("before", "after")} == \
        {(p["title"], label): 3 for p in points for label in ("before", "after")}


def test_a_step_whose_twin_failed_in_one_run_still_matches_its_own(tmp_path):
    """The marks that keep two alike steps apart are read from the steps,
    not their samples: in a run whose tmpfs step failed before its first
    figure, the disk step still matches the disk step of the run where both
    measured, not nothing."""
    from clusterbench.analysis import comparison
    from clusterbench.store import Store

    store = Store(f"sqlite:///{tmp_path / 'r.db'}")
    for label, measured in (("both", ("disk", "memory")), ("one", ("disk",))):
        run = store.begin_run(label=label, command="test", suite="two-dirs")
        for position, (name, where) in enumerate((("disk", "/d"), ("memory", "/dev/shm/m"))):
            step = store.begin_step(run, position=position, name=name, kernel="seqio",
                                    params={"dir": where, "file-size": "64k"}, launcher="local", ranks=1,
                                    ranks_per_node=None)
            for i in range(3) if name in measured else ():
                store.add_sample(step, {"repetition": i, "phase": "write", "mode": "fsync",
                                        "rate": 100.0 + i + 1000 * position, "rate_unit": "MiB/s"}, [])
            store.finish_step(step, "ok" if name in measured else "failed")
        store.finish_run(run, "ok" if len(measured) == 2 else "failed")
    table = comparison.build(store, ["both", "one"])
    assert [(p.step, sorted(p.values["both"]), sorted(p.values["one"])) for p in table.points] == \
        [("disk", [100.0, 101.0, 102.0], [100.0, 101.0, 102.0])]
    assert [(p.step, sorted(p.values)) for p in table.partial] == [("memory", ["both"])]


def test_a_configuration_whose_runs_measured_nothing_is_said_to_have_nothing_not_other_parameters(cli):
    """Two runs of one command line that both failed before their first
    figure were refused with "no measurement with equal kernel and
    parameters in all of: a, b": their kernel and parameters are equal,
    and the user went looking for a difference between them."""
    for label in ("a", "b"):
        r = cli("run", "null", "--fail-at=0", "--repeat", "3", "--label", label, "--quiet")
        assert r.status == 1, r.stderr
    assert cli("run", "null", "--repeat", "3", "--label", "c", "--quiet").status == 0
    for args in (("a", "b"), ("c", "a")):
        r = cli("compare", *args)
        assert r.status == 2, r.stderr
        assert r.stderr.strip().splitlines() == \
            ["Error: a has no measurement to compare: run 1 failed (null: failing at repetition 0 as asked)"], r.stderr


def test_a_configuration_whose_runs_ran_on_two_machines_says_so(cli, tmp_path):
    """A label's runs are pooled, and the environment differences are its
    newest run's: a label measured on n01 and n03 compared as "m1 (n03) vs
    m2 (n02)", nothing saying half its samples came from n01. A note says
    which configuration pooled more than one environment, in every format."""
    from jsonschema import validate

    from clusterbench.report.compare_data import schema
    from conftest import REPO

    osu = str(REPO / "tests" / "fixtures" / "import" / "osu-7.4-bw.txt")
    for label, host in (("m1", "n01"), ("m1", "n03"), ("m2", "n02"), ("m2", "n02")):
        r = cli("import", "--again", "--label", label, "--host", host, "--date", "2024-01-01", osu)
        assert r.status == 0, r.stderr
    note = ("note: m1: its 2 runs ran in 2 different environments (hosts n01, n03), pooled here; "
            "the environment differences are of run 2 alone")
    r = cli("compare", "m1", "m2")
    assert r.status == 0 and note in r.stdout, r.stdout
    assert "m2: its" not in r.stdout   # two runs of one environment: nothing to say
    doc = json.loads(cli("compare", "m1", "m2", "--format", "json").stdout)
    validate(doc, schema())
    assert doc["pooled_environments"] == [note.removeprefix("note: ")]
    assert cli("report", "m1", "m2", "-o", str(tmp_path / "r.md")).status == 0
    assert note in (tmp_path / "r.md").read_text()
    assert cli("report", "m1", "m2", "-o", str(tmp_path / "r.html")).status == 0
    assert f"<p>{note}</p>" in (tmp_path / "r.html").read_text()


@pytest.mark.timeout(180)
def test_a_labels_io_and_memory_runs_on_one_machine_are_one_environment_two_directories_are_two(cli, tmp_path):
    """A label measured with `run seqio` and `run stream` on one machine was
    said to have "run in 2 different environments" (the seqio run's snapshot
    describes its target directory, the stream run's none), and comparing
    it with a label whose newest run was another kernel listed the 13 keys
    of that directory as differences. A directory one run describes alone
    is no difference; two directories measured under one label are."""
    one, two = tmp_path / "one", tmp_path / "two"
    one.mkdir()
    two.mkdir()
    seqio = ["--file-size=4m", "--block-size=1m", "--repeat", "1", "--quiet"]
    stream = ["run", "stream", "--array-size=1m", "--repeat", "1", "--quiet"]
    for label in ("a", "b"):
        assert cli("run", "seqio", f"--dir={one}", "--label", label, *seqio).status == 0
        assert cli(*stream, "--label", label).status == 0   # the newest run of each: no target directory
    assert cli("run", "seqio", f"--dir={one}", "--label", "c", *seqio).status == 0
    r = cli("compare", "a", "b", "c")
    assert r.status == 0, r.stderr
    assert "different environments" not in r.stdout, r.stdout
    said = [line for line in r.stdout.splitlines() if line.startswith("environment: ")]
    assert said == ["environment: a vs b: The environments recorded for a (%s) and b (%s) do not differ in any key "
                    "captured." % ((os.uname().nodename,) * 2),
                    "environment: a vs c: The environments recorded for a (%s) and c (%s) do not differ in any key "
                    "captured." % ((os.uname().nodename,) * 2)], r.stdout
    # the report's "Systems compared" says a label's runs of one environment in one row, not a row a run
    assert cli("report", "a", "b", "-o", str(tmp_path / "r.md")).status == 0
    text = (tmp_path / "r.md").read_text()
    table = text[text.index("## Systems compared"):].split("\n\n")[1].splitlines()
    assert [row.split("|")[1:4] for row in table] == [
        [" configuration ", " runs ", " host "], ["---", "---:", "---"],
        [" a ", " 1, 2 ", f" {os.uname().nodename} "], [" b ", " 3, 4 ", f" {os.uname().nodename} "]], table
    assert cli("run", "seqio", f"--dir={two}", "--label", "a", *seqio).status == 0
    r = cli("compare", "a", "b")
    assert r.status == 0, r.stderr
    assert "note: a: its 3 runs ran in 2 different environments" in r.stdout, r.stdout


@pytest.mark.timeout(120)
def test_the_verdict_column_promises_a_p_value_only_where_a_row_gives_one(cli, tmp_path):
    """Two runs of one repetition each: no row has a p-value, and the heading said "verdict (p)"
    all the same (terminal, Markdown and the report's HTML). With five a side the p is given."""
    for label, repeat in (("one-a", "1"), ("one-b", "1"), ("five-a", "5"), ("five-b", "5")):
        assert cli("run", "null", "--seconds=0.01", "--repeat", repeat, "--label", label, "--quiet").status == 0
    for labels, heading in ((("one-a", "one-b"), "verdict"), (("five-a", "five-b"), "verdict (p)")):
        terminal = cli("compare", *labels)
        markdown = cli("compare", *labels, "--format", "md")
        assert terminal.status == 0 and markdown.status == 0, terminal.stderr + markdown.stderr
        page = tmp_path / f"{labels[0]}.html"
        assert cli("report", *labels, "-o", str(page)).status == 0
        (header,) = [line for line in markdown.stdout.splitlines() if line.startswith("| measurement |")]
        assert [c.strip() for c in header.strip("|").split("|")][-1] == heading, header
        assert f"<th>{labels[1]}/{labels[0]}</th><th>{heading}</th>" in page.read_text()
        assert ("verdict (p)" in terminal.stdout) == (heading == "verdict (p)"), terminal.stdout
        assert ("(p=" in markdown.stdout) == (heading == "verdict (p)"), markdown.stdout
