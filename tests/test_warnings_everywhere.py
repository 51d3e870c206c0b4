"""#19: a flagged figure stays flagged in every view, which limit binds is
shown, comparisons come as JSON (valid against the package's schema), CSV
and Markdown, and `compare --fail-if` gates a CI pipeline by exit status."""
from __future__ import annotations

import csv
import io
import json
import os
import uuid
from pathlib import Path

import pytest

TMPFS_FLAG = "tmpfs has no device below"


def is_tmpfs(path: str) -> bool:
    """The file system type of the mount holding path, from /proc/self/mounts."""
    best, fs = "", None
    for line in Path("/proc/self/mounts").read_text().splitlines():
        _, mount, kind, *_ = line.split()
        if (path == mount or path.startswith(mount.rstrip("/") + "/")) and len(mount) > len(best):
            best, fs = mount, kind
    return fs == "tmpfs"


@pytest.fixture
def shm_dir():
    if not os.path.isdir("/dev/shm") or not is_tmpfs("/dev/shm"):
        pytest.skip("/dev/shm is not a tmpfs here")
    d = Path("/dev/shm") / f"cb-test-{uuid.uuid4().hex[:8]}"
    d.mkdir()
    yield d
    for p in sorted(d.rglob("*"), reverse=True):  # what the test made; cbk removes its own files
        p.rmdir() if p.is_dir() else p.unlink()
    d.rmdir()


@pytest.fixture
def two_configs(cli, shm_dir, tmp_path):
    """'shm': seqio on a tmpfs; 'disk': the same on the test's directory. Both real runs."""
    disk = tmp_path / "disk"
    disk.mkdir()
    for label, where in (("disk", disk), ("shm", shm_dir)):
        r = cli("run", "seqio", f"--dir={where}", "--file-size=4m", "--block-size=256k", "--write=direct",
                "--read=direct", "--repeat", "4", "--label", label, "--quiet")
        assert r.status == 0, r.stderr
    return disk


@pytest.mark.timeout(240)
def test_tmpfs_flag_reaches_every_view(cli, two_configs, store_url):
    from jsonschema import validate

    from clusterbench.report.compare_data import schema

    # show: the warning and the limit column
    show = cli("show", "shm")
    assert show.status == 0
    assert TMPFS_FLAG + ": this direct write measures memory, not storage" in show.stdout
    assert "memory: tmpfs has no device below" in show.stdout

    # compare, terminal: the cell is marked, the note below names it, the verdict is qualified
    table = cli("compare", "disk", "shm", "--width", "400")  # wide: no cell wraps
    assert table.status == 0, table.stderr
    assert "!1" in table.stdout and "!1 warning: shm" in table.stdout and TMPFS_FLAG in table.stdout
    assert "but shm is memory (tmpfs)" in table.stdout

    # compare, json: valid against the schema, the flag on shm's side only
    doc = json.loads(cli("compare", "disk", "shm", "--format", "json").stdout)
    validate(doc, schema())
    assert doc["baseline"] == "disk" and len(doc["points"]) == 2
    for point in doc["points"]:
        shm, disk = point["results"]["shm"], point["results"]["disk"]
        assert shm["flag"] == "memory (tmpfs)" and shm["limit_exceeded"]
        assert any(TMPFS_FLAG in w for w in shm["warnings"])
        assert not any(TMPFS_FLAG in w for w in disk["warnings"]) or is_tmpfs(str(two_configs))
        assert "but shm is memory (tmpfs)" in point["comparisons"][0]["verdict_text"]
        assert len(shm["values"]) == shm["n"] == 4

    # compare as csv and md, every report format and export: rendered in-process (the CLI paths are
    # the same one-line dispatch, exercised above and in test_golden_reports)
    from clusterbench.analysis import comparison as compare
    from clusterbench.report import compare_data, compare_markdown, render
    from clusterbench.report.data import Report, load_run
    from clusterbench.store import Store

    store = Store(store_url)
    cmp = compare.build(store, ["disk", "shm"])
    rows = list(csv.DictReader(io.StringIO(compare_data.render_csv(cmp))))
    assert len(rows) == 2 and all(TMPFS_FLAG in r["warnings"] and "memory (tmpfs)" in r["verdict"] for r in rows)
    # the limit the figure is above is marked "!" in every format (docs/limits.md), as the terminal marks it
    assert "shm: ! memory: tmpfs has no device below" in table.stdout
    assert all(r["limit"] == "! memory: tmpfs has no device below" for r in rows)
    md = compare_markdown.render(cmp)
    assert " !1 " in md and "1. warning: shm" in md and TMPFS_FLAG in md and "| measurement |" in md
    assert "shm: ! memory: tmpfs has no device below" in md
    report = Report.of(store, ["disk", "shm"])
    for fmt in ("html", "md", "csv", "json"):
        text = render(fmt, report)
        assert TMPFS_FLAG in text, fmt                          # the warning
        assert "memory: tmpfs has no device below" in text, fmt  # the limit
    exported = Report([load_run(store, i) for i in store.resolve("shm")])
    for fmt in ("json", "csv", "md"):
        assert TMPFS_FLAG in render(fmt, exported), fmt


