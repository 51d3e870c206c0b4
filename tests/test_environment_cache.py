"""Version commands' output kept per boot (environment/command_cache.py):
used on the next snapshot, never when anything it depends on changed, and
the snapshot is the same as without it."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from clusterbench import environment
from clusterbench.environment import command_cache


@pytest.fixture
def fake_fi_info(tmp_path, monkeypatch):
    """An fi_info first on PATH that notes each start; the cache in a private folder."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    log = tmp_path / "fi_info-starts.log"

    def install(version: str = "9.8.7", status: int = 0) -> None:
        (bin_dir / "fi_info").write_text(f'#!/bin/sh\necho start >> "{log}"\n'
                                         f'printf "fi_info: {version}\\nlibfabric: {version}\\n"\nexit {status}\n')
        (bin_dir / "fi_info").chmod(0o755)

    install()
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    starts = lambda: len(log.read_text().splitlines()) if log.exists() else 0  # noqa: E731
    return install, starts


def stable(env: dict) -> dict:
    return {k: v for k, v in env.items() if not environment.is_volatile(k)}


@pytest.mark.timeout(60)
def test_a_version_is_read_once_per_boot_and_the_snapshot_is_the_same(fake_fi_info, tmp_path):
    _, starts = fake_fi_info
    uncached = environment.collect(keep_versions=False)
    assert starts() == 1 and uncached["fabric.libfabric_version"] == "9.8.7"
    filled = environment.collect()
    assert starts() == 2
    cached = environment.collect()
    assert starts() == 2   # the second snapshot did not start fi_info
    assert stable(cached) == stable(filled) == stable(uncached)
    assert environment.snapshot_hash(cached) == environment.snapshot_hash(uncached)
    (kept,) = (tmp_path / "cache" / "clusterbench").glob("commands-*.json")
    assert json.loads(kept.read_text())["boot_id"] == command_cache.BOOT_ID.read_text().strip()


@pytest.mark.timeout(60)
def test_another_boot_a_corrupt_file_or_a_replaced_program_reads_again(fake_fi_info, tmp_path, monkeypatch):
    install, starts = fake_fi_info
    environment.collect()
    assert starts() == 1
    (first_file,) = (tmp_path / "cache" / "clusterbench").glob("commands-*.json")

    other_boot = tmp_path / "boot_id"
    other_boot.write_text("0f4a1d2e-1111-2222-3333-444455556666\n")
    monkeypatch.setattr(command_cache, "BOOT_ID", other_boot)
    environment.collect()
    assert starts() == 2
    assert not first_file.exists()   # an earlier boot's file of this host is removed

    (this_boot_file,) = (tmp_path / "cache" / "clusterbench").glob("commands-*.json")
    this_boot_file.write_text('{"schema": 1, "boot_id": "0f4a1d2e-1111-2222-3333-444455556666", "entr')
    environment.collect()
    assert starts() == 3 and json.loads(this_boot_file.read_text())["entries"]   # rewritten whole

    install("9.8.8")   # an upgrade replaces the program
    assert environment.collect()["fabric.libfabric_version"] == "9.8.8" and starts() == 4
    environment.collect()
    assert starts() == 4


@pytest.mark.timeout(60)
def test_a_changed_environment_or_library_path_reads_again(fake_fi_info, tmp_path, monkeypatch):
    _, starts = fake_fi_info
    environment.collect()
    monkeypatch.setenv("FI_PROVIDER", "tcp")   # a variable the tool may read
    environment.collect()
    assert starts() == 2
    libs = tmp_path / "libs"
    libs.mkdir()
    monkeypatch.setenv("LD_LIBRARY_PATH", str(libs))
    environment.collect()
    environment.collect()
    assert starts() == 3
    (libs / "libfabric.so.1").write_text("a library installed beside the old one")
    environment.collect()
    assert starts() == 4


@pytest.mark.timeout(60)
def test_a_failing_command_is_not_kept(fake_fi_info):
    install, starts = fake_fi_info
    install(status=1)
    for _ in range(2):
        assert "fabric.libfabric_version_error" in environment.collect()
    assert starts() == 2


@pytest.mark.timeout(60)
def test_a_cache_folder_that_cannot_be_written_costs_only_time(fake_fi_info, tmp_path, monkeypatch):
    _, starts = fake_fi_info
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))
    for _ in range(2):
        assert environment.collect()["fabric.libfabric_version"] == "9.8.7"
    assert starts() == 2


def test_no_cache_without_a_boot_id(tmp_path, monkeypatch):
    monkeypatch.setattr(command_cache, "BOOT_ID", tmp_path / "missing")
    assert command_cache.CommandCache.for_this_boot(tmp_path) is None


def test_fixture_trees_never_use_the_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    environment.collect(root=Path(__file__).resolve().parent / "fixtures" / "environment" / "ib_qdr")
    assert not (tmp_path / "cache").exists()
