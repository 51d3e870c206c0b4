"""The one registry helper behind every extension point: a name registered
twice stops the import, an unknown name is one line of bad input listing
the choices, and a new plug-in is one registry line (a toy format here)."""
from __future__ import annotations

import sys
import types

import pytest

from clusterbench.errors import BadInput
from clusterbench.extensions.registry import DuplicateName, Registry


def test_registering_a_name_twice_fails():
    with pytest.raises(DuplicateName, match="launcher 'mpiexec' is registered twice"):
        Registry("launcher", [("mpiexec", "a.mpiexec"), ("local", "a.local"), ("mpiexec", "b.mpiexec")])
    formats = Registry("format", [("json", "x.json")], extra_choices=("auto",))
    with pytest.raises(DuplicateName):
        formats.add("auto", "x.auto")   # a name the caller already takes for itself


@pytest.mark.parametrize("registry, name, message", [
    ("clusterbench.launch:LAUNCHERS", "slurm", "no such launcher: 'slurm' (launchers: local, mpiexec, srun, qrsh)"),
    ("clusterbench.report:FORMATS", "xlsx", "no such format: 'xlsx' (formats: json, csv, md, html)"),
    ("clusterbench.importers:IMPORTERS", "ior2", "no such format: 'ior2' (formats: auto, ior-json, fio, iperf3, "
                                                "iperf2, dd, netperf, ior-csv, ior, mdtest, osu, imb, himeno, "
                                                "stream)"),
    ("clusterbench.environment:COLLECTORS", "bios", "no such environment collector: 'bios' (environment collectors: "
                                                   "system, cpu,"),
    ("clusterbench.commands.compare:RENDERERS", "xml", "no such format: 'xml' (formats: table, json, csv, md)"),
    ("clusterbench.cli:COMMANDS", "lsit", "no such command: 'lsit' (commands: kernels, run, ior, mdtest, import, list,"),
])
def test_an_unknown_name_is_bad_input_listing_the_choices(registry, name, message):
    import importlib

    module, attribute = registry.split(":")
    with pytest.raises(BadInput) as e:
        getattr(importlib.import_module(module), attribute).load(name)
    assert e.value.message.startswith(message) and "\n" not in e.value.message


def test_an_unknown_report_format_lists_the_choices_on_the_command_line(cli, tmp_path):
    r = cli("export", "nothing", "--format", "xlsx")
    assert r.status == 2 and "xlsx" in r.stderr and "json" in r.stderr and "html" in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


def test_a_new_format_is_one_registry_line(monkeypatch):
    from clusterbench import report

    toy = types.ModuleType("toy_format")
    toy.render = lambda rep: f"{len(rep.runs)} run(s)\n"
    monkeypatch.setitem(sys.modules, "toy_format", toy)
    formats = Registry("format", report.FORMATS.entries())
    formats.add("toy", "toy_format")
    monkeypatch.setattr(report, "FORMATS", formats)
    assert "toy" in report.formats() and report.render("toy", []) == "0 run(s)\n"
