"""clusterbench behind a real Lmod (Debian's lmod package): the module file
made from packaging/modules/ loads the MPI module cbk was built against,
`clusterbench --version` and a two-rank kernel run from the module alone
(nothing of the test's virtual environment on PATH), and the run's stored
environment names the loaded modules and their files."""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from conftest import store_rows

LMOD_INIT = Path("/usr/share/lmod/lmod/init/bash")
REPO = Path(__file__).resolve().parent.parent
SYSTEM_PATH = "/usr/local/bin:/usr/bin:/bin"


@pytest.fixture
def module_tree(cbk_bin, mpiexec, tmp_path) -> Path:
    """modules/mpich/<v>.lua (the test MPI's programs only) and
    modules/clusterbench/<v>.lua made by make-modulefile.sh."""
    if not LMOD_INIT.exists():
        pytest.fail(f"no {LMOD_INIT}: install Debian's lmod (scripts/apt-packages-test.txt)")
    venv = Path(cbk_bin).parent.parent
    mpi_bin = tmp_path / "mpich" / "bin"
    mpi_bin.mkdir(parents=True)
    for exe in ("mpiexec", "mpiexec.hydra", "hydra_pmi_proxy", "mpicc"):
        if (Path(mpiexec).parent / exe).exists():
            (mpi_bin / exe).symlink_to(Path(mpiexec).parent / exe)
    modules = tmp_path / "modules"
    (modules / "mpich").mkdir(parents=True)
    (modules / "mpich" / "test.lua").write_text(f'prepend_path("PATH", "{mpi_bin}")\n')
    subprocess.run(["bash", str(REPO / "packaging/modules/make-modulefile.sh"), str(tmp_path / "prefix"), str(venv),
                    "mpich/test", str(modules / "clusterbench" / "0.1.0.lua")], check=True, capture_output=True)
    return modules


def in_lmod(script: str, modules: Path, tmp_path: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("CLUSTERBENCH_", "LMOD", "MODULE", "LOADEDMODULES", "_LMFILES_", "__LMOD", "PYTHON"))}
    env.update(PATH=SYSTEM_PATH, CLUSTERBENCH_DB=f"sqlite:///{tmp_path / 'lmod.db'}", COLUMNS="200")
    return subprocess.run(["bash", "--noprofile", "--norc", "-c",
                           f"set -e; source {LMOD_INIT}; module use {modules}; {script}"],
                          capture_output=True, text=True, env=env, timeout=240, cwd=tmp_path)


@pytest.mark.timeout(300)
def test_module_load_gives_clusterbench_with_its_mpi_and_runs_record_the_modules(module_tree, tmp_path):
    p = in_lmod("module load clusterbench/0.1.0; module -t list 2>&1; clusterbench --version", module_tree, tmp_path)
    assert p.returncode == 0, p.stdout + p.stderr
    lines = p.stdout.splitlines()
    assert "mpich/test" in p.stdout and "clusterbench/0.1.0" in p.stdout  # depends_on loaded the MPI

    def line(start: str) -> str:   # --version's lines by what they say, not by place (a GPU line came after)
        return next(x for x in lines if x.startswith(start))

    assert f"cbk 0.1.0 ({tmp_path / 'prefix' / 'bin' / 'cbk'})" in line("clusterbench 0.1.0, cbk")
    built_with = line("MPI: built with ").split(" with ")[1].split(" (")[0]
    assert line("mpiexec: ") == f"mpiexec: {tmp_path / 'mpich' / 'bin' / 'mpiexec'} ({built_with})"
    assert "warning" not in p.stderr

    p = in_lmod("module load clusterbench; clusterbench run null --np 2 --seconds=0.01 --repeat 2 --quiet",
                module_tree, tmp_path)
    assert p.returncode == 0, p.stdout + p.stderr
    url = f"sqlite:///{tmp_path / 'lmod.db'}"
    (env,) = [json.loads(d) if isinstance(d, str) else d for (d,) in store_rows(url, "select data from environments")]
    assert env["modules.system"].startswith("Lmod ")
    assert env["modules.loaded"] == "mpich/test clusterbench/0.1.0"
    assert env["modules.files"] == f"{module_tree}/mpich/test.lua {module_tree}/clusterbench/0.1.0.lua"
    ((build,),) = store_rows(url, "select build from steps")
    assert json.loads(build)["ranks"] == 2

    # unloading takes it away again: the module file is the only way in
    p = in_lmod("module load clusterbench; module unload clusterbench; command -v clusterbench || echo gone",
                module_tree, tmp_path)
    assert p.stdout.strip().splitlines()[-1] == "gone"
