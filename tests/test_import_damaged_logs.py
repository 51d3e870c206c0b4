"""`clusterbench import` on the files real users have, made from the real
fixtures in the test: a run killed mid-line, two runs in one job log, a
job fio or IOR reported an error for. Each figure stored is one the file
states; what cannot be taken is left out with a note, or refused in one
line (docs/import.md, "Damaged files" and "Several runs in one file")."""
from __future__ import annotations

import datetime as dt
import json
import re

import pytest

from conftest import REPO

from clusterbench.errors import BadInput
from clusterbench.importers import SOURCE_LINE, fio
from clusterbench.importers.import_runs import parse_bytes

FIXTURES = REPO / "tests" / "fixtures" / "import"


def figures(runs) -> list[tuple]:
    return [(st.kernel, s.phase, s.condition, s.unit, s.repetition, s.sweep_value, s.value)
            for r in runs for st in r.steps for s in st.samples]


def cut_mid_line(data: bytes, keep: int) -> bytes:
    """The file as a run killed while printing leaves it: its first `keep`
    bytes, the last line without its newline."""
    cut = data[:keep]
    assert not cut.endswith(b"\n")
    return cut


@pytest.mark.parametrize("name,row_start", [("osu-5.3-multi_lat.txt", b"512 "), ("osu-7.4-bibw.txt", b"2048 "),
                                            ("imb-2021.3-groups.txt", b"            4 ")])
def test_a_run_killed_mid_line_keeps_no_figure_cut_short(name, row_start):
    data = (FIXTURES / name).read_bytes()
    at = data.index(b"\n" + row_start) + 1
    line_end = data.index(b"\n", at)
    # cut inside the row's last figure: "121.04" read as "121.0" before
    cut = cut_mid_line(data, line_end - 1)
    whole = figures(parse_bytes("f", data))
    runs = parse_bytes("f", cut)
    got = figures(runs)
    assert got and all(f in whole for f in got), set(got) - set(whole)
    assert any("ends mid-line" in n and "was not read" in n for r in runs for n in r.notes)


def test_iperf3_text_of_two_streams_cut_before_its_sum_is_not_one_streams_rate():
    data = (FIXTURES / "iperf3-3.12-tcp-P2.txt").read_bytes()
    # cut after both streams' end lines, before the [SUM] receiver line: 1.96 Gbit/s of stream 7 was stored
    cut = data[:data.index(b"[SUM]   0.00-2.00   sec   952 MBytes")] + b"[SUM]   0.00-2.00   sec   95"
    with pytest.raises(BadInput) as e:
        parse_bytes("f", cut)
    assert "no end-of-test line" in e.value.message


@pytest.mark.parametrize("name", ["ior-4.0.0-posix-fpp.txt", "ior-3.2.1-posix-fpp.txt", "mdtest-4.0.0.txt",
                                  "mdtest-1.9.3-llnl.txt", "imb-2021.3-mpi1.txt", "osu-7.4-latency.txt",
                                  "fio-3.33-randread.txt", "fio-2.19-seqwrite.txt", "fio-3.5-seqwrite.txt",
                                  "ior-csv-4.0.0-posix.csv", "himeno-xpa-L-size-prompt.txt",
                                  "himeno-mpi-static-XS-1x1x2.txt", "himeno-f90-XS.txt", "stream-5.10-omp2.txt",
                                  "stream-f-5.6-omp2.txt"])
def test_two_runs_in_one_job_log_are_two_runs_each_with_its_own_figures(name):
    data = (FIXTURES / name).read_bytes()
    one = parse_bytes("f", data)
    # the job's second run, an hour later (one file holding one run twice is taken once: below)
    two = parse_bytes("f", data + b"srun: error: n01: task 1: Exited with exit code 1\n" + an_hour_later(data))
    assert len(two) == 2 * len(one)
    # not the second run's tests taken as more tests of the first (IOR), nor its rows over the first's (mdtest)
    assert figures(two[:1]) == figures(one) and figures(two[1:]) == figures(one)
    assert two[1].version == one[0].version
    assert two[1].started == (one[0].started and one[0].started + dt.timedelta(hours=1))


