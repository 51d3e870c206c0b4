"""Comparing configurations: runs grouped by label (or single run ids),
steps matched on kernel and parameters, samples on phase, mode, unit and
size. Computation only; commands/compare.py and the reports present it.

Path parameters (a kernel's directory) are ignored when matching, so the
same measurement on two file systems matches: that difference is the
configuration being compared, and the environment diff names it. So are
the parameters that say where a peer is (a port, a server or bind
address): a TCP stream to another port or host is the same measurement. A
parameter left at the kernel's default matches one stated as the default.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from clusterbench.analysis import stats
from clusterbench.results import warning_fold
from clusterbench.errors import BadInput
from clusterbench.catalogue import step_phase_words
from clusterbench.results.sample import Sample, SampleKey, in_words
from clusterbench.store import Store
from clusterbench.importers.no_host import env_shown, host_shown


class NothingInCommon(BadInput):
    """The configurations share no measurement: compare stops (exit 2); a
    report of them shows each run and says why it has no comparison."""


@dataclass
class Config:
    name: str               # the label as the user gave it, or a run given by its id: "run 12 (e8)" (config_name)
    run_ids: list[int]


def config_name(store: Store, ref: str) -> str:
    """A configuration as every view names it: a label as given; a run given by its
    id as "run 12 (e8)". The bare id stood as a column "3", a ratio "6/3" and a
    title "3 vs 6", a fraction and numbers where a reader looks for what was compared."""
    from clusterbench.store.run_ref import run_id_of

    run_id = run_id_of(ref)
    if run_id is None or store.resolve(ref) != [run_id]:
        return ref
    label = store.run(run_id).label
    return f"run {run_id}" + (f" ({label})" if label else "")


@dataclass
class Point:
    step: str               # the step's stored name (kernel and its swept parameters, as the plan wrote them)
    kernel: str
    params: dict
    key: SampleKey          # which measurement of the step
    values: dict[str, list[float]] = field(default_factory=dict)  # config name -> samples
    written: dict[str, list[float]] = field(default_factory=dict)  # config name -> step_summary.Row.written
    exclude_outliers: bool = False
    sample_warnings: dict[str, list[list[str]]] = field(default_factory=dict)  # config name -> per sample
    first: dict[str, Sample] = field(default_factory=dict, repr=False)  # config name -> a sample, for ceilings
    contexts: dict[str, object] = field(default_factory=dict, repr=False)  # config name -> a ceilings.Context
    step_words: str = ""    # the step's name as a reader is shown it (results/step_words.py); "" = step

    def warnings(self, config: str) -> list[str]:
        """The config's warnings for this point, repeats folded (warning_fold)."""
        per_sample = self.sample_warnings.get(config, [])
        return warning_fold.fold(per_sample, len(per_sample))

    def limit(self, config: str):
        """The binding ceiling (ceilings.Ceiling) at the config's median, or None."""
        from clusterbench.limits import ceilings

        if config not in self.first or config not in self.contexts:
            return None
        return ceilings.of_median(self.first[config], self.summary(config).median, self.contexts[config])

    def flag(self, config: str) -> str | None:
        """Why the config's figure is not what it claims, in a few words, or None:
        the ceiling it is above ("page cache"), else "flagged" for any warning."""
        c = self.limit(config)
        if c is not None and c.exceeded:
            return c.short
        return "flagged" if self.warnings(config) else None

    def verdict_text(self, base: str, other: str) -> str:
        """The verdict with its p-value and reason, qualified when a side is
        flagged: "faster, but B is page cache"."""
        c = self.versus(base, other)
        text = c.verdict.value + (f" (p={c.p:.3g})" if c.p is not None else "")
        flags = [f"{n} is {f}" for n in (base, other) if (f := self.flag(n))]
        if flags:
            text = text.replace(c.verdict.value, f"{c.verdict.value}, but {' and '.join(flags)}", 1)
        return text + (f": {c.reason}" if c.reason else "")

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
        return stats.summarize(self.values.get(config, []), exclude_outliers=self.exclude_outliers,
                               written=min(self.written.get(config, []), default=None))

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
    imported: list[str] = field(default_factory=list)   # "NAME: run 5 imported from fio 3.33 JSON, file ..."
    pooled: list[str] = field(default_factory=list)     # "NAME: its 2 runs ran in 2 environments ...": pooled_environments

    @property
    def names(self) -> list[str]:
        return [c.name for c in self.configs]

    def verdict_heading(self, other: str) -> str:
        """The heading of `other`'s verdict column: "(p)" only where a row of it gives a p-value
        (n = 1 each side gives none; the heading promised one all the same)."""
        base = self.names[0]
        return "verdict (p)" if any(p.versus(base, other).p is not None for p in self.points) else "verdict"

    def title(self, p: Point) -> str:
        """The point's row title: step, the parameters that tell it apart
        from the same kernel's other points (a sweep's value), measurement."""
        return f"{self.group(p)}: {p.label}"

    def group(self, p: Point) -> str:
        """The title's step part, which the printed comparison says once above
        the step's rows: each row repeated a 60 to 100 character step title in
        a narrow column, 8 lines a row on A4."""
        return f"{p.step_words or p.step}{varying_text(p, self.points + self.partial)}"


