"""A figure over time: one point per run (the median of its repetitions and
the median's 95 % CI), and the change points of the series.

Change points are found by Pettitt's test (A. N. Pettitt, "A non-parametric
approach to the change-point problem", Applied Statistics 28(2), 1979,
126-135): the Mann-Whitney statistic of "before t" against "after t",
maximised over t, with its approximate significance
p = 2 exp(-6 K^2 / (n^3 + n^2)); the change is dated at the split with the
least absolute deviations from each side's median (split_at). Applied by binary segmentation (each side of
a change found is searched again) at alpha 0.01, with at least MIN_SEGMENT
runs on each side. It is rank-based, so one wild run moves nothing, and no
threshold is tuned by hand. Each change point carries the environment
difference between the last run before it and the first run after it.
"""
from __future__ import annotations

import datetime as dt
import json
import math
from dataclasses import dataclass, field
from typing import Any

import sqlalchemy as sa

from clusterbench.errors import BadInput
from clusterbench.results.sample import SampleKey
from clusterbench.results.sizes import size_text
from clusterbench.analysis.stats import _median, median_ci
from clusterbench.store.queries import host_is, same_host
from clusterbench.store.schema import run_hosts, runs, samples, steps

ALPHA = 0.01
MIN_SEGMENT = 4   # runs on each side of a change point
METHOD = "Pettitt's test (Pettitt 1979) says whether, least absolute deviations say where; binary segmentation, alpha 0.01"


@dataclass
class Point:
    run_id: int
    started: dt.datetime
    label: str | None
    host: str | None
    median: float
    ci_low: float
    ci_high: float
    n: int
    ci_coverage: float = 0.0    # the interval's real coverage (order statistics: 94 % at n = 5)


@dataclass
class ChangePoint:
    index: int                  # the first point after the change
    p_value: float
    before_median: float        # median of the run medians of the segment before / after
    after_median: float
    env_diff: list[tuple[str, Any, Any]] = field(default_factory=list)

    @property
    def change(self) -> float | None:
        """The relative change; None from a median of 0, which no ratio is of
        (it was NaN, and trend and the history page printed "+nan %")."""
        return self.after_median / self.before_median - 1 if self.before_median else None


@dataclass
class Series:
    kernel: str
    phase: str
    mode: str | None
    unit: str | None
    params: dict
    points: list[Point]
    changes: list[ChangePoint] = field(default_factory=list)
    key: SampleKey | None = None   # the measurement (Sample.key()): phase, condition, unit, message size
    host: str | None = None        # the machine measured: a per-node step's node, else the run's host
    hosts_apart: bool = False      # the answer holds series of several machines: the title names its own

    @property
    def title(self) -> str:
        figure = ":".join(x for x in (self.kernel, self.phase, self.mode) if x)
        if self.key is not None and self.key.size_bytes is not None:
            figure += f" {size_text(self.key.size_bytes)}"
        shown = " ".join(f"{k}={v}" for k, v in sorted(self.params.items()))
        on = f" on {self.host}" if self.hosts_apart and self.host else ""
        return f"{figure} {shown}".strip() + on


def pettitt(values: list[float]) -> float:
    """Pettitt's approximate p-value that the series has a change at all:
    from K = max over t of |U_t|, U_t = 2 (sum of the first t ranks) - t (n + 1)."""
    import numpy as np   # not scipy.stats: its import alone costs a second

    n = len(values)
    _, where, counts = np.unique(np.asarray(values, dtype=float), return_inverse=True, return_counts=True)
    ranks = (np.cumsum(counts) - (counts - 1) / 2)[where]    # ties get their average rank
    t = np.arange(1, n)
    k = float(np.abs(2 * np.cumsum(ranks)[:-1] - t * (n + 1)).max())
    return min(1.0, 2 * math.exp(-6 * k ** 2 / (n ** 3 + n ** 2)))


def split_at(values: list[float], min_segment: int = 1) -> int:
    """Where the change is: the t minimising the absolute deviations of values[:t]
    and values[t:] from their own medians. Not K's argmax: ranks cannot tell which
    side the value next to a clean step belongs to, and K leans to the middle.

    Every t's cost comes from running sums (_prefix_costs), O(n log n): two
    medians per t were O(n^2), 8 s for one split of a 9,000-run series, and a
    series gains a point a day. Those sums round otherwise than numpy's, so
    each t whose cost lies within their error bound of the least is costed
    again as before and the first least of those is taken: the t chosen is
    the one the two medians per t chose (tests/test_store_scale.py)."""
    import numpy as np

    x = np.asarray(values, dtype=float)
    n = len(x)
    left, right = _prefix_costs(x), _prefix_costs(x[::-1])[::-1]
    ts = range(min_segment, n - min_segment + 1)
    if not ts:
        return min_segment
    least = min(left[t] + right[t] for t in ts)
    slack = 8 * n * np.finfo(float).eps * (float(np.abs(x).sum()) + 1.0)
    best_t, best_cost = min_segment, math.inf
    for t in ts:
        if left[t] + right[t] > least + slack:
            continue
        lo, hi = x[:t], x[t:]
        cost = np.abs(lo - np.median(lo)).sum() + np.abs(hi - np.median(hi)).sum()
        if cost < best_cost:
            best_t, best_cost = t, cost
    return best_t