def test_a_job_log_of_two_tools_stores_each_tools_runs():
    """A job that ran IOR, then mdtest (or OSU, then IMB; fio, then iperf3) writes both outputs to one
    log: the first tool detected was stored, the other's runs left out with nothing said."""
    def text(name):
        return (FIXTURES / name).read_bytes()
    for first, second in (("ior-3.3.0-posix-fpp.txt", "mdtest-3.3.0.txt"), ("mdtest-3.3.0.txt", "ior-3.3.0-posix-fpp.txt"),
                          ("osu-7.4-latency.txt", "imb-2021.3-mpi1.txt"), ("fio-3.33-randread.txt", "iperf3-3.12-tcp.txt")):
        runs = parse_bytes("job.log", text(first) + text(second))
        alone = parse_bytes("a", text(first)) + parse_bytes("b", text(second))
        assert sorted(figures(runs)) == sorted(figures(alone)), (first, second)
        assert {r.tool for r in runs} == {r.tool for r in alone} and len({r.tool for r in runs}) == 2
        assert any("the file holds the output of" in n for n in runs[0].notes), runs[0].notes
    # a tool's part that cannot be taken (mdtest killed after its launch line) is named, the rest stored
    killed = b"\n".join(text("mdtest-3.3.0.txt").split(b"\n")[:3]) + b"\n"
    (ior,) = parse_bytes("job.log", text("ior-3.3.0-posix-fpp.txt") + killed)
    assert ior.tool == "IOR" and any(n.startswith("also in the file, not taken: mdtest:") for n in ior.notes), ior.notes
    # a file of one tool is as before: no note
    assert not any("holds the output of" in n for r in parse_bytes("f", text("mdtest-3.3.0.txt")) for n in r.notes)


@pytest.mark.parametrize("name", ["ior-3.3.0-posix-fpp.txt", "osu-7.4-bw.txt", "fio-3.33-randread.txt",
                                  "iperf3-3.12-tcp.txt", "himeno-mpi-static-XS-1rank.txt", "stream-f-5.6-omp2.txt"])
def test_a_job_log_whose_script_echoed_pages_before_the_tool_is_read(name):
    """Detection reads a file's head (IOR's 8 KiB, OSU's 4 KiB): a job log whose script echoed 10 KiB
    (module loads, set -x) before the tool's output was "not any known format"."""
    data = (FIXTURES / name).read_bytes()
    preamble = b"".join(b"+ module load tools/%d # loaded, environment set\n" % i for i in range(250))
    assert len(preamble) > 10_000
    assert figures(parse_bytes("job.log", preamble + data)) == figures(parse_bytes("f", data))


@pytest.mark.parametrize("name", ["fio-3.33-randread.json", "iperf3-3.12-tcp.json", "ior-4.0.0-shared.json"])
def test_json_after_pages_of_other_output_in_a_job_log_is_read(name):
    """IOR -O summaryFormat=JSON and iperf3 -J print to stdout: in a job's log, after the script's echo.
    Detection reads the first 4 KiB: past that, the JSON was "not any known format"."""
    data = (FIXTURES / name).read_bytes()
    preamble = b"".join(b"+ module load tools/%d # loaded, environment set\n" % i for i in range(120))
    assert len(preamble) > 4096
    runs = parse_bytes("job.log", preamble + data)
    assert figures(runs) == figures(parse_bytes("f", data))
    assert "120 line(s) of other output before the JSON (a job script's, the scheduler's) were skipped" \
        in runs[0].notes


