"""The terminal's small frictions of a first hour (#38, items 7-14), each
re-tried as the issue wrote it."""
from __future__ import annotations

import os
import re
import sys

import pytest

from conftest import REPO, run_bounded, store_rows


@pytest.mark.timeout(10)
def test_one_warning_of_several_rows_is_one_line_with_each_rows_count():
    from clusterbench.analysis.step_summary import Row
    from clusterbench.results.warning_fold import step_lines

    busy = "a busy thread was on its CPU less than 95% of the time (shared machine?)"
    one = Row("clock", "1 busy", "MHz", values=[1.0] * 3, sample_warnings=[[busy], [busy], []])
    two = Row("clock", "2 busy", "MHz", values=[1.0] * 3, sample_warnings=[[busy], [busy], [busy]])
    assert step_lines([one, two]) == [f"2 of 3 repetitions (clock 1 busy), 3 of 3 (clock 2 busy): {busy}"]
    three = Row("clock", "3 busy", "MHz", values=[1.0] * 3, sample_warnings=[[busy]] * 3)
    assert step_lines([two, three]) == [f"3 of 3 repetitions: {busy}"]


@pytest.mark.timeout(10)
def test_one_warning_differing_only_in_its_figures_is_one_line_with_their_ranges():
    """The quick run's clock step printed five lines of one warning, one per
    distinct figure: 'clock 4,191 MHz is 1.61x the nominal ...' (a ratio
    glued to its x was no figure, and rows' figures were never ranged)."""
    from clusterbench.analysis.step_summary import Row
    from clusterbench.results.warning_fold import fold, step_lines

    def above(mhz, ratio):
        return f"clock {mhz} MHz is {ratio}x the nominal 2,596 MHz (/proc/cpuinfo's cpu MHz); on a VM"

    assert fold([[above("4,211", "1.62")], [above("4,218", "1.62")], [above("4,225", "1.63")]], 3) == [
        "3 of 3 repetitions: " + above("4,211-4,225", "1.62-1.63")]
    one = Row("clock", "1 busy", "MHz", values=[1.0] * 3,
              sample_warnings=[[above("4,211", "1.62")], [above("4,218", "1.62")], [above("4,225", "1.63")]])
    two = Row("clock", "2 busy", "MHz", values=[1.0] * 3,
              sample_warnings=[[above("4,191", "1.61")], [above("4,209", "1.62")], [above("4,122", "1.59")]])
    assert step_lines([one, two]) == ["3 of 3 repetitions: " + above("4,122-4,225", "1.59-1.63")]
    # names and dates with digits are not figures: 4x4, nfs4, 2026-12-07 stay as written
    assert fold([["a 4x4 grid on nfs4 since 2026-12-07: 5 errors"], ["a 4x4 grid on nfs4 since 2026-12-07: 7 errors"]],
                2) == ["2 of 2 repetitions: a 4x4 grid on nfs4 since 2026-12-07: 5-7 errors"]


LONG_TITLE_SUITE = """
description = "one step with a title as long as the quick suite's"

[[steps]]
name = "page cache: buffered write, warm read (what dd shows), a title as long as the quick suite's"
kernel = "seqio"
repeat = 2
params = { dir = "{dir}", file-size = "4m", block-size = "1m", write = "buffered", read = "warm" }
"""


@pytest.mark.timeout(120)
@pytest.mark.parametrize("columns", [None, "80"])
def test_progress_lines_keep_their_figures_whole_when_piped(cbk_bin, store_url, tmp_path, columns):
    """#38 item 7: piped, the quick run's progress was cut at 80 columns ("read warm 26,437.…")."""
    suite = tmp_path / "long.toml"
    suite.write_text(LONG_TITLE_SUITE)
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    env.update(CLUSTERBENCH_CBK=cbk_bin, CLUSTERBENCH_DB=store_url, **({"COLUMNS": columns} if columns else {}))
    p = run_bounded([sys.executable, "-m", "clusterbench", "run", str(suite), f"--dir={tmp_path}"],
                    timeout=120, env=env)
    assert p.returncode == 0, p.stderr
    assert re.search(r"2/2 read warm [\d,]+\.\d MiB/s", p.stderr), p.stderr
    assert "…" not in p.stderr


