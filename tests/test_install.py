"""A release a site can install (docs/install.md): `python -m build` makes
the sdist; pip builds a wheel from it in a clean virtual environment,
compiling cbk against the mpicc on PATH, and the installed clusterbench
runs a kernel under MPI. CLUSTERBENCH_REQUIRE_MPI=1 turns a build without
MPI into an error of one line.

Lean on purpose: the cache of the set-up's installer serves the
dependencies (scripts/setup.sh fetched them just before), and the sdist is
built once per session.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest

pytestmark = pytest.mark.long_module   # scheduled first (conftest)

REPO = Path(__file__).resolve().parent.parent
REQUIRE_MPI_LINE = ("clusterbench: no MPI found, and CLUSTERBENCH_REQUIRE_MPI=1 (CBK_REQUIRE_MPI) requires it: "
                    "load your site's MPI module or set MPICC=/path/to/mpicc")
# Directories a clean machine has compilers and cmake in, but no MPI.
SYSTEM_PATH = "/usr/local/bin:/usr/bin:/bin"


def pip_env(path: str, **extra: str) -> dict:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("CLUSTERBENCH_", "VIRTUAL_ENV", "PYTHON", "MPICC"))}
    return dict(env, PATH=path, PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_NO_INPUT="1", **extra)


@pytest.fixture(scope="module")
def sdist(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    # --no-isolation: the sdist step only copies files, and the test extras hold its backend;
    # the wheel below is built in pip's isolated environment, as a site's is
    p = subprocess.run([sys.executable, "-m", "build", "--sdist", "--no-isolation", "--outdir", str(out), str(REPO)],
                       capture_output=True, text=True, timeout=300, env=pip_env(os.environ["PATH"]))
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
    (tarball,) = out.glob("clusterbench-*.tar.gz")
    return tarball


@pytest.fixture(scope="module")
def mpicc() -> str:
    from conftest import find_cbk

    cbk = find_cbk()
    desc = json.loads(subprocess.run([cbk, "--describe"], capture_output=True, text=True, check=True).stdout)
    if not desc["mpi"] or not desc.get("mpi_compiler"):
        pytest.skip("the cbk under test has no MPI, so there is no mpicc to build against")
    return desc["mpi_compiler"]


def test_sdist_holds_the_sources_cbk_is_built_from(sdist):
    import tarfile

    with tarfile.open(sdist) as t:
        names = {n.split("/", 1)[1] for n in t.getnames() if "/" in n}
    assert {"CMakeLists.txt", "pyproject.toml", "kernels/main.c", "kernels/core/mpi_build.c",
            "src/clusterbench/cli.py", "src/clusterbench/suites/quick.toml", "kernels/gpu/gpucopy.c",
            "kernels/gpu/cuda_device_code.cu", "src/clusterbench/suites/gpu.toml",
            # a kernel with parts is a folder of its own (kernels/<family>/<kernel>/), headers and all
            "kernels/mpi/pario/pario.c", "kernels/mpi/pario/pario_layout.h", "kernels/mpi/pario/pario_stonewall.c",
            "kernels/io/randio/randio.c", "kernels/io/randio/randio_engine.h",
            "kernels/compute/himeno/himeno.c", "kernels/compute/himeno/himeno_stencil.c",
            "kernels/compute/himeno/himeno.h", "kernels/core/threads.c"} <= names
    assert not [n for n in names if n.startswith((".venv/", "build/")) or n.endswith((".o", ".db"))]


@pytest.mark.timeout(900)
def test_sdist_installs_in_a_clean_venv_against_the_mpicc_on_path_and_runs_a_kernel(sdist, mpicc, tmp_path):
    env_dir = tmp_path / "venv"
    # a venv without pip of its own, driven by the suite's pip (--python): installing pip into it
    # costs 6 s and tests pip, not clusterbench
    venv.EnvBuilder(with_pip=False).create(env_dir)
    bindir = env_dir / "bin"
    pip = [sys.executable, "-m", "pip", "--python", str(bindir / "python")]
    # the site's MPI "module": its mpicc and mpiexec first on PATH, nothing else of the test's venv
    path = f"{bindir}{os.pathsep}{Path(mpicc).parent}{os.pathsep}{SYSTEM_PATH}"
    env = pip_env(path, CLUSTERBENCH_REQUIRE_MPI="1")
    wheels = tmp_path / "wheels"
    p = subprocess.run([*pip, "wheel", "-q", "--no-deps", "-w", str(wheels),
                        str(sdist)], capture_output=True, text=True, timeout=600, env=env)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    (wheel,) = wheels.glob("clusterbench-*.whl")
    assert "-py3-none-linux_" in wheel.name  # one machine type, any Python 3: cbk is an executable
    # the wheel and its dependencies go in with the suite's uv where set-up installed one (1-2 s
    # against pip's 8 s and 7 CPU-s on 2 cores: unpacking SciPy and Matplotlib tests nothing here);
    # --no-compile: byte-compiling them is most of a pip install's time
    uv = Path(sys.executable).with_name("uv")
    installer = ([str(uv), "pip", "install", "-q", "--python", str(bindir / "python")] if uv.exists()
                 else [*pip, "install", "-q", "--no-compile"])
    p = subprocess.run([*installer, str(wheel)], capture_output=True, text=True, timeout=600, env=env)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]

    desc = json.loads(subprocess.run([str(bindir / "cbk"), "--describe"], capture_output=True, text=True,
                                     check=True, env=env).stdout)
    assert desc["mpi"] is True and desc["mpi_compiler"] == mpicc
    version = subprocess.run([str(bindir / "clusterbench"), "--version"], capture_output=True, text=True,
                             env=env, timeout=60)
    assert version.returncode == 0, version.stderr
    assert f"cbk 0.1.0 ({bindir / 'cbk'})" in version.stdout
    assert f"MPI: built with {desc['mpi_built_with']} ({mpicc})" in version.stdout
    assert "warning" not in version.stderr

    db = f"sqlite:///{tmp_path / 'site.db'}"
    run = subprocess.run([str(bindir / "clusterbench"), "run", "null", "--np", "2", "--seconds=0.01",
                          "--repeat", "2", "--db", db], capture_output=True, text=True, env=env, timeout=300,
                         cwd=tmp_path)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    exported = subprocess.run([str(bindir / "clusterbench"), "export", "1", "--format", "json", "--db", db],
                              capture_output=True, text=True, env=env, timeout=120)
    assert exported.returncode == 0, exported.stderr
    runs = json.loads(exported.stdout)
    assert "MPICH" in exported.stdout or "Open MPI" in exported.stdout, "run record names no MPI library"
    assert '"ranks": 2' in json.dumps(runs)


@pytest.mark.timeout(600)
def test_require_mpi_fails_a_build_without_mpi_with_one_line(sdist, tmp_path):
    if shutil.which("mpicc", path=SYSTEM_PATH):
        pytest.skip(f"this machine has a system mpicc ({shutil.which('mpicc', path=SYSTEM_PATH)})")
    p = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-w", str(tmp_path / "wheels"),
                        str(sdist)], capture_output=True, text=True, timeout=600,
                       env=pip_env(SYSTEM_PATH, CLUSTERBENCH_REQUIRE_MPI="1"))
    out = p.stdout + p.stderr
    assert p.returncode != 0
    assert REQUIRE_MPI_LINE in [line.strip() for line in out.splitlines()], out[-3000:]
    assert not list(tmp_path.rglob("*.whl"))


def test_the_spack_package_depends_on_every_runtime_dependency_with_pyprojects_bounds():
    """packaging/spack's py-clusterbench states the Python dependencies itself
    (docs/install.md, "Spack": "pyproject.toml's lower bounds"); one it misses
    installs a clusterbench that fails on its first import of it."""
    import re
    import tomllib

    declared = {}
    for requirement in tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["dependencies"]:
        name, bound = re.fullmatch(r"([A-Za-z0-9_.-]+)(?:\[[^]]*\])?\s*>=\s*([0-9.]+)", requirement.split(";")[0].strip()).groups()
        declared["py-" + name.lower().replace("_", "-")] = bound
    recipe = (REPO / "packaging" / "spack" / "packages" / "py-clusterbench" / "package.py").read_text()
    spack = dict(re.findall(r'depends_on\("(py-[a-z0-9-]+)@([0-9.]+):"[^)]*type=\([^)]*"run"', recipe))
    assert spack == declared, (f"missing from the Spack package: {sorted(declared.keys() - spack.keys())}; "
                               f"bounds that differ: {[(n, spack[n], declared[n]) for n in spack.keys() & declared.keys() if spack[n] != declared[n]]}; "
                               f"not in pyproject.toml: {sorted(spack.keys() - declared.keys())}")


def cmake_and_generator() -> tuple[str, list[str]]:
    """The cmake on PATH (the test is skipped without one) and Ninja as its
    generator where it is installed, named so a configure without PATH finds it."""
    cmake = shutil.which("cmake")
    if not cmake:
        pytest.skip("cmake not on PATH")
    ninja = shutil.which("ninja")
    return cmake, (["-G", "Ninja", f"-DCMAKE_MAKE_PROGRAM={ninja}"] if ninja else [])


@pytest.mark.timeout(120)
@pytest.mark.parametrize("named", ["MPICC", "MPI_C_COMPILER"])
def test_a_named_mpi_wrapper_that_gives_no_mpi_fails_the_build_in_one_line(named, tmp_path):
    """A wrong path in MPICC (or Spack's -DMPI_C_COMPILER) built a cbk without
    MPI and the install succeeded; under CLUSTERBENCH_REQUIRE_MPI=1 it failed
    telling the builder to set the MPICC they had set. Configuring is enough."""
    cmake, generator = cmake_and_generator()
    wrapper = str(tmp_path / "no-such-mpi" / "bin" / "mpicc")
    defines = [f"-DMPI_C_COMPILER={wrapper}"] if named == "MPI_C_COMPILER" else []
    # no CLUSTERBENCH_REQUIRE_MPI: a named wrapper is a request for MPI by itself
    env = pip_env(SYSTEM_PATH, **({"MPICC": wrapper} if named == "MPICC" else {}))
    p = subprocess.run([cmake, "-S", str(REPO), "-B", str(tmp_path / "build"), "-DCBK_WITH_CUDA=OFF", *generator,
                        *defines], capture_output=True, text=True, timeout=120, env=env)
    out = p.stdout + p.stderr
    assert p.returncode != 0, out[-3000:]
    line = (f"clusterbench: {named}={wrapper} gives no MPI (CMake's FindMPI could not build with it): "
            "name your MPI's mpicc wrapper, or unset it to take the first mpicc on PATH")
    assert line in [text.strip() for text in out.splitlines()], out[-3000:]


@pytest.mark.timeout(120)
def test_the_wrapper_mpicc_named_stays_the_builds_when_cmake_configures_again(mpicc, tmp_path):
    """CMake configures again by itself when a kernel file is added or
    CMakeLists.txt changes, without the builder's environment: MPICC was a
    plain variable, so the second configure lost it and cbk's --describe
    named the wrapper "" (mpi_compiler), as did clusterbench --version."""
    cmake, generator = cmake_and_generator()
    build = tmp_path / "build"
    first = subprocess.run([cmake, "-S", str(REPO), "-B", str(build), "-DCBK_WITH_CUDA=OFF", *generator],
                           capture_output=True, text=True, timeout=120, env=pip_env(SYSTEM_PATH, MPICC=mpicc))
    assert f"-- cbk: MPI built in ({mpicc})" in first.stdout.splitlines(), first.stdout[-3000:] + first.stderr[-3000:]
    again = subprocess.run([cmake, str(build)], capture_output=True, text=True, timeout=120, env=pip_env(SYSTEM_PATH))
    assert again.returncode == 0, again.stdout[-3000:] + again.stderr[-3000:]
    assert f"-- cbk: MPI built in ({mpicc})" in again.stdout.splitlines(), again.stdout[-3000:]


@pytest.mark.timeout(120)
def test_clusterbench_finds_its_cbk_when_run_by_a_python_outside_its_install(tmp_path):
    """`pip install --prefix=/apps/clusterbench` and a module that sets
    PYTHONPATH: the package runs under the system Python, whose folder holds
    no cbk, and `clusterbench --version` said "cbk, the kernel runner, is not
    installed: run scripts/setup.sh". Here the suite's own install stands in
    for the prefix: its site-packages on PYTHONPATH, run by the interpreter
    the virtual environment was made from, with no cbk on PATH."""
    import sysconfig
    from importlib import metadata

    if sys.prefix == sys.base_prefix:
        pytest.skip("the suite does not run from a virtual environment")
    recorded = [f for f in metadata.distribution("clusterbench").files or [] if f.name == "cbk"]
    if not recorded:
        pytest.skip("this clusterbench was not installed with its cbk (no cbk in its RECORD)")
    cbk = os.path.normpath(recorded[0].locate())
    base_python = os.path.realpath(sys.executable)
    assert not (Path(base_python).parent / "cbk").exists()
    env = pip_env(SYSTEM_PATH, PYTHONPATH=os.pathsep.join([str(REPO / "src"), sysconfig.get_paths()["purelib"]]))
    p = subprocess.run([base_python, "-m", "clusterbench", "--version"], capture_output=True, text=True, env=env,
                       cwd=tmp_path, timeout=60)
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines()[0] == f"clusterbench 0.1.0, cbk 0.1.0 ({cbk})", p.stdout


@pytest.mark.timeout(120)
def test_a_named_cuda_compiler_that_does_not_work_fails_the_build_in_one_line(tmp_path):
    """docs/install.md: nvcc on PATH, "or CUDACXX=/path/to/nvcc". A wrong
    CUDACXX left the GPU kernels out of an install that succeeded; under
    CLUSTERBENCH_REQUIRE_CUDA=1 the line said to set the CUDACXX that was set."""
    cmake, generator = cmake_and_generator()
    nvcc = str(tmp_path / "no-such-cuda" / "bin" / "nvcc")
    p = subprocess.run([cmake, "-S", str(REPO), "-B", str(tmp_path / "build"), "-DCBK_WITH_MPI=OFF", *generator],
                       capture_output=True, text=True, timeout=120, env=pip_env(SYSTEM_PATH, CUDACXX=nvcc))
    out = p.stdout + p.stderr
    assert p.returncode != 0, out[-3000:]
    line = (f"clusterbench: CUDACXX={nvcc} gives no CUDA compiler (CMake's check_language(CUDA) could not build "
            "with it): name a working nvcc, or unset it to take nvcc from PATH")
    assert line in [text.strip() for text in out.splitlines()], out[-3000:]
