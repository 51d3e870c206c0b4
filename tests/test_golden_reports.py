"""Golden outputs of every report format for one fixed store, so a
refactor can prove that what users see is unchanged.

The store is filled from tests/golden/runs.jsonl: real cbk records of
seqio, randio, mpi, stream (thread sweep), cpufreq, tcp and himeno,
captured once, with fixed rates per repetition (run "base" and run
"tuned", about 10 % faster), a fixed environment per run and fixed times.
`clusterbench show`, `compare` (table, json, csv, md), `export` (json, csv, md) and `report`
(html, plots reduced to a placeholder: their pixels are matplotlib's; md) are
compared with tests/golden/<name>.

A change that means to alter an output regenerates the files and shows
the difference in review:
    CLUSTERBENCH_UPDATE_GOLDEN=1 .venv/bin/python -m pytest -q tests/test_golden_reports.py
"""
from __future__ import annotations

import datetime as dt
import json
import os
import re
from pathlib import Path

import pytest
import sqlalchemy as sa

from conftest import STORE_BACKENDS, run_bounded

GOLDEN = Path(__file__).parent / "golden"
UPDATE = os.environ.get("CLUSTERBENCH_UPDATE_GOLDEN") == "1"
STARTED = dt.datetime(2026, 1, 15, 9, 30, tzinfo=dt.timezone.utc)

# What environment capture would have stored; the two differ in one key
# (the comparison's environment table shows it) and the target sits on
# NFS behind a 1 Gbit/s link, so the limit checks warn about cached reads.
ENV_BASE = {
    "capture.schema": 1, "host.name": "node01", "cpu.model": "Example CPU 9000", "cpu.sockets": 1,
    "cpu.cores": 8, "cpu.threads": 16, "cpu.governor": "performance", "cpu.turbo": True,
    "memory.total_bytes": 34359738368, "memory.available_bytes": 30000000000, "numa.nodes": 1,
    "numa.node0.cpus": "0-15", "os.name": "Debian GNU/Linux 12", "kernel.release": "6.1.0-18-amd64",
    "target./scratch/golden.fs_type": "nfs4", "target./scratch/golden.device": "server:/export",
    "net.interfaces": "eth0", "net.eth0.speed_mbps": 1000, "vm.dirty_ratio": 20,
    "tuned.profile": "balanced",
}
ENV_TUNED = {**ENV_BASE, "tuned.profile": "throughput-performance"}


def fill_store(url: str) -> None:
    from clusterbench import environment, limits
    from clusterbench.results.sample import Sample
    from clusterbench.store import Store

    store = Store(url)
    runs: dict[str, int] = {}
    step_id = None
    position: dict[int, int] = {}
    for line in (GOLDEN / "runs.jsonl").read_text().splitlines():
        item = json.loads(line)
        if "step" in item:
            label = item["label"]
            if label not in runs:
                runs[label] = store.begin_run(label=label, command=f"clusterbench run golden --label={label}",
                                              suite=None, user="golden")
                env = ENV_BASE if label == "base" else ENV_TUNED
                store.link_host(runs[label], "node01",
                                store.add_environment(env, environment.snapshot_hash(env)))
            run_id = runs[label]
            st = item["step"]
            pos = position[run_id] = position.get(run_id, -1) + 1
            if step_id is not None:
                store.finish_step(step_id, "ok", stop_reason="fixed: 5 repetitions")
            step_id = store.begin_step(run_id, position=pos, name=st["name"], kernel=st["kernel"],
                                       params=st["params"], launcher="local" if st["ranks"] == 1 else "mpiexec",
                                       ranks=st["ranks"], ranks_per_node=st["ranks_per_node"])
            env = ENV_BASE if label == "base" else ENV_TUNED
        else:
            sample = Sample.from_record(item["record"])
            store.add_sample(step_id, sample, limits.sample_warnings(sample, env))
    store.finish_step(step_id, "ok", stop_reason="fixed: 5 repetitions")
    for run_id in runs.values():
        store.finish_run(run_id, "ok")
    # fixed times and host: what a run would store, minus the clock
    with store.engine.begin() as c:
        c.execute(sa.text("UPDATE runs SET host='node01', pid=NULL, started=:s, finished=:f"),
                  {"s": STARTED, "f": STARTED + dt.timedelta(minutes=3)})
        c.execute(sa.text("UPDATE steps SET started=:s, finished=:f"),
                  {"s": STARTED, "f": STARTED + dt.timedelta(seconds=20)})
        c.execute(sa.text("UPDATE environments SET captured=:s"), {"s": STARTED})


