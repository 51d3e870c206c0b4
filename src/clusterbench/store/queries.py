"""The store's queries that need SQLAlchemy: filtered listings, pruning,
sizes. Store (database.py) calls them with its engine; a run never needs
them, nor an import (store/imported_run.py writes through the row layer)."""
from __future__ import annotations

import datetime as dt
from typing import Any

import sqlalchemy as sa

from clusterbench.store.run_ref import MAX_RUN_ID
from clusterbench.store.schema import environments, run_hosts, runs, samples, steps


def host_is(column: Any, host: str) -> Any:
    """A host name matched without case, as DNS matches names (RFC 4343): `--host VM` is vm."""
    return sa.func.lower(column) == host.lower()


def same_host(a: str | None, b: str | None) -> bool:
    """host_is's rule between two names in hand."""
    return a is not None and b is not None and a.lower() == b.lower()


def list_runs(engine: sa.engine.Engine, label: str | None = None, limit: int | None = None, *, user: str | None = None,
              host: str | None = None, status: str | None = None, kernel: str | None = None,
              since: dt.datetime | None = None, until: dt.datetime | None = None) -> list[Any]:
    """Runs newest first by when they started (an old file imported today is listed in its own
    day, not above yesterday's runs as its id would put it; runs started together by id);
    each filter given narrows them (times are UTC, `until` exclusive; the host without case)."""
    q = sa.select(runs).order_by(runs.c.started.desc(), runs.c.id.desc())
    for column, value in ((runs.c.label, label), (runs.c.user, user), (runs.c.status, status)):
        if value:
            q = q.where(column == value)
    if host:
        q = q.where(host_is(runs.c.host, host))
    if kernel:
        q = q.where(sa.exists().where(steps.c.run_id == runs.c.id, steps.c.kernel == kernel))
    if since:
        q = q.where(runs.c.started >= since)
    if until:
        q = q.where(runs.c.started < until)
    if limit and limit < MAX_RUN_ID:   # more than the store can number is all of them (an SQL integer)
        q = q.limit(limit)
    with engine.connect() as c:
        return c.execute(q).all()


def run_values(engine: sa.engine.Engine, column: str) -> list[str]:
    """The distinct values the runs hold in a column (label, user, host), sorted, none of them empty."""
    col = runs.c[column]
    with engine.connect() as c:
        return sorted(v for (v,) in c.execute(sa.select(col).distinct().where(col.is_not(None))) if v)


def prune(engine: sa.engine.Engine, before: dt.datetime | None = None, *, run_ids: list[int] | None = None,
          keep_labels: bool = False, dry_run: bool = False) -> dict[str, int]:
    """Deletes runs started before `before`, or the runs `run_ids` (not running ones; with keep_labels
    not labelled ones), their steps, samples and host links, then environments no run uses. One
    transaction. Returns how many rows of each went (or would go, with dry_run), and of the runs asked
    for, how many were kept because they are running ("kept_running") or labelled ("kept_labelled"):
    the two reasons are told apart, where one count called every labelled run kept "still running"."""
    asked = sa.select(runs.c.id, runs.c.status, runs.c.label)
    asked = asked.where(runs.c.started < before) if run_ids is None else asked.where(runs.c.id.in_(run_ids))
    asked = asked.subquery()
    running = asked.c.status == "running"
    doomed = sa.select(asked.c.id).where(~running)
    if keep_labels:
        doomed = doomed.where(asked.c.label.is_(None))
    doomed_steps = sa.select(steps.c.id).where(steps.c.run_id.in_(doomed))
    unused_env = sa.select(environments.c.hash).where(~sa.exists().where(
        run_hosts.c.environment_hash == environments.c.hash, run_hosts.c.run_id.not_in(doomed)))
    count = sa.func.count()
    with engine.begin() as c:
        n = {"runs": c.execute(sa.select(count).select_from(doomed.subquery())).scalar(),
             "steps": c.execute(sa.select(count).select_from(doomed_steps.subquery())).scalar(),
             "samples": c.execute(sa.select(count).where(samples.c.step_id.in_(doomed_steps))).scalar(),
             "environments": c.execute(sa.select(count).select_from(unused_env.subquery())).scalar(),
             "kept_running": c.execute(sa.select(count).where(running)).scalar(),
             "kept_labelled": c.execute(sa.select(count).where(~running, asked.c.label.is_not(None))).scalar()
             if keep_labels else 0}
        if not dry_run:
            c.execute(samples.delete().where(samples.c.step_id.in_(doomed_steps)))
            c.execute(steps.delete().where(steps.c.run_id.in_(doomed)))
            c.execute(run_hosts.delete().where(run_hosts.c.run_id.in_(doomed)))
            c.execute(runs.delete().where(runs.c.id.in_(doomed)))
            c.execute(environments.delete().where(~sa.exists().where(
                run_hosts.c.environment_hash == environments.c.hash)))
    return n


def run_details(engine: sa.engine.Engine, since: dt.datetime | None = None) -> dict[str, dict[int, Any]]:
    """What a run's row does not hold, for the runs started on or after
    `since` (`list --by kernel`, the history page): {"kernels": {run id:
    kernels of its steps, sorted}, "bytes_written": {run id: bytes its
    write and create phases moved}, "step_error": {run id: its first failed
    step's message}}."""
    wanted = sa.select(runs.c.id)
    if since:
        wanted = wanted.where(runs.c.started >= since)
    out: dict[str, dict[int, Any]] = {"kernels": {}, "bytes_written": {}, "step_error": {}}
    with engine.connect() as c:
        for r in c.execute(sa.select(steps.c.run_id, steps.c.kernel).distinct()
                           .where(steps.c.run_id.in_(wanted)).order_by(steps.c.run_id, steps.c.kernel)):
            out["kernels"].setdefault(r.run_id, []).append(r.kernel)
        for r in c.execute(sa.select(steps.c.run_id, sa.func.sum(samples.c.bytes))
                           .join(samples, samples.c.step_id == steps.c.id)
                           .where(steps.c.run_id.in_(wanted),
                                  sa.or_(samples.c.phase.like("%write%"), samples.c.phase.like("%create%")))
                           .group_by(steps.c.run_id)):
            out["bytes_written"][r[0]] = int(r[1] or 0)
        for r in c.execute(sa.select(steps.c.run_id, steps.c.message)
                           .where(steps.c.run_id.in_(wanted), steps.c.status == "failed",
                                  steps.c.message.is_not(None)).order_by(steps.c.position)):
            out["step_error"].setdefault(r.run_id, r.message)
    return out


def size_bytes(engine: sa.engine.Engine) -> int | None:
    """The database's size on disk: the SQLite file's pages, or pg_database_size."""
    with engine.connect() as c:
        if c.dialect.name == "postgresql":
            return int(c.execute(sa.text("select pg_database_size(current_database())")).scalar())
        if c.dialect.name == "sqlite":
            pages = c.execute(sa.text("pragma page_count")).scalar()
            return int(pages) * int(c.execute(sa.text("pragma page_size")).scalar())
    return None
