"""The test environment of a run over several hosts that is no cluster run
(`run tcp` or `run mpi` over --hosts: a snapshot of each host it reached),
given as a cluster run's report gives it (report/cluster_environment.py):
the lines the same on every host once, then what differs. A block per host
repeated the same CPU, memory and OS once a host, and a reader compared
them line by line to find the governor that differed."""
from __future__ import annotations

import datetime as dt

import pytest
import sqlalchemy as sa

from test_cluster_report import rendered   # a stored run's report, as its date fixes it
from test_golden_reports import ENV_BASE, STARTED

HOSTS = ["h01", "h02", "h03"]
GOVERNOR = {"h02": {"cpu.governor": "powersave"}}   # h02 configured apart


@pytest.fixture(scope="module")
def tcp_store(tmp_path_factory):
    """A `run tcp` between two hosts launched from a third, as `run` stores
    it: one snapshot of each host, one step of kind measured."""
    from clusterbench import environment
    from clusterbench.results.sample import Sample
    from clusterbench.store import Store

    store = Store(f"sqlite:///{tmp_path_factory.mktemp('hosts') / 'results.db'}")
    run_id = store.begin_run(label="pairs", command="clusterbench run tcp --hosts h02,h03", suite=None, user="golden")
    for host in HOSTS:
        env = {**ENV_BASE, "host.name": host, **GOVERNOR.get(host, {})}
        store.link_host(run_id, host, store.add_environment(env, environment.snapshot_hash(env)))
    step = store.begin_step(run_id, position=0, name="tcp", kernel="tcp", params={"duration": "3"},
                            launcher="mpiexec", ranks=2, ranks_per_node=1)
    for rep in range(3):
        record = {"phase": "send", "mode": "n/a", "rate": 9.4 + rep / 10, "rate_unit": "Gbit/s", "repetition": rep,
                  "sweep_key": None, "qualifiers": []}
        store.add_sample(step, Sample.from_record(record), [])
    store.finish_step(step, "ok")
    store.finish_run(run_id, "ok")
    with store.engine.begin() as c:
        c.execute(sa.text("UPDATE runs SET host='h01', pid=NULL, started=:s, finished=:f"),
                  {"s": STARTED, "f": STARTED + dt.timedelta(minutes=1)})
    return store, run_id


def test_a_run_over_several_hosts_gives_its_environment_once_and_then_what_differs(tcp_store, monkeypatch):
    md = rendered(tcp_store, "md", monkeypatch)
    assert "### Test environment: h01" not in md and "### Test environment: h02" not in md
    assert md.count("- **CPU**: 1 x Example CPU 9000, 8 cores / 16 threads") == 1
    # no host of a run over --hosts is said to be no node: the launching host may be one of them
    assert "Hosts: h01, h02 and h03." in md
    assert ("| CPU clock | range not available; governor performance; turbo on "
            "| h02: range not available; governor powersave; turbo on |") in md   # the HTML's words
    assert "- **CPU clock**" not in md
    html = rendered(tcp_store, "html", monkeypatch)
    assert "<h3>Test environment: h01</h3>" not in html and html.count("<tr><td>CPU</td>") == 1
    assert "<p>Hosts: h01, h02 and h03.</p>" in html
    assert ('<tr><td>CPU clock</td><td>range not available; governor performance; turbo on</td>'
            '<td class="flag">h02: range not available; governor powersave; turbo on</td></tr>') in html


def test_show_of_an_imported_run_over_several_hosts_gives_their_one_environment_line_once(tmp_path):
    """fio's client/server output names each job's host: the run holds a
    snapshot of each, and show stated the same "environment not recorded"
    line once per host."""
    import io
    import json
    from pathlib import Path

    from rich.console import Console

    from clusterbench.importers.import_runs import Overrides, parse_file, store_runs
    from clusterbench.report.data import load_run
    from clusterbench.report.terminal import print_run
    from clusterbench.store import Store

    doc = json.loads((Path(__file__).parent / "fixtures" / "import" / "fio-2.19-randrw-jobs.json").read_text())
    for job, host in zip(doc["jobs"], ("c01", "c02")):
        job["hostname"] = host
    path = tmp_path / "fio-clients.json"
    path.write_text(json.dumps(doc))
    store = Store(f"sqlite:///{tmp_path / 'results.db'}")
    (run_id,) = store_runs(store, parse_file(str(path)), str(path), Overrides())
    run = load_run(store, run_id)
    assert sorted(run["environments"]) == ["c01", "c02"]
    buf = io.StringIO()
    print_run(Console(file=buf, width=200), run)
    said = [line for line in buf.getvalue().splitlines() if "environment not recorded" in line]
    assert len(said) == 1 and said[0].startswith("c01, c02: environment not recorded by fio"), said
