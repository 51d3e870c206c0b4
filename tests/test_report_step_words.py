"""A sweep's step titles in words: the plan stores "scaling: 2 nodes x 1
rank [op=allreduce]" (run/plan.py), and the reports printed the bracket as
it is. They read "scaling: 2 nodes x 1 rank, allreduce", each value named
from `cbk --describe` (results/step_words.py); the stored name, and the
data exports that carry it, stay as they were."""
from __future__ import annotations

import re

import pytest


def _step(name: str, kernel: str, params: dict, ranks: int = 1, ppn: int | None = None) -> dict:
    return {"name": name, "kernel": kernel, "params": params, "ranks": ranks, "ranks_per_node": ppn}


def test_a_choice_is_named_by_its_value_alone_only_where_no_other_parameter_offers_it(cbk_bin, monkeypatch):
    from clusterbench.results.step_words import title

    monkeypatch.setenv("CLUSTERBENCH_CBK", cbk_bin)
    assert title(_step("scaling: 2 nodes x 1 rank [op=allreduce]", "mpi", {"op": "allreduce", "sizes": "8"}, 2, 1)) \
        == "scaling: 2 nodes x 1 rank, allreduce"
    # seqio's write and read both offer "direct": each is named, or "direct, direct" would say neither
    params = {"block-size": "4m", "write": "direct", "read": "direct", "verify": "true"}
    assert title(_step("seqio [block-size=4m, write=direct, read=direct, verify=true, np=2]", "seqio", params, 2)) \
        == "seqio, block size 4 MiB, write direct, read direct, verify, 2 ranks"
    assert title(_step("seqio [write=fsync, ppn=4]", "seqio", {"write": "fsync"}, 8, 4)) == \
        "seqio, fsync, 4 ranks per node"


@pytest.mark.parametrize("name", ["mine [x=1]", "disk [write=direct]", "[op=allreduce]", "a [b]"])
def test_a_bracket_the_steps_own_parameters_do_not_say_is_shown_as_given(cbk_bin, monkeypatch, name):
    """A user's own name with brackets: only the plan's bracket, every item one of the step's facts, is read."""
    from clusterbench.results.step_words import title

    monkeypatch.setenv("CLUSTERBENCH_CBK", cbk_bin)
    assert title(_step(name, "seqio", {"write": "fsync"})) == name


@pytest.mark.timeout(180)
def test_a_swept_suite_steps_title_reads_in_words_in_every_report_and_the_export_keeps_its_name(cli, tmp_path):
    suite = tmp_path / "burst.toml"
    suite.write_text('[[steps]]\nname = "burst"\nkernel = "null"\nrepeat = 3\n'
                     'params = { seconds = "0.001", bytes = ["1m", "2m"] }\n')
    assert cli("run", str(suite), "--label", "a").status == 0
    for name in ("r.md", "r.html"):
        r = cli("report", "a", "-o", str(tmp_path / name))
        assert r.status == 0, r.stderr
    md, html = (tmp_path / "r.md").read_text(), (tmp_path / "r.html").read_text()
    assert "### burst, bytes 1 MiB: ok" in md and "### burst, bytes 2 MiB: ok" in md
    assert "<h3>burst, bytes 1 MiB: ok</h3>" in html
    shown = cli("show", "a").stdout
    assert "burst, bytes 2 MiB [ok]" in shown
    for text in (md, html, shown):
        assert "[bytes=" not in text
    exported = cli("export", "--format", "csv", "a").stdout
    assert "burst [bytes=1m]" in exported and "burst, bytes" not in exported   # the stored name, which scripts match