BRACKETED_SUITE = """
description = "a step that runs and one skipped, named as a sweep names its steps"

[[steps]]
name = "scaling: 1 node x 1 rank [op=allreduce]"
kernel = "null"
repeat = 2
params = { seconds = 0.01 }

[[steps]]
name = "scaling: 2 nodes x 1 rank [op=alltoall]"
kernel = "null"
requires = ["a-fabric-not-here"]
repeat = 2
params = { seconds = 0.01 }
"""


@pytest.mark.timeout(120)
def test_a_skipped_steps_progress_line_says_its_whole_name_and_why_as_stored(cbk_bin, store_url, tmp_path):
    """`run cluster` printed "skipped scaling: 2 nodes x 1 rank : not run: ...":
    rich read the name's bracket ('[op=allreduce]') as markup and dropped it,
    and the bar of a running step lost it too."""
    suite = tmp_path / "bracketed.toml"
    suite.write_text(BRACKETED_SUITE)
    env = {**os.environ, "CLUSTERBENCH_CBK": cbk_bin, "CLUSTERBENCH_DB": store_url, "COLUMNS": "200"}
    p = run_bounded([sys.executable, "-m", "clusterbench", "run", str(suite)], timeout=100, env=env)
    assert p.returncode == 0, p.stderr
    (name, message), = store_rows(store_url, "select name, message from steps where status = 'skipped'")
    assert f"skipped {name}: {message}\n" in p.stderr, p.stderr
    assert "scaling: 1 node x 1 rank [op=allreduce] " in p.stderr, p.stderr


@pytest.mark.timeout(120)
def test_piped_views_end_no_line_in_spaces_and_name_the_mpi_library_as_people_do(cli):
    """#38 item 14: 37 of 167 lines of piped `show` ended in spaces; `kernels`
    printed the raw banner "MPI: MPICH Version:  4.0.2"."""
    assert cli("run", "null", "--seconds=0.001", "--repeat", "3", "--label", "a-label-to-pad-the-title",
               "--quiet").status == 0
    for args in (("show", "1"), ("list",), ("kernels",), ("list", "--by", "month")):
        r = cli(*args)
        assert r.status == 0, r.stderr
        ending = [line for line in r.stdout.splitlines() if line.endswith(" ")]
        assert not ending, (args, ending)
    title = cli("kernels").stdout.splitlines()[0]
    assert re.search(r"MPI: (MPICH|Open MPI|Intel MPI|MVAPICH) \d|MPI: not built in", title), title
    assert "Version:" not in title


@pytest.mark.timeout(120)
def test_a_cold_read_that_was_not_cold_says_how_much_was_cached_not_a_field_name(cli, tmp_path):
    """#38 item 14: the warning cited resident_fraction_before, a field no view shows.
    A cold read on tmpfs cannot drop its pages: it is never cold."""
    shm = "/dev/shm"
    if not os.path.isdir(shm) or "tmpfs" not in open("/proc/mounts").read().split(f" {shm} ")[-1][:8]:
        pytest.skip("no tmpfs at /dev/shm")
    import tempfile

    with tempfile.TemporaryDirectory(dir=shm) as d:
        r = cli("run", "seqio", f"--dir={d}", "--file-size=4m", "--write=fsync", "--read=cold", "--repeat", "2",
                "--quiet")
        assert r.status == 0, r.stderr
    show = cli("show", "1").stdout
    assert re.search(r"cold read not achieved: \d+% of the data was still in the page cache when the read began",
                     show), show
    assert "resident_fraction_before" not in show


