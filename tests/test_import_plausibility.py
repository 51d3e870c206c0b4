"""clusterbench import refuses what no tool prints and what is not a
benchmark's output: a real fixture with one figure changed to one its tool
cannot print is refused in one line naming the file, the line and the
value, exit status 2, nothing stored; /dev/zero, a FIFO and a file over the
size bound are refused without reading them whole (or blocking); a file of
100,000 rows imports in seconds."""
from __future__ import annotations

import dataclasses
import json
import os
import re
import time

import pytest

from conftest import REPO, store_rows

from clusterbench.errors import BadInput
from clusterbench.importers.import_runs import parse_file
from clusterbench.results.sample import Sample

FIXTURES = REPO / "tests" / "fixtures" / "import"
GOOD = str(FIXTURES / "osu-7.4-latency.txt")


def edited(tmp_path, fixture: str, line_no: int, old: str, new: str) -> str:
    """A copy of a real fixture with `old` replaced by `new` on line `line_no` (1-based)."""
    lines = (FIXTURES / fixture).read_text().split("\n")
    assert old in lines[line_no - 1], (fixture, line_no, lines[line_no - 1])
    lines[line_no - 1] = lines[line_no - 1].replace(old, new, 1)
    path = tmp_path / fixture
    path.write_text("\n".join(lines))
    return str(path)


def refused(cli, store_url, path: str) -> str:
    """The one line `import` printed refusing `path`, after checking it stored nothing."""
    assert cli("import", GOOD).status == 0            # the store holds one run before
    r = cli("import", GOOD, path)
    assert r.status == 2, (r.stdout, r.stderr)
    assert r.stderr.strip().count("\n") == 0 and "Traceback" not in r.stderr
    assert store_rows(store_url, "select count(*) from runs") == [(1,)]   # not even the good file
    assert r.stderr.startswith(f"error: {path}: ") or f"{path}: " in r.stderr, r.stderr
    return r.stderr.strip()