@pytest.fixture(scope="module", params=STORE_BACKENDS)
def golden_cli(request, tmp_path_factory, cbk_bin):
    """cli(*args) against the filled store (module scope: filled once per backend:
    SQLite and PostgreSQL must give the same outputs byte for byte)."""
    import sys

    if request.param == "postgresql":
        url = request.getfixturevalue("postgres_server").new_database()
    else:
        url = f"sqlite:///{tmp_path_factory.mktemp('golden') / 'results.db'}"
    fill_store(url)

    def run(*args: str) -> str:
        # SOURCE_DATE_EPOCH: the report's date, fixed as reproducible builds fix theirs
        env = dict(os.environ, CLUSTERBENCH_CBK=cbk_bin, CLUSTERBENCH_DB=url, TZ="UTC",
                   SOURCE_DATE_EPOCH=str(int(STARTED.timestamp())))
        env.pop("COLUMNS", None)  # the piped width, as in a CI log
        p = run_bounded([sys.executable, "-m", "clusterbench", *args], timeout=120, env=env)
        assert p.returncode == 0, p.stderr
        return p.stdout

    return run


def check(name: str, text: str) -> None:
    path = GOLDEN / name
    if UPDATE:
        path.write_text(text)
        return
    expected = path.read_text()
    assert text == expected, f"{name} differs from tests/golden/{name} (regenerate when meant: see module doc)"


def without_plots(html: str) -> str:
    return re.sub(r"<svg\b.*?</svg>", "<svg>(plot)</svg>", html, flags=re.S)


@pytest.mark.timeout(120)
def test_show_tables_are_unchanged(golden_cli):
    check("show.txt", golden_cli("show", "1", "2"))


@pytest.mark.timeout(120)
def test_compare_table_is_unchanged(golden_cli):
    check("compare.txt", golden_cli("compare", "base", "tuned"))


@pytest.mark.timeout(120)
@pytest.mark.parametrize("fmt", ["json", "csv", "md"])
def test_compare_formats_are_unchanged(golden_cli, fmt):
    check(f"compare.{fmt}", golden_cli("compare", "base", "tuned", "--format", fmt))


@pytest.mark.timeout(120)
@pytest.mark.parametrize("fmt", ["json", "csv", "md"])
def test_export_is_unchanged(golden_cli, fmt):
    check(f"export.{fmt}", golden_cli("export", "--format", fmt, "1", "2"))


@pytest.mark.timeout(120)
def test_html_report_structure_is_unchanged(golden_cli, tmp_path):
    out = tmp_path / "report.html"
    golden_cli("report", "base", "tuned", "-o", str(out))
    html = out.read_text()
    assert html.count("<svg") >= 3  # the plots are there, only their drawing is not compared
    check("report.html.txt", without_plots(html))  # .txt: a golden output, not source


@pytest.mark.timeout(120)
def test_markdown_report_is_unchanged(golden_cli, tmp_path):
    """The Markdown report of two configurations: its title and headline figures,
    their comparison (compare --format md's), then each run."""
    out = tmp_path / "report.md"
    golden_cli("report", "base", "tuned", "-o", str(out))
    text = out.read_text()
    assert text.startswith("# Performance comparison: base vs tuned on node01, 2026-01-15\n\n## Systems compared\n")
    assert text.index("## Systems compared") < text.index("\n## Summary\n")
    assert text[text.index("## Comparison, baseline"):].startswith(golden_cli("compare", "base", "tuned", "--format", "md"))
    check("report.md", text)