def _prefix_costs(x) -> list[float]:
    """[sum |x[:t] - median(x[:t])| for t in 0..n], each from the two halves of
    x[:t] kept in heaps: the sum of the upper half less that of the lower,
    the middle value of an odd count left out (it is the median)."""
    import heapq

    lower: list[float] = []   # the smaller half, negated (a max-heap), with the middle value when odd
    upper: list[float] = []
    sum_lower = sum_upper = 0.0
    out = [0.0]
    for v in map(float, x):
        if lower and v > -lower[0]:
            heapq.heappush(upper, v)
            sum_upper += v
        else:
            heapq.heappush(lower, -v)
            sum_lower += v
        if len(lower) > len(upper) + 1:
            moved = -heapq.heappop(lower)
            heapq.heappush(upper, moved)
            sum_lower, sum_upper = sum_lower - moved, sum_upper + moved
        elif len(upper) > len(lower):
            moved = heapq.heappop(upper)
            heapq.heappush(lower, -moved)
            sum_lower, sum_upper = sum_lower + moved, sum_upper - moved
        middle = -lower[0] if len(lower) > len(upper) else 0.0
        out.append(sum_upper - (sum_lower - middle))
    return out


def change_points(values: list[float], alpha: float = ALPHA, min_segment: int = MIN_SEGMENT) -> list[tuple[int, float]]:
    """(index, p) of each change, in order: binary segmentation with Pettitt's test."""
    found: list[tuple[int, float]] = []
    todo = [(0, len(values))]
    while todo:
        lo, hi = todo.pop()
        if hi - lo < 2 * min_segment:
            continue
        p = pettitt(values[lo:hi])
        if p < alpha:
            t = split_at(values[lo:hi], min_segment)
            found.append((lo + t, p))
            todo += [(lo, lo + t), (lo + t, hi)]
    return sorted(found)


# Where the ranks ran is part of the measurement, as compare matches it
# (analysis/comparison.collect): 2 ranks on one node and on two are different
# figures (shared memory against the network), and so are 2 and 64 ranks of an
# allreduce. Filtered with --param np=N / ppn=N.
PLACEMENT = ("np", "ppn")


def _placement(step_row, always: bool = False) -> dict[str, str]:
    """A step's rank count and ranks per node as parameters; a one-rank
    step's np only when `always` (its series title stays as it was)."""
    out = {"np": str(step_row.ranks)} if always or (step_row.ranks or 1) > 1 else {}
    if step_row.ranks_per_node:
        out["ppn"] = str(step_row.ranks_per_node)
    return out


def _params_key(params: dict) -> str:
    return json.dumps(params, sort_keys=True)


_A_VALUE = {"size": "a size (e.g. 4k, 1g)", "int": "a whole number", "real": "a number", "bool": "true or false",
            "string": "a list of sizes"}


def readable(param, value: str) -> bool:
    """Whether the parameter's type reads the value (a size, a number, a
    bool, a list of sizes or its keyword); other types take any text."""
    from clusterbench.results.params import is_size_list, typed

    if param.type in ("size", "int", "real", "bool") or (is_size_list(param) and value != param.default):
        return not isinstance(typed(param, value), str)
    return True


def wanted_params(kernel: str, given: dict[str, str]) -> tuple[dict[str, str], int | None]:
    """--param filters read as the plan reads parameters (plan_params): the
    canonical text to match stored steps, and a message size picked out of a
    size list (mpi --sizes: `--param sizes=1m` is the 1 MiB series). A name
    the kernel does not take stays as given (load() refuses it unless a
    stored step holds it: a parameter since renamed)."""
    from clusterbench.results.params import canonical_value, is_size_list, kernel_of
    from clusterbench.results.sizes import parse_size

    k = kernel_of(kernel)
    out, size = {}, None
    for name, value in given.items():
        p = k.param(name) if k else None
        if p is None and name in PLACEMENT:
            if not value.strip().isdigit() or int(value) < 1:
                raise BadInput(f"--param {name}={value}: not a whole number of {'ranks' if name == 'np' else 'ranks per node'}")
            out[name] = str(int(value))
            continue
        if p is not None and not readable(p, value):
            # matched as text, it matched no step: "no run measured", where the value was the mistake
            raise BadInput(f"--param {name}={value}: not {_A_VALUE.get(p.type, 'a value')} of --{name}"
                           + (" (sizes, e.g. 8,1k,1m)" if is_size_list(p) else ""))
        if p is not None and is_size_list(p) and "," not in value and parse_size(value) is not None:
            size = parse_size(value)
        else:
            out[name] = canonical_value(p, value) if p is not None else value
    return out, size


