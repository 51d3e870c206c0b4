"""What `clusterbench run` costs around cbk (bench/harness_overhead, #24):
each saving keeps the behaviour it replaces."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def run_cli(args: list[str], cbk: str, store_url: str, **env: str) -> subprocess.CompletedProcess:
    full_env = {**os.environ, "CLUSTERBENCH_CBK": cbk, "CLUSTERBENCH_DB": store_url, **env}
    return subprocess.run([sys.executable, "-m", "clusterbench", *args], capture_output=True, text=True,
                          timeout=120, env=full_env)


def logging_cbk(tmp_path: Path, cbk_bin: str) -> tuple[str, Path]:
    """A cbk that notes each start (UCX_MEM_MMAP_HOOK_MODE|arguments) and runs the real one."""
    log = tmp_path / "cbk-starts.log"
    wrapper = tmp_path / "cbk"
    wrapper.write_text(f'#!/bin/sh\necho "${{UCX_MEM_MMAP_HOOK_MODE}}|$*" >> "{log}"\nexec "{cbk_bin}" "$@"\n')
    wrapper.chmod(0o755)
    return str(wrapper), log


def test_a_run_checks_its_parameters_once_and_queries_cbk_without_ucx_hooks(tmp_path, cbk_bin, store_url):
    cbk, log = logging_cbk(tmp_path, cbk_bin)
    r = run_cli(["run", "null", "--seconds=0.001", "--repeat", "1", "--quiet"], cbk, store_url)
    assert r.returncode == 0, r.stderr
    starts = [line.split("|", 1) for line in log.read_text().splitlines()]
    checks = [args for _, args in starts if args.startswith("--check")]
    assert checks == ["--check null --seconds=0.001 --repetitions=1"]   # before the store is opened; execute() does not repeat it
    queries = [(hooks, args) for hooks, args in starts if args.startswith("--")]
    measurement = [(hooks, args) for hooks, args in starts if not args.startswith("--")]
    assert queries and all(hooks == "none" for hooks, _ in queries)
    assert measurement == [("", "null --seconds=0.001 --repetitions=1")]   # measured as `cbk null` is, hooks and all


def test_cbk_answers_a_query_the_same_without_ucx_hooks(cbk_bin):
    from clusterbench.catalogue import QUERY_ENV

    for args in (["--describe"], ["--check", "null", "--seconds=1"], ["--check", "null", "--seconds=-1"]):
        plain = subprocess.run([cbk_bin, *args], capture_output=True, text=True)
        quick = subprocess.run([cbk_bin, *args], capture_output=True, text=True, env={**os.environ, **QUERY_ENV})
        assert (quick.returncode, quick.stdout, quick.stderr) == (plain.returncode, plain.stdout, plain.stderr)


def test_a_refused_parameter_is_still_refused_before_the_store_is_created(tmp_path, cbk_bin):
    store = tmp_path / "results.db"
    r = run_cli(["run", "null", "--seconds=-1", "--repeat", "1"], cbk_bin, f"sqlite:///{store}")
    assert r.returncode == 2 and "seconds" in r.stderr and not store.exists()


def test_a_quiet_kernel_run_imports_nothing_it_does_not_use(tmp_path, cbk_bin, store_url):
    """What a --quiet `run null` must not import: Alembic (only to migrate),
    SQLAlchemy (a current SQLite store is written with sqlite3), rich (only
    to show), tomllib (only for a suite), and the analysis libraries (only
    for reports)."""
    args = ["run", "null", "--seconds=0.001", "--repeat", "1", "--quiet"]
    assert run_cli(args, cbk_bin, store_url).returncode == 0   # creates the store
    r = run_cli(args, cbk_bin, store_url, PYTHONPROFILEIMPORTTIME="1")
    assert r.returncode == 0, r.stderr
    imported = {line.rsplit("|", 1)[1].strip() for line in r.stderr.splitlines() if line.startswith("import time:")}
    assert "clusterbench.run.runner" in imported
    unused = {"alembic", "sqlalchemy", "rich", "tomllib", "scipy", "numpy", "matplotlib", "jsonschema",
              "clusterbench.report"}
    assert sorted(imported & unused) == []


def test_commands_close_the_store_so_no_wal_file_is_left(tmp_path, cbk_bin):
    """cli.main freezes what is left at exit instead of collecting it (40 ms a
    command); the store's connections are closed explicitly, so the -wal file
    is still checkpointed into the store and removed."""
    store = tmp_path / "results.db"
    for args in (["run", "null", "--seconds=0.001", "--repeat", "1", "--quiet"], ["run", "null", "--repeat", "1"],
                 ["list"], ["show", "1"]):
        r = run_cli(args, cbk_bin, f"sqlite:///{store}")
        assert r.returncode == 0, r.stderr
        assert sorted(p.name for p in tmp_path.iterdir()) == ["results.db"], args


def test_the_snapshot_takes_cbks_description_from_the_catalogue_and_the_version_beside_the_package(
        cbk_bin, monkeypatch):
    """A run's snapshot does not start `cbk --describe` a second time, nor
    import importlib.metadata for clusterbench's version (#24): both come out
    as the slow ways give them."""
    import json
    from importlib import metadata

    from clusterbench import catalogue, environment

    monkeypatch.setenv("CLUSTERBENCH_CBK", cbk_bin)
    monkeypatch.setattr(catalogue, "DESCRIBED", {})
    fresh = environment.collect(keep_versions=False)
    assert fresh["clusterbench.version"] == metadata.version("clusterbench")
    catalogue.load.cache_clear()
    catalogue.load(cbk_bin)
    reused = environment.collect(keep_versions=False)
    assert environment.snapshot_hash(reused) == environment.snapshot_hash(fresh)
    assert reused["cbk.version"] == fresh["cbk.version"] and "cbk.version_error" not in reused
    catalogue.DESCRIBED[cbk_bin] = json.dumps({**json.loads(catalogue.DESCRIBED[cbk_bin]), "cbk_version": "kept"})
    assert environment.collect(keep_versions=False)["cbk.version"] == "kept"   # read from the catalogue's
