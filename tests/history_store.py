"""A generated store as a team's would look after months: several users and
hosts, failures and cut-short runs, and one planted step change (seqio's
cold read drops by 30 % from CHANGE_AT, when the hosts' kernel was updated).
Written in bulk through SQLAlchemy Core (the Store's own writes are one
transaction each, too slow for bench/store_scale's million samples).

    fill(url, runs=60, samples_per_run=4, seed=1)
"""
from __future__ import annotations

import datetime as dt
import random

import sqlalchemy as sa

UTC = dt.timezone.utc
START = dt.datetime(2026, 3, 2, 8, 0, tzinfo=UTC)
CHANGE_AT = dt.datetime(2026, 6, 1, 0, 0, tzinfo=UTC)   # the planted change: runs from here read slower
USERS = ("ana", "bo", "cy")
HOSTS = ("node01", "node02", "node03")
KERNEL_BEFORE, KERNEL_AFTER = "6.1.0-18-amd64", "6.1.0-21-amd64"
# kernel -> (phase, mode, unit, typical value)
FIGURES = {
    "seqio": [("write", "fsync", "MiB/s", 400.0), ("read", "cold", "MiB/s", 1000.0)],
    "randio": [("randread", "cold", "IOPS", 20000.0)],
    "mpi": [("pingpong", None, "us", 2.5)],
}
SLOWER_READ = 0.7


def _env(host: str, kernel: str) -> dict:
    # the keys the environment capture stores (environment/system.py), as tests/golden/runs.jsonl has them
    return {"capture.schema": 1, "host.name": host, "kernel.release": kernel, "cpu.model": "Example CPU 9000",
            "cpu.cores": 8, "os.name": "Debian GNU/Linux 12"}


def fill(url: str, runs: int = 60, samples_per_run: int = 4, seed: int = 1, days: float = 180.0) -> dict:
    """Fills the store at url (migrated first) and returns what was planted:
    {"runs": n, "samples": n, "failed": ids, "change_run": the first run id on or after CHANGE_AT}."""
    from clusterbench import environment
    from clusterbench.store import Store
    from clusterbench.store.schema import environments, run_hosts, samples, steps
    from clusterbench.store.schema import runs as runs_t

    store = Store(url)
    rnd = random.Random(seed)
    step_every = dt.timedelta(days=days / runs)
    kernels = list(FIGURES)
    env_rows, run_rows, host_rows, step_rows, made = {}, [], [], [], []
    planted = {"runs": runs, "samples": 0, "failed": [], "change_run": None}
    with store.engine.connect() as c:
        first_id = (c.execute(sa.select(sa.func.max(runs_t.c.id))).scalar() or 0) + 1
        first_step = (c.execute(sa.select(sa.func.max(steps.c.id))).scalar() or 0) + 1
    for i in range(runs):
        run_id, step_id = first_id + i, first_step + i
        started = START + step_every * i + dt.timedelta(minutes=rnd.randint(0, 120))
        kernel = kernels[i % len(kernels)]
        host, user = HOSTS[i % len(HOSTS)], USERS[(i // 2) % len(USERS)]
        after = started >= CHANGE_AT
        roll = rnd.random()
        status, message = "ok", None
        if roll < 0.05:
            status, message = "failed", f"{kernel}: cannot open /scratch/cb-{run_id}: No space left on device"
            planted["failed"].append(run_id)
        elif roll < 0.08:
            status, message = "interrupted", "stopped by SIGINT"
        if after and planted["change_run"] is None and kernel == "seqio" and status == "ok":
            planted["change_run"] = run_id
        seconds = rnd.uniform(30, 600) if i % 17 else rnd.uniform(3600, 7200)
        env = _env(host, KERNEL_AFTER if after else KERNEL_BEFORE)
        env_hash = environment.snapshot_hash(env)
        env_rows.setdefault(env_hash, {"hash": env_hash, "captured": started, "data": env})
        run_rows.append({"id": run_id, "label": f"{kernel}-{user}" if i % 4 else None, "user": user, "host": host,
                         "pid": None, "command": f"clusterbench run {kernel}", "suite": "quick" if i % 5 == 0 else None,
                         "started": started, "finished": started + dt.timedelta(seconds=seconds), "status": status,
                         "message": message, "batch_job": None})
        host_rows.append({"run_id": run_id, "host": host, "environment_hash": env_hash})
        step_rows.append({"id": step_id, "run_id": run_id, "position": 0, "name": None, "kernel": kernel,
                          "params": {"size": "1m"}, "launcher": "local", "ranks": 1, "ranks_per_node": None,
                          "status": status, "started": started,
                          "finished": started + dt.timedelta(seconds=seconds), "build": None,
                          "message": message, "stop_reason": None})
        made.append((step_id, kernel, after))
    with store.engine.begin() as c:
        known = {h for (h,) in c.execute(sa.select(environments.c.hash))}
        new_envs = [e for h, e in env_rows.items() if h not in known]
        if new_envs:
            c.execute(environments.insert(), new_envs)
        for table, rows in ((runs_t, run_rows), (run_hosts, host_rows), (steps, step_rows)):
            c.execute(table.insert(), rows)
        for chunk in _samples(made, samples_per_run, rnd):   # in chunks: a million rows need not be in memory
            c.execute(samples.insert(), chunk)
            planted["samples"] += len(chunk)
        if c.dialect.name == "postgresql":   # explicit ids: move the sequences past them
            for table in ("runs", "steps"):
                c.execute(sa.text(f"select setval(pg_get_serial_sequence('{table}', 'id'), "
                                  f"(select max(id) from {table}))"))
    return planted


def _samples(made, samples_per_run: int, rnd: random.Random, chunk: int = 50_000):
    rows = []
    for step_id, kernel, after in made:
        per_figure = max(1, samples_per_run // len(FIGURES[kernel]))
        for phase, mode, unit, typical in FIGURES[kernel]:
            level = typical * (SLOWER_READ if (after and phase == "read") else 1.0) * rnd.gauss(1.0, 0.02)
            for rep in range(per_figure):
                value = level * rnd.gauss(1.0, 0.02)
                moved = 1 << 30 if kernel == "seqio" else 1 << 20
                rows.append({"step_id": step_id, "repetition": rep, "phase": phase, "mode": mode,
                             "value": value, "unit": unit, "seconds": moved / 2**20 / value,
                             "bytes": moved, "ops": None, "warnings": [], "record": {}})
        if len(rows) >= chunk:
            yield rows
            rows = []
    if rows:
        yield rows
