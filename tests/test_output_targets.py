"""What -o (report, export, history) and run --report do with what is at the
name given (issue #36, item 1): a FIFO, a character device or stdout gets a
stream; a directory, a block device or a socket is refused in one line with
nothing touched; only a regular file or a symlink's own name is replaced."""
from __future__ import annotations

import os
import socket
import stat
import subprocess
import sys
import threading

import pytest

from conftest import store_rows
from full_disk import run_on_full_disk


def _one_line_error(r, status: int) -> None:
    assert r.status == status, (r.status, r.stdout, r.stderr)
    assert r.stderr.count("\n") == 1 and "Traceback" not in r.stderr, r.stderr


@pytest.fixture
def one_run(cli):
    r = cli("run", "null", "--seconds=0.01", "--repeat", "1", "--quiet")
    assert r.status == 0, r.stderr
    exported = cli("export", "1", "--format", "json")
    assert exported.status == 0 and exported.stdout
    return exported.stdout


def test_a_fifo_is_written_as_a_stream_and_stays_a_fifo(cli, tmp_path, one_run):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    listing = sorted(os.listdir(tmp_path))
    got = {}

    def reader():
        with open(fifo, "rb") as f:
            got["bytes"] = f.read()

    t = threading.Thread(target=reader)
    t.start()
    r = cli("export", "1", "--format", "json", "-o", str(fifo))
    t.join(30)
    assert r.status == 0, r.stderr
    assert got["bytes"].decode() == one_run
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert sorted(os.listdir(tmp_path)) == listing   # no temporary file left


def test_dash_and_this_process_descriptors_are_stdout(cli, tmp_path, one_run):
    # a link of our own into /proc/self/fd: as /dev/stdout is, without risking the system's
    link = tmp_path / "my-stdout"
    link.symlink_to("/proc/self/fd/1")
    for target in ("-", "/dev/fd/1", str(link)):
        r = cli("export", "1", "--format", "json", "-o", target)
        assert r.status == 0 and r.stdout == one_run, (target, r.stderr)
    assert link.is_symlink() and os.readlink(link) == "/proc/self/fd/1"
    r = cli("report", "1", "--format", "md", "-o", "-")
    assert r.status == 0 and r.stdout.startswith("# Benchmark report") and "\n## Run 1" in r.stdout
    assert r.stderr == "wrote standard output (-o -)\n"   # "wrote -" read as a file named -
    r = cli("history", "-o", "-")
    assert r.status == 0 and r.stdout.startswith("<!DOCTYPE html>") and r.stderr == "wrote standard output (-o -)\n"


def test_stdout_redirected_to_a_log_with_append_keeps_appending(cbk_bin, store_url, tmp_path, one_run):
    """`-o /dev/stdout >> log` writes where the shell opened stdout, as it is
    open: the log's earlier lines stay (opening /proc/self/fd/1 anew with
    truncation would empty the file first)."""
    log = tmp_path / "log"
    log.write_text("earlier line\n")
    env = dict(os.environ, CLUSTERBENCH_CBK=cbk_bin, CLUSTERBENCH_DB=store_url)
    for target in ("/dev/stdout", "/dev/fd/1"):
        with open(log, "a") as out:
            r = subprocess.run([sys.executable, "-m", "clusterbench", "export", "1", "--format", "json",
                                "-o", target], stdout=out, stderr=subprocess.PIPE, text=True, env=env, timeout=60)
        assert r.returncode == 0 and r.stderr == f"wrote {target}\n", r.stderr
    assert log.read_text() == "earlier line\n" + one_run + one_run


def _with_stdout_closed(cbk_bin, store_url, *args):
    """clusterbench ARGS >&- (a cron line or a daemon's child that closed its stdout)."""
    env = dict(os.environ, CLUSTERBENCH_CBK=cbk_bin, CLUSTERBENCH_DB=store_url)
    return subprocess.run(["sh", "-c", 'exec "$@" >&-', "sh", sys.executable, "-m", "clusterbench", *args],
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env, timeout=60)