@pytest.mark.timeout(60)
def test_a_mistyped_run_target_suggests_the_suite_and_lists_suites_too(cli):
    """#38 item 10: `run quik` listed kernels only, with no "did you mean quick"."""
    r = cli("run", "quik")
    assert r.status == 2 and r.stderr.count("\n") == 1
    assert "did you mean quick?" in r.stderr and "suites: " in r.stderr and "kernels: " in r.stderr
    assert "node" in r.stderr.split("suites: ")[1]
    r = cli("run", "zzzz")
    assert r.status == 2 and "did you mean" not in r.stderr


NUMBER = r"\d[\d,]*(?:\.\d+)?"


@pytest.mark.timeout(180)
def test_narrow_views_keep_every_figure_whole_and_never_cut_a_path(cli, tmp_path):
    """#38 item 11: `show 1 --width 80` split an interval over three lines
    ("1,688." / "." / "3,560"); `list` and `compare` cut paths with "…"."""
    deep = tmp_path / "a-directory-with-a-long-name" / "and-another-one-below-it"
    deep.mkdir(parents=True)
    for label in ("a", "b"):
        # the figures' text is under test, not their size: a small volume (the defaults move 4 GB here)
        r = cli("run", "mpi", "--np", "2", "--op=pingpong,bw", "--sizes=8,1k,1m", "--volume=8m", "--window=8",
                "--warmup=10", "--repeat", "3", "--label", label, "--quiet")
        assert r.status == 0, r.stderr
    assert cli("run", "seqio", f"--dir={deep}", "--file-size=1m", "--repeat", "2", "--label", "a", "--quiet").status == 0
    wide = cli("show", "1", "--width", "240").stdout
    figures = set()
    for line in wide.splitlines():
        cells = [c.strip() for c in line.split("│")[1:-1]]
        if len(cells) > 4 and cells[2].isdigit():  # phase, algorithm, n, median, CI of median, ...
            figures.add(cells[3])
            figures.update(re.findall(NUMBER, cells[4].split(" (")[0]))
    assert len(figures) > 10
    narrow = cli("show", "1", "--width", "80").stdout
    assert max(len(line) for line in narrow.splitlines()) <= 80
    assert figures <= set(re.findall(NUMBER, narrow)), figures - set(re.findall(NUMBER, narrow))
    assert not re.search(r"│\s*[\d,]*\.\s*│", narrow)  # no figure broken after its point
    for args in (("list",), ("compare", "a", "b")):
        out = cli(*args, "--width", "80").stdout
        assert "…" not in out, out
    listed = cli("list", "--width", "80").stdout
    command = "".join(c.strip() for line in listed.splitlines() if line.startswith("│")
                      for c in line.split("│")[-2:-1])
    assert str(deep).replace(" ", "") in command  # the path whole, folded over lines


@pytest.mark.timeout(120)
def test_a_terminal_of_20_columns_keeps_titles_headings_and_figures_whole(cli, tmp_path):
    """COLUMNS=20: rich cut each heading and figure into 2-3 letter pieces
    ('pha|se', 'media|n', '2024|-01|-01' in list, '2026…' in trend). The
    views are drawn at 40 columns at least (output/console.py MIN_WIDTH),
    and list, trend and compare's environment table keep every word whole
    (output/whole_columns.py): the terminal wraps the lines."""
    osu = str(REPO / "tests" / "fixtures" / "import" / "osu-7.4-bw.txt")
    # two hosts: compare draws an environment table (the host name differs); alike, it says so in a sentence
    for label, host in (("a", "n01"), ("b", "n02")):
        assert cli("import", "--again", "--label", label, "--host", host, "--date", "2024-01-01", osu).status == 0
    narrow = {"COLUMNS": "20"}
    shown = cli("show", "1", env=narrow)
    assert shown.status == 0, shown.stderr
    assert "OSU Bandwidth [ok]" in shown.stdout and "run 1 (a): ok," in shown.stdout
    for word in ("phase", "median", "0.08", "0.15", "2,249", "MiB/s"):   # as OSU printed them: 0.08, 0.16 MB/s
        assert re.search(rf"(^|[\s│┃]){re.escape(word)}([\s│┃]|$)", shown.stdout, re.M), (word, shown.stdout)
    listed = cli("list", env=narrow).stdout
    for word in ("id", "label", "status", "started", "2024-01-01", "00:00:00", "(imported)"):
        assert re.search(rf"(^|[\s│┃]){re.escape(word)}([\s│┃]|$)", listed, re.M), (word, listed)
    # drawn at 40, the columns that do not fit there are left out whole, and said to be
    assert "batch job, user, host, duration, command left out to fit (--width)" in " ".join(listed.split()), listed
    by_month = cli("list", "--by", "month", env=narrow).stdout
    assert re.search(r"│\s*2024-01\s*│\s*2\s*│\s*2\s*│", by_month), by_month
    trend = cli("trend", "mpi:bw", "--param", "sizes=64k", env=narrow)
    assert trend.status == 0 and "…" not in trend.stdout, trend.stdout + trend.stderr
    assert "2024-01-01" in trend.stdout and "2,249" in trend.stdout, trend.stdout
    compared = cli("compare", "a", "b", env=narrow).stdout
    assert re.search(r"┃\s*environment[\s┃]", compared), compared


