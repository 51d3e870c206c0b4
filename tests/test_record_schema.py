"""Every record every kernel prints keeps the contract (docs/records.md):
valid against schemas/record.schema.json, no key written twice; and the
typed Sample reads the contract's shape and the older one alike."""
from __future__ import annotations

import json
import subprocess

import pytest

from clusterbench.analysis.stats import direction
from clusterbench.results.records import DuplicateKey, contract_problems, is_contract_measurement, parse_line
from clusterbench.results.sample import Sample

# One brief launch per kernel (and per record-shaping option): (kernel, ranks, args).
LAUNCHES = [
    ("seqio", 1, ["--dir={tmp}", "--file-size=4m", "--block-size=1m"]),
    ("manyfiles", 1, ["--dir={tmp}", "--files=3", "--file-size=1m", "--read=cold"]),
    ("randio", 1, ["--dir={tmp}", "--file-size=4m", "--runtime=0.2", "--ramp=0"]),
    ("himeno", 1, ["--size=XS", "--iterations=3"]),
    ("himeno", 1, ["--size=XS", "--iterations=2", "--sweep=threads", "--threads=2"]),
    ("stream", 1, ["--array-size=1m", "--passes=2", "--sweep=threads", "--threads=2"]),
    ("cpufreq", 1, ["--seconds=0.05", "--max-busy=1"]),
    ("tcp", 1, ["--duration=0.2", "--port=0"]),
    ("tcp", 1, ["--duration=0.2", "--port=0", "--test=rr"]),
    ("null", 1, ["--bytes=1k"]),
    ("mpi", 2, ["--op=pingpong", "--sizes=8,1k", "--iterations=10", "--warmup=1"]),
    ("mpi", 2, ["--op=allreduce", "--algorithm=recursive-doubling", "--sizes=8,1k", "--iterations=10",
                "--warmup=1"]),
    ("pario", 2, ["--dir={tmp}", "--block-size=1m", "--transfer-size=256k", "--fsync=end"]),
    ("tcp", 2, ["--role=pairs", "--duration=0.2", "--port=0"]),
    ("metadata", 2, ["--dir={tmp}", "--items=8", "--unique-dir"]),
    ("linkmatrix", 3, ["--size=64k", "--iterations=2", "--latency-iterations=5"]),
]


def strict_records(text: str) -> list[dict]:
    out = []
    for line in text.splitlines():
        rec = parse_line(line, strict=True)  # raises DuplicateKey
        if rec is not None:
            out.append(rec)
    return out


def assert_valid(records: list[dict]) -> None:
    for rec in records:
        assert contract_problems(rec) == [], json.dumps(rec)[:400]


def test_every_kernel_has_a_launch_here(cbk_bin):
    desc = json.loads(subprocess.run([cbk_bin, "--describe"], capture_output=True, text=True, check=True).stdout)
    assert_valid([desc])
    # the GPU kernels run on a GPU only: tests/test_gpu_kernels.py checks their records there
    gpu = {k["name"] for k in desc["kernels"] if k["family"] == "gpu"}
    assert {k["name"] for k in desc["kernels"]} - gpu <= {k for k, _, _ in LAUNCHES}


@pytest.mark.timeout(120)
@pytest.mark.parametrize("kernel,ranks,args", LAUNCHES, ids=[f"{k}-{' '.join(a[-1:])}" for k, _, a in LAUNCHES])
def test_kernel_records_keep_the_contract(kernel, ranks, args, cbk_bin, tmp_path, request):
    if ranks > 1:
        mpiexec = request.getfixturevalue("mpiexec")
        cmd = [mpiexec, "-n", str(ranks), cbk_bin]
    else:
        cmd = [cbk_bin]
    p = subprocess.run(cmd + [kernel, *(a.format(tmp=tmp_path) for a in args)], capture_output=True, text=True,
                       timeout=100)
    assert p.returncode == 0, p.stderr
    records = strict_records(p.stdout)
    types = [r["type"] for r in records]
    assert "measurement" in types and types[-1] == "run"
    assert_valid(records)
    for rec in records:
        if rec["type"] == "measurement":  # in the contract's shape, and the typed view reads every one
            assert is_contract_measurement(rec), f"{kernel} prints the shape from before docs/records.md: {rec}"
            s = Sample.from_record(rec)
            assert s.phase == rec["phase"] and s.value == rec["rate"] and s.unit == rec["rate_unit"]
            # compare says faster or slower by the unit: one it does not know makes every change of the
            # figure "direction unknown", which --fail-if slower lets pass
            assert direction(rec["rate_unit"]) != 0, f"{kernel}: no better direction for {rec['rate_unit']}"


@pytest.mark.parametrize("args,status", [(["seqio", "--dir=/nonexistent/x"], 2),
                                         (["null", "--fail-at=0"], 1),
                                         (["nosuchkernel"], 2)])
def test_error_records_keep_the_contract(cbk_bin, args, status):
    p = subprocess.run([cbk_bin, *args], capture_output=True, text=True, timeout=60)
    assert p.returncode == status
    errors = [r for r in strict_records(p.stderr) if r["type"] == "error"]
    assert len(errors) == 1 and errors[0]["status"] == status
    assert_valid(errors)


