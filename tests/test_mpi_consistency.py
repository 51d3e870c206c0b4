"""`clusterbench --version` names the MPI cbk was built with, the library it
loads now and the launcher it would be started with, and warns when a
site's loaded MPI module is another than the build's."""
from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from conftest import run_bounded

from clusterbench.environment.mpi_consistency import (MpiVersion, parse_built_with, parse_library_version, report, same)

COMMANDS = Path(__file__).resolve().parent / "fixtures" / "environment" / "commands"


def test_library_version_strings_of_the_common_mpis_are_parsed():
    assert parse_library_version("MPICH Version:      4.1.2") == MpiVersion("MPICH", "4.1.2")
    assert parse_library_version("Open MPI v4.1.5, package: Debian OpenMPI, ident: 4.1.5, repo rev: v4.1.5, "
                                 "Feb 23, 2023") == MpiVersion("Open MPI", "4.1.5")
    assert parse_library_version("Intel(R) MPI Library 2021.10 for Linux* OS") == MpiVersion("Intel MPI", "2021.10")
    assert parse_library_version("MVAPICH2 Version      :\t2.3.7") == MpiVersion("MVAPICH", "2.3.7")
    assert parse_library_version("Spectrum thing 1.0") is None
    assert parse_built_with("Open MPI 4.1.5") == MpiVersion("Open MPI", "4.1.5")
    assert parse_built_with("none") is None


def test_versions_match_as_far_as_both_go():
    assert same(MpiVersion("Intel MPI", "2021.10"), MpiVersion("Intel MPI", "2021.10.0"))
    assert not same(MpiVersion("MPICH", "4.1.2"), MpiVersion("MPICH", "4.2.0"))
    assert not same(MpiVersion("MPICH", "4.1.2"), MpiVersion("Open MPI", "4.1.2"))


def test_a_runtime_library_other_than_the_build_s_is_warned_about():
    lines, warnings = report("MPICH 4.1.2", "/opt/mpich/bin/mpicc",
                             "Open MPI v4.1.5, package: Debian OpenMPI", None)
    assert lines[0] == "MPI: built with MPICH 4.1.2 (/opt/mpich/bin/mpicc)"
    assert warnings == ["cbk was built with MPICH 4.1.2 but loads Open MPI 4.1.5 at run time: load the MPI "
                        "module it was built with, or reinstall clusterbench against this one "
                        "(clusterbench's installation guide)"]
    assert report(None, None, None, None) == (["MPI: not built in (cbk runs its single-process kernels only)"], [])


@pytest.mark.timeout(60)
def test_version_warns_when_the_mpiexec_cbk_would_use_is_another_mpi(cbk_bin, mpiexec, tmp_path):
    # cbk as a site sees it after `module swap mpich openmpi`: the launcher
    # beside it answers as Open MPI (its recorded --version output)
    (tmp_path / "cbk").symlink_to(cbk_bin)
    fake = tmp_path / "mpiexec"
    fake.write_text(f"#!/bin/sh\ncat '{COMMANDS / 'mpiexec-openmpi.txt'}'\n")
    fake.chmod(0o755)
    env = dict(os.environ, CLUSTERBENCH_CBK=str(tmp_path / "cbk"))
    p = run_bounded([sys.executable, "-m", "clusterbench", "--version"], timeout=60, env=env)
    assert p.returncode == 0, p.stderr
    assert f"mpiexec: {fake} (Open MPI 4.1.5)" in p.stdout
    built = next(ln for ln in p.stdout.splitlines() if ln.startswith("MPI: built with "))
    flavour_version = built.removeprefix("MPI: built with ").split(" (")[0]
    assert p.stderr.strip() == (f"warning: cbk was built with {flavour_version} but {fake} is Open MPI 4.1.5: "
                                "ranks started by another MPI's launcher do not meet; load the MPI module cbk "
                                "was built with (clusterbench's installation guide)")
    # the real pair (the test's cbk and the mpiexec of its MPI) draws no warning
    p = run_bounded([sys.executable, "-m", "clusterbench", "--version"],
                    timeout=60, env=dict(os.environ, CLUSTERBENCH_CBK=cbk_bin))
    assert p.returncode == 0 and p.stderr == "" and "MPI library at run time: " in p.stdout
