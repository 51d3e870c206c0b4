"""Comparing configurations: runs grouped by label (or single run ids),
steps matched on kernel and parameters, samples on phase, mode, unit and
size. Computation only; commands/compare.py and the reports present it.

Path parameters (a kernel's directory) are ignored when matching, so the
same measurement on two file systems matches: that difference is the
configuration being compared, and the environment diff names it.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from clusterbench import stats
from clusterbench.errors import BadInput
from clusterbench.store import Store
from clusterbench.sample import SampleKey


@dataclass
class Config:
    name: str               # the label or run id as the user gave it
    run_ids: list[int]


@dataclass
class Point:
    step: str               # step title (kernel and its swept parameters)
    kernel: str
    params: dict
    key: SampleKey          # which measurement of the step
    values: dict[str, list[float]] = field(default_factory=dict)  # config name -> samples
    exclude_outliers: bool = False

    @property
    def mode(self) -> str | None:
        return self.key.condition

    @property
    def unit(self) -> str | None:
        return self.key.unit

    def kept(self, config: str) -> list[float]:
        """The samples used: all, or without the modified-Z outliers when asked."""
        vals = self.values.get(config, [])
        if not self.exclude_outliers:
            return vals
        out = set(stats.outlier_indices(vals))
        return [v for i, v in enumerate(vals) if i not in out]

    @property
    def label(self) -> str:
        return self.key.label

    def summary(self, config: str) -> stats.Summary:
        return stats.summarize(self.values.get(config, []), exclude_outliers=self.exclude_outliers)

    def versus(self, base: str, other: str) -> stats.Comparison:
        return stats.compare(self.kept(base), self.kept(other), self.unit)


@dataclass
class EnvDiff:
    base: str
    other: str
    host_base: str
    host_other: str
    lines: list[tuple[str, object, object]]


@dataclass
class Table:
    configs: list[Config]
    points: list[Point]          # present in every configuration
    partial: list[Point]         # present in some only: listed, not hidden
    env_diffs: list[EnvDiff]
    exclude_outliers: bool = False


def path_params(kernel: str) -> set[str]:
    try:
        from clusterbench import catalogue

        k = catalogue.load().kernels.get(kernel)
        if k:
            return {p.name for p in k.params if p.type == "path"}
    except Exception:  # noqa: BLE001 - without cbk, fall back to the usual name
        pass
    return {"dir"}


def _step_title(st) -> str:
    return st.name or st.kernel


def collect(store: Store, refs: list[str], exclude_outliers: bool = False) -> tuple[list[Config], list[Point]]:
    """Every measured point of the configurations, matched across them."""
    configs = [Config(ref, store.resolve(ref)) for ref in refs]
    points: dict[tuple, Point] = {}
    skip_cache: dict[str, set[str]] = {}
    for cfg in configs:
        for run_id in cfg.run_ids:
            for st in store.steps_of(run_id):
                skip = skip_cache.setdefault(st.kernel, path_params(st.kernel))
                params = {k: v for k, v in sorted(st.params.items()) if k not in skip}
                params["np"] = str(st.ranks)  # rank counts are part of what was measured
                if st.ranks_per_node:
                    params["ppn"] = str(st.ranks_per_node)
                for s in store.samples_of(st.id):
                    key = (st.kernel, tuple(params.items()), s.key())
                    p = points.setdefault(key, Point(_step_title(st), st.kernel, params, s.key(),
                                                     exclude_outliers=exclude_outliers))
                    if s.value is not None:
                        p.values.setdefault(cfg.name, []).append(s.value)
    return configs, list(points.values())


def build(store: Store, refs: list[str], exclude_outliers: bool = False) -> Table:
    if len(refs) < 2:
        raise BadInput("compare needs at least two labels or run ids")
    configs, points = collect(store, refs, exclude_outliers)
    names = [c.name for c in configs]
    full = [p for p in points if all(n in p.values for n in names)]
    partial = [p for p in points if not all(n in p.values for n in names)]
    if not full:
        raise BadInput(f"no measurement with equal kernel and parameters in all of: {', '.join(names)}")
    return Table(configs, full, partial, env_diffs(store, configs), exclude_outliers)


def single_target(env: dict) -> dict:
    """With one target directory, name its keys target.* so two directories
    (the usual A/B of a file-system comparison) line up key by key."""
    dirs = {k.split(".", 1)[1].rsplit(".", 1)[0] for k in env if k.startswith("target.")}
    if len(dirs) != 1:
        return env
    (d,) = dirs
    prefix = f"target.{d}."
    out = {("target." + k[len(prefix):] if k.startswith(prefix) else k): v for k, v in env.items()}
    out["target.path"] = d
    return out


def env_diffs(store: Store, configs: list[Config]) -> list[EnvDiff]:
    from clusterbench import environment

    base = configs[0]
    base_envs = store.environments_of(base.run_ids[0])
    out = []
    for other in configs[1:]:
        envs = store.environments_of(other.run_ids[0])
        # hosts pair up by name; single-host runs on different machines pair with each other
        pairs = [(h, h) for h in sorted(base_envs) if h in envs] or \
            list(zip(sorted(base_envs), sorted(envs)))
        for hb, ho in pairs:
            out.append(EnvDiff(base.name, other.name, hb, ho,
                               environment.diff(single_target(base_envs[hb]), single_target(envs[ho]))))
    return out


@dataclass
class Sweep:
    param: str
    title: str                    # kernel, phase, mode and the parameters held fixed
    unit: str | None
    values: list[str]             # the swept parameter's values, in order
    points: list[Point]           # one per value

    def numeric(self) -> list[float] | None:
        from clusterbench.catalogue import parse_size

        out = [parse_size(v) for v in self.values]
        return None if any(v is None for v in out) else [float(v) for v in out]


def sweeps(points: list[Point]) -> list[Sweep]:
    """Groups of points that differ in exactly one parameter: a sweep of it."""
    groups: dict[tuple, dict[str, Point]] = {}
    for p in points:
        for k, v in p.params.items():
            rest = tuple((a, b) for a, b in p.params.items() if a != k)
            groups.setdefault((k, p.kernel, p.key, rest), {})[v] = p
    out = []
    for (k, kernel, key, rest), by_value in groups.items():
        if len(by_value) < 2:
            continue
        from clusterbench.catalogue import parse_size

        order = sorted(by_value, key=lambda v: (parse_size(v) is None, parse_size(v) or 0, v))
        fixed = ", ".join(f"{a}={b}" for a, b in rest)
        out.append(Sweep(k, f"{kernel} {key.label} {key.condition or ''} ({fixed})", key.unit, order,
                         [by_value[v] for v in order]))
    return out
