"""Every HTML writer escapes through render_text.html: markup in a host
name, a figure name or an environment value prints as text, and no control
character (an ESC sequence, a BEL) reaches the page but as its escape (\\x1b), the SVG inside it
included. The cluster section and the history page once escaped with
html.escape alone, which keeps control characters."""
from __future__ import annotations

import datetime as dt
import re

from clusterbench.report.cluster_html import section
from clusterbench.results.sample import Sample

HOSTILE_HOST = "h01<b>\x1b[2J\x07"
CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


def node_step(host: str, phase: str, mib_s: float) -> dict:
    record = {"phase": phase, "mode": "n/a", "rate": mib_s, "rate_unit": "MiB/s", "sweep_key": None,
              "qualifiers": []}
    return {"name": "stream", "host": host, "kernel": "stream", "status": "ok", "message": None,
            "params": {}, "build": {}, "samples": [Sample.from_record(dict(record)) for _ in range(3)]}


def test_cluster_html_escapes_markup_and_control_characters_of_hosts_and_figures():
    hosts = [HOSTILE_HOST, "h02", "h03", "h04"]
    phase = "copy<script>alert(1)</script>\x1b]0;title\x07"
    steps = [node_step(h, phase, 100.0 if h != "h03" else 40.0) for h in hosts]
    envs = {h: {"host.name": h, "kernel.release": "6.1" if h != "h02" else "6.2\x1b[31m<i>red</i>"} for h in hosts}
    run = {"id": 7, "label": "x", "suite": "cluster", "kind": "cluster", "command": "clusterbench run cluster", "status": "ok",
           "steps": steps, "environments": envs}
    page = "\n".join(section(run))
    assert not CONTROL.search(page), repr(CONTROL.search(page))
    assert "<script>" not in page and "<b>" not in page and "<i>" not in page
    assert "h01&lt;b&gt;" in page                      # the host, shown as text in the tables
    assert "copy&lt;script&gt;alert(1)&lt;/script&gt;" in page   # the figure name
    assert "6.2\\x1b[31m&lt;i&gt;red&lt;/i&gt;" in page   # the value that differs, its ESC shown


def test_history_page_escapes_markup_and_control_characters(tmp_path):
    from clusterbench.report import history_page
    from clusterbench.store import Store

    store = Store(f"sqlite:///{tmp_path / 'runs.db'}")
    run_id = store.begin_run(label="lab<i>el\x1b[1m", suite=None, command="clusterbench run null")
    store.finish_run(run_id, "failed", "broke\x07 <script>x</script>")
    page = history_page.render(store, now=dt.datetime(2026, 11, 28, tzinfo=dt.timezone.utc))
    assert not CONTROL.search(page), repr(CONTROL.search(page))
    assert page.count("<script>") == 1 and "<i>" not in page   # only the page's own script
    assert "&lt;script&gt;x&lt;/script&gt;" in page and "lab&lt;i&gt;el" in page