def varying_text(p: Point, points: list[Point]) -> str:
    """' (block size 1 MiB)': the parameters whose values differ among the points of p's step, in the
    words a step's title gives them (step_words.part_words); as stored, ' (block-size=1m)', they were
    cbk's option names in a customer's table."""
    from clusterbench.results.params import kernel_of
    from clusterbench.results.step_words import part_words

    same = [q for q in points if q.step == p.step and q.kernel == p.kernel]
    keys = [k for k in p.params if len({q.params.get(k) for q in same}) > 1]
    if not keys:
        return ""
    kernel = kernel_of(p.kernel)
    return f" ({', '.join(part_words(kernel, k, str(p.params[k])) for k in keys)})"


def kernel_params(kernel: str) -> tuple[set[str], dict[str, str]]:
    """The parameters a match ignores and the kernel's defaults, canonical
    (plan_params, from cbk --describe). Ignored: where it ran (paths, a
    peer's address: role "where"), and
    lists whose records name each value: a choice list (mpi's phase is the
    op, so a pingpong measured in `--op=pingpong,allreduce` matches one
    measured alone) and a size list (each record's message size is in
    Sample.key(), so 1 MiB of `--sizes=8,1m` matches 1 MiB of `--sizes=1m`)."""
    from clusterbench.results.params import defaults, is_size_list, kernel_of

    k = kernel_of(kernel)
    if k is None:   # without cbk's description, the usual name
        return {"dir"}, {}
    return ({p.name for p in k.params if p.role == "where" or p.type in ("path", "choice-list")
             or is_size_list(p)}, defaults(k))


def _where_params(kernel: str) -> set[str]:
    """The parameters that say where a step ran (its directory, a peer's address)."""
    from clusterbench.results.params import kernel_of

    k = kernel_of(kernel)
    return {"dir"} if k is None else {p.name for p in k.params if p.role == "where" or p.type == "path"}


def _step_title(st) -> str:
    return st.name or st.kernel


def _step_words(st) -> str:
    from clusterbench.results.step_words import title

    return title({"name": st.name, "kernel": st.kernel, "params": st.params, "ranks": st.ranks,
                  "ranks_per_node": st.ranks_per_node, "swept": getattr(st, "swept", None)})


def _check_disjoint(configs: list[Config]) -> None:
    """Each configuration's samples are its own: a name given twice pooled
    its samples twice (twice the n, a narrower interval, p = 1), and a run
    in two configurations makes the test compare samples with themselves."""
    owner: dict[int, str] = {}
    names: set[str] = set()
    for cfg in configs:
        if cfg.name in names:
            raise BadInput(f"{cfg.name} is given twice: a configuration is compared with another, not itself")
        names.add(cfg.name)
        for i in cfg.run_ids:
            if i in owner:
                raise BadInput(f"run {i} is in both {owner[i]} and {cfg.name}: give each run to one configuration")
            owner[i] = cfg.name