def _widest(text: str) -> int:
    return max(len(line) for line in text.splitlines())


@pytest.mark.timeout(240)
def test_list_fits_every_width_down_to_40_columns_leaving_columns_out_whole(cli, cbk_bin, store_url):
    """Below 72 columns `list` was drawn 72 wide (its nine columns each at
    their longest word) and the terminal wrapped every line. Its columns
    give way one at a time, whole, the caption naming them, down to id,
    label, status and start; so do `list --by`'s, below 51."""
    from terminal import on_terminal, user_env

    assert cli("run", "null", "--seconds=0.001", "--repeat", "2", "--label", "nightly", "--quiet").status == 0
    osu = str(REPO / "tests" / "fixtures" / "import" / "osu-7.4-bw.txt")
    assert cli("import", "--label", "old-osu", "--host", "n01", "--date", "2024-01-01", osu).status == 0
    wide = cli("list").stdout
    assert "left out" not in wide and "batch job" in wide and "n01" in wide, wide
    for width in range(40, 76, 5):
        for args in (("list",), ("list", "--by", "month"), ("list", "--by", "host")):
            out = cli(*args, env={"COLUMNS": str(width)}).stdout
            assert _widest(out) <= width, (width, out)
            cells = " ".join(c.strip() for line in out.splitlines() for c in re.split("[│┃]", line))
            if args == ("list",):
                # each run whole: its id, label, status and start date, never broken
                for word in ("nightly", "old-osu", "(imported)", "2024-01-01", "00:00:00"):
                    assert re.search(rf"(^|\s){re.escape(word)}(\s|$)", cells), (width, word, out)
            else:
                assert re.search(r"│\s*(2024-01|n01)\s*│\s*1\s*│\s*1\s*│\s*0\s*│", out), (width, out)
            said = re.search(r"((?:[a-z ]+, )*[a-z ]+) left out to fit \(--width\)", " ".join(out.split()))
            for column in said.group(1).split(", ") if said else []:
                assert not re.search(rf"┃\s*{column.split()[0]}\s*┃", out), (width, column, out)
    narrowest = cli("list", env={"COLUMNS": "40"}).stdout
    assert "batch job, user, host, duration, command left out to fit (--width)" in " ".join(narrowest.split())
    # on a terminal of 50 columns (no $COLUMNS), as a person sees it
    seen = on_terminal(["list"], 50, user_env(cbk_bin, store_url)).text
    assert seen and _widest(seen) <= 50 and "left out to fit" in seen, seen


