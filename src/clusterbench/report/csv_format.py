"""CSV: one row per sample (every repetition and phase), for spreadsheets.
`outlier` is 1 when the sample is a modified-Z outlier within its step's
(phase, mode, unit, size) group (docs/statistics.md); it is kept, not dropped.
`size_bytes` is the message (or transfer) size of a kernel that sweeps
sizes (mpi --sizes, gpucopy), empty otherwise: the same phase and mode at
8 B and at 1 MiB are different measurements, as show's "pingpong 8 B" says.
`limit` is the ceiling that binds at the group's median (limits/ceilings.py), "!" first when the median is above it.
`step_status` and `step_message` say whether the sample's step ended ok, and
why not (or what was noted of it): a failed or interrupted step's rows read as a whole measurement
without them, and a step that failed before any sample has one row of its
own, its sample columns empty."""
from __future__ import annotations

import csv
import io
import json

from clusterbench.output.render_text import csv_cell
from clusterbench.report.data import Report, step_name
from clusterbench.report.terminal import limit_text
from clusterbench.results.sample import Sample, SampleKey

COLUMNS = ["run", "label", "step", "kernel", "params", "ranks", "repetition", "phase", "mode",
           "size_bytes", "value", "unit", "seconds", "bytes", "ops", "outlier", "warnings", "limit", "step_status", "step_message"]


def _outliers(samples: list[Sample]) -> set[int]:
    """Positions (in `samples`) of the modified-Z outliers of each group (Sample.key())."""
    from clusterbench.analysis.stats import outlier_indices

    groups: dict[SampleKey, list[int]] = {}
    for i, s in enumerate(samples):
        if s.value is not None:
            groups.setdefault(s.key(), []).append(i)
    return {members[j] for members in groups.values()
            for j in outlier_indices([samples[i].value for i in members])}


def render(report: Report) -> str:
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(COLUMNS)
    for run in report.runs:
        for st in run["steps"]:
            flagged = _outliers(st["samples"])
            limit = {r.key: limit_text(r) for r in st["summary"]}  # the sample's group's binding ceiling
            step = [run["id"], csv_cell(run["label"]), csv_cell(step_name(st)), st["kernel"],
                    csv_cell(json.dumps(st["params"], sort_keys=True)), st["ranks"]]
            status = [st["status"], csv_cell(st["message"] or "")]   # an ok step's note too (a stalled launcher)
            for i, s in enumerate(st["samples"]):
                w.writerow([*step, s.repetition, s.phase, csv_cell(s.condition), s.key().size_bytes, s.value,
                            s.unit or "", s.seconds, s.bytes, s.ops, int(i in flagged), csv_cell(" | ".join(s.warnings)),
                            csv_cell(limit.get(s.key(), "")), *status])
            if not st["samples"]:
                w.writerow([*step, *[""] * (len(COLUMNS) - len(step) - len(status)), *status])
    return buf.getvalue()