@pytest.mark.timeout(180)
def test_the_words_come_from_the_swept_names_the_plan_stored_not_from_the_name(cli, tmp_path, store_url):
    """A suite step named with a bracket of its own that its parameters happen to match,
    "mine [bytes=1m]" with bytes = "1m", swept nothing: read out of the name, it was shown
    as the sweep "mine, bytes 1 MiB". The plan stores what it swept (steps.swept), and the
    words come from that: a step of no sweep keeps its name, a swept one names its value."""
    from test_adaptive_and_migrations import rows

    suite = tmp_path / "named.toml"
    suite.write_text('[[steps]]\nname = "mine [bytes=1m]"\nkernel = "null"\nrepeat = 3\n'
                     'params = { seconds = "0.001", bytes = "1m" }\n'
                     '[[steps]]\nname = "burst [x]"\nkernel = "null"\nrepeat = 3\n'
                     'params = { seconds = "0.001", bytes = ["1m", "2m"] }\n')
    assert cli("run", str(suite), "--label", "a").status == 0
    assert rows(store_url, "select name, swept from steps order by position") == [
        ("mine [bytes=1m]", "[]"), ("burst [x] [bytes=1m]", '["bytes"]'), ("burst [x] [bytes=2m]", '["bytes"]')]
    shown = cli("show", "a").stdout
    assert "mine [bytes=1m] [ok]" in shown and "mine, bytes" not in shown
    assert "burst [x], bytes 1 MiB [ok]" in shown and "burst [x], bytes 2 MiB [ok]" in shown


def test_a_step_stored_with_its_swept_names_is_titled_from_them(cbk_bin, monkeypatch):
    from clusterbench.results.step_words import title

    monkeypatch.setenv("CLUSTERBENCH_CBK", cbk_bin)
    step = _step("scaling: 2 nodes x 1 rank [op=allreduce]", "mpi", {"op": "allreduce", "sizes": "8"}, 2, 1)
    assert title({**step, "swept": ["op"]}) == "scaling: 2 nodes x 1 rank, allreduce"
    assert title({**step, "swept": []}) == "scaling: 2 nodes x 1 rank [op=allreduce]"   # no sweep: as named
    # a name whose end is not the bracket of its stored facts is shown as given, never half read
    assert title({**step, "swept": ["sizes"]}) == "scaling: 2 nodes x 1 rank [op=allreduce]"
    step = _step("seqio [write=fsync, np=8, ppn=4]", "seqio", {"write": "fsync"}, 8, 4)
    assert title({**step, "swept": ["write", "np", "ppn"]}) == "seqio, fsync, 8 ranks, 4 ranks per node"


@pytest.mark.timeout(180)
def test_a_comparison_names_the_parameter_that_tells_a_steps_measurements_apart_in_words(cli, tmp_path):
    """Two labels that ran seqio at other block sizes: each measurement made by one
    of them only was listed as "only in a: seqio (block-size=1m): write fsync",
    cbk's option as typed, under tables whose titles read "block size 1 MiB".
    Every format says it in the words of a step's title."""
    for label, size in (("a", "1m"), ("a", "4m"), ("b", "2m"), ("b", "4m")):
        r = cli("run", "null", "--seconds=0.001", f"--bytes={size}", "--repeat", "3", "--label", label, "--quiet")
        assert r.status == 0, r.stderr
    for name in ("c.md", "c.html"):
        assert cli("report", "a", "b", "-o", str(tmp_path / name)).status == 0
    md, html = (tmp_path / "c.md").read_text(), (tmp_path / "c.html").read_text()
    shown = cli("compare", "a", "b").stdout
    assert "only in a: null (bytes 1 MiB): " in md and "only in b: null (bytes 2 MiB): " in md
    assert "<li>only in a: null (bytes 1 MiB): " in html
    assert "only in b: null (bytes 2 MiB): " in shown
    only = [item for text in (md, html, shown) for item in re.findall(r"only in [^<\n]*", text)]
    assert len(only) == 6 and not any("bytes=" in item for item in only), only   # the command lines keep cbk's options


