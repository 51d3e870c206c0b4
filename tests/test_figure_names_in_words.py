"""Names a record keeps as identifiers are said in words where a person
reads them (show, compare, the Markdown and HTML reports): IMB's
t_min/t_avg/t_max over ranks, and the "n/a" of a figure no condition
applies to. The records, the store and the JSON export keep them."""
from __future__ import annotations

import json
import re

import pytest


def _text(html: str) -> str:
    return re.sub(r"<[^>]+>", " ", html)


@pytest.mark.timeout(240)
def test_a_figure_no_condition_applies_to_shows_no_na_and_the_export_keeps_it(cli, tmp_path):
    """null's figures have no cache state or other condition (the record's
    mode "n/a"): show left the mode column out, but the reports gave a
    "mode" column of "n/a", the comparison a mode cell "n/a" and the plots'
    bars "null n/a"."""
    for label in ("a", "b"):
        assert cli("run", "null", "--seconds=0.001", "--repeat", "3", "--label", label, "--quiet").status == 0
    for name in ("r.md", "r.html"):
        r = cli("report", "a", "b", "-o", str(tmp_path / name))
        assert r.status == 0, r.stderr
    shown = {"show": cli("show", "a").stdout, "compare": cli("compare", "a", "b").stdout,
             "compare md": cli("compare", "a", "b", "--format", "md").stdout,
             "md": (tmp_path / "r.md").read_text(), "html": _text((tmp_path / "r.html").read_text())}
    for what, text in shown.items():
        assert "null" in text and "n/a" not in text, (what, text)
    assert "| phase | n | median |" in shown["md"]   # the step's table has no mode column, as show has none
    exported = json.loads(cli("export", "--format", "json", "a").stdout)
    assert {s["mode"] for s in exported["runs"][0]["steps"][0]["samples"]} == {"n/a"}


@pytest.mark.timeout(240)
def test_the_ranks_times_are_headed_in_words_and_the_export_keeps_imbs_names(cli, tmp_path, mpiexec):
    r = cli("run", "mpi", "--np", "2", "--op=pingpong", "--sizes=8", "--repeat", "2", "--label", "m", "--quiet")
    assert r.status == 0, r.stderr
    assert cli("report", "m", "-o", str(tmp_path / "r.html")).status == 0
    shown, html = cli("show", "m").stdout, _text((tmp_path / "r.html").read_text())
    for text in (shown, html):
        assert "fastest / mean / slowest rank (µs)" in text and "t_min" not in text and "t_max" not in text, text
    narrow = cli("show", "m", env={"COLUMNS": "60"}).stdout
    assert "fastest / mean / slowest rank" in narrow and "t_min" not in narrow, narrow   # "... left out to fit"
    record = json.loads(cli("export", "--format", "json", "m").stdout)["runs"][0]["steps"][0]["samples"][0]["record"]
    assert {"t_min_us", "t_avg_us", "t_max_us"} <= set(record)


def test_the_gates_line_names_a_figure_of_no_condition_without_a_gap(cli, store_url):
    """--fail-if's line and an outlier warning name a figure by its phase and
    condition: with none shown, "null: null : faster" had a gap before its colon."""
    from clusterbench import environment
    from clusterbench.store import Store

    store = Store(store_url)
    env = {"host.name": "vm"}
    store.add_environment(env, environment.snapshot_hash(env))
    for label, values in (("zero", [0.0] * 5), ("pos", [5.0, 6.0, 7.0, 8.0, 9.0, 70.0])):
        run_id = store.begin_run(label=label, command="clusterbench run null", suite=None)
        store.link_host(run_id, "vm", environment.snapshot_hash(env))
        step = store.begin_step(run_id, position=0, name=None, kernel="null", params={}, launcher="local", ranks=1,
                                ranks_per_node=None)
        for i, v in enumerate(values):
            store.add_sample(step, {"repetition": i, "phase": "null", "mode": "n/a", "rate": v, "rate_unit": "MiB/s"},
                             [])
        store.finish_step(step, "ok")
        store.finish_run(run_id, "ok")
    r = cli("compare", "zero", "pos", "--fail-if", "faster")
    assert r.status == 3 and "pos vs zero: null: null: faster" in r.stderr, r.stderr
    shown = cli("show", "pos").stdout
    assert "(null):" in " ".join(shown.split()) and "(null )" not in shown, shown   # the outlier's line