def test_a_closed_stdout_is_refused_in_one_line_and_stderr_still_written(cbk_bin, store_url, one_run):
    """Python starts with sys.stdout None when descriptor 1 is closed: -o -
    was an AttributeError traceback (exit 1), and export without -o printed
    nothing and said it had (exit 0)."""
    for args in (["report", "1", "--format", "md", "-o", "-"], ["export", "1"], ["history", "-o", "-"],
                 ["export", "1", "-o", "/dev/stdout"]):
        r = _with_stdout_closed(cbk_bin, store_url, *args)
        assert r.returncode == 2 and "Traceback" not in r.stderr, (args, r.stderr)
        assert r.stderr.count("\n") == 1 and "standard output is closed" in r.stderr, (args, r.stderr)
    r = _with_stdout_closed(cbk_bin, store_url, "export", "1", "--format", "json", "-o", "/dev/stderr")
    assert r.returncode == 0 and r.stderr == one_run + "wrote /dev/stderr\n", r.stderr


def test_the_store_or_any_sqlite_database_is_never_replaced_by_a_report(cli, store_url, tmp_path, one_run):
    """`report 1 -o results.db` (the store's name, completed by the shell)
    replaced the store with the report: every run gone. Refused before the
    work, the store untouched; so is any SQLite database and its -wal."""
    import sqlite3

    store = store_url.removeprefix("sqlite:///")
    other = tmp_path / "other.db"
    sqlite3.connect(other).execute("create table t (x)").connection.close()
    before = {p: open(p, "rb").read() for p in (store, other)}
    for args in (["report", "1", "-o", store], ["export", "1", "-o", store], ["history", "-o", store],
                 ["run", "null", "--repeat", "1", "--report", store], ["report", "1", "-o", str(other)],
                 ["report", "1", "-o", store + "-wal"]):
        r = cli(*args)
        _one_line_error(r, 2)
        assert "SQLite" in r.stderr and "give another name" in r.stderr, (args, r.stderr)
    assert {p: open(p, "rb").read() for p in (store, other)} == before
    assert store_rows(store_url, "select count(*) from runs") == [(1,)]


def test_a_runs_report_never_replaces_the_suite_or_host_file_the_run_reads(cli, store_url, tmp_path, one_run):
    """`run s.toml --report s.toml` (the suite's name, completed by the
    shell) ran the suite, then wrote the report over it: the user's suite
    was gone. The suite and the host file, through a link too, are refused
    before the run, and left as they were."""
    suite = tmp_path / "s.toml"
    suite.write_text('[[steps]]\nkernel = "null"\nrepeat = 1\n')
    hosts = tmp_path / "hosts"
    hosts.write_text("localhost\n")
    (tmp_path / "link.toml").symlink_to(suite)
    for args in (["run", str(suite), "--report", str(suite)], ["run", str(suite), "--report", str(tmp_path / "link.toml")],
                 ["run", "null", "--np", "1", "--launcher", "mpiexec", "--hostfile", str(hosts), "--report", str(hosts)]):
        r = cli(*args)
        _one_line_error(r, 2)
        assert "is what this command reads" in r.stderr and "give another name" in r.stderr, (args, r.stderr)
    assert suite.read_text() == '[[steps]]\nkernel = "null"\nrepeat = 1\n' and hosts.read_text() == "localhost\n"
    assert store_rows(store_url, "select count(*) from runs") == [(1,)]


