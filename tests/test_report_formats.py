"""CSV and JSON carry the statistics: CI, spread and the flagged outlier, parsed back."""
from __future__ import annotations

import csv
import io
import json

import pytest


@pytest.mark.timeout(60)
def test_json_and_csv_carry_ci_and_outliers(tmp_path):
    from clusterbench.report import render
    from clusterbench.report.data import load_run
    from clusterbench.store import Store

    store = Store(f"sqlite:///{tmp_path / 'r.db'}")
    run = store.begin_run(label="x", command="test", suite=None)
    step = store.begin_step(run, position=0, name="seqio", kernel="seqio", params={}, launcher="local", ranks=1,
                            ranks_per_node=None)
    values = [100.0, 101.0, 99.0, 100.5, 99.5, 100.2, 250.0]  # the last is the outlier
    for i, v in enumerate(values):
        store.add_sample(step, {"repetition": i, "phase": "write", "mode": "fsync", "rate": v,
                                "rate_unit": "MiB/s"}, [])
        store.add_sample(step, {"repetition": i, "phase": "read", "mode": "cold", "rate": 200.0 + i,
                                "rate_unit": "MiB/s"}, [])
    store.finish_step(step, "ok")
    store.finish_run(run, "ok")
    data = [load_run(store, run)]

    (write, read) = json.loads(render("json", data))["runs"][0]["steps"][0]["summary"]
    assert (write["phase"], write["median"], write["outliers"]) == ("write", 100.2, [6])
    # n = 7: [x(1), x(7)] is the narrowest order-statistic interval reaching 95 % (coverage 1 - 2/128)
    assert (write["ci_low"], write["ci_high"]) == (99.0, 250.0)
    assert write["ci_coverage"] == pytest.approx(1 - 2 / 128) and write["ci_method"] == "order statistics"
    assert write["std"] > 0 and write["cv"] == pytest.approx(write["std"] / write["mean"])
    assert read["outliers"] == [] and read["excluded_outliers"] is False

    rows = list(csv.DictReader(io.StringIO(render("csv", data))))
    assert len(rows) == 14
    flagged = [(r["phase"], float(r["value"])) for r in rows if r["outlier"] == "1"]
    assert flagged == [("write", 250.0)]
    assert {r["outlier"] for r in rows} == {"0", "1"}


def _one_step_run(store, label: str, kernel: str, phase: str, values: list[float]) -> int:
    run = store.begin_run(label=label, command="test", suite=None)
    step = store.begin_step(run, position=0, name=kernel, kernel=kernel, params={}, launcher="local", ranks=1,
                            ranks_per_node=None)
    for i, v in enumerate(values):
        store.add_sample(step, {"repetition": i, "phase": phase, "mode": "n/a", "rate": v, "rate_unit": "MiB/s"}, [])
    store.finish_step(step, "ok")
    store.finish_run(run, "ok")
    return run


@pytest.mark.timeout(60)
def test_html_report_of_runs_with_nothing_in_common_shows_every_run_and_says_why_there_is_no_comparison(tmp_path):
    """`report disk-run memory-run -o r.html`: Markdown, CSV and JSON were written, HTML stopped at the
    comparison ("no measurement with equal kernel and parameters") and wrote nothing."""
    import html

    from clusterbench.report import render
    from clusterbench.report.data import Report
    from clusterbench.store import Store

    store = Store(f"sqlite:///{tmp_path / 'r.db'}")
    disk = _one_step_run(store, "disk", "null", "null", [100.0, 101.0, 99.0, 100.5, 99.5])
    memory = _one_step_run(store, "memory", "stream", "triad", [5000.0, 5100.0, 4900.0, 5050.0, 4950.0])
    page = html.unescape(render("html", Report.of(store, [str(disk), str(memory)])))
    assert f"Run {disk} (disk)" in page and f"Run {memory} (memory)" in page
    assert "No comparison" in page and "no measurement with equal kernel and parameters" in page
    assert "<h2>Comparison" not in page


