"""clusterbench import of GNU dd's summaries (coreutils 9.1 runs; an 8.x
summary written from 8.x's dd.c: tests/fixtures/README): bytes over
seconds, and what the command shown in the log makes the figure mean.
Parsed in process; one import through the command line."""
from __future__ import annotations

import datetime as dt

import pytest

from conftest import store_rows

from clusterbench import importers
from clusterbench.importers import Unreadable, dd, shell_time
from clusterbench.importers.import_runs import parse_file
from test_import import FIXTURES


def figures(name: str) -> list[tuple]:
    return [(st.kernel, s.phase, s.condition, s.value, s.bytes, s.seconds)
            for run in parse_file(str(FIXTURES / name)) for st in run.steps for s in st.samples]


def test_dd_transcript_is_bytes_over_seconds_in_the_mode_its_flags_make():
    """`$ dd ... conv=fdatasync`, its read back and an iflag=direct read: 'no known format' before."""
    (write, warm, direct) = parse_file(str(FIXTURES / "dd-9.1-transcript.txt"))
    assert write.command == "dd if=/dev/zero of=/tmp/netio-dd/testfile bs=1M count=256 conv=fdatasync"
    assert write.steps[0].kernel == "dd" and write.steps[0].params == {"bs": "1M", "count": "256", "conv": "fdatasync"}
    (s,) = write.steps[0].samples
    # "268435456 bytes (268 MB, 256 MiB) copied, 0.237256 s, 1.1 GB/s": the rate from bytes and seconds, not 1.1
    assert (s.phase, s.condition, s.unit) == ("write", "fsync", "MiB/s")
    assert s.value == 268435456 / 0.237256 / 2**20 and s.record["dd_rate"] == "1.1 GB/s"
    assert (s.record["rate_decimal"], s.record["rate_decimal_unit"]) == (268435456 / 0.237256 / 1e6, "MB/s")
    assert s.record["block_bytes"] == 2**20 and not s.warnings
    (s,) = warm.steps[0].samples   # the file it had just written, no drop_caches between
    assert (s.phase, s.condition) == ("read", "warm") and "page cache" in s.warnings[0]
    assert direct.steps[0].samples[0].condition == "direct"


def test_dd_write_without_fdatasync_is_a_page_cache_figure_and_says_so():
    buffered, direct, fsync, read = parse_file(str(FIXTURES / "dd-9.1-set-x.log"))   # set -x: "+ dd ..."
    (s,) = buffered.steps[0].samples
    assert (s.phase, s.condition) == ("write", "buffered")
    assert "how fast the page cache took the data, not the disk" in s.warnings[0]
    assert [r.steps[0].samples[0].condition for r in (direct, fsync, read)] == ["direct", "fsync", "warm"]
    assert fsync.steps[0].params == {"bs": "32768", "count": "6400", "conv": "fsync"}   # E4's block size


def test_dd_8x_summary_and_a_read_after_drop_caches():
    assert figures("dd-8.x-form-transcribed.txt") == [
        ("dd", "write", "fsync", 10737418240 / 13.9235 / 2**20, 10737418240, 13.9235),
        ("dd", "read", "cold", 10737418240 / 73.5413 / 2**20, 10737418240, 73.5413)]


def test_dd_in_a_decimal_comma_locale_is_read_and_not_called_another_locale():
    for name in ("dd-9.1-de_DE.txt", "dd-9.1-fr_FR.txt"):   # "0,0643562 s, 2,1 GB/s"; French: "134217728\xa0octets"
        write, read = parse_file(str(FIXTURES / name))
        assert write.steps[0].samples[0].seconds in (0.0643562, 0.0634158), name
        assert read.steps[0].samples[0].condition == "warm"
        assert not any("another locale" in n for n in write.notes + read.notes), write.notes
    assert parse_file(str(FIXTURES / "dd-9.1-de_DE.txt"))[0].steps[0].samples[0].record["dd_rate"] == "2,1 GB/s"


