"""JSON: the runs with every raw sample, for scripts."""
from __future__ import annotations

import dataclasses
import json
import math

from clusterbench.report.data import Report
from clusterbench.results.sample import Sample
from clusterbench.analysis.stats import outlier_rule


def _plain(o):
    if isinstance(o, Sample):
        return o.export()
    if dataclasses.is_dataclass(o):
        d = dataclasses.asdict(o)
        # the row's warnings as shown (repeats folded); per-sample ones stay in the samples
        d.pop("sample_warnings", None)
        d.pop("sample_repetitions", None)
        d.pop("phase_words", None)   # how a table prints the phase; the data keeps the kernel's name
        d.pop("written", None)   # the places a table prints; the samples keep the printed rate_decimal
        d["warnings"] = o.warnings
        st = o.stats
        # the statistics of docs/statistics.md; outliers as indices into "values", kept in every figure
        d.update(n=o.n, median=o.median, min=o.minimum, max=o.maximum, mean=st.mean, std=st.std, cv=st.cv,
                 ci_low=st.ci_low, ci_high=st.ci_high, ci_coverage=st.ci_coverage, ci_method="order statistics",
                 outliers=st.outliers, outlier_rule=outlier_rule(st.n),
                 outlier_bound=st.outlier_bound if math.isfinite(st.outlier_bound) else None,
                 excluded_outliers=st.excluded_outliers)
        return d
    raise TypeError(f"cannot write {type(o).__name__} as JSON")


def render(report: Report) -> str:
    return json.dumps({"schema": 1, "runs": report.runs}, indent=1, default=_plain, allow_nan=False) + "\n"
