#!/usr/bin/env bash
# Builds a cbk with the GPU kernels (kernels/gpu/) in .venv/cuda-build/cbk,
# with the CUDA compiler and runtime from PyPI (nvidia-cuda-nvcc,
# nvidia-cuda-runtime, about 350 MB into .venv), so a machine with no GPU
# and no CUDA toolkit still compiles them: CI does on every run
# (scripts/setup.sh --test). The default cbk in .venv/bin stays a build
# without CUDA; this one is for the tests of the GPU kernels
# (tests/test_gpu_kernels.py) and for CLUSTERBENCH_CBK. On a GPU machine with
# its own toolkit, CUDACXX=/usr/local/cuda/bin/nvcc skips the wheels.
#   scripts/build-cuda-cbk.sh     (needs .venv with the test extras: cmake, ninja)
set -euo pipefail
cd "$(dirname "$0")/.."
start_s=$(date +%s)
if [ -z "${CUDACXX:-}" ]; then
  # installed already (a rebuild): no pip run, which costs seconds even when satisfied
  nvcc=$(echo .venv/lib/python3*/site-packages/nvidia/cu13/bin/nvcc)
  install=(.venv/bin/pip install -q)   # uv where setup.sh put it (faster)
  [ -x .venv/bin/uv ] && install=(.venv/bin/uv pip install -q --python .venv/bin/python)
  [ -x "$nvcc" ] || "${install[@]}" "nvidia-cuda-nvcc>=13.0" "nvidia-cuda-runtime>=13.0"
  root=$(.venv/bin/python -c 'import nvidia, os; print(os.path.join(list(nvidia.__path__)[0], "cu13"))')
  export CUDACXX="$root/bin/nvcc"
fi
build=.venv/cuda-build
.venv/bin/cmake -S . -B $build -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_MAKE_PROGRAM="$PWD/.venv/bin/ninja" -DCMAKE_CUDA_COMPILER="$CUDACXX" \
  -DCBK_REQUIRE_GPU=ON >$build.log 2>&1 || { tail -20 $build.log >&2; exit 1; }
.venv/bin/cmake --build $build >>$build.log 2>&1 || { grep -E "error|warning" $build.log | head -20 >&2; exit 1; }
echo "setup: CUDA cbk in $build/cbk ($(grep -o 'CUDA built in.*' $build.log | head -1)), $(( $(date +%s) - start_s )) s"