def test_dd_summary_without_its_command_is_a_copy_of_unknown_meaning():
    (run,) = parse_file(str(FIXTURES / "dd-9.1-summary-only.txt"))
    assert figures("dd-9.1-summary-only.txt") == [("dd", "copy", "unknown", 1073741824 / 5.82317 / 2**20,
                                                    1073741824, 5.82317)]
    assert any("without its command" in n for n in run.notes)


def test_dd_status_progress_reports_are_not_the_figure():
    # "\r4188160000 bytes ... copied, 1 s, 4.2 GB/s\r7691071488 ... 2 s, 3.8 GB/s", then the summary
    assert [f[3:] for f in figures("dd-9.1-progress.txt")] == [(10240000000 / 2.74076 / 2**20, 10240000000, 2.74076)]


def test_dd_killed_is_left_out_with_a_note_and_alone_is_refused():
    (run,) = parse_file(str(FIXTURES / "dd-9.1-killed-then-again.txt"))
    assert run.steps[0].samples[0].condition == "fsync"
    assert ("the dd at line 1 was not taken: no summary (1 status=progress line(s), then nothing: killed?)"
            in run.notes)
    text = (FIXTURES / "dd-9.1-killed-then-again.txt").read_text()
    with pytest.raises(Unreadable, match="no summary"):
        dd.parse(text[:text.index("$ dd if=/dev/zero of=/tmp")])


def test_dd_status_reports_and_an_interrupt_keep_the_final_summary_with_a_note():
    (run,) = parse_file(str(FIXTURES / "dd-9.1-usr1.txt"))
    (s,) = run.steps[0].samples
    assert (s.bytes, s.seconds, s.phase, s.condition) == (409600000000, 36.6358, "copy", "n/a")   # /dev/zero -> /dev/null
    assert any("1 status report(s) (SIGUSR1)" in n for n in run.notes)
    (run,) = parse_file(str(FIXTURES / "dd-9.1-interrupted.txt"))
    assert any("dd copied 12138119168 of the 409600000000 bytes asked" in n for n in run.notes)


def test_dd_several_runs_without_commands_are_a_run_each():
    text = (FIXTURES / "dd-9.1-summary-only.txt").read_text() + (FIXTURES / "dd-9.1-progress.txt").read_text()
    assert importers.detect(text) == "dd"
    assert [r.steps[0].samples[0].bytes for r in dd.parse(text)] == [1073741824, 10240000000]


def test_dd_summary_whose_rate_disagrees_with_its_bytes_and_seconds_is_noted():
    text = (FIXTURES / "dd-9.1-transcript.txt").read_text().replace("0.237256 s, 1.1 GB/s", "0.237256 s, 2.2 GB/s")
    first = dd.parse(text)[0]
    assert any("dd printed 2.2 GB/s, but its bytes over its seconds are 1131 MB/s" in n for n in first.notes)
    assert not any("printed" in n for n in parse_file(str(FIXTURES / "dd-9.1-transcript.txt"))[0].notes)


@pytest.mark.parametrize("text, expected", [("1M", 2**20), ("1MB", 10**6), ("1G", 2**30), ("32k", 32768),
                                            ("1KiB", 1024), ("2x512", 1024), ("4b", 2048), ("x", None)])
def test_dd_block_sizes_in_dds_suffixes(text, expected):
    assert dd.size_bytes(text) == expected


def test_dd_import_through_the_command_line_and_a_dd_that_failed_is_refused(cli, store_url):
    r = cli("import", "--label", "e1", str(FIXTURES / "dd-9.1-transcript.txt"))
    assert r.status == 0, r.stderr
    assert store_rows(store_url, "select count(*) from runs") == [(3,)]
    r = cli("import", str(FIXTURES / "dd-9.1-no-space.txt"))   # dd: error writing '/dev/full': No space left
    assert r.status == 2 and r.stderr.strip().count("\n") == 0, r.stderr
    assert "No space left on device" in r.stderr
    assert store_rows(store_url, "select count(*) from runs") == [(3,)]


