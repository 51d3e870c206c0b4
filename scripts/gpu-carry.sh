#!/usr/bin/env bash
# Gathers what scripts/gpu-check.sh needs on a lent GPU machine that has no
# internet (docs/gpu.md, "Checking on a GPU machine"): the reference tools'
# sources (.gpu-sources/, from git mirrors of NVIDIA/cuda-samples and
# UoB-HPC/BabelStream: bench/gpu_vs_reference prepare) and the cp312 wheels
# of clusterbench's dependencies that machine lacks (.gpu-wheels/). Both are
# ignored by git; carry them: run(command="bash scripts/gpu-check.sh",
# carry=[".gpu-sources", ".gpu-wheels"]).
#   scripts/gpu-carry.sh [CUDA_SAMPLES_GIT BABELSTREAM_GIT]
set -euo pipefail
cd "$(dirname "$0")/.."
.venv/bin/python bench/gpu_vs_reference prepare \
  --cuda-samples "${1:-/work/.mirror/NVIDIA+cuda-samples/repo}" --babelstream "${2:-/work/.mirror/UoB-HPC+BabelStream/repo}"
# what /work/shared/gpu-facts.md lists as missing there, with their own dependencies
.venv/bin/pip download -q -d .gpu-wheels --only-binary=:all: --python-version 3.12 --implementation cp \
  --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 --platform manylinux_2_28_x86_64 \
  "sqlalchemy>=2.0" "alembic>=1.13" "jsonschema>=4.18" "platformdirs>=4.0"
du -sh .gpu-sources .gpu-wheels