def load(store, kernel: str, phase: str, mode: str | None = None, *, label: str | None = None,
         host: str | None = None, params: dict | None = None, since: dt.datetime | None = None) -> list[Series]:
    """The series of a figure from runs that ended ok, one per measurement:
    per distinct parameter set (a 4 MiB and a 1 GiB file are different
    figures) and per Sample.key() (the 8 B and the 1 MiB messages of one
    --sizes sweep are different figures), oldest run first. A size list
    (mpi --sizes) or a choice list (mpi --op) is not part of the parameter
    set: its records name each value, so a 1 MiB message measured in
    --sizes=8,1m and in --sizes=1m,4m is one series, as compare matches
    them; nor is a parameter given at its default (--op=pingpong is no --op)."""
    from clusterbench.analysis.figure_names import cbk_kernel_names, refuse_unknown_kernel, refuse_unmeasured_figure
    from clusterbench.results.params import as_run, defaults, is_size_list, kernel_of
    from clusterbench.results.sample import Sample

    k = kernel_of(kernel)
    if k is None:
        refuse_unknown_kernel(store, kernel, cbk_kernel_names())
    wanted, size = wanted_params(kernel, params or {})
    # not part of a series: a size list and a choice list, whose records name each value (mpi's
    # --op=pingpong,bw: the phase is the op), as compare matches them
    lists = {p.name for p in k.params if is_size_list(p) or p.type == "choice-list"} if k else set()
    stated = defaults(k) if k else {}   # a parameter left out was run at its default
    # a step's run record (its build, with detail records: the largest column) is read only for a
    # kernel with a parameter that says what runs from before it ran at (results.params.as_run)
    olders = k is not None and any(p.before is not None for p in k.params)
    # the machine a figure is of: a per-node step's node (run cluster), else the host the run started on
    machine = sa.func.coalesce(steps.c.host, runs.c.host)
    q = (sa.select(steps.c.id, steps.c.run_id, steps.c.params, steps.c.ranks, steps.c.ranks_per_node,
                   *([steps.c.build] if olders else []),
                   runs.c.started, runs.c.label, machine.label("host"))
         .join(runs, runs.c.id == steps.c.run_id)
         .where(steps.c.kernel == kernel, runs.c.status == "ok"))
    if label:
        q = q.where(runs.c.label == label)
    if host:
        q = q.where(host_is(machine, host))
    if since:
        q = q.where(runs.c.started >= since)
    with store.engine.connect() as c:
        all_rows = c.execute(q).all()
        for name in wanted.keys() - {p.name for p in (k.params if k else ())} - set(PLACEMENT):
            if not any(name in (r.params or {}) for r in all_rows):
                known = ", ".join(p.name for p in k.params) if k else \
                    ", ".join(sorted({n for r in all_rows for n in (r.params or {})})) or "none stored"
                raise BadInput(f"--param {name}: kernel {kernel} has no parameter {name} (parameters: {known}; "
                               f"and the placement: {', '.join(PLACEMENT)})")
        ran = {r.id: as_run(k, r.params or {}, (r.build or {}).get("parameters") if olders else None)
               for r in all_rows}
        choices = {p.name for p in k.params if p.type == "choice-list"} if k else set()

        def given(r, n: str, v: str) -> bool:   # --param op=pingpong picks a step of --op=pingpong,bw too
            ran_at = str({**ran[r.id], **_placement(r, always=True)}.get(n, stated.get(n)))
            return v in ran_at.split(",") if n in choices else ran_at == v

        step_rows = [r for r in all_rows if all(given(r, n, v) for n, v in wanted.items())]
        # per step, (key, value) of each sample: not the Sample, whose record (the raw cbk record, a
        # dict of dozens of fields) made every sample of a figure held at once (406 MiB for
        # seqio:read:cold over 10,000 quick-suite runs)
        found: dict[int, list[tuple[Any, float]]] = {}
        ids = [r.id for r in step_rows]
        for i in range(0, len(ids), 1000):
            # the columns a sample's key and value are read from: not its warnings, nor a Sample each
            sq = (sa.select(samples.c.step_id, samples.c.phase, samples.c.mode, samples.c.unit, samples.c.value,
                            samples.c.record)
                  .where(samples.c.step_id.in_(ids[i:i + 1000]), samples.c.phase == phase,
                         samples.c.value.is_not(None)))
            sq = sq.where(samples.c.mode == mode) if mode else sq
            for row in c.execute(sq.order_by(samples.c.id)):
                key = Sample.key_of_row(row)
                if size is None or key.size_bytes == size:
                    found.setdefault(row.step_id, []).append((key, float(row.value)))
    # a series per machine: the runs of two nodes by turns made one series whose "change points" were
    # host switches, and a cluster run's nodes were pooled into one point
    by_series: dict[tuple, dict[int, tuple[Any, list[float]]]] = {}
    for r in step_rows:
        # a parameter given at its default is the run that left it out: `--op=pingpong` and no --op
        # were two series
        params_key = _params_key({**{n: v for n, v in ran[r.id].items() if n not in lists and stated.get(n) != v},
                                  **_placement(r)})
        for key, value in found.get(r.id, []):
            run = by_series.setdefault((params_key, key, r.host), {}).setdefault(r.run_id, (r, []))
            run[1].append(value)   # a run with several such steps on one machine pools them
    out = []
    for (params_key, key, host), by_run in by_series.items():
        points = []
        for run_id, (r, vs) in sorted(by_run.items(), key=lambda kv: (kv[1][0].started, kv[0])):
            lo, hi, coverage = median_ci(vs)
            points.append(Point(run_id, r.started, r.label, r.host, _median(vs), lo, hi, len(vs), coverage))
        s = Series(kernel, phase, key.condition, key.unit, json.loads(params_key), points, key=key, host=host)
        s.changes = _changes(store, points, host)
        out.append(s)
    if not out:   # filters that leave no run are an empty answer; a figure that names nothing is not
        refuse_unmeasured_figure(store, kernel, phase, mode)
    if len({s.host for s in out}) > 1:
        for s in out:
            s.hosts_apart = True
    return sorted(out, key=lambda s: (-len(s.points), s.key.size_bytes or 0, s.title))


