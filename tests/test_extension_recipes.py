"""docs/design.md's recipes, tried: a new launcher and a new importer are a
module of their own plus one registry line, and the real command line then
runs and stores through them (#34). The registry line is added by a two-line
entry point, as a site's fork would add it to launch/__init__.py or
importers/__init__.py; nothing else of clusterbench is touched."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

from conftest import store_rows, run_bounded

TOY_LAUNCHER = '''
from clusterbench.launch.job import Job, Launcher


class Toy(Launcher):
    """Runs cbk on this host through env, marking the environment it ran in."""
    name = "toy"

    def command(self, job: Job) -> list[str]:
        return ["env", "TOY_LAUNCHED=1", *job.argv]


LAUNCHER = Toy()
'''

TOY_IMPORTER = '''
from clusterbench.importers import ImportedRun, ImportedStep, measurement


def detect(text: str) -> bool:
    return text.startswith("toybench ")


def parse(text: str) -> list[ImportedRun]:
    version, *rates = text.split()[1:]
    samples = [measurement("write", "buffered", float(r), "MiB/s", repetition=i, line=i + 1)
               for i, r in enumerate(rates)]
    step = ImportedStep("toy write", "seqio", {"file-size": "1m"}, samples=samples)
    return [ImportedRun("toybench", version, "text", "toybench", steps=[step])]
'''


def run_with(tmp_path, module: str, source: str, registry: str, line: str, *args: str, env: dict):
    (tmp_path / f"{module}.py").write_text(textwrap.dedent(source))
    entry = (f"import clusterbench.{registry} as r; r.{line}\n"
             "from clusterbench.cli import main; main()")
    return subprocess.run([sys.executable, "-c", entry, *args], capture_output=True, text=True, timeout=120,
                          env=dict(os.environ, PYTHONPATH=str(tmp_path), **env))


def test_a_new_launcher_is_its_module_and_one_registry_line(cbk_bin, store_url, tmp_path):
    env = {"CLUSTERBENCH_CBK": cbk_bin, "CLUSTERBENCH_DB": store_url}
    p = run_with(tmp_path, "toy_launcher", TOY_LAUNCHER, "launch",
                 'LAUNCHERS.add("toy", "toy_launcher:LAUNCHER", "a toy")',
                 "run", "null", "--launcher", "toy", "--seconds=0.001", "--repeat", "2", "--quiet", env=env)
    assert p.returncode == 0, p.stderr
    assert store_rows(store_url, "select launcher, status from steps") == [("toy", "ok")]
    assert store_rows(store_url, "select count(*) from samples")[0][0] >= 2
    # without the line, the name is bad input that lists the choices
    bare = run_bounded([sys.executable, "-m", "clusterbench", "run", "null", "--launcher", "toy"],
                       timeout=60, env=dict(os.environ, **env))
    assert bare.returncode == 2 and "no such launcher: 'toy'" in bare.stderr


def test_a_new_importer_is_its_module_and_one_registry_line(store_url, tmp_path):
    data = tmp_path / "toy.out"
    data.write_text("toybench 1.0 812.5 799.0 805.25\n")
    p = run_with(tmp_path, "toy_importer", TOY_IMPORTER, "importers",
                 'IMPORTERS.add("toy", "toy_importer", "toybench output")',
                 "import", str(data), env={"CLUSTERBENCH_DB": store_url})
    assert p.returncode == 0, p.stderr
    (source,) = store_rows(store_url, "select imported_from from runs")
    assert source[0].startswith("toybench 1.0 text")
    rates = sorted(json.loads(r)["rate"] if isinstance(r, str) else r["rate"]
                   for (r,) in store_rows(store_url, "select record from samples"))
    assert rates == [799.0, 805.25, 812.5]