def _copy_run(store, run_id: int, label: str, scale: float) -> None:
    """Stores run_id's samples again under label, the i-th at the first
    sample's rate x scale x (1 + i/1000): two copies at different scales
    differ by a known factor and do not overlap however noisy the machine
    made the measured run, so the gate's answer is known."""
    import dataclasses

    new = store.begin_run(label=label, command=f"copy of run {run_id} x {scale}", suite=None)
    for host, env in store.environments_of(run_id).items():
        from clusterbench import environment

        store.link_host(new, host, store.add_environment(env, environment.snapshot_hash(env)))
    for st in store.steps_of(run_id):
        sid = store.begin_step(new, position=st.position, name=st.name, kernel=st.kernel, params=st.params,
                               launcher=st.launcher, ranks=st.ranks, ranks_per_node=st.ranks_per_node)
        samples = store.samples_of(st.id)
        for i, s in enumerate(samples):
            value = samples[0].value * scale * (1 + i / 1000)
            store.add_sample(sid, dataclasses.replace(s, value=value), list(s.warnings))
        store.finish_step(sid, "ok")
    store.finish_run(new, "ok")


@pytest.mark.timeout(120)
def test_fail_if_exits_3_when_the_condition_holds(cli, store_url):
    from clusterbench.store import Store

    assert cli("run", "null", "--seconds=0.002", "--repeat", "5", "--label", "main", "--quiet").status == 0
    store = Store(store_url)
    measured = store.resolve("main")[0]
    _copy_run(store, measured, "base", 1.0)  # the measured run, made flat
    _copy_run(store, measured, "pr", 0.5)    # half the flat rate

    slower = cli("compare", "base", "pr", "--fail-if", "slower", "--format", "json")
    assert slower.status == 3, slower.stderr
    assert "--fail-if slower: pr vs base" in slower.stderr and "-50.0%" in slower.stderr
    assert json.loads(slower.stdout)["points"][0]["comparisons"][0]["verdict"] == "slower"  # output still whole
    assert cli("compare", "base", "pr", "--fail-if", "faster").status == 0
    assert cli("compare", "base", "pr", "--fail-if", "different", "--threshold", "60").status == 0
    assert cli("compare", "base", "pr", "--fail-if", "different", "--threshold", "40").status == 3
    assert cli("compare", "pr", "base", "--fail-if", "faster").status == 3  # the other way round
    assert cli("compare", "base", "pr").status == 0  # no gate asked: the comparison only
    bad = cli("compare", "base", "pr", "--threshold", "5")
    assert bad.status == 2 and "--threshold applies with --fail-if" in bad.stderr


def test_a_warning_is_counted_in_repetitions_where_a_repetition_has_several_samples_of_a_row():
    """linkmatrix --np 2 gives two links of one row per repetition: a warning
    every link carried read '4 of 4 repetitions' of a step that ran 2."""
    from clusterbench.analysis.step_summary import rows
    from clusterbench.results.sample import Sample

    shared = "more than one rank per node: some pairs share a node, so not every pair is a link"
    samples = [Sample("link_bandwidth", "n/a", None, "MiB/s", 100.0 + i, repetition=rep, warnings=[shared])
               for rep in (0, 1) for i in (0, 1)]
    samples[3].warnings.append("link 1 -> 0 at 101 MiB/s is slow")   # one link of repetition 1 alone
    (row,) = rows(samples)
    assert row.n == 4
    assert row.warnings == [f"2 of 2 repetitions: {shared}", "1 of 2 repetitions: link 1 -> 0 at 101 MiB/s is slow"]
    # one sample a repetition, as most kernels give: counted as before
    (single,) = rows([Sample("read", "cold", "cold", "MiB/s", 1.0, repetition=r, warnings=[shared] if r else [])
                      for r in range(3)])
    assert single.warnings == [f"2 of 3 repetitions: {shared}"]