def _changes(store, points: list[Point], host: str | None = None) -> list[ChangePoint]:
    from clusterbench import environment

    medians = [p.median for p in points]
    found = change_points(medians)
    envs = _first_envs(store, {points[j].run_id for i, _ in found for j in (i - 1, i)}, host)
    out = []
    bounds = [0] + [i for i, _ in found] + [len(points)]
    for k, (i, p) in enumerate(found):
        before, after = medians[bounds[k]:i], medians[i:bounds[k + 2]]
        out.append(ChangePoint(i, p, _median(before), _median(after),
                               environment.diff(envs[points[i - 1].run_id], envs[points[i].run_id])))
    return out


def _first_envs(store, run_ids: set[int], host: str | None = None) -> dict[int, dict]:
    """Each run's environment on `host` (the series' machine), else its
    first host's (by host name; {} for a run with none), for the runs either
    side of a series' change points, a query a thousand runs: a query per
    run grew with the change points years hold."""
    from clusterbench.analysis.comparison import single_target
    from clusterbench.store.schema import environments

    if not run_ids:
        return {}
    first: dict[int, dict] = {}
    ids = sorted(run_ids)
    with store.engine.connect() as c:
        for i in range(0, len(ids), 1000):
            q = (sa.select(run_hosts.c.run_id, run_hosts.c.host, environments.c.data)
                 .join(environments, environments.c.hash == run_hosts.c.environment_hash)
                 .where(run_hosts.c.run_id.in_(ids[i:i + 1000])).order_by(run_hosts.c.run_id, run_hosts.c.host))
            for row in c.execute(q):
                if same_host(row.host, host):
                    first[row.run_id] = row.data
                else:
                    first.setdefault(row.run_id, row.data)
    return {run_id: single_target(first[run_id]) if run_id in first else {} for run_id in ids}


def candidate_figures(store, min_runs: int, since: dt.datetime | None = None) -> list[tuple[str, str, str | None]]:
    """(kernel, phase, mode) measured by at least min_runs ok runs, most runs first."""
    q = (sa.select(steps.c.kernel, samples.c.phase, samples.c.mode, sa.func.count(sa.distinct(steps.c.run_id)))
         .join(steps, steps.c.id == samples.c.step_id).join(runs, runs.c.id == steps.c.run_id)
         .where(runs.c.status == "ok").group_by(steps.c.kernel, samples.c.phase, samples.c.mode))
    if since:
        q = q.where(runs.c.started >= since)
    with store.engine.connect() as c:
        rows = c.execute(q).all()
    return [(k, p, m) for k, p, m, n in sorted(rows, key=lambda r: (-r[3], r[0], r[1], r[2] or ""))
            if n >= min_runs]
