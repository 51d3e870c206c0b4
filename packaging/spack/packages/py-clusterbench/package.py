# Spack package for clusterbench (docs/install.md, "Spack").
# Checked with `spack audit packages` and `spack spec` of Spack 0.23.0.dev0;
# the package API used (PythonPackage, config_settings) is that of Spack 0.20 on.
# The repository is Package API v1 (packages/py-clusterbench/), which Spack
# 1.x still reads; only where PythonPackage comes from differs.

import os

try:  # Spack 1.0 on: the build systems live in the builtin package repository
    from spack_repo.builtin.build_systems.python import PythonPackage
except ImportError:  # Spack 0.x: spack.package exports them
    pass

from spack.package import *


class PyClusterbench(PythonPackage):
    """Performance evaluation of HPC clusters: disks, file systems, networks,
    MPI and compute, with every result stored beside a description of the
    machine it ran on. The kernel runner cbk is built against the MPI of the
    spec, so `module load py-clusterbench` brings its own MPI along."""

    homepage = "https://github.com/clusterbench/clusterbench"
    # No public release yet: point CLUSTERBENCH_GIT at a checkout or a clone
    # of the project (file:///path/to/clusterbench), or use `spack develop`.
    git = os.environ.get("CLUSTERBENCH_GIT", "https://github.com/clusterbench/clusterbench.git")

    license("BSD-3-Clause")

    version("main", branch="main")

    variant("liburing", default=True, description="randio's io_uring engine (Linux 5.1 or newer)")
    variant("libaio", default=True, description="randio's libaio engine")

    # cbk: C11, CMake through scikit-build-core, the spec's MPI
    depends_on("c", type="build")
    depends_on("py-scikit-build-core@0.10:", type="build")
    depends_on("cmake@3.18:", type="build")
    depends_on("ninja", type="build")
    depends_on("mpi")
    depends_on("liburing", when="+liburing")
    depends_on("libaio", when="+libaio")

    # the orchestrator (pyproject.toml's lower bounds)
    depends_on("python@3.11:", type=("build", "run"))
    depends_on("py-click@8.1:", type=("build", "run"))
    depends_on("py-rich@13.7:", type=("build", "run"))
    depends_on("py-sqlalchemy@2.0:", type=("build", "run"))
    depends_on("py-alembic@1.13:", type=("build", "run"))
    depends_on("py-platformdirs@4.0:", type=("build", "run"))
    depends_on("py-numpy@1.24:", type=("build", "run"))
    depends_on("py-matplotlib@3.7:", type=("build", "run"))
    depends_on("py-jsonschema@4.18:", type=("build", "run"))
    depends_on("py-psutil@5.9:", type=("build", "run"))

    def config_settings(self, spec, prefix):
        # the spec's MPI, never a quiet build without it; the variants decide
        # the engines even when the build host has the other libraries
        return {
            "cmake.define.CBK_REQUIRE_MPI": "ON",
            "cmake.define.MPI_C_COMPILER": spec["mpi"].mpicc,
            "cmake.define.CBK_WITH_LIBURING": "ON" if spec.satisfies("+liburing") else "OFF",
            "cmake.define.CBK_WITH_LIBAIO": "ON" if spec.satisfies("+libaio") else "OFF",
        }

    def setup_run_environment(self, env):
        # the Python side runs cbk from the installed scripts directory
        env.set("CLUSTERBENCH_CBK", join_path(self.prefix.bin, "cbk"))

    @run_after("install")
    @on_package_attributes(run_tests=True)
    def check_cbk_has_mpi(self):
        describe = Executable(join_path(self.prefix.bin, "cbk"))("--describe", output=str)
        if '"mpi":true' not in describe.replace(" ", ""):
            raise InstallError("cbk was built without MPI")