def _told_apart(steps, alike_of: dict) -> dict[int, tuple[str, int]]:
    """Steps of one run that the match cannot tell apart (alike_of: a step's
    kernel and parameters but where it ran: a suite's seqio on a disk and on
    a tmpfs, which differ only in the directory the match ignores) each get
    a mark of their own: the step's name, and its place among the run's
    steps of that name. Matched on kernel and parameters alone, the two
    were pooled into one figure under the first step's name, twice the n,
    the disk's and the memory's rates mixed. Read from the steps, not their
    samples, so a step that failed in one run still marks its neighbour as
    in the others; the same suite gives the same marks, so its steps match
    across configurations; a step alone in its run has none, as before."""
    counts: dict = {}
    for st, _samples in steps:
        counts[alike_of[st.id]] = counts.get(alike_of[st.id], 0) + 1
    marks: dict[int, tuple[str, int]] = {}
    of_name: dict[str, int] = {}
    for st, _samples in steps:
        if counts[alike_of[st.id]] > 1:
            name = st.name or ""
            marks[st.id] = (name, of_name.get(name, 0))
            of_name[name] = of_name.get(name, 0) + 1
    return marks


def collect(store: Store, refs: list[str], exclude_outliers: bool = False,
            link_bits_per_s: float | None = None, keep_step=None) -> tuple[list[Config], list[Point]]:
    """Every measured point of the configurations, matched across them;
    keep_step(step): only the steps it keeps (None: every step)."""
    from clusterbench.limits import ceilings
    from clusterbench.results.params import as_run, kernel_of

    configs = [Config(config_name(store, ref), store.resolve(ref)) for ref in refs]
    _check_disjoint(configs)
    points: dict[tuple, Point] = {}
    kernels: dict[str, tuple[set[str], dict[str, str]]] = {}
    for cfg in configs:
        for run_id in cfg.run_ids:
            steps = [(st, in_words(store.samples_of(st.id), step_phase_words(st.kernel, st.build)))
                     for st in store.steps_of(run_id) if keep_step is None or keep_step(st)]
            envs, host = store.environments_of(run_id), store.run(run_id).host
            others = [s for _, ss in steps for s in ss]
            matched_of, alike_of = {}, {}
            for st, _samples in steps:
                skip, defaults = kernels.setdefault(st.kernel, kernel_params(st.kernel))
                where = _where_params(st.kernel)
                ran = as_run(kernel_of(st.kernel), st.params, (st.build or {}).get("parameters"))
                params = {k: v for k, v in sorted(ran.items()) if k not in skip}
                params["np"] = str(st.ranks)  # rank counts are part of what was measured
                if st.ranks_per_node:
                    params["ppn"] = str(st.ranks_per_node)
                # a parameter left at its default matches one given as the default (an imported
                # run states every parameter its tool's file shows)
                matched = {**{k: v for k, v in defaults.items() if k not in skip}, **params}
                matched_of[st.id] = (params, tuple(sorted(matched.items())))
                # the lists a step's records name item by item (mpi's sizes) tell steps apart already
                listed = tuple(sorted((k, v) for k, v in ran.items() if k in skip and k not in where))
                alike_of[st.id] = (st.kernel, matched_of[st.id][1], listed)
            apart = _told_apart(steps, alike_of)
            for st, samples in steps:
                ctx = ceilings.Context(ceilings.host_env(envs, host, st.build), others, link_bits_per_s)
                params, matched = matched_of[st.id]
                for s in samples:
                    key = (st.kernel, matched, s.key(), apart.get(st.id))
                    p = points.setdefault(key, Point(_step_title(st), st.kernel, params, s.key(),
                                                     step_words=_step_words(st), exclude_outliers=exclude_outliers))
                    if s.value is not None:
                        p.values.setdefault(cfg.name, []).append(s.value)
                        if (step := s.printed_step()) is not None:   # as its tool printed it, no finer or coarser
                            p.written.setdefault(cfg.name, []).append(step)
                    p.sample_warnings.setdefault(cfg.name, []).append(list(s.warnings))
                    p.first.setdefault(cfg.name, s)
                    p.contexts.setdefault(cfg.name, ctx)  # the first run's: one environment per config
    return configs, list(points.values())