@pytest.mark.timeout(180)
def test_the_measurements_not_compared_are_one_list_under_one_sentence(cli, tmp_path):
    """a vs b, each with a size the other did not measure: each "only in ..."
    was a paragraph of its own, twelve of them half an A4 page in a real
    report. They are one list, said once to be not compared."""
    for label, size in (("a", "1m"), ("a", "3m"), ("a", "4m"), ("b", "2m"), ("b", "4m")):
        r = cli("run", "null", "--seconds=0.001", f"--bytes={size}", "--repeat", "3", "--label", label, "--quiet")
        assert r.status == 0, r.stderr
    for name in ("c.md", "c.html"):
        assert cli("report", "a", "b", "-o", str(tmp_path / name)).status == 0
    md, html = (tmp_path / "c.md").read_text(), (tmp_path / "c.html").read_text()
    intro = "Not compared, measured by some of the configurations only:"
    # a's newer run first, as the label's runs are taken
    assert (f"<p>{intro}</p><ul class=\"partial\"><li>only in a: null (bytes 3 MiB): null</li>"
            "<li>only in a: null (bytes 1 MiB): null</li><li>only in b: null (bytes 2 MiB): null</li></ul>") in html
    assert "<p>only in" not in html
    assert (f"\n\n{intro}\n\n- only in a: null (bytes 3 MiB): null\n- only in a: null (bytes 1 MiB): null\n"
            "- only in b: null (bytes 2 MiB): null\n") in md


@pytest.mark.timeout(180)
def test_a_suites_two_identical_unnamed_steps_are_told_apart_by_their_number_and_the_export_keeps_them(cli, tmp_path):
    """A suite with the same unnamed [[steps]] twice: show, the Markdown and
    the HTML report gave two identical tables under one title, "null",
    nothing telling them apart. Each now says its number in the run; the
    stored name (none: the kernel) and the exports stay as they were."""
    suite = tmp_path / "twice.toml"
    step = '[[steps]]\nkernel = "null"\nrepeat = 2\nparams = { seconds = "0.001" }\n'
    suite.write_text(step + step)
    assert cli("run", str(suite), "--label", "a").status == 0
    for name in ("r.md", "r.html"):
        r = cli("report", "a", "-o", str(tmp_path / name))
        assert r.status == 0, r.stderr
    md, html = (tmp_path / "r.md").read_text(), (tmp_path / "r.html").read_text()
    assert re.findall(r"^### (null.*): ok$", md, re.M) == ["null (step 1)", "null (step 2)"], md
    assert re.findall(r"<h3>(null.*?): ok</h3>", html) == ["null (step 1)", "null (step 2)"]
    assert "null (step 1): median" in html and "null (step 2): median" in html   # the plots' titles
    assert re.findall(r"^(null.*) \[ok\]", cli("show", "a").stdout, re.M) == ["null (step 1)", "null (step 2)"]
    exported = cli("export", "--format", "csv", "a").stdout
    assert "(step" not in exported


def test_mpis_and_tcps_abbreviated_phases_read_in_words_in_a_stored_runs_report(cbk_bin, monkeypatch, tmp_path):
    """An OSU import (or a run stored before cbk wrote phase words) of mpi's `bw` and
    tcp's `rr`: the step tables read "bw 1 MiB" and "rr", shorthand a customer's
    reader has no key for. The kernels name them in words (cbk --describe's
    phase_words), which a stored step takes where its record has none."""
    from clusterbench.report import render
    from clusterbench.report.data import Report
    from clusterbench.results.sample import Sample
    from clusterbench.store import Store

    monkeypatch.setenv("CLUSTERBENCH_CBK", cbk_bin)
    store = Store(f"sqlite:///{tmp_path / 'results.db'}")
    run = store.begin_run(label="osu", command="clusterbench import osu-bw.txt", suite=None, user="test")
    for kernel, phase, unit, sweep in (("mpi", "bw", "MiB/s", {"sweep_key": "size_bytes", "size_bytes": 1 << 20}),
                                       ("tcp", "rr", "transactions/s", {"sweep_key": None})):
        step = store.begin_step(run, position=0 if kernel == "mpi" else 1, name=kernel, kernel=kernel, params={},
                                launcher="local", ranks=2, ranks_per_node=None)
        for rep in range(3):
            store.add_sample(step, Sample.from_record({"phase": phase, "mode": "library" if kernel == "mpi" else "round-trip",
                                                       "rate": 1000.0 + rep, "rate_unit": unit, "repetition": rep,
                                                       "qualifiers": [], **sweep}), [])
        store.finish_step(step, "ok")
    store.finish_run(run, "ok")
    md = render("md", Report.of(store, ["osu"]))
    assert "| bandwidth 1 MiB | library | 3 |" in md and "| request/response | round-trip | 3 |" in md
    assert "| bw " not in md and "| rr " not in md
