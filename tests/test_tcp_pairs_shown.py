"""E6 as people read it: a --role=pairs step keeps each pair's rate (the
tcp_pairs records) with the step, and show and the HTML report print each
pair beside its link under the aggregate."""
from __future__ import annotations

import re

import pytest


@pytest.mark.timeout(180)
def test_each_pair_is_stored_and_shown_under_the_aggregate(cli, store_url, tmp_path):
    from clusterbench.results.records import pair_rates
    from clusterbench.store import Store

    # --port=0: each pair's server takes a free port (the default 5301 may be another suite's, side by side)
    r = cli("run", "tcp", "--np", "4", "--role=pairs", "--port=0", "--duration=0.2", "--repeat", "2", "--label", "e6",
            "--quiet")
    assert r.status == 0, r.stderr
    store = Store(store_url)
    (step,) = store.steps_of(store.resolve("e6")[0])
    pairs = pair_rates(step.build)
    assert [(p.phase, p.pair) for p in pairs] == [("send", 0), ("send", 1)]
    assert all(len(p.gbit_per_s) == 2 and min(p.gbit_per_s) > 0 for p in pairs)  # one rate per repetition
    show = cli("show", "e6", "--width", "200")
    assert show.status == 0, show.stderr
    assert "each pair (the row above is their aggregate)" in show.stdout
    assert len(re.findall(r"│ send\s+│ [01]\s+│ \S+ -> \S+", show.stdout)) == 2
    html = tmp_path / "r.html"
    assert cli("report", "e6", "-o", str(html)).status == 0
    assert html.read_text().count("&rarr;") >= 3  # header and both pairs