def test_fio_status_interval_reports_are_one_run_its_final_report():
    """fio --status-interval=1 writes a JSON report every second, each of the run so far, then its final
    one: a 3 s run was stored as 4 runs, their figures pooled four times by compare and trend."""
    data = (FIXTURES / "fio-3.33-status-interval.json").read_bytes()
    reports = [json.loads(d) for d in re.split(rb"\n(?=\{)", data)]
    assert len(reports) == 4 and [r["jobs"][0]["read"]["runtime"] for r in reports] == [883, 1882, 2883, 3001]
    (run,) = parse_bytes("f", data)
    (s,) = run.steps[0].samples
    assert (s.value, s.record["ops"]) == (reports[-1]["jobs"][0]["read"]["iops"], 40174)
    assert "3 interim report(s) of this run (--status-interval) before fio's final one: left out" in run.notes
    # the same job run again an hour later, appended to the log: two runs, each its final report
    later = json.loads(data[data.rindex(b"\n{") + 1:])
    later["timestamp"] += 3600
    assert len(parse_bytes("f", data + json.dumps(later).encode())) == 2


def an_hour_later(data: bytes) -> bytes:
    """The log of the same run an hour later: every clock time (hh:mm:ss) and
    Unix time of 2026 (fio's "timestamp", iperf3's "timesecs") an hour on."""
    data = re.sub(rb"\b(\d\d):(\d\d):(\d\d)\b", lambda m: b"%02d:%s:%s" % ((int(m[1]) + 1) % 24, m[2], m[3]), data)
    return re.sub(rb"\b17[6-9]\d{7}\b", lambda m: b"%d" % (int(m[0]) + 3600), data)


@pytest.mark.parametrize("name", ["ior-4.0.0-posix-fpp.txt", "mdtest-4.0.0.txt", "imb-2021.3-mpi1.txt",
                                  "fio-3.33-randread.txt", "fio-3.33-randread.json", "iperf3-3.12-tcp.json",
                                  "mdtest-1.9.3-llnl.txt"])
def test_a_log_holding_one_run_twice_stores_it_once_and_says_so(name):
    """`cat a.log a.log > all.log`, or tee -a and >> on one file: the same run
    twice (the same date to the second, the same figures) was two runs, its
    samples pooled twice by compare and trend."""
    data = (FIXTURES / name).read_bytes()
    one = parse_bytes("f", data)
    twice = parse_bytes("f", data + b"\n" + data)
    assert len(twice) == len(one) and figures(twice) == figures(one)
    assert any("holds this run twice" in n for r in twice for n in r.notes), [r.notes for r in twice]


def test_runs_the_file_does_not_date_are_never_taken_for_one_another():
    """OSU and IOR's CSV print no date: osu_barrier's one figure can be the same in two runs, so both are kept."""
    data = (FIXTURES / "osu-7.4-barrier.txt").read_bytes()
    assert len(parse_bytes("f", data + data)) == 2 * len(parse_bytes("f", data))


def test_fio_text_of_two_runs_appended_to_one_log_is_two_runs():
    # fio-3.33-two-runs.txt: `fio --name=rr ... >> log`, then `fio --name=mix ... --numjobs=2 >> log` (its job
    # line then "..."): both runs' jobs were one run's steps, under the first run's date
    runs = parse_bytes("f", (FIXTURES / "fio-3.33-two-runs.txt").read_bytes())
    assert [[st.name for st in r.steps] for r in runs] == [["fio job rr"], ["fio job mix"]]
    assert [r.started.strftime("%H:%M:%S") for r in runs] == ["22:25:04", "22:25:05"]
    # the second run's figures keep their lines in the file (its first block's), which the plausibility
    # gate names; its two clones (numjobs=2, no group_reporting: a block each) are one step, their IOPS
    # summed as the JSON's entries of one job are: two steps of one name before, a clone's figure each
    parsed = fio.parse((FIXTURES / "fio-3.33-two-runs.txt").read_text())
    (mix,) = parsed[1].steps
    assert [(s.phase, s.value, s.record[SOURCE_LINE], s.record["jobs"]) for s in mix.samples] == [
        ("read", 8422.0 + 8345.0, 41, 2), ("write", 3641.0 + 3716.0, 52, 2)]
    assert mix.params["numjobs"] == "2" and any("2 result blocks" in n for n in parsed[1].notes)


