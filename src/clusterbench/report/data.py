"""Everything known about a run, as plain data for the formats, and the
Report every format renders."""
from __future__ import annotations

import dataclasses
from collections import Counter
from dataclasses import dataclass, field
from functools import cached_property

from clusterbench.analysis import step_summary
from clusterbench.analysis.cluster.naming import judged_node_by_node
from clusterbench.catalogue import step_phase_words
from clusterbench.importers.no_host import NO_HOST, NO_HOST_WORDS
from clusterbench.results.sample import in_words
from clusterbench.store import Store


def _iso(t) -> str | None:
    return t.isoformat() if t is not None else None


def load_run(store: Store, run_id: int, link_bits_per_s: float | None = None) -> dict:
    from clusterbench.limits import ceilings

    run = store.run(run_id)
    envs = store.environments_of(run_id)
    # printed with the kernel's words for its phases; the samples export as recorded
    steps_samples = [(st, in_words(store.samples_of(st.id), step_phase_words(st.kernel, st.build)))
                     for st in store.steps_of(run_id)]
    # a step's limits are judged among the samples of its host: a per-node step
    # (steps.host) against its own node's figures, never another node's disk
    by_host: dict[str | None, list] = {}
    for st, samples in steps_samples:
        by_host.setdefault(st.host, []).extend(samples)
    ctx = ceilings.Context(ceilings.host_env(envs, run.host), [], link_bits_per_s)
    steps = []
    for st, samples in steps_samples:
        step_ctx = dataclasses.replace(ctx, env=ceilings.host_env(envs, st.host or run.host, st.build),
                                       others=by_host[st.host])
        steps.append({
            "id": st.id, "position": st.position, "name": st.name, "kernel": st.kernel, "params": st.params,
            "launcher": st.launcher, "ranks": st.ranks, "ranks_per_node": st.ranks_per_node,
            "status": st.status, "message": st.message, "started": _iso(st.started),
            "finished": _iso(st.finished), "build": st.build, "stop_reason": st.stop_reason, "host": st.host,
            # None: stored before 0012, or read from an older store opened read-only (not migrated)
            "swept": getattr(st, "swept", None),
            "summary": step_summary.rows(samples, step_ctx),
            "samples": samples,  # Sample objects; the JSON format writes Sample.export()
        })
    host = run.host
    if run.imported_from and host == NO_HOST:   # where the host came from, not a machine called "unknown"
        host = NO_HOST_WORDS
        envs = {(host if h == NO_HOST else h): ({**e, "host.name": host} if h == NO_HOST else e) for h, e in envs.items()}
    out = {
        "id": run.id, "label": run.label, "user": run.user, "host": host, "command": run.command,
        "suite": run.suite, "kind": run.kind, "status": run.status, "message": run.message, "started": _iso(run.started),
        "finished": _iso(run.finished), "batch_job": run.batch_job, "steps": steps, "environments": envs,
    }
    if run.imported_from:   # only on imported runs: the exports of measured runs stay as they were
        out["imported_from"] = run.imported_from
    return out


def step_name(step: dict) -> str:
    """The step as stored, for the data exports (CSV): a per-node step (run cluster) names its node
    before its part, as "node h01: stream"; a sweep's step keeps the plan's "[op=allreduce]"."""
    name = step["name"] or step["kernel"]
    return f"node {step['host']}: {name}" if step.get("host") else name


def step_title(step: dict) -> str:
    """The step as a reader is shown it: step_name with a sweep's bracket in words
    (results/step_words.py): "scaling: 2 nodes x 1 rank, allreduce"."""
    from clusterbench.results.step_words import title

    name = title(step)
    return f"node {step['host']}: {name}" if step.get("host") else name


def step_titles(steps: list[dict]) -> dict[int, str]:
    """Each step's title (step_title) by its id. A title two steps of the run
    share (a suite with the same unnamed [[steps]] twice) ends with each
    one's number in the run, "null (step 2)": show and the reports gave two
    identical tables under one title, with nothing telling them apart."""
    titles = {st["id"]: step_title(st) for st in steps}
    shared = {t for t, n in Counter(titles.values()).items() if n > 1}
    return {st["id"]: f"{titles[st['id']]} (step {st['position'] + 1})" if titles[st["id"]] in shared
            else titles[st["id"]] for st in steps}


