#!/usr/bin/env bash
# Builds a cbk whose GPU kernels run on the test runtime (kernels/gpu/
# runtime_test.c: host memory stands in for a GPU), in .venv/gpu-test-build/cbk,
# against .venv's MPICH, so the tests of a machine without a GPU run the GPU
# kernels' own code end to end: sizes, checks, records, refusals, failures,
# and the mpi kernel's --buffer=device staging (tests/test_gpu_test_runtime.py).
# It measures no GPU, and says so. scripts/setup.sh --test builds it.
#   scripts/build-gpu-test-cbk.sh     (needs .venv with the test extras: cmake, ninja)
set -euo pipefail
cd "$(dirname "$0")/.."
start_s=$(date +%s)
build=.venv/gpu-test-build
.venv/bin/cmake -S . -B $build -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_MAKE_PROGRAM="$PWD/.venv/bin/ninja" \
  -DCMAKE_C_COMPILER="$PWD/.venv/bin/mpicc" -DMPI_C_COMPILER="$PWD/.venv/bin/mpicc" -DCBK_REQUIRE_MPI=ON \
  -DCBK_WITH_CUDA=OFF -DCBK_GPU_TEST_RUNTIME=ON >$build.log 2>&1 || { tail -20 $build.log >&2; exit 1; }
.venv/bin/cmake --build $build >>$build.log 2>&1 || { grep -E "error|warning" $build.log | head -20 >&2; exit 1; }
echo "setup: GPU test-runtime cbk in $build/cbk, $(( $(date +%s) - start_s )) s"
