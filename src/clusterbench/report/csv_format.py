"""CSV: one row per sample (every repetition and phase), for spreadsheets."""
from __future__ import annotations

import csv
import io
import json

COLUMNS = ["run", "label", "step", "kernel", "params", "ranks", "repetition", "phase", "mode",
           "value", "unit", "seconds", "bytes", "ops", "warnings"]


def render(runs: list[dict]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(COLUMNS)
    for run in runs:
        for st in run["steps"]:
            for s in st["samples"]:
                w.writerow([run["id"], run["label"] or "", st["name"] or st["kernel"], st["kernel"],
                            json.dumps(st["params"], sort_keys=True), st["ranks"], s["repetition"], s["phase"],
                            s["mode"] or "", s["value"], s["unit"] or "", s["seconds"], s["bytes"], s["ops"],
                            " | ".join(s["warnings"])])
    return buf.getvalue()