def build(store: Store, refs: list[str], exclude_outliers: bool = False,
          link_bits_per_s: float | None = None, keep_step=None) -> Table:
    if len(refs) < 2:
        raise BadInput("compare needs at least two labels or run ids")
    configs, points = collect(store, refs, exclude_outliers, link_bits_per_s, keep_step)
    names = [c.name for c in configs]
    full = [p for p in points if all(n in p.values for n in names)]
    partial = [p for p in points if not all(n in p.values for n in names)]
    if not full:
        for cfg in configs:
            if not any(cfg.name in p.values for p in points):
                # said as such: "no measurement with equal kernel and parameters" sent the user looking for
                # a difference in parameters between two runs of one command line that had both failed
                raise NothingInCommon(f"{cfg.name} has no measurement to compare: "
                                      f"{_no_samples_why(store, cfg.run_ids)}")
        raise NothingInCommon(f"no measurement with equal kernel and parameters in all of: {', '.join(names)}"
                              + nearest_difference(points, names))
    imported = [f"{c.name}: run {i} imported from {store.run(i).imported_from}"
                for c in configs for i in c.run_ids if store.run(i).imported_from]
    return Table(configs, full, partial, env_diffs(store, configs), exclude_outliers, imported,
                 pooled_environments(store, configs))


def _no_samples_why(store: Store, run_ids: list[int]) -> str:
    """'run 4 failed (null: failing at repetition 0 as asked)' for each run, at most three."""
    said = []
    for i in run_ids[:3]:
        run = store.run(i)
        step = next((st for st in store.steps_of(i) if st.message), None)
        why = (step.message if step else run.message or "").strip().splitlines()
        said.append(f"run {i} {run.status}" + (f" ({why[0][:200]})" if why else "")
                    + ("" if run.status in ("failed", "interrupted", "killed") else ", no figure stored"))
    more = f" and {len(run_ids) - 3} more" if len(run_ids) > 3 else ""
    return "; ".join(said) + more


def nearest_difference(points: list[Point], names: list[str]) -> str:
    """Why two configurations that ran the same kernel share no measurement:
    '; mpi ran with ppn=1 in a, ppn=2 in b (rank placement and count are part
    of a measurement: ...)', from the pair of their points of one kernel that
    differ in the fewest parameters; '' when no kernel is common."""
    best = None
    for other in names[1:]:
        mine = [p for p in points if names[0] in p.values]
        theirs = [p for p in points if other in p.values]
        for a in mine:
            for b in theirs:
                if a.kernel != b.kernel or a.key != b.key:
                    continue
                keys = [k for k in dict.fromkeys([*a.params, *b.params]) if a.params.get(k) != b.params.get(k)]
                if keys and (best is None or len(keys) < len(best[0])):
                    best = (keys, a, b, other)
    if best is None:
        return ""
    keys, a, b, other = best
    said = ", ".join(f"{k}={a.params.get(k, '(default)')}" for k in keys[:3])
    then = ", ".join(f"{k}={b.params.get(k, '(default)')}" for k in keys[:3])
    hint = (" (where the ranks ran is part of what was measured: a suite step with a list, e.g. ppn = [1, 2], "
            "puts placements side by side in its report)" if set(keys) & {"np", "ppn"} else "")
    return f"; {a.kernel} ran with {said} in {names[0]} and {then} in {other}{hint}"


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