def test_mdtest_runs_of_different_figures_in_one_log_keep_their_own():
    data = (FIXTURES / "mdtest-4.0.0.txt").read_text()
    second = data.replace("1528.119", "1111.111")
    runs = parse_bytes("f", (data + second).encode())
    creates = [s.value for r in runs for st in r.steps for s in st.samples if s.phase == "dir-create"]
    assert creates == [1528.119, 1111.111]   # one run with 1111.111 (the second's rows over the first's) before


def test_a_killed_run_then_its_rerun_in_one_log_takes_the_rerun_and_says_so():
    data = (FIXTURES / "ior-4.0.0-posix-fpp.txt").read_text()
    killed = data[:data.index("Results:")] + "ior ERROR: open64() failed, errno 2, No such file or directory\n"
    runs = parse_bytes("f", (killed + data).encode())
    assert len(runs) == 1 and figures(runs) == figures(parse_bytes("f", data.encode()))
    assert any("the run starting at line 1 was not taken" in n for n in runs[0].notes)


def test_a_fio_job_that_reported_an_error_is_not_taken_json_and_text():
    doc = json.loads((FIXTURES / "fio-3.33-randread.json").read_text())
    doc["jobs"][0]["error"] = 28
    with pytest.raises(BadInput) as e:
        parse_bytes("f", json.dumps(doc).encode())
    assert "fio reported error 28 (No space left on device)" in e.value.message
    text = (FIXTURES / "fio-3.33-randread.txt").read_text().replace("err= 0", "err= 5")
    with pytest.raises(BadInput) as e:   # the text's err= was not read at all: its IOPS were stored
        parse_bytes("f", text.encode())
    assert "fio reported error 5 (Input/output error)" in e.value.message


def test_a_fio_text_job_that_failed_partway_is_not_taken_nor_added_to_the_job_before_it():
    """fio prints an error's place beside its number (`err=27 (file:io_u.c:1876, func=io_u error,
    error=File too large): pid=...`): that line was not read as a job's, so the failed job's
    write figures (512 KiB before EFBIG) were added to the randread job printed before it."""
    (run,) = parse_bytes("f", (FIXTURES / "fio-3.33-write-error.txt").read_bytes())
    (st,) = run.steps
    assert st.name == "fio job good" and [(s.phase, s.value) for s in st.samples] == [("read", 16000.0)]
    assert any(n.startswith("job bad: fio reported error 27 (File too large)") for n in run.notes), run.notes


def test_ior_text_nan_and_inf_are_left_out_with_a_note():
    data = (FIXTURES / "ior-4.0.0-posix-fpp.txt").read_text()
    for bad in ("nan   ", "-nan  ", "inf   "):
        (run,) = parse_bytes("f", data.replace("write     840.06 ", "write     " + bad).encode())
        assert 840.06 not in [s.value for st in run.steps for s in st.samples]
        assert any("1 figure(s) not finite" in n for n in run.notes), run.notes


@pytest.mark.parametrize("name", ["ior-4.0.0-posix-fpp.txt", "osu-7.4-bw.txt", "iperf3-3.12-tcp.json",
                                  "iperf3-3.12-tcp-P2.txt", "mdtest-4.0.0.txt", "fio-3.33-randread.json"])
def test_a_log_saved_on_windows_imports_as_the_original(name):
    data = (FIXTURES / name).read_bytes()
    text = data.decode().replace("\n", "\r\n")
    want = figures(parse_bytes("f", data))
    for saved in (b"\xff\xfe" + text.encode("utf-16-le"),   # PowerShell's >: refused as binary before
                  b"\xfe\xff" + text.encode("utf-16-be"), text.encode("utf-16-le"),
                  b"\xef\xbb\xbf" + text.encode()):        # UTF-8 with a mark: 'not any known format' before
        assert figures(parse_bytes("f", saved)) == want


def test_a_binary_file_with_nul_bytes_is_still_refused_in_one_line():
    with pytest.raises(BadInput) as e:
        parse_bytes("f", bytes(range(256)) * 64)
    assert "a binary file" in e.value.message


SLURM_NOISE = (b"srun: error: Unable to create step for job 1234: Invalid generic resource (gres) specification\n"
               b"--------------------------------------------------------------------------\n"
               b"WARNING: There was an error initializing an OpenFabrics device.\n"
               b"--------------------------------------------------------------------------\n")


