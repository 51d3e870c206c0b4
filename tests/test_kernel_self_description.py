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
        # a kernel that names its phases in no words has {}: its phases print as named
        assert isinstance(k["phase_words"], dict), k["name"]
    assert describe(cbk_bin)["kernels"][0]["phase_words"] == {}


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
       "detail_records": ["toyfs_ranks"], "phase_words": {"mkdir_rate": "directories made"},
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


def test_a_build_without_a_kernel_still_describes_its_family(cbk_bin):
    """cbk's left-out kernels carry their family, so what Python derives from
    a family (the GPU steps, the GPU analysis) holds on a build without them."""
    d = describe(cbk_bin)
    if not d["left_out"]:
        pytest.skip("this cbk left nothing out (built with MPI and CUDA)")
    for name, entry in d["left_out"].items():
        assert entry["family"] in catalogue.FAMILIES and entry["why"], name
    cat = catalogue.load(cbk_bin)
    for name in d["left_out"]:
        assert cat.family(name) == d["left_out"][name]["family"] and name not in cat.kernels


def test_the_gpu_kernels_are_known_by_their_family_not_by_name(cbk_bin, cuda_cbk):
    """Both builds agree on which kernels are the GPU family's: the CUDA
    build's kernels and the plain build's left-out ones."""
    plain, cuda = catalogue.load(cbk_bin), catalogue.load(cuda_cbk)
    assert cuda.of_family(catalogue.GPU) and set(cuda.of_family(catalogue.GPU)) == set(
        plain.left_out_of_family(catalogue.GPU))
    assert plain.of_family(catalogue.GPU) == ()


def _literal_strings(path) -> list[tuple[int, str]]:
    """The string constants of a module, docstrings and bare string statements left out."""
    import ast

    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    prose = {id(node.value) for node in ast.walk(tree)
             if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)}
    return [(node.lineno, node.value) for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in prose]


def test_no_python_module_names_a_gpu_kernel(cbk_bin, tmp_path):
    """Python knows a GPU kernel by its family in cbk --describe, never by
    name (#34): no string in src/clusterbench (docstrings and comments aside)
    holds one. The scan itself is checked on a module that does."""
    from conftest import REPO

    names = set(catalogue.load(cbk_bin).left_out_of_family(catalogue.GPU)) or {"gpucopy", "gpumem"}
    planted = tmp_path / "planted.py"
    planted.write_text('"""gpumem in a docstring is prose."""\n# gpucopy in a comment too\nKERNELS = ("gpumem",)\n')
    assert [text for _, text in _literal_strings(planted) if any(n in text for n in names)] == ["gpumem"]
    found = [f"{path.relative_to(REPO)}:{line}: {text!r}"
             for path in sorted((REPO / "src" / "clusterbench").rglob("*.py"))
             for line, text in _literal_strings(path) if any(n in text for n in names)]
    assert found == []


def test_a_cbk_that_gave_only_the_reason_for_a_left_out_kernel_still_loads(cbk_bin, tmp_path):
    """A cbk built before left-out kernels had a family gave {name: why}:
    its catalogue loads, names the reason, and knows no family for them."""
    fake = tmp_path / "cbk"
    fake.write_text(f"#!{sys.executable}\nimport json, subprocess\n"
                    f"d = json.loads(subprocess.run([{cbk_bin!r}, '--describe'], capture_output=True, text=True).stdout)\n"
                    "d['left_out'] = {'gpuold': 'built without CUDA'}\nprint(json.dumps(d))\n")
    fake.chmod(0o755)
    cat = catalogue.load(str(fake))
    assert cat.left_out == {"gpuold": "built without CUDA"} and cat.family("gpuold") is None
    assert cat.left_out_of_family(catalogue.GPU) == {}
    with pytest.raises(catalogue.BadInput, match="gpuold is not in this cbk .*: built without CUDA"):
        cat.kernel("gpuold")


def test_a_new_kernels_phases_print_in_its_own_words_and_are_stored_as_it_named_them(toy_cbk):
    from clusterbench.catalogue import step_phase_words
    from clusterbench.results.sample import Sample, in_words

    assert catalogue.load().kernels["toyfs"].phase_words == {"mkdir_rate": "directories made"}
    assert step_phase_words("toyfs", None) == {"mkdir_rate": "directories made"}
    # a stored run's record names them itself: a cbk without the kernel still prints them
    assert step_phase_words("gone", {"phase_words": {"x": "the x"}}) == {"x": "the x"}
    assert step_phase_words("null", None) == {} and step_phase_words("nosuchkernel", None) == {}
    made, other = (Sample.from_record({"phase": p, "mode": "n/a", "rate": 1.0, "rate_unit": "op/s"})
                   for p in ("mkdir_rate", "stat_rate"))
    worded, plain = in_words([made, other], step_phase_words("toyfs", None))
    assert (worded.label, plain.label) == ("directories made", "stat rate")
    # printing is all the words change: the same measurement, the same phase
    assert worded.key() == made.key() and hash(worded.key()) == hash(made.key()) and worded.phase == "mkdir_rate"
