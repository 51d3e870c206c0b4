"""What the GPU kernels' tests read of cbk's output: the measurement records,
each checked against the record contract, and the one error record."""
from __future__ import annotations

import json

from conftest import _parse_lines
from clusterbench.results.records import contract_problems, is_contract_measurement
from clusterbench.results.sample import Sample


def measurements(stdout: str) -> list[dict]:
    records = _parse_lines(stdout)
    for rec in records:
        assert contract_problems(rec) == [], json.dumps(rec)[:400]
    ms = [r for r in records if r["type"] == "measurement"]
    for rec in ms:
        assert is_contract_measurement(rec)
        Sample.from_record(rec)
    return ms


def error_message(stderr: str) -> str:
    errors = [r for r in _parse_lines(stderr) if r.get("type") == "error"]
    assert len(errors) == 1, stderr
    return errors[0]["message"]
