"""A parameter whose default changes what is measured declares `before`,
the value runs made before it existed ran at (randio's --poll: such runs
slept, as --poll=0). compare and trend match a stored run whose record
lacks the parameter at that value, not at today's default (#39)."""
from __future__ import annotations

import json
import sqlite3

import pytest

from clusterbench.analysis import trend_series
from clusterbench.catalogue import Param
from clusterbench.results.params import as_run


def test_a_run_recorded_without_the_parameter_ran_at_its_before_value():
    class Kernel:
        params = (Param("poll", "real", "50", "us", None, "0", None, "h", None, "0"),
                  Param("iodepth", "int", "32", None, None, "1", None, "h"))

    assert as_run(Kernel, {"iodepth": "1"}, {"iodepth": 1}) == {"iodepth": "1", "poll": "0"}
    assert as_run(Kernel, {"iodepth": "1"}, {"iodepth": 1, "poll": 50}) == {"iodepth": "1"}  # today's run
    assert as_run(Kernel, {"iodepth": "1", "poll": "0"}, {}) == {"iodepth": "1", "poll": "0"}   # stated
    assert as_run(Kernel, {"iodepth": "1"}, None) == {"iodepth": "1"}   # an imported file says what it ran


@pytest.mark.timeout(120)
def test_compare_and_trend_keep_a_run_from_before_poll_apart_from_a_polling_one(cli, tmp_path):
    db = tmp_path / "s.db"
    url = f"sqlite:///{db}"
    target = tmp_path / "t"
    target.mkdir()
    common = ["randio", f"--dir={target}", "--file-size=4m", "--iodepth=1", "--runtime=0.2", "--ramp=0",
              "--repeat", "2", "--quiet", "--db", url]
    for label, extra in (("old", []), ("new", []), ("sleeping", ["--poll=0"])):
        r = cli("run", *common, *extra, "--label", label)
        assert r.status == 0, r.stderr
    # run 1 as a run stored before --poll existed: its record has no poll (the store's own JSON text)
    with sqlite3.connect(db) as c:
        (build,) = c.execute("select build from steps where run_id = 1").fetchone()
        record = json.loads(build)
        del record["parameters"]["poll"]
        c.execute("update steps set build = ? where run_id = 1", (json.dumps(record),))

    apart = cli("compare", "old", "new", "--db", url)
    assert apart.status != 0 and "no measurement with equal kernel and parameters" in apart.stderr, apart.stdout
    alike = cli("compare", "old", "sleeping", "--db", url)
    assert alike.status == 0 and "randread" in alike.stdout, alike.stderr

    from clusterbench.store import Store

    series = trend_series.load(Store(url), "randio", "randread")
    by_runs = sorted(sorted(run_ids) for run_ids in ([p.run_id for p in s.points] for s in series))
    assert by_runs == [[1, 3], [2]]
