"""Parsing cbk's JSON-lines output (the contract: docs/records.md and
schemas/record.schema.json)."""
from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from clusterbench.catalogue import SCHEMA

SCHEMA_FILE = Path(__file__).parent.parent / "schemas" / "record.schema.json"


class DuplicateKey(ValueError):
    pass


def _no_duplicates(pairs: list[tuple[str, object]]) -> dict:
    keys = [k for k, _ in pairs]
    twice = sorted({k for k in keys if keys.count(k) > 1})
    if twice:
        raise DuplicateKey(f"key(s) written twice: {', '.join(twice)}")
    return dict(pairs)


def parse_line(line: str, strict: bool = False) -> dict | None:
    """A record, or None for a line that is not one (a library's chatter).
    strict: a record with a key written twice raises DuplicateKey (else
    the last one counts, as json.loads and jq take it)."""
    line = line.strip()
    if not line.startswith("{"):
        return None
    try:
        rec = json.loads(line, object_pairs_hook=_no_duplicates if strict else None)
    except DuplicateKey:
        raise
    except json.JSONDecodeError:
        return None
    if not isinstance(rec, dict) or rec.get("schema") != SCHEMA:
        return None
    from clusterbench.output.render_text import stored

    return stored(rec)  # cbk writes a non-UTF-8 path's bytes as \udcXX


@dataclass(frozen=True)
class RunRecord:
    """cbk's last record of a launch: the build and how it ran (stored as the step's build)."""
    ranks: int | None
    record: dict


@dataclass(frozen=True)
class OtherRecord:
    """Any other record on the stream (tcp_streams, tcp_pairs, listening, memory-cgroup...)."""
    type: str | None
    record: dict


def read_line(line: str, extra_fields: dict | None = None):
    """A line of cbk's stdout as a Sample (a measurement, with `extra_fields`
    added to its record: what the orchestrator ran it under), a RunRecord,
    an OtherRecord, or None (not a record)."""
    from clusterbench.results.sample import Sample

    rec = parse_line(line)
    if rec is None:
        return None
    if rec.get("type") == "measurement":
        if extra_fields:
            rec.update(extra_fields)
        return Sample.from_record(rec)
    if rec.get("type") == "run":
        return RunRecord(rec.get("ranks"), rec)
    return OtherRecord(rec.get("type"), rec)


def error_message(stderr: str) -> str | None:
    """The message of the first error record in cbk's stderr."""
    for line in stderr.splitlines():
        rec = parse_line(line)
        if rec and rec.get("type") == "error":
            return rec.get("message")
    return None


def stop_signal(stderr: str) -> str | None:
    """The signal of cbk's "stopped" record in its stderr (SIGINT...): cbk
    ended by it after removing its files."""
    for line in stderr.splitlines():
        rec = parse_line(line)
        if rec and rec.get("type") == "stopped":
            return rec.get("signal")
    return None


@lru_cache(maxsize=1)
def _validator():
    import jsonschema  # imported here only: checking records is for tests and importers, not for every run

    schema = json.loads(SCHEMA_FILE.read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def contract_problems(rec: dict) -> list[str]:
    """What in a record breaks the contract; [] when it keeps it. Beyond the
    JSON Schema: a declared sweep key or qualifier names a field the record has."""
    problems = [f"{'/'.join(map(str, e.absolute_path)) or 'record'}: {e.message}"
                for e in _validator().iter_errors(rec)]
    if rec.get("type") == "measurement":
        named = ([rec["sweep_key"]] if rec.get("sweep_key") else []) + list(rec.get("qualifiers") or [])
        problems += [f"declares field '{k}' but has none" for k in named if k not in rec]
    return problems


def is_contract_measurement(rec: dict) -> bool:
    """A measurement in the contract's shape (not the older one with qualifiers inside mode)."""
    return rec.get("type") == "measurement" and "sweep_key" in rec


@dataclass(frozen=True)
class PairRate:
    """One TCP pair of a --role=pairs step (E6): its hosts, its rate in each
    repetition and its link's nominal rate (None when the driver did not say)."""
    phase: str
    pair: int
    server_host: str
    client_host: str
    gbit_per_s: tuple[float, ...]
    link_gbit_per_s: float | None


def pair_rates(build: dict | None) -> list[PairRate]:
    """The per-pair rates of a step, from the tcp_pairs records the runner
    keeps in its build record (detail_records); one PairRate per phase and pair."""
    found: dict[tuple[str, int], dict] = {}
    kept = (build or {}).get("detail_records") or []
    for rec in kept:
        if rec.get("type") != "tcp_pairs" or rec.get("test") != "stream":
            continue
        for p in rec.get("pairs") or []:
            slot = found.setdefault((str(rec.get("phase")), int(p.get("pair", 0))), {
                "server_host": str(p.get("server_host")), "client_host": str(p.get("client_host")), "rates": [],
                "link": p.get("link_gbit_per_s")})
            if isinstance(p.get("gbit_per_s"), (int, float)):
                slot["rates"].append(float(p["gbit_per_s"]))
    return [PairRate(phase, pair, v["server_host"], v["client_host"], tuple(v["rates"]),
                     float(v["link"]) if isinstance(v["link"], (int, float)) and v["link"] > 0 else None)
            for (phase, pair), v in sorted(found.items())]
