#!/usr/bin/env bash
# Gathers what scripts/gpu-check.sh needs on a lent GPU machine that has no
# internet (docs/gpu.md, "Checking on a GPU machine"): the reference tools'
# sources (.gpu-sources/, from git mirrors of NVIDIA/cuda-samples,
# UoB-HPC/BabelStream, NVIDIA/nvbandwidth and boostorg/program_options, the
# search tool's fetch of each: bench/gpu_vs_reference prepare) and the cp312 wheels
# of clusterbench's dependencies that machine lacks (.gpu-wheels/). Both are
# ignored by git; carry them: run(command="bash scripts/gpu-check.sh",
# carry=[".gpu-sources", ".gpu-wheels"]).
#   scripts/gpu-carry.sh [OPTIONS OF bench/gpu_vs_reference prepare]
set -euo pipefail
cd "$(dirname "$0")/.."
.venv/bin/python bench/gpu_vs_reference prepare "$@"
# what /work/shared/gpu-facts.md lists as missing there, with their own dependencies
.venv/bin/pip download -q -d .gpu-wheels --only-binary=:all: --python-version 3.12 --implementation cp \
  --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 --platform manylinux_2_28_x86_64 \
  "sqlalchemy>=2.0" "alembic>=1.13" "jsonschema>=4.18" "platformdirs>=4.0"
du -sh .gpu-sources .gpu-wheels