@pytest.mark.parametrize("fixture, line_no, old, new, says", [
    # the four figures of issues #36 and #37, each in a real file of its tool
    ("osu-5.3-bw.txt", 13, "38.68", "-500.00", r"line 13: bw 1 KiB -500 MB/s is negative"),
    ("fio-3.33-randread.json", 29, "33516.483516", "-1000.000000",
     r"line 29 \(\"iops\"\): randread -1,000 IOPS is negative"),
    ("iperf3-3.12-tcp.json", 108, "10479779010.584597", "-10000000000.0", r"line 108 \(\"bits_per_second\"\): "
                                                                            r"send -10 Gbit/s is negative"),
    ("ior-4.0.0-posix-fpp.txt", 32, "840.06 ", "-12345 ", r"line 32: write -12,345 MiB/s is negative"),
    # a negative figure kept in the record: iperf3's sender rate, one interval's rate
    ("iperf3-3.12-tcp.json", 99, "10482951320.811455", "-5000000000.0", r"line 99 .*sender_gbit_per_s -5 is negative"),
    ("iperf3-3.12-tcp.json", 61, "10482951280.434689", "-5000000000.0",
     r"line 61 .*interval_gbit_per_s holds -5, negative"),
    # data moved in no time
    ("iperf3-3.12-tcp.json", 106, "1.004573", "0", r"line 106 \(\"seconds\"\): send .* in 0 seconds"),
    ("ior-4.0.0-posix-fpp.txt", 33, "0.000479", "0.000000", r"line 33: read 16,702 MiB/s in 0 seconds"),
    # fio's text prints "0msec" for a job shorter than a millisecond: once a ZeroDivisionError traceback
    ("fio-3.33-randread.txt", 6, "1001msec)", "0msec)", r"line 6: read 27,000 IOPS in 0 seconds"),
    # beyond any link ever built
    ("osu-7.4-bw.txt", 20, None, None, r"line 20: bw .* beyond any link or memory ever built"),
    ("iperf3-3.12-tcp.json", 108, "10479779010.584597", "99000000000000", r"line 108 .* beyond any link ever built"),
    ("fio-3.33-randread.json", 29, "33516.483516", "5000000000.0", r"line 29 .* beyond any system"),
    ("iperf3-3.12-tcp.txt", 9, "11.0 Gbits", "11.0 Tbits", r"line 9: send 11,000 Gbit/s is beyond any link ever built"),
    ("imb-2017u2-mpi1.txt", 61, " 2.28", "-2.28", r"line 61: pingpong 4 KiB -2.28 us is negative"),
    # Himeno's MFLOPS: negative, and beyond any processor (himenoBMTxpa's, scaled to the kernel's count)
    ("himeno-mpi-static-XS-1rank.txt", 20, "6732.726495", "-6732.726495", r"line 20: jacobi -6,732.73 MFLOPS is "
                                                                           r"negative"),
    ("himeno-xpa-XS.txt", 15, "1850.173853", "1850173853000.0", r"line 15: jacobi 2\.01243e\+12 MFLOPS is beyond "
                                                                  r"any processor ever built \(100 TFLOPS per rank"),
    # counts beyond the store's integer columns: once an OverflowError traceback at store time
    ("fio-3.33-randread.json", 25, "137420800", "18446744073709551616",
     r"line 25 \(\"io_bytes\"\): randread bytes 18,446,744,073,709,551,616 is more than 8 EiB"),
    ("imb-2019.1-mpi1.txt", 41, "#processes = 2 ", "#processes = 99999999999999999999 ",
     r"IMB PingPong np 99999999999999999999: 99,999,999,999,999,999,999 ranks: MPI numbers ranks with a C int"),
    ("imb-2019.1-mpi1.txt", 41, "#processes = 2 ", "#processes = 3000000000 ", r"3,000,000,000 ranks"),
    # OSU prints sizes 1, 2, 4, ...
    ("osu-5.3-bw.txt", 13, "1024  ", "1000  ", r"line 13: OSU size 1000 bytes is not a power of two"),
    # latencies adding up to a run longer than any lasts: the row's own time, its slowest rank's (-f's max)
    # times its iterations, IMB's time times its repetitions (11.6 hours per round trip, 100 of them: 48 days
    # for one row, 11 rows of them)
    ("osu-7.4-latency.txt", 17, "1.52", "1e308", r"line 17: pingpong 4 KiB 1e\+308 us: the step's latencies add up "
                                                 r"to 3.17e\+294 years, longer than any run lasts \(366 days\)"),
    ("osu-7.4-allreduce-full.txt", 13, "0.71 ", "400000000000.00 ",
     # 7.4 sums MPI_CHARs: an osu step, not the mpi kernel's allreduce (of floats)
     r"line 13: allreduce-latency 1 KiB 0.7 us: the step's latencies add up to 1.27 years"),
])
def test_a_figure_no_tool_prints_is_refused_with_file_line_and_value(cli, store_url, tmp_path, fixture, line_no,
                                                                     old, new, says):
    if old is None:   # the last row's MB/s raised to 10^12 (a petabyte per second)
        text = (FIXTURES / fixture).read_text().split("\n")
        old = text[line_no - 1].split()[1]
        new = "1000000000000.00"
    path = edited(tmp_path, fixture, line_no, old, new)
    line = refused(cli, store_url, path)
    assert re.search(says, line), line


def test_latencies_of_a_slow_system_that_fit_in_a_run_are_taken(tmp_path):
    # 10 s per allreduce (a loaded 1 Gbit/s cluster, a 1 GiB message), 100 iterations, every size: 3 hours
    lines = (FIXTURES / "osu-7.4-allreduce-full.txt").read_text().split("\n")
    slow = [re.sub(r"^(\d+)\s.*\s(\d+)$", r"\1   10000000.00   9000000.00   11000000.00   \2", line) for line in lines]
    (tmp_path / "slow.txt").write_text("\n".join(slow))
    (run,) = parse_file(str(tmp_path / "slow.txt"))
    assert [s.value for s in run.steps[0].samples] == [1e7] * 9
    # one row of IMB PingPong at 11.6 hours a round trip, 100 repetitions (48 days): a long run, not an impossible one
    path = edited(tmp_path, "imb-2019.1-mpi1.txt", 45, "120.59", "41760000000.00")
    assert max(s.value for r in parse_file(path) for st in r.steps for s in st.samples) == 41760000000.0


