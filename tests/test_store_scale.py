"""What a store of years of runs must not do: read more per command as it
grows than the command shows. Measured on stores of 100 to 10,000
quick-suite runs (docs/team.md, "How fast on a big store"); here each
defect found is held by what it cost, counted (SQL statements a command
issues), never timed."""
from __future__ import annotations

import contextlib
import datetime as dt

import pytest
import sqlalchemy as sa

START = dt.datetime(2025, 1, 1, 2, 0, tzinfo=dt.timezone.utc)


def fill(url: str, runs: int, phases: int, envs: int = 1) -> None:
    """runs ok runs, one a day, each one seqio step with one sample of each
    of `phases` phases (so as many figures in the store); the runs' host
    changes its environment `envs` times over them."""
    from clusterbench import environment
    from clusterbench.store import Store
    from clusterbench.store.schema import environments, run_hosts, samples, steps
    from clusterbench.store.schema import runs as runs_t

    store = Store(url)
    env_rows, run_rows, host_rows, step_rows, sample_rows = {}, [], [], [], []
    for i in range(runs):
        run_id, started = i + 1, START + dt.timedelta(days=i)
        env = {"capture.schema": 1, "host.name": "node01", "kernel.release": f"6.1.0-{i * envs // runs}-amd64"}
        env_hash = environment.snapshot_hash(env)
        env_rows.setdefault(env_hash, {"hash": env_hash, "captured": started, "data": env})
        run_rows.append({"id": run_id, "label": None, "user": "ana", "host": "node01", "pid": None,
                         "command": "clusterbench run seqio", "suite": None, "started": started,
                         "finished": started + dt.timedelta(seconds=60), "status": "ok", "message": None})
        host_rows.append({"run_id": run_id, "host": "node01", "environment_hash": env_hash})
        step_rows.append({"id": run_id, "run_id": run_id, "position": 0, "name": None, "kernel": "seqio",
                          "params": {}, "launcher": "local", "ranks": 1, "ranks_per_node": None, "status": "ok",
                          "started": started, "finished": started + dt.timedelta(seconds=60)})
        # each environment a level of its own, higher than the one before: a change point at each change
        level = 100.0 * (1 + i * envs // runs)
        sample_rows += [{"step_id": run_id, "repetition": 0, "phase": f"p{p:02d}", "mode": None,
                         "value": level + (i % 3), "unit": "MiB/s", "warnings": [], "record": {}}
                        for p in range(phases)]
    with store.engine.begin() as c:
        c.execute(environments.insert(), list(env_rows.values()))
        for table, rows in ((runs_t, run_rows), (run_hosts, host_rows), (steps, step_rows), (samples, sample_rows)):
            c.execute(table.insert(), rows)


@contextlib.contextmanager
def statements(store):
    """(statement, parameters) of each statement the store's engine issues meanwhile (a list, filled as they go)."""
    issued: list[tuple[str, object]] = []

    def keep(_conn, _cursor, sql, parameters, *_):
        issued.append((sql, parameters))

    sa.event.listen(store.engine, "before_cursor_execute", keep)
    try:
        yield issued
    finally:
        sa.event.remove(store.engine, "before_cursor_execute", keep)


def history_statements(url: str) -> list[tuple[str, object]]:
    from clusterbench.report.history_page import render
    from clusterbench.store import Store

    store = Store(url)
    with statements(store) as issued:
        render(store, now=START)
    return issued


def test_the_history_page_reads_no_figure_beyond_the_ones_it_shows(tmp_path):
    """The page shows the TREND_MAX_FIGURES figures most runs measured; it
    loaded every other figure too (every sample of each), to show none: 62
    figures, 4/5 of the page's time, on a store of 1,000 quick-suite runs."""
    from clusterbench.report.history_page import TREND_MAX_FIGURES, TREND_MIN_RUNS

    counted = {}
    for phases in (TREND_MAX_FIGURES + 1, 3 * TREND_MAX_FIGURES):
        url = f"sqlite:///{tmp_path / f'{phases}.db'}"
        fill(url, runs=TREND_MIN_RUNS, phases=phases)
        counted[phases] = len(history_statements(url))
    assert counted[TREND_MAX_FIGURES + 1] == counted[3 * TREND_MAX_FIGURES], counted


def scans_of_run_hosts_in_prune(url: str) -> list[str]:
    """The plans of prune's statements (a dry run) that read all of run_hosts."""
    from clusterbench.store import Store

    store = Store(url)
    with statements(store) as issued:
        counted = store.prune(START + dt.timedelta(days=10), dry_run=True)
    assert counted["runs"] == 10 and counted["environments"] == 2, counted
    scans = []
    with store.engine.connect() as c:
        for sql, parameters in issued:
            plan = [row[-1] for row in c.exec_driver_sql(f"EXPLAIN QUERY PLAN {sql}", parameters)]
            scans += [f"{step} in {sql}" for step in plan if step.startswith("SCAN run_hosts")]
    return scans


@pytest.mark.parametrize("made_at", ["head", "0009"])
def test_prune_finds_the_runs_of_each_environment_by_index(tmp_path, made_at):
    """prune asks, for every environment, whether a kept run uses it: one
    scan of run_hosts per environment without an index on environment_hash
    (7 s of a dry run on 10,000 runs and 1,450 environments, growing with
    their product). The index comes with revision 0010, also to a store
    made before it."""
    url = f"sqlite:///{tmp_path / 'r.db'}"
    if made_at != "head":
        from conftest import store_at

        store_at(url, made_at).dispose()
    fill(url, runs=40, phases=1, envs=8)
    assert scans_of_run_hosts_in_prune(url) == []


def two_medians_per_point(values: list[float], min_segment: int = 1) -> int:
    """split_at as it was: every t costed with the medians of both sides (O(n^2))."""
    import math

    import numpy as np

    x = np.asarray(values, dtype=float)
    best_t, best_cost = min_segment, math.inf
    for t in range(min_segment, len(x) - min_segment + 1):
        left, right = x[:t], x[t:]
        cost = np.abs(left - np.median(left)).sum() + np.abs(right - np.median(right)).sum()
        if cost < best_cost:
            best_t, best_cost = t, cost
    return best_t


def test_a_change_is_placed_where_two_medians_per_point_placed_it():
    """Noise, steps, ties and values of very different sizes: the running sums
    pick the t the exact costs picked, the first of equal ones included."""
    import random

    from clusterbench.analysis.trend_series import split_at

    rnd = random.Random(5)
    shapes = [lambda i, n: rnd.gauss(1.0, 0.1), lambda i, n: float(rnd.randint(0, 3)),
              lambda i, n: rnd.choice([1e9, 1.0, -5.0, 0.1]),
              lambda i, n: rnd.gauss(1.0, 0.02) * (0.7 if i > n // 2 else 1.0)]
    for trial in range(400):
        n = rnd.randint(0, 50)
        values = [shapes[trial % len(shapes)](i, n) for i in range(n)]
        for min_segment in (1, 3):
            assert split_at(values, min_segment) == two_medians_per_point(values, min_segment), (values, min_segment)


def test_placing_a_change_in_a_long_series_takes_a_few_medians_not_two_per_point(monkeypatch):
    """A figure measured daily for years is a series of thousands of runs:
    two medians per candidate point made one split O(n^2) (8 s at 9,000
    points, `trend` and the history page split each series several times)."""
    import random

    import numpy as np

    from clusterbench.analysis.trend_series import split_at

    rnd = random.Random(7)
    values = [rnd.gauss(1.0, 0.02) * (0.7 if i >= 3000 else 1.0) for i in range(5000)]
    medians = []
    real_median = np.median

    def counted(*args, **kwargs):
        medians.append(1)
        return real_median(*args, **kwargs)

    monkeypatch.setattr(np, "median", counted)
    assert split_at(values, 3) == 3000
    assert len(medians) <= 20, len(medians)


def test_a_stored_samples_key_read_alone_is_the_key_of_its_sample():
    """trend reads each sample's key from its row (Sample.key_of_row), not
    through a Sample: the two agree on every golden record and on the
    contract's sweeps and qualifiers."""
    import json
    from pathlib import Path
    from types import SimpleNamespace

    from clusterbench.results.sample import Sample

    golden = Path(__file__).parent / "golden" / "runs.jsonl"
    records = [json.loads(line)["record"] for line in golden.read_text().splitlines() if '"record"' in line]
    records += [
        {"phase": "pingpong", "rate": 2.5, "rate_unit": "us", "sweep_key": "size_bytes", "size_bytes": 1048576},
        {"phase": "stream", "rate": 9.0, "rate_unit": "MiB/s", "sweep_key": "threads", "threads": 4},
        {"phase": "allreduce", "rate": 3.0, "rate_unit": "us", "qualifiers": ["algorithm"], "algorithm": "ring",
         "sweep_key": "msg_bytes", "msg_bytes": 8},
        {"phase": "bw", "rate": 1.0, "rate_unit": "MiB/s", "size_bytes": 65536},   # before the contract
        {"phase": "bw", "rate": 1.0, "rate_unit": "MiB/s", "sweep_key": "size_bytes", "size_bytes": "8"},
        {"phase": "read", "rate": 1.0, "rate_unit": "MiB/s", "mode": "cold"},
    ]
    for i, rec in enumerate(records):
        s = Sample.from_record(rec)
        row = SimpleNamespace(id=i, phase=s.phase, mode=s.condition, unit=s.unit, value=s.value,
                              repetition=s.repetition, seconds=s.seconds, bytes=s.bytes, ops=s.ops, warnings=[],
                              record=rec)
        assert Sample.key_of_row(row) == Sample.from_row(row).key(), rec


def test_a_trend_holds_each_samples_value_not_its_record(tmp_path):
    """trend.load kept a Sample per stored sample, each with its raw record,
    until the series were made: 406 MiB for seqio:read:cold over 10,000
    quick-suite runs. Records of 20 KiB each here: what the load holds at
    its peak stays well below the records of all its samples."""
    import tracemalloc

    from clusterbench.analysis import trend_series
    from clusterbench.store import Store
    from clusterbench.store.schema import samples

    url = f"sqlite:///{tmp_path / 'r.db'}"
    runs, record_bytes = 200, 20_000
    fill(url, runs=runs, phases=1)
    store = Store(url)
    with store.engine.begin() as c:
        c.execute(samples.update().values(record={"phase": "p00", "padding": "x" * record_bytes}))
    trend_series.load(store, "seqio", "p00")   # imports and caches first: not counted
    tracemalloc.start()
    try:
        (series,) = trend_series.load(store, "seqio", "p00")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(series.points) == runs
    assert peak < runs * record_bytes / 4, peak


def test_a_trends_change_points_read_their_environments_in_one_query(tmp_path):
    """Each change point read the environments either side of it, a query
    per run: a figure's statements grew with the change points years of
    runs hold (a kernel update, a new BIOS). Same count for 1 and 5 changes."""
    from clusterbench.analysis import trend_series
    from clusterbench.store import Store

    counted = {}
    for envs in (2, 6):
        url = f"sqlite:///{tmp_path / f'{envs}.db'}"
        fill(url, runs=60, phases=1, envs=envs)
        store = Store(url)
        with statements(store) as issued:
            (series,) = trend_series.load(store, "seqio", "p00")
        assert len(series.changes) == envs - 1
        assert all(c.env_diff for c in series.changes)   # each names the kernel update either side
        counted[envs] = len(issued)
    assert counted[2] == counted[6], counted