def stop_text(reason: str | None) -> str | None:
    """Why a step's repetitions stopped (its stored stop_reason, "kind: detail",
    run/step_engine.py), as a reader takes it: "5 repetitions", "stopped when
    the 95 % CI was within 3.1% of the median (target 5%), after 7
    repetitions", "stopped at --max-repeat: 30 repetitions (...)"; not the
    stored kind ("repetition stopped by fixed: 5 repetitions")."""
    if not reason:
        return None
    kind, _, detail = reason.partition(": ")
    if kind == "fixed" and detail:
        return detail
    if kind == "ci" and detail:
        ci, _, done = detail.rpartition(" after ")
        return f"stopped when the {ci.replace(' CI within ', ' CI was within ', 1)}, after {done} repetitions" \
            if ci and done.isdigit() else f"stopped when the {detail}"
    if kind in ("max-repeat", "max-time") and detail:
        return f"stopped at --{kind}: {detail}"
    return f"repetition stopped by {reason}"


def extent_text(st: dict, fixed_count: bool = True) -> str:
    """What follows a step's command in its caption: "2 ranks; 5 repetitions", or why its repetitions
    stopped; without fixed_count a fixed count is left to the table's n (the terminal, short of width).
    One text for every format: the Markdown caption had lost the repetitions the HTML gave."""
    from clusterbench.output.counted_text import counted

    text = counted(st["ranks"], "rank")
    reason = st.get("stop_reason")
    if reason and (fixed_count or not reason.startswith("fixed")):
        text += f"; {stop_text(reason)}"
    return text


def params_text(step: dict) -> str:
    return " ".join(f"--{k}={v}" for k, v in step["params"].items())


def kernel_command(step: dict) -> str:
    """The kernel and its parameters as a step's caption gives them: "seqio
    --dir=/tmp --write=fsync"; the kernel alone when it has none ("gpucopy",
    not "gpucopy " with a space a code span shows)."""
    return f"{step['kernel']} {params_text(step)}".rstrip()


@dataclass
class Report:
    """What a format renders: the runs, and for the formats that show one
    (html, md) the comparison of the configurations `refs` (html: and their sweeps)."""
    runs: list[dict]
    store: Store | None = None
    refs: list[str] = field(default_factory=list)
    exclude_outliers: bool = False
    link_bits_per_s: float | None = None   # --link-speed, for the limit checks
    made_by: str | None = None             # the command that made the report (its footer); None: the runs'
    no_comparison: str | None = None       # why several refs have no comparison (none they all measured)

    @classmethod
    def of(cls, store: Store, refs: list[str], exclude_outliers: bool = False,
           link_bits_per_s: float | None = None, made_by: str | None = None) -> Report:
        # a label's runs in the order they ran (resolve gives them newest first: a report read Run 3, 2, 1)
        ids = list(dict.fromkeys(i for ref in refs for i in sorted(store.resolve(ref))))
        return cls([load_run(store, i, link_bits_per_s) for i in ids], store, list(refs), exclude_outliers,
                   link_bits_per_s, made_by)

    @cached_property
    def comparison(self):
        """compare.Table of the refs, or None with fewer than two or none
        they all measured (no_comparison says why)."""
        from clusterbench.analysis import comparison as compare

        if self.store is None or len(self.refs) < 2:
            return None
        keep = None if self.before_after is None else lambda st: not judged_node_by_node(st)
        try:
            return compare.build(self.store, self.refs, self.exclude_outliers, self.link_bits_per_s, keep)
        except compare.NothingInCommon as e:
            # runs of different kernels are still a report: each run is shown, the reason stated;
            # two cluster runs with nothing but per-node steps and links: the before/after is the comparison
            self.no_comparison = e.message if self.before_after is None else None
            return None

    @cached_property
    def before_after(self):
        """Two cluster runs' node by node, GPU by GPU and link by link
        comparison (report/cluster_before_after.py), or None."""
        from clusterbench.report.cluster_before_after import of_report

        return of_report(self.runs)

    @cached_property
    def points(self) -> list:
        """Every measured point per configuration (compare.collect), for sweep tables."""
        from clusterbench.analysis import comparison as compare

        if self.comparison is not None:
            return self.comparison.points
        return compare.collect(self.store, self.refs, link_bits_per_s=self.link_bits_per_s)[1] \
            if self.store is not None else []

    @cached_property
    def config_names(self) -> list[str]:
        """The configurations as every part of the report names them (compare.config_name): "run 3 (a)", not "3"."""
        from clusterbench.analysis.comparison import config_name

        return [config_name(self.store, ref) for ref in self.refs] if self.store is not None else list(self.refs)