def test_imb_latencies_times_their_repetitions_longer_than_any_run_are_refused(tmp_path):
    path = tmp_path / "imb.txt"
    lines = (FIXTURES / "imb-2019.1-mpi1.txt").read_text().split("\n")
    for n in range(44, 55):   # PingPong's rows 1 B ... 1 KiB: 11.6 hours a round trip, 100 repetitions each
        lines[n - 1] = re.sub(r"^(\s+\d+\s+100\s+)\S+", r"\g<1>41760000000.00", lines[n - 1])
    path.write_text("\n".join(lines))
    says = r"line 44: pingpong 0 B 4.176e\+10 us: the step's latencies add up to 1.46 years"
    with pytest.raises(BadInput, match=says):
        parse_file(str(path))


def test_osu_sizes_doubled_from_another_minimum_are_what_osu_prints(tmp_path):
    # osu_bw -m 3:48 prints 3, 6, 12, 24, 48: not powers of two, but OSU's own series
    path = tmp_path / "osu-m3.txt"
    path.write_text("# OSU MPI Bandwidth Test v7.4\n# Size      Bandwidth (MB/s)\n"
                    + "".join(f"{n:<10}{n * 1.5:>20.2f}\n" for n in (3, 6, 12, 24, 48)))
    (run,) = parse_file(str(path))
    assert [s.size_bytes for s in run.steps[0].samples] == [3, 6, 12, 24, 48]


def test_records_do_not_keep_the_lines_the_gate_read():
    for name in ("osu-5.3-bw.txt", "fio-3.33-randread.json", "ior-4.0.0-posix-fpp.txt", "mdtest-4.0.0.txt"):
        for run in parse_file(str(FIXTURES / name)):
            for st in run.steps:
                assert all(not any(k.startswith("_source") for k in s.record) for s in st.samples), name


def test_fast_samples_equal_those_from_record_for_every_fixture():
    for fixture in sorted(FIXTURES.iterdir()):
        try:
            runs = parse_file(str(fixture))
        except BadInput:
            continue   # the failed IOR run
        for run in runs:
            for st in run.steps:
                for s in st.samples:
                    slow = Sample.from_record(s.record)
                    fast = dataclasses.replace(s, warnings=list(slow.warnings))   # ior adds its read warning after
                    assert fast == slow, (fixture.name, s, slow)


