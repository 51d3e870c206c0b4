"""Kernels describe themselves (#34 item 4): cbk --describe carries each
kernel's family, its detail record types and its parameters' roles, and
Python groups, matches and keeps records by them, never by kernel name."""
from __future__ import annotations

import json
import subprocess
import sys
from types import SimpleNamespace

import pytest

from clusterbench import catalogue


def describe(cbk_bin) -> dict:
    return json.loads(subprocess.run([cbk_bin, "--describe"], capture_output=True, text=True, check=True).stdout)


def test_every_kernel_declares_a_known_family(cbk_bin):
    for k in describe(cbk_bin)["kernels"]:
        assert k["family"] in catalogue.FAMILIES, k["name"]
        assert isinstance(k["detail_records"], list), k["name"]


def test_parameter_roles_say_where_a_kernel_ran(cbk_bin):
    kernels = {k["name"]: k for k in describe(cbk_bin)["kernels"]}
    where = {k: {p["name"] for p in d["parameters"] if p["role"] == "where"} for k, d in kernels.items()}
    assert where["tcp"] == {"server", "port", "bind"}
    assert where["seqio"] == {"dir"}
    # stream's --bind is thread affinity, part of what is measured, not a peer
    assert "bind" in {p["name"] for p in kernels["stream"]["parameters"]} and where["stream"] == set()
    assert kernels["tcp"]["detail_records"] == ["tcp_pairs"]
    assert kernels["seqio"]["family"] == "io" and kernels["tcp"]["family"] == "network"


TOY = {"name": "toyfs", "summary": "a toy file-system kernel", "parallel": True, "family": "io",
       "detail_records": ["toyfs_ranks"],
       "parameters": [
           {"name": "peer", "type": "string", "default": "any", "unit": None, "choices": None, "min": None,
            "max": None, "help": "where the toy talks to", "role": "where"},
           {"name": "depth", "type": "int", "default": "1", "unit": None, "choices": None, "min": None,
            "max": None, "help": "what the toy measures", "role": None}]}


@pytest.fixture
def toy_cbk(cbk_bin, tmp_path, monkeypatch):
    """A cbk whose --describe lists one more kernel than the real one: what a
    new kernel's C file adds, with no Python change."""
    fake = tmp_path / "cbk"
    fake.write_text(f"#!{sys.executable}\nimport json, subprocess\n"
                    f"d = json.loads(subprocess.run([{cbk_bin!r}, '--describe'], capture_output=True, text=True).stdout)\n"
                    f"d['kernels'].append({TOY!r})\nprint(json.dumps(d))\n")
    fake.chmod(0o755)
    monkeypatch.setenv("CLUSTERBENCH_CBK", str(fake))
    catalogue.load.cache_clear()
    yield str(fake)
    catalogue.load.cache_clear()


def test_a_new_kernels_description_places_it_in_its_report_group(toy_cbk):
    from clusterbench.report.summary import kind

    assert catalogue.load().kernels["toyfs"].family == "io"
    assert kind(SimpleNamespace(kernel="toyfs", unit="MiB/s")) == "io"
    assert kind(SimpleNamespace(kernel="tcp", unit="MiB/s")) == "network"
    assert kind(SimpleNamespace(kernel="mpi", unit="MiB/s")) == "network"
    assert kind(SimpleNamespace(kernel="mpi", unit="us")) == "compute"
    assert kind(SimpleNamespace(kernel="osu", unit="MiB/s")) == "compute"  # an imported tool's: no family


def test_a_new_kernels_where_parameters_are_ignored_when_matching(toy_cbk):
    from clusterbench.analysis.comparison import kernel_params

    ignored, defaults = kernel_params("toyfs")
    assert "peer" in ignored and "depth" not in ignored
    # tcp's peer address is ignored; stream's thread binding is not
    assert {"server", "port", "bind"} <= kernel_params("tcp")[0]
    assert "bind" not in kernel_params("stream")[0]


def test_a_new_kernels_detail_records_are_kept(toy_cbk):
    from clusterbench.run.step_engine import detail_records

    assert detail_records("toyfs") == ("toyfs_ranks",)
    assert detail_records("tcp") == ("tcp_pairs",)
    assert detail_records("nosuchkernel") == ()