def test_dd_under_the_shells_time_keeps_real_user_sys_and_real_is_the_runs_wall_time(cli, store_url):
    """`time dd ...` (bash: "real\t0m0.047s"), `time -p dd ...` and `/usr/bin/time -p dd ...` ("real 0.04"):
    the totals were not read, and `time -p` hid its command, so its dd was taken as a status report
    of the dd before it."""
    write, read, direct = parse_file(str(FIXTURES / "dd-9.1-time-transcript.txt"))
    assert [r.command.split()[1] for r in (write, read, direct)] == ["if=/dev/zero", "if=/tmp/imp-work/ddt",
                                                                      "if=/dev/zero"]
    (s,) = write.steps[0].samples
    assert (s.record["shell_real_s"], s.record["shell_user_s"], s.record["shell_sys_s"]) == (0.047, 0.0, 0.014)
    assert (read.steps[0].samples[0].condition, read.wall_seconds) == ("direct", 0.04)  # dd's 0.0444877 s, cut to 0.04
    assert direct.steps[0].samples[0].record["shell_sys_s"] == 0.01 and not any(write.notes + read.notes)
    # stored: the run ends `real` after it starts, as a file's end date makes it
    r = cli("import", "--date", "2026-12-07T20:00:00", str(FIXTURES / "dd-9.1-time-transcript.txt"))
    assert r.status == 0, r.stderr
    spans = store_rows(store_url, "select started, finished from runs order by id")
    assert [round((dt.datetime.fromisoformat(str(b)) - dt.datetime.fromisoformat(str(a))).total_seconds(), 3)
            for a, b in spans] == [0.047, 0.04, 0.06]


@pytest.mark.parametrize("name,totals", [
    # zsh's TIMEFMT: "dd if=...  0.00s user 0.01s system 21% cpu 0.066 total"
    ("dd-9.1-zsh-time-transcript.txt", [(0.066, 0.0, 0.01), (0.05, 0.01, 0.0)]),
    # GNU time's default format: "0.01user 0.00system 0:00.08elapsed 12%CPU (0avgtext+...)"
    ("dd-9.1-gnu-time-transcript.txt", [(0.08, 0.01, 0.0), (0.05, 0.0, 0.02)]),
])
def test_dd_under_zsh_time_or_gnu_time_default_format_keeps_its_totals(name, totals):
    """zsh's `time` and GNU time without -p print real, user and sys in one line: they were not read,
    and the run had no wall time."""
    runs = parse_file(str(FIXTURES / name))
    got = [tuple(run.steps[0].samples[0].record[f"shell_{w}_s"] for w in ("real", "user", "sys")) for run in runs]
    assert got == totals
    assert [run.wall_seconds for run in runs] == [real for real, _, _ in totals] and not any(r.notes for r in runs)


@pytest.mark.parametrize("clock,seconds", [("0m0.047s", (0.047, 3)), ("0,05", (0.05, 2)), ("1:02.345", (62.345, 3)),
                                           ("1:01:02.345", (3662.345, 3)), ("0:00.08", (0.08, 2)),
                                           ("1:01:02", (3662.0, 0))])
def test_shell_time_totals_with_minutes_and_hours(clock, seconds):
    # zsh's %*E and GNU's %E print minutes and hours past 60 s and 1 h: "1:02.345", "1:01:02"
    assert shell_time.seconds(clock) == pytest.approx(seconds)


def test_dd_shell_time_shorter_than_dds_own_seconds_or_of_another_command_is_not_taken():
    text = "\n".join(["$ time dd if=/dev/zero of=f bs=1M count=64 conv=fdatasync", "64+0 records in",
                      "64+0 records out", "67108864 bytes (67 MB, 64 MiB) copied, 0.5 s, 134 MB/s", "",
                      "real\t0m0.047s", "user\t0m0.000s", "sys\t0m0.014s", ""])
    (run,) = dd.parse(text)
    assert run.wall_seconds is None and "shell_real_s" not in run.steps[0].samples[0].record
    assert any("less than dd's own 0.5 s" in n for n in run.notes)
    # the time of another command after the dd's summary is not the dd's
    synced = text.replace("$ time dd", "$ dd").replace("\nreal", "$ time sync\nreal", 1)
    (run,) = dd.parse(synced.replace("0.5 s, 134 MB/s", "0.04 s, 1.7 GB/s"))
    assert run.wall_seconds is None and "shell_real_s" not in run.steps[0].samples[0].record