@pytest.mark.timeout(30)
def test_dev_zero_and_a_fifo_are_refused_at_once(cli, tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    for path, kind in (("/dev/zero", "a character device"), (str(fifo), "a FIFO (named pipe)")):
        started = time.monotonic()
        r = cli("import", path, timeout=20)
        assert r.status == 2 and f"{path}: {kind}, not a regular file" in r.stderr, r.stderr
        assert time.monotonic() - started < 15


def test_a_directory_is_refused_with_the_glob_of_its_files(cli, tmp_path):
    """`import logs/` said to give `logs//*`: the name as typed, slash and all."""
    logs = tmp_path / "logs"
    logs.mkdir()
    for given in (str(logs), f"{logs}/"):
        r = cli("import", given)
        assert r.status == 2 and r.stderr.strip() == \
            f"Error: {given}: is a directory (give its files: clusterbench import {logs}/*)", r.stderr


def test_a_file_over_the_bound_is_refused_and_max_bytes_raises_it(cli, tmp_path, store_url):
    big = tmp_path / "osu-big.txt"
    rows = "".join(f"{1 << (i % 23):<10}{1.5:>20.2f}\n" for i in range(40_000))   # about 1.2 MB
    big.write_text("# OSU MPI Latency Test v7.4\n# Size          Latency (us)\n" + rows)
    r = cli("import", "--max-bytes", "1m", str(big))
    assert r.status == 2 and "larger than the 1 MiB import limit" in r.stderr and "--max-bytes" in r.stderr
    assert r.stderr.strip().count("\n") == 0
    assert cli("import", "--max-bytes", "2m", str(big)).status == 0
    assert store_rows(store_url, "select count(*) from samples") == [(40_000,)]
    bad = cli("import", "--max-bytes", "lots", str(big))
    assert bad.status == 2 and "'lots' is not a size (such as 64m or 1g); give 1<=x<=1g (bytes)" in bad.stderr


@pytest.mark.parametrize("given", ["0", "-1", "-2m", "2g"])
def test_a_max_bytes_out_of_range_is_said_with_the_range_and_unit_not_as_no_size(cli, tmp_path, given):
    """--max-bytes 0 said "'0' is not a size": 0 is a size, out of range, and the line named neither the range
    nor its unit (every numeric option names both)."""
    path = tmp_path / "osu.txt"
    path.write_text("# OSU MPI Latency Test v7.4\n# Size          Latency (us)\n1                       1.50\n")
    r = cli("import", "--max-bytes", given, str(path))
    assert r.status == 2 and f"{given} is not in the range 1<=x<=1g (bytes)" in r.stderr, r.stderr
    assert r.stderr.strip().count("\n") == 0


@pytest.mark.timeout(120)
def test_a_file_of_100k_rows_imports_whole(cli, tmp_path, store_url):
    """Every row of a 100,000-row OSU file lands. How fast is not asserted here
    (a timing in the suite tests the machine): bench/import_speed times this
    file's import (docs/import.md)."""
    path = tmp_path / "osu-100k.txt"
    rows = "".join(f"{1 << (i % 23):<10}{1.5 + i % 7:>20.2f}\n" for i in range(100_000))
    path.write_text("# OSU MPI Latency Test v7.4\n# Size          Latency (us)\n" + rows)
    r = cli("import", "--host", "n01", "--date", "2024-01-01", str(path))
    assert r.status == 0, r.stderr
    assert store_rows(store_url, "select count(*) from samples") == [(100_000,)]


def test_an_arithmetic_fault_in_a_parser_is_one_line_not_a_traceback(monkeypatch):
    # the net under the parsers missed ZeroDivisionError: fio's text "0msec" was a traceback
    from clusterbench.importers import fio

    def divides_by_zero(text):
        return 1 / 0

    monkeypatch.setattr(fio, "parse", divides_by_zero)
    with pytest.raises(BadInput, match=r"cannot read this file \(ZeroDivisionError: division by zero\)"):
        parse_file(str(FIXTURES / "fio-3.33-randread.json"))


@pytest.mark.parametrize("fixture, line_no, old, new, field", [
    ("fio-3.33-randread.json", 60, "1122304", "NaN", "clat_us_p99"),   # Python's JSON reader takes NaN
    ("imb-2019.1-mpi1.txt", 57, "2594.71", "inf", "bandwidth_mb_s"),
])
def test_a_record_field_not_finite_is_stored_as_null_and_the_run_exports(cli, store_url, tmp_path, fixture, line_no,
                                                                         old, new, field):
    # such a field was stored as nan/inf: the JSON export (strict) then failed on the run with a traceback
    path = edited(tmp_path, fixture, line_no, old, new)
    r = cli("import", "--host", "n01", path)
    assert r.status == 0, r.stderr
    assert "1 field(s) of the records not finite (nan, inf): stored as null" in r.stderr
    out = cli("export", "1", "--format", "json")
    assert out.status == 0 and "Traceback" not in out.stderr, out.stderr

    def refuse(constant):
        raise ValueError(constant)

    doc = json.loads(out.stdout, parse_constant=refuse)
    records = [s["record"] for st in doc["runs"][0]["steps"] for s in st["samples"]]
    assert any(field in rec and rec[field] is None for rec in records)