def test_a_key_written_twice_is_rejected():
    line = '{"schema":1,"type":"measurement","seconds":1.0,"seconds":2.0}'
    with pytest.raises(DuplicateKey, match="seconds"):
        parse_line(line, strict=True)
    assert parse_line(line)["seconds"] == 2.0  # the lenient reader keeps the last, as stored runs were read


def test_schema_rejects_a_mode_that_is_not_a_cache_state():
    rec = {"schema": 1, "type": "measurement", "kernel": "mpi", "repetition": 0, "phase": "pingpong",
           "mode": "library", "sweep_key": "size_bytes", "qualifiers": [], "size_bytes": 8, "ranks": 2,
           "bytes": 8, "ops": 1, "seconds": 1e-6, "rate": 1.0, "rate_unit": "us", "ops_per_s": 1e6,
           "rank_seconds_min": 1e-6, "rank_seconds_max": 1e-6, "slowest_rank": 0, "warnings": []}
    assert contract_problems(rec)
    assert contract_problems({**rec, "mode": "n/a", "algorithm": "library", "qualifiers": ["algorithm"]}) == []
    missing = contract_problems({**rec, "mode": "n/a", "qualifiers": ["algorithm"]})
    assert missing == ["declares field 'algorithm' but has none"]


BASE = {"schema": 1, "type": "measurement", "repetition": 0, "ranks": 1, "bytes": 0, "ops": 1, "seconds": 1.0,
        "rate": 5.0, "warnings": []}


@pytest.mark.parametrize("old,new,condition,size", [
    ({"phase": "pingpong", "mode": "library", "size_bytes": 1024, "rate_unit": "us"},
     {"phase": "pingpong", "mode": "n/a", "algorithm": "library", "qualifiers": ["algorithm"],
      "sweep_key": "size_bytes", "size_bytes": 1024, "rate_unit": "us"}, "library", 1024),
    ({"phase": "triad", "mode": "best, 2 threads", "threads": 2, "rate_unit": "MiB/s"},
     {"phase": "triad", "mode": "n/a", "statistic": "best", "qualifiers": ["statistic"], "sweep_key": "threads",
      "threads": 2, "rate_unit": "MiB/s"}, "best, 2 threads", None),
    ({"phase": "clock", "mode": "2 busy", "busy_cpus": 2, "rate_unit": "MHz"},
     {"phase": "clock", "mode": "n/a", "qualifiers": [], "sweep_key": "busy_cpus", "busy_cpus": 2,
      "rate_unit": "MHz"}, "2 busy", None),
    ({"phase": "clock", "mode": "2 busy (1 SMT)", "busy_cpus": 2, "smt_siblings_busy": 1, "rate_unit": "MHz"},
     {"phase": "clock", "mode": "n/a", "qualifiers": [], "sweep_key": "busy_cpus", "busy_cpus": 2,
      "smt_siblings_busy": 1, "rate_unit": "MHz"}, "2 busy (1 SMT)", None),
    ({"phase": "read", "mode": "cold", "rate_unit": "MiB/s"},
     {"phase": "read", "mode": "cold", "qualifiers": [], "sweep_key": None, "rate_unit": "MiB/s"}, "cold", None),
])
def test_old_and_contract_records_are_the_same_sample(old, new, condition, size):
    a, b = Sample.from_record({**BASE, **old}), Sample.from_record({**BASE, **new})
    assert a.key() == b.key()
    assert (b.condition, b.size_bytes) == (condition, size)
    assert a.mode == b.mode  # the cache state, or n/a: never a qualifier


def test_only_the_parser_and_the_store_read_record_keys():
    """The grouping key and the record's fields live in results/sample.py; a module
    that reaches into a raw record again is how five copies of a key began."""
    import ast
    from pathlib import Path

    import clusterbench

    keys = {"rate", "rate_unit", "rate_decimal", "rate_decimal_unit", "size_bytes", "sweep_key", "qualifiers",
            "ops_per_s", "rank_seconds_min", "rank_seconds_max", "slowest_rank", "cold_achieved", "file_bytes",
            "repetition", "phase", "record"}
    root = Path(clusterbench.__file__).parent
    allowed = {root / "results/records.py", root / "results/sample.py"}
    found = []
    for path in root.rglob("*.py"):
        parts = path.relative_to(root).parts
        # testbed/ speaks of link rates (tc), not of records
        if path in allowed or "store" in parts or "testbed" in parts or path.name == "testbed.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            text = None
            if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
                text = node.slice.value
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get" \
                    and node.args and isinstance(node.args[0], ast.Constant):
                text = node.args[0].value
            if text in keys:
                found.append(f"{path.relative_to(root)}:{node.lineno}: {text}")
    assert found == []


def test_commands_hold_no_use_case_of_another_command_and_module_names_are_unique():
    """Issue 22's layering: a use case lives outside commands/ (run/measure.py),
    so no command imports another command's module; one name, one module
    (two summary.py once held two different size_text)."""
    import ast
    from collections import Counter
    from pathlib import Path

    import clusterbench

    root = Path(clusterbench.__file__).parent
    crossing = []
    for path in (root / "commands").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("clusterbench.commands.") \
                    and node.module != "clusterbench.commands.options":
                crossing.append(f"{path.name}: {node.module}")
    assert crossing == []
    # package markers aside; Alembic finds its env.py by that name
    names = Counter(p.name for p in root.rglob("*.py") if p.name not in ("__init__.py", "__main__.py")
                    and p.parent.name != "migrations")
    assert [n for n, count in names.items() if count > 1] == []