def pooled_environments(store: Store, configs: list[Config]) -> list[str]:
    """A note per configuration whose runs ran in more than one environment
    (a label's runs on two machines, or before and after an update): its
    samples are pooled, and the environment differences are its newest
    run's alone (env_diffs), so "m1 (n03) vs m2 (n02)" said nothing of the
    m1 runs measured on n01. Runs whose snapshots differ only by a target
    directory that one of them has not (an I/O run beside a stream or mpi
    run of one label) ran in one environment (same_environment)."""
    out = []
    for c in configs:
        runs_of: dict[frozenset, list[int]] = {}
        for run_id in c.run_ids:
            runs_of.setdefault(store.environment_hashes_of(run_id), []).append(run_id)
        if len(runs_of) < 2:
            continue
        groups: list[tuple[dict, list[frozenset]]] = []   # (one run's environments by host, snapshots alike)
        for snapshot, run_ids in runs_of.items():
            envs = {host: single_target(env) for host, env in store.environments_of(run_ids[0]).items()}
            alike = next((g for g in groups if same_environment(g[0], envs)), None)
            if alike:
                alike[1].append(snapshot)
            else:
                groups.append((envs, [snapshot]))
        if len(groups) > 1:
            hosts = sorted({host for snapshot in runs_of for host, _ in snapshot})
            out.append(f"{c.name}: its {len(c.run_ids)} runs ran in {len(groups)} different environments "
                       f"(hosts {', '.join(hosts)}), pooled here; the environment differences are of run "
                       f"{c.run_ids[0]} alone")
    return out


def same_environment(a: dict[str, dict], b: dict[str, dict]) -> bool:
    """Two runs' environments (by host) are one where the same hosts have no
    difference environment.diff lists (it leaves out what changes between
    two captures of an unchanged machine), but for a target directory one
    of them describes alone: only a run that wrote into one describes it
    (target.*, as single_target names it)."""
    return set(a) == set(b) and all(not differences(a[host], b[host]) for host in a)


def differences(a: dict, b: dict) -> list[tuple[str, object, object]]:
    """environment.diff of two snapshots, less a target directory one of
    them describes alone (a stream run beside a seqio run of another label
    did not run on another disk, it wrote on none), and less a key neither
    states (two imports' "imported from OSU 7.4 text: not recorded" and
    "... OSU 7.0 text ..." were 30 differences of two files' formats)."""
    from clusterbench import environment
    from clusterbench.importers.unrecorded import lacks

    return [d for d in environment.diff(a, b)
            if not (d[0].startswith("target.") and (d[0] not in a or d[0] not in b))
            and not (lacks(d[1]) and lacks(d[2]))]


def env_diffs(store: Store, configs: list[Config]) -> list[EnvDiff]:
    base = configs[0]
    base_envs = store.environments_of(base.run_ids[0])
    base_imported = _imported(store, base)
    out = []
    for other in configs[1:]:
        envs = store.environments_of(other.run_ids[0])
        # hosts pair up by name; single-host runs on different machines pair with each other
        pairs = [(h, h) for h in sorted(base_envs) if h in envs] or \
            list(zip(sorted(base_envs), sorted(envs)))
        for hb, ho in pairs:
            # an import that named no host: said so, not a machine called "unknown" (as report/data.py)
            other_imported = _imported(store, other)
            out.append(EnvDiff(base.name, other.name, host_shown(hb, base_imported), host_shown(ho, other_imported),
                               differences(single_target(env_shown(base_envs[hb], base_imported)),
                                           single_target(env_shown(envs[ho], other_imported)))))
    return out


def _imported(store: Store, config: Config) -> bool:
    return bool(store.run(config.run_ids[0]).imported_from)


@dataclass
class Sweep:
    param: str
    title: str                    # kernel, phase, mode and the parameters held fixed
    unit: str | None
    values: list[str]             # the swept parameter's values, in order
    points: list[Point]           # one per value

    def numeric(self) -> list[float] | None:
        from clusterbench.results.sizes import parse_size

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
        from clusterbench.results.sizes import parse_size

        order = sorted(by_value, key=lambda v: (parse_size(v) is None, parse_size(v) or 0, v))
        fixed = ", ".join(f"{a}={b}" for a, b in rest)
        out.append(Sweep(k, f"{kernel} {key.label} {key.condition or ''} ({fixed})", key.unit, order,
                         [by_value[v] for v in order]))
    return out
