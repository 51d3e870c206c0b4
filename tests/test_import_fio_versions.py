"""fio 3.42 (the newest release; tests/fixtures/README says how each file was made): its JSON adds
`job_start`, `latency_target_ns` and `latency_window_us` to each job beside 3.33's fields, its text
prints clat in nsec where the times are short. Every figure the import reads is the one the file
printed: json, json+, normal text and terse versions 3 and 5, with psync, libaio and io_uring."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from clusterbench.importers.import_runs import parse_file

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "import"
JSON_FILES = ["fio-3.42-randread.json", "fio-3.42-randwrite.jsonplus", "fio-3.42-seqread.json",
              "fio-3.42-seqwrite-libaio.json", "fio-3.42-randrw-group.json"]
TEXT_FILES = ["fio-3.42-randread.txt", "fio-3.42-seqread.txt", "fio-3.42-randrw-jobs.txt"]
DIRECTION = {"randread": "read", "randwrite": "write", "read": "read", "write": "write"}


@pytest.mark.parametrize("name", JSON_FILES)
def test_json_figures_are_the_ones_fio_wrote(name):
    doc = json.loads((FIXTURES / name).read_text())
    (job,) = doc["jobs"]
    (run,) = parse_file(str(FIXTURES / name))
    assert (run.version, run.form) == ("3.42", "json+" if name.endswith("plus") else "JSON")
    (step,) = run.steps
    assert step.params.get("engine", step.params.get("ioengine")) == job["job options"]["ioengine"]
    moved = [d for d in ("read", "write") if job[d]["io_bytes"]]
    assert [DIRECTION[s.phase] for s in step.samples] == moved
    for s in step.samples:
        figures = job[DIRECTION[s.phase]]
        assert (s.unit, s.value, s.record["bytes"]) == ("IOPS", figures["iops"], figures["io_bytes"])
        assert s.record["mib_per_s"] == figures["bw"] / 1024   # fio's bw is KiB/s
        assert s.record["clat_us_mean"] == pytest.approx(figures["clat_ns"]["mean"] / 1e3)
        assert s.record["seconds"] == figures["runtime"] / 1e3


@pytest.mark.parametrize("name", TEXT_FILES)
def test_text_iops_are_the_ones_fio_printed(name):
    text = (FIXTURES / name).read_text()
    printed: dict[str, float] = {}
    for direction, iops, k in re.findall(r"^\s+(read|write): IOPS=([\d.]+)(k?),", text, re.M):
        printed[direction] = printed.get(direction, 0) + float(iops) * (1000 if k else 1)   # numjobs blocks summed
    (run,) = parse_file(str(FIXTURES / name))
    assert run.version == "3.42"
    (step,) = run.steps
    assert {s.phase: s.value for s in step.samples} == pytest.approx(printed)


@pytest.mark.parametrize("name,version", [("fio-3.42-terse3-randread.txt", 3), ("fio-3.42-terse5-randrw.txt", 5)])
def test_terse_iops_are_the_fields_fio_wrote(name, version):
    fields = (FIXTURES / name).read_text().strip().split(";")
    assert (fields[0], fields[1]) == (str(version), "fio-3.42")
    (run,) = parse_file(str(FIXTURES / name))
    per_direction = 47 if version == 5 else 41   # fio's HOWTO, "Terse output"
    got = {s.phase: s.value for s in run.steps[0].samples}
    assert got["read"] == float(fields[7])
    if "write" in got:
        assert got["write"] == float(fields[7 + per_direction])


def test_run_dated_by_its_jobs_start_to_the_millisecond():
    """fio 3.36 on writes each job's `job_start` and `timestamp_ms`: the run was dated its end less
    the job's `elapsed`, whole seconds, so a 0.13 s read was stored as starting 1.2 s early."""
    doc = json.loads((FIXTURES / "fio-3.42-seqread.json").read_text())
    (run,) = parse_file(str(FIXTURES / "fio-3.42-seqread.json"))
    assert run.started.timestamp() * 1e3 == pytest.approx(doc["jobs"][0]["job_start"], abs=1)
    assert run.finished.timestamp() * 1e3 == pytest.approx(doc["timestamp_ms"], abs=1)
    assert (run.finished - run.started).total_seconds() == pytest.approx(0.129)


def test_job_start_of_another_clock_is_not_a_date(tmp_path):
    # job_start_clock_id=1 (CLOCK_MONOTONIC) makes job_start the time since boot, not since 1970
    doc = json.loads((FIXTURES / "fio-3.42-seqread.json").read_text())
    doc["jobs"][0]["job options"]["job_start_clock_id"] = "1"
    doc["jobs"][0]["job_start"] = 86_400_000
    (tmp_path / "mono.json").write_text(json.dumps(doc))
    (run,) = parse_file(str(tmp_path / "mono.json"))
    # the end (its whole second) less the job's time, as before 3.36
    assert (run.started.timestamp(), run.finished.timestamp()) == (doc["timestamp"] - 1, doc["timestamp"])


def test_a_random_job_that_fsyncs_each_write_is_no_randio_measurement():
    """--fsync=1 (an fsync after every write) measured 2,683 IOPS and was stored as randio's buffered
    randwrite, the measurement that does a hundred times more: compare matched them as one."""
    doc = json.loads((FIXTURES / "fio-3.42-randwrite-fsync.json").read_text())
    (run,) = parse_file(str(FIXTURES / "fio-3.42-randwrite-fsync.json"))
    (step,) = run.steps
    assert step.kernel == "fio" and step.params["fsync"] == "1" and step.params["rw"] == "randwrite"
    assert step.samples[0].value == doc["jobs"][0]["write"]["iops"]
    assert run.notes == ["fio job ws: fsync=1, which randio does not do: a fio step, not matched with randio's figures"]
    # the same job without it is randio's
    (plain,) = parse_file(str(FIXTURES / "fio-3.42-randwrite.jsonplus"))
    assert plain.steps[0].kernel == "randio" and plain.notes == []


def test_the_sync_calls_count_and_latency_are_kept_with_the_writes():
    # fio 3's per-job "sync" block: 2,696 fsyncs of 363 us each on average, where the writes took 6 us
    sync = json.loads((FIXTURES / "fio-3.42-randwrite-fsync.json").read_text())["jobs"][0]["sync"]
    (run,) = parse_file(str(FIXTURES / "fio-3.42-randwrite-fsync.json"))
    rec = run.steps[0].samples[0].record
    assert rec["sync_ops"] == sync["total_ios"] == 2696
    assert rec["sync_lat_us_mean"] == pytest.approx(sync["lat_ns"]["mean"] / 1e3)
    assert rec["sync_lat_us_p99"] == pytest.approx(sync["lat_ns"]["percentile"]["99.000000"] / 1e3)
    (plain,) = parse_file(str(FIXTURES / "fio-3.42-randwrite.jsonplus"))   # no sync call: nothing kept
    assert not any(k.startswith("sync_") for k in plain.steps[0].samples[0].record)