def test_a_character_device_is_written_not_replaced(cli, tmp_path, one_run):
    if os.geteuid() != 0:
        pytest.skip("mknod of a character device needs root")
    null = tmp_path / "mynull"
    os.mknod(null, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    for args in (["export", "1"], ["report", "1"], ["history"]):
        r = cli(*args, "-o", str(null))
        assert r.status == 0, r.stderr
        st = os.lstat(null)
        assert stat.S_ISCHR(st.st_mode) and st.st_rdev == os.makedev(1, 3), args


def test_a_full_character_device_fails_in_one_line(cli, one_run):
    # /dev/full: every write is ENOSPC, as a full disk's
    r = cli("report", "1", "-o", "/dev/full")
    _one_line_error(r, 1)
    assert "No space left on device" in r.stderr
    assert stat.S_ISCHR(os.stat("/dev/full").st_mode)


def _sock(path):
    s = socket.socket(socket.AF_UNIX)
    s.bind(str(path))
    return s


@pytest.mark.parametrize("kind", ["directory", "socket", "block device"])
def test_a_directory_a_socket_or_a_block_device_is_refused_and_untouched(cli, tmp_path, one_run, kind):
    target = tmp_path / "target"
    if kind == "directory":
        target.mkdir()
        (target / "kept").write_text("mine")
    elif kind == "socket":
        keep = _sock(target)   # noqa: F841 - kept open through the commands
    else:
        if os.geteuid() != 0:
            pytest.skip("mknod of a block device needs root")
        os.mknod(target, 0o600 | stat.S_IFBLK, os.makedev(7, 200))
    before = os.lstat(target)
    listing = sorted(os.listdir(tmp_path))
    for args in (["export", "1", "-o"], ["report", "1", "-o"], ["history", "-o"],
                 ["run", "null", "--seconds=0.01", "--repeat", "1", "--report"]):
        r = cli(*args, str(target))
        _one_line_error(r, 2)
        assert f"a {kind}" in r.stderr, r.stderr
        after = os.lstat(target)
        assert (after.st_ino, after.st_mode, after.st_rdev) == (before.st_ino, before.st_mode, before.st_rdev)
        assert sorted(os.listdir(tmp_path)) == listing
    assert cli("list").stdout.count("null") == 1   # the refused run --report ran nothing


def test_a_missing_directory_is_refused_before_anything_is_done(cli, tmp_path, one_run):
    missing = tmp_path / "missing" / "r.html"
    listing = sorted(os.listdir(tmp_path))
    for args in (["export", "1", "-o"], ["report", "1", "-o"], ["history", "-o"],
                 ["run", "null", "--seconds=0.01", "--repeat", "1", "--report"]):
        r = cli(*args, str(missing))
        _one_line_error(r, 2)
        assert "no such directory" in r.stderr
    assert sorted(os.listdir(tmp_path)) == listing
    assert cli("list").stdout.count("null") == 1   # run --report /missing/r.html refused before the run


def test_a_regular_file_and_a_symlink_name_are_replaced(cli, tmp_path, one_run):
    regular = tmp_path / "old.json"
    regular.write_text("old")
    assert cli("export", "1", "-o", str(regular)).status == 0
    assert regular.read_text() == one_run
    victim = tmp_path / "victim"
    victim.write_text("mine")
    link = tmp_path / "link.json"
    link.symlink_to(victim)
    assert cli("export", "1", "-o", str(link)).status == 0
    assert victim.read_text() == "mine" and not link.is_symlink() and link.read_text() == one_run


def test_a_report_on_a_full_file_system_fails_in_one_line_and_leaves_nothing(cbk_bin, tmp_path):
    """A tmpfs of 64 KiB, filled, in a private mount namespace: the report
    (atomic path) fails with ENOSPC in one line, exit 1, the old file kept."""
    store = tmp_path / "r.db"
    env = dict(os.environ, CLUSTERBENCH_CBK=cbk_bin, CLUSTERBENCH_DB=str(store), COLUMNS="200")
    assert subprocess.run([sys.executable, "-m", "clusterbench", "run", "null", "--seconds=0.01", "--repeat", "1",
                           "--quiet"], env=env, capture_output=True).returncode == 0
    r = run_on_full_disk(tmp_path, 'echo old > "$FULL/r.html"; fill\n'
                                   '"$PY" -m clusterbench report 1 -o "$FULL/r.html"; echo "status=$?"\n'
                                   'cat "$FULL/r.html"; ls -A "$FULL"', env=env)
    lines = r.stdout.splitlines()
    assert "status=1" in lines and "old" in lines, r.stdout
    assert sorted(lines[lines.index("old") + 1:]) == ["filler", "r.html"]   # no temporary file left
    errors = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(errors) == 1 and "No space left on device" in errors[0], r.stderr


def test_a_runs_report_named_for_another_format_is_refused_before_the_run(cli, store_url, tmp_path, one_run):
    """`run null --report r.pdf` ran, then wrote HTML into r.pdf, which no PDF reader opens (`report -o r.pdf`
    writes a PDF). Refused before anything runs or is stored, saying how to get the PDF."""
    r = cli("run", "null", "--seconds=0.01", "--repeat", "1", "--report", str(tmp_path / "r.pdf"))
    _one_line_error(r, 2)
    assert r.stderr.strip() == (f"Error: --report {tmp_path / 'r.pdf'}: run writes an HTML report (a name ending "
                                f".html); for PDF, write it after the run: clusterbench report RUN -o "
                                f"{tmp_path / 'r.pdf'}"), r.stderr
    assert not (tmp_path / "r.pdf").exists() and store_rows(store_url, "select count(*) from runs") == [(1,)]


def test_a_file_names_suffix_picks_the_format_and_another_documents_is_refused(cli, tmp_path, one_run):
    """`export 1 -o runs.csv` wrote JSON into runs.csv (export's default was
    json whatever the name), and `report 1 -o report.docx` wrote HTML into a
    file Word does not open. A known suffix picks the format; a suffix of
    another kind of document is refused in one line, nothing written, unless
    --format says what to write into it; where a command writes HTML alone
    (run --report, history), any other is."""
    import csv

    listing = sorted(os.listdir(tmp_path))
    for args, said in (
            (["export", "1", "-o", str(tmp_path / "runs.xlsx")], "writes no .xlsx file; name it .json, .csv, .md, .html"),
            (["export", "1", "-o", str(tmp_path / "runs.pdf")], "a PDF is clusterbench report RUN -o FILE.pdf"),
            (["report", "1", "-o", str(tmp_path / "r.docx")], "writes no .docx file; name it .json, .csv, .md, "
                                                             ".html, .pdf, or give --format"),
            (["run", "null", "--seconds=0.01", "--repeat", "1", "--report", str(tmp_path / "r.txt")],
             "run writes an HTML report (a name ending .html), not a .txt file"),
            (["history", "-o", str(tmp_path / "h.pdf")], "history writes an HTML page (a name ending .html); for PDF, "),
            (["history", "-o", str(tmp_path / "h.docx")], "history writes an HTML page (a name ending .html), not a .docx")):
        r = cli(*args)
        _one_line_error(r, 2)
        assert said in r.stderr, (args, r.stderr)
    assert sorted(os.listdir(tmp_path)) == listing
    assert cli("list").stdout.count("null") == 1   # the refused run --report ran nothing
    assert cli("export", "1", "-o", str(tmp_path / "runs.csv")).status == 0
    rows = list(csv.DictReader((tmp_path / "runs.csv").open()))
    assert [(row["run"], row["kernel"]) for row in rows] == [("1", "null")], rows
    assert cli("export", "1", "-o", str(tmp_path / "runs.csv"), "--format", "json").status == 0
    assert (tmp_path / "runs.csv").read_text() == one_run   # --format wins over the name
    assert cli("report", "1", "-o", str(tmp_path / "r.docx"), "--format", "md").status == 0
    assert (tmp_path / "r.docx").read_text().startswith("# ")
    assert cli("report", "1", "-o", str(tmp_path / "r.htm")).status == 0
    assert (tmp_path / "r.htm").read_text().startswith("<!DOCTYPE html>")