@pytest.mark.parametrize("name", ["iperf3-3.12-tcp.json", "iperf3-3.1.3-udp.json", "ior-4.0.0-shared.json",
                                  "ior-3.3.0-shared.json", "fio-3.33-randread.json"])
def test_json_with_scheduler_warnings_before_and_after_imports_as_the_original(name):
    data = (FIXTURES / name).read_bytes()
    (run,) = parse_bytes("f", SLURM_NOISE + data + SLURM_NOISE)   # 'not any known format' or 'Extra data' before
    assert figures([run]) == figures(parse_bytes("f", data))
    assert any("other output" in n for n in run.notes), run.notes


@pytest.mark.parametrize("name", ["iperf3-3.12-tcp.json", "fio-3.33-randread.json", "fio-3.5-randrw-jobs.jsonplus"])
def test_json_documents_appended_to_one_log_are_one_run_each(name):
    data = (FIXTURES / name).read_bytes()
    one = parse_bytes("f", data)
    # iperf3 was refused ('Extra data'); fio kept the first document and dropped the second without a word
    two = parse_bytes("f", data + an_hour_later(data))
    assert len(two) == 2 and figures(two[:1]) == figures(one) == figures(two[1:])


def test_fio_json_then_normal_output_is_one_run_of_the_json_figures():
    """--output-format=json,normal prints the JSON, then the same results as text (fio's stat.c)."""
    doc = (FIXTURES / "fio-3.33-randread.json").read_bytes()
    text = (FIXTURES / "fio-3.33-randread.txt").read_bytes()
    (run,) = parse_bytes("f", doc + text)
    assert run.form == "JSON" and figures([run]) == figures(parse_bytes("f", doc))


@pytest.mark.parametrize("name", ["osu-7.4-latency.txt", "osu-5.3-mbw_mr.txt", "osu-7.4-allreduce-full.txt"])
def test_osu_with_tabs_for_its_column_spaces_imports_as_the_original(name):
    import re

    data = (FIXTURES / name).read_bytes()
    tabbed = re.sub(rb"  +", b"\t", data)   # 'no result row under the column heading' before
    assert figures(parse_bytes("f", tabbed)) == figures(parse_bytes("f", data))


def in_another_locale(line: str) -> str:
    """A table row as a spreadsheet in a German locale writes it: 1.586,018 for 1586.018."""
    def one(m):
        whole, frac = m.group(1), m.group(2)
        return f"{int(whole):,}".replace(",", ".") + "," + frac
    return re.sub(r"\b(\d+)\.(\d+)\b", one, line)


def test_rows_in_another_locale_are_counted_in_the_note_or_the_refusal():
    # such rows were skipped like other output, and the note did not say so: 3 of OSU's 13 rows went unsaid
    lines = (FIXTURES / "osu-7.4-latency.txt").read_text().split("\n")
    for n in (13, 14, 15):
        lines[n - 1] = in_another_locale(lines[n - 1])
    assert lines[12].split() == ["256", "1,49"]
    (run,) = parse_bytes("osu.txt", "\n".join(lines).encode())
    assert [s.size_bytes for s in run.steps[0].samples] == [1, 2, 4, 8, 16, 32, 64, 128, 2048, 4096]
    assert ("3 line(s) with numbers written for another locale (decimal comma, as '1.234,5'), which no tool "
            "prints: not read (line 13, 14, 15)") in run.notes
    # a file left with no row: the refusal counts them
    md = "\n".join(in_another_locale(x) if x.startswith("   ") else x
                   for x in (FIXTURES / "mdtest-4.0.0.txt").read_text().split("\n"))
    assert "   Directory creation           1.586,018       1.470,221       1.528,119         81,881" in md
    with pytest.raises(BadInput) as e:
        parse_bytes("md.txt", md.encode())
    assert e.value.message.endswith("(10 line(s) with numbers written for another locale (decimal comma, as "
                                    "'1.234,5'), which no tool prints: not read (line 15, 16, 17, 18, 19, ...))")