@pytest.mark.timeout(120)
def test_the_store_option_is_taken_before_the_subcommand_too(cli, tmp_path):
    """#38 item 9: `clusterbench --db X list` said "No such option '--db'"."""
    other = tmp_path / "other.db"
    assert cli("--db", str(other), "run", "null", "--seconds=0.001", "--repeat", "2", "--label", "there",
               "--quiet").status == 0
    listed = cli("--db", str(other), "list")
    assert listed.status == 0 and "there" in listed.stdout, listed.stderr
    assert "no store at" in cli("list").stderr  # the default store was not used
    assert "there" in cli("list", "--db", str(other)).stdout
    # the subcommand's own --db wins
    assert "no store at" in cli("--db", str(other), "list", "--db", str(tmp_path / "none.db")).stderr


@pytest.mark.timeout(120)
def test_a_store_given_as_a_bare_name_is_a_file_and_an_unknown_kind_is_named(cli, tmp_path):
    """#38 item 9: `--db nonsense` stores in the file nonsense and leaves nothing
    beside it (its migration lock is removed once the store is made);
    `--db foo://bar` names what a store can be instead of SQLAlchemy's plugin error."""
    r = run_bounded([sys.executable, "-m", "clusterbench", "run", "null", "--seconds=0.01", "--repeat", "1",
                     "--quiet", "--db", "nonsense"],
                    timeout=100, env={k: v for k, v in os.environ.items() if k != "CLUSTERBENCH_DB"}, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["nonsense"]
    r = cli("list", "--db", "foo://bar")
    assert r.status == 2 and r.stderr.strip().splitlines() == [
        "Error: cannot use store URL foo://bar: no kind of store is called 'foo' (a store is a file path, "
        "sqlite:///PATH or postgresql+psycopg://USER@HOST[:PORT]/DATABASE)"], r.stderr


TWO_STEP_SUITE = """
description = "two short steps"

[[steps]]
name = "first"
kernel = "null"
repeat = 2
params = { seconds = 0.01 }

[[steps]]
name = "second"
kernel = "null"
repeat = 2
params = { seconds = 0.01 }
"""


@pytest.mark.timeout(120)
def test_a_reader_that_leaves_early_ends_neither_the_work_nor_its_exit_status(cbk_bin, store_url, tmp_path):
    """`run suite | head -1`: Python raised BrokenPipeError at the first line
    head no longer read, click made that exit 1 (a failed measurement, here)
    and the suite's report, written after its table, was never written."""
    import subprocess

    suite = tmp_path / "two.toml"
    suite.write_text(TWO_STEP_SUITE)
    env = {**os.environ, "CLUSTERBENCH_CBK": cbk_bin, "CLUSTERBENCH_DB": store_url}

    def with_reader_gone(*args, stderr_too=False):
        read_end, write_end = os.pipe()
        os.close(read_end)   # the reader left before the first line: every write is EPIPE
        try:
            return subprocess.run([sys.executable, "-m", "clusterbench", *args], stdout=write_end,
                                  stderr=write_end if stderr_too else subprocess.PIPE, env=env, timeout=100)
        finally:
            os.close(write_end)

    p = with_reader_gone("run", str(suite), "--report-dir", str(tmp_path))
    assert p.returncode == 0, p.stderr
    assert list(tmp_path.glob("*run-1.html")), list(tmp_path.iterdir())
    for args in (("show", "1"), ("list",), ("report", "1", "-o", "-", "--format", "md"), ("compare", "1", "1")):
        p = with_reader_gone(*args, stderr_too=True)
        assert p.returncode == (2 if args[0] == "compare" else 0), (args, p.returncode)
    shown = subprocess.run([sys.executable, "-m", "clusterbench", "show", "1"], capture_output=True, text=True,
                           env=env, timeout=100)
    assert shown.stdout.startswith("run 1: ok"), shown.stdout


@pytest.mark.timeout(120)
def test_output_to_a_full_disk_is_said_in_one_line_and_fails_the_command_not_the_work(cbk_bin, store_url):
    """`export 1 > out.json` on a full disk (ENOSPC: /dev/full) ended in a traceback of click's echo; a
    run's table alike. Said in one line; the run is still stored; exit 1, as what was printed is lost."""
    import subprocess

    env = {**os.environ, "CLUSTERBENCH_CBK": cbk_bin, "CLUSTERBENCH_DB": store_url}

    def to_full_disk(*args):
        with open("/dev/full", "w") as full:
            return subprocess.run([sys.executable, "-m", "clusterbench", *args], stdout=full, stderr=subprocess.PIPE,
                                  text=True, env=env, timeout=100)

    said = "Error: cannot write standard output (No space left on device): the rest of it is lost\n"
    ran = to_full_disk("run", "null", "--seconds=0.01", "--repeat", "1", "--quiet")
    assert (ran.returncode, ran.stderr) == (1, said)
    exported = to_full_disk("export", "1", "--format", "json")
    assert (exported.returncode, exported.stderr) == (1, said)
    assert store_rows(store_url, "select status from runs") == [("ok",)]


@pytest.mark.timeout(180)
def test_a_step_table_with_a_limit_fits_every_width_without_being_cropped(cli, tmp_path):
    """`show 2 --width 100` of a buffered-write, warm-read seqio run: rich
    shared the width between the CI and the limit evenly, below the CI's
    figures, then widened the CI again; the table came out 103 columns wide
    and was cropped at 100: the right border gone, the limit read "fits in
    th", and the caption lost its "fit" ("MB/s left out to" / "(--width)")."""
    r = cli("run", "seqio", f"--dir={tmp_path}", "--file-size=4m", "--write=buffered", "--read=warm",
            "--repeat", "3", "--quiet")
    assert r.status == 0, r.stderr
    wide = cli("show", "1", "--width", "240").stdout
    assert "! cache: the file fits in the page cache" in wide, wide
    for width in range(72, 161, 4):
        out = cli("show", "1", "--width", str(width)).stdout
        lines = out.splitlines()
        assert max(len(line) for line in lines) <= width, (width, out)
        tops = [line for line in lines if line.startswith("┏")]
        assert tops and all(line.endswith("┓") for line in tops), (width, out)   # the right border is there
        rows = [line for line in lines if line.startswith("│")]
        assert all(line.endswith("│") for line in rows), (width, out)
        # the limit's words all shown, in order, folded over the column's lines
        limit = " ".join(c.split("│")[-2].strip() for c in rows if c.split("│")[-2].strip())
        assert "! cache: the file fits in the page cache" in limit, (width, out)
        below = lines[lines.index(next(line for line in lines if line.startswith("└"))) + 1:]
        caption = " ".join(below[:next(i for i, line in enumerate(below) if not line or line.startswith("  "))])
        assert "left out" not in caption or "left out to fit (--width)" in caption, (width, caption)


@pytest.mark.timeout(240)
def test_a_comparison_on_80_columns_keeps_every_figure_whole_and_each_verdict_with_its_configuration(cli, tmp_path):
    """`compare a b --width 80` folded the table's eight columns to 7
    characters each: "[847..1" / ",329", "mini-sh" / "m", "(p=0.02" / "38)":
    no figure could be read. Too narrow for the table, each measurement is a
    block: its title, a line per configuration, the ratio and verdict under
    the other one, the limit."""
    for label in ("a", "b"):
        r = cli("run", "seqio", f"--dir={tmp_path}", "--file-size=4m", "--write=buffered", "--read=warm",
                "--repeat", "3", "--label", f"config-{label}", "--quiet")
        assert r.status == 0, r.stderr
    wide = cli("compare", "config-a", "config-b", "--width", "400").stdout
    figures, verdicts = set(), []
    for line in wide.splitlines():
        cells = [c.strip() for c in line.split("│")[1:-1]]
        if len(cells) >= 7 and cells[2] == "MiB/s":
            for c in cells[3:5]:   # "median [lo..hi (cov)] n=3"
                figures.update(re.findall(NUMBER, c.split(" n=")[0]))
            figures.add(cells[5].split()[0])   # the ratio
            verdicts.append(cells[6])
    assert len(verdicts) == 3 and len(figures) > 10, wide
    for width in (60, 80, 100):
        out = cli("compare", "config-a", "config-b", "--width", str(width)).stdout
        assert max(len(line) for line in out.splitlines()) <= width, out
        body = out[out.index("comparison, baseline config-a"):]
        assert "┏" not in body.split("!1 warning")[0]   # no table: blocks
        found = set(re.findall(NUMBER, body))
        assert figures <= found, (width, figures - found)
        flat = " ".join(body.split())
        for verdict in verdicts:
            assert verdict in flat, (width, verdict)
        # each configuration's own line, the baseline first, the other's verdict under it
        block = body.splitlines()[1:5]
        assert block[1].split()[0] == "config-a" and block[2].split()[0] == "config-b", block
        assert re.match(r"\s+\d\.\d{3} x config-a \([+-]\d+\.\d%\): ", block[3]), block


def test_a_terminal_that_cannot_spell_micro_gets_us_not_a_traceback(cli, tmp_path):
    """PYTHONIOENCODING=ascii (or a C locale with UTF-8 mode off): the first
    µs of a table was a UnicodeEncodeError traceback instead of the results.
    µ is spelled u, as the records do, and a label's ü as its escape."""
    from pathlib import Path

    osu = Path(__file__).parent / "fixtures" / "import" / "osu-7.4-latency.txt"
    assert cli("import", "--label", "lat\u00fc", str(osu)).status == 0
    ascii_only = {"PYTHONIOENCODING": "ascii"}
    for args in (["show", "1"], ["list"], ["compare", "1", "1"], ["trend", "mpi:latency"]):
        r = cli(*args, env=ascii_only)
        assert "Traceback" not in r.stderr and "UnicodeEncodeError" not in r.stderr, (args, r.stderr)
        r.stdout.encode("ascii")
    shown = cli("show", "1", env=ascii_only)
    assert shown.status == 0 and "| us " in shown.stdout and "lat\\xfc" in shown.stdout, shown.stdout


def test_an_ok_runs_warning_is_still_said_when_list_leaves_the_command_out(cli, store_url):
    """An ok run's warning (a cluster run whose link matrix was skipped) was
    printed under its command: below about 60 columns the command column is
    left out, and the warning went with it, leaving "ok (warning)" and no
    word of what. It is said under the table then, with the run's id."""
    from clusterbench.store import Store

    store = Store(store_url)
    run_id = store.begin_run(label="c", command="clusterbench run cluster --hostfile hosts", suite=None)
    store.finish_run(run_id, "ok", "link matrix skipped: h02 unreachable")
    for width in (40, 50, 100):
        out = cli("list", env={"COLUMNS": str(width)}).stdout
        assert _widest(out) <= width, (width, out)
        flat = " ".join(re.sub("[│┃]", " ", out).split())   # a cell's lines read on, other cells blank there
        assert "(warning)" in out and "link matrix skipped: h02 unreachable" in flat, (width, out)
        if "command left out" in flat:
            assert f"run {run_id}: warning: link matrix skipped" in flat, (width, out)


@pytest.mark.timeout(60)
def test_kernels_on_a_narrow_terminal_never_cuts_a_name_or_a_default(cli):
    """`kernels mpi` at 50 columns printed '--op' under 'para…' with the default 'ping…' and the
    values 'pingp…, allre…': nothing there could be typed back. Every name, default and value
    is whole; only the help's long words may break."""
    for args in (("kernels", "mpi"), ("kernels", "seqio"), ("kernels",)):
        r = cli(*args, "--width", "50")
        assert r.status == 0, r.stderr
        assert "…" not in r.stdout, r.stdout
    r = cli("kernels", "mpi", "--width", "50")
    head = next(line for line in r.stdout.splitlines() if "parameter" in line)
    assert [c.strip() for c in head.strip("┃").split("┃")] == ["parameter", "type", "default", "unit", "allowed", "help"]
    first = next(line for line in r.stdout.splitlines() if line.startswith("│--op"))
    assert [c.strip() for c in first.strip("│").split("│")][:3] == ["--op", "choice-list", "pingpong"], first