@pytest.mark.timeout(60)
def test_csv_rows_say_whether_their_step_ended_ok_and_a_step_with_no_sample_has_a_row(tmp_path):
    """A failed run's CSV read as a whole measurement: its samples' rows
    said nothing of the failure, and a step that failed before any sample
    had no row at all."""
    from clusterbench.report import render
    from clusterbench.report.data import load_run
    from clusterbench.store import Store

    store = Store(f"sqlite:///{tmp_path / 'r.db'}")
    run = store.begin_run(label="x", command="test", suite=None)
    steps = [store.begin_step(run, position=i, name=f"s{i}", kernel="null", params={}, launcher="local", ranks=1,
                              ranks_per_node=None) for i in range(3)]
    for step in steps[:2]:
        for i in range(2):
            store.add_sample(step, {"repetition": i, "phase": "p", "mode": "n/a", "rate": 1.0 + i,
                                    "rate_unit": "MiB/s"}, [])
    store.finish_step(steps[0], "ok")
    store.finish_step(steps[1], "failed", message="null: repetition 2 failed (--fail-at)")
    store.finish_step(steps[2], "failed", message="=cmd: no sample")
    store.finish_run(run, "failed")
    rows = list(csv.DictReader(io.StringIO(render("csv", [load_run(store, run)]))))
    assert [(r["step"], r["repetition"], r["step_status"], r["step_message"]) for r in rows] == [
        ("s0", "0", "ok", ""), ("s0", "1", "ok", ""),
        ("s1", "0", "failed", "null: repetition 2 failed (--fail-at)"),
        ("s1", "1", "failed", "null: repetition 2 failed (--fail-at)"),
        ("s2", "", "failed", "'=cmd: no sample")]   # a message is a cell like any other: never a formula
    assert rows[-1]["value"] == "" and rows[-1]["kernel"] == "null"


@pytest.mark.timeout(60)
def test_csv_rows_of_a_size_sweep_say_their_message_size(tmp_path):
    """`mpi --op=pingpong --sizes=8,1m`: every CSV row read phase "pingpong",
    mode "library", so a spreadsheet pooled the 8 B and the 1 MiB latencies
    (1 us and 80 us) into one column; show, compare and Markdown name the size."""
    from clusterbench.report import render
    from clusterbench.report.data import load_run
    from clusterbench.results.sample import Sample
    from clusterbench.store import Store

    store = Store(f"sqlite:///{tmp_path / 'r.db'}")
    run = store.begin_run(label="x", command="test", suite=None)
    step = store.begin_step(run, position=0, name="mpi", kernel="mpi", params={"op": "pingpong", "sizes": "8,1m"},
                            launcher="mpiexec", ranks=2, ranks_per_node=None)
    for rep in range(3):
        for size, us in ((8, 1.0 + rep / 10), (1 << 20, 80.0 + rep)):
            store.add_sample(step, Sample.from_record(
                {"schema": 1, "type": "measurement", "kernel": "mpi", "repetition": rep, "phase": "pingpong",
                 "mode": "library", "size_bytes": size, "sweep_key": "size_bytes", "qualifiers": [],
                 "rate": us, "rate_unit": "us", "bytes": 10 * size, "ops": 10}), [])
    store.finish_step(step, "ok")
    store.finish_run(run, "ok")
    data = [load_run(store, run)]

    rows = list(csv.DictReader(io.StringIO(render("csv", data))))
    assert len(rows) == 6
    by_size: dict[str, list[float]] = {}
    for r in rows:
        by_size.setdefault(r["size_bytes"], []).append(float(r["value"]))
    assert by_size == {"8": [1.0, 1.1, 1.2], "1048576": [80.0, 81.0, 82.0]}
    # the sizes the Markdown table names, one row each
    md = render("md", data)
    assert "| pingpong 8 B |" in md and "| pingpong 1 MiB |" in md

    seqio = _one_step_run(store, "y", "seqio", "write", [1.0, 2.0])
    rows = list(csv.DictReader(io.StringIO(render("csv", [load_run(store, seqio)]))))
    assert [r["size_bytes"] for r in rows] == ["", ""]   # no size swept: empty, not 0
