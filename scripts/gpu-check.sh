#!/usr/bin/env bash
# Everything that needs a GPU, in one call on a lent GPU machine (run from
# the repository root, with .gpu-sources/ and .gpu-wheels/ carried from
# scripts/gpu-carry.sh): installs clusterbench with the GPU kernels built by
# the machine's nvcc, runs the tests marked gpu, one default run of each GPU
# kernel, `clusterbench run` + `show`, and bench/gpu_vs_reference. Writes
# every figure and log under $OUT (default ./gpu-check-out); prints a summary.
# A step that fails is reported and the next one still runs; the exit status
# is the number of failed steps.
#   bash scripts/gpu-check.sh        (about 5 minutes on one H200)
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-$PWD/gpu-check-out}
mkdir -p "$out"
python=${PYTHON:-python3}
command -v nvcc >/dev/null || export PATH="/usr/local/cuda/bin:$PATH"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
failed=0
step() {  # step NAME COMMAND...: output to $out/NAME.txt, a line of summary
  local name=$1; shift
  local t0=$SECONDS
  if "$@" >"$out/$name.txt" 2>&1; then
    echo "ok     $name ($((SECONDS - t0)) s)"
  else
    echo "FAILED $name ($((SECONDS - t0)) s): $(tail -3 "$out/$name.txt" | tr '\n' ' ' | cut -c1-400)"
    failed=$((failed + 1))
    return 1
  fi
}

{ nvidia-smi; nvidia-smi -q; nvcc --version; } >"$out/machine.txt" 2>&1
# the machine's python has click, rich, numpy, scipy, matplotlib, scikit-build-core, cmake, ninja;
# CBK=/path/to/cbk skips the install (a second call on a machine still warm)
if [ -n "${CBK:-}" ]; then
  cbk=$CBK
else
  step install env CLUSTERBENCH_REQUIRE_CUDA=1 CMAKE_BUILD_PARALLEL_LEVEL=16 \
    "$python" -m pip install --no-index --find-links .gpu-wheels --no-build-isolation . ||
    { echo "nothing else can run without the install: $out/install.txt"; exit 1; }
  cbk="$(dirname "$("$python" -c 'import sys; print(sys.executable)')")/cbk"
fi
step describe "$cbk" --describe || true
step pytest env CLUSTERBENCH_CBK="$cbk" CLUSTERBENCH_CBK_CUDA="$cbk" \
  "$python" -m pytest -q -p no:cacheprovider tests/test_gpu_kernels.py tests/test_gpu_cluster.py \
  "tests/test_record_schema.py::test_every_kernel_has_a_launch_here"
step gpucopy "$cbk" gpucopy
step gpucopy_kernel "$cbk" gpucopy --engine=copy,kernel --host-memory=pinned --sizes=8,4k,1m,64m,256m
step gpumem "$cbk" gpumem
step gpus_seen "$cbk" --gpus
# copies between GPUs: measured where there are several, the one-line refusal (exit 2) where there is one
if [ "$(nvidia-smi -L | grep -c '^GPU ')" -ge 2 ]; then
  step gpupeer "$cbk" gpupeer
else
  step gpupeer_refuses bash -c "'$cbk' gpupeer; test \$? -eq 2"
fi
mpiexec=$(command -v mpiexec)
step mpi_device "$mpiexec" -n 2 "$cbk" mpi --op=pingpong,bw,bibw --buffer=device --sizes=8,64k,4m
step mpi_managed "$mpiexec" -n 2 "$cbk" mpi --op=pingpong,bw --buffer=managed --sizes=8,64k,4m
export CLUSTERBENCH_CBK="$cbk" CLUSTERBENCH_DB="sqlite:///$out/results.db" COLUMNS=200
step cli_run bash -c "'$python' -m clusterbench run gpumem --passes=5 && '$python' -m clusterbench run gpucopy --sizes=8,1m,64m --host-memory=pinned && '$python' -m clusterbench show 1 && '$python' -m clusterbench show 2 && '$python' -m clusterbench export 2 --format json"
# each figure beside its limit, from this machine's snapshot: the link as negotiated, the memory's peak
# (the export's rows carry the limit column's text; show folds it to the terminal's width)
step limits_shown bash -c "'$python' -m clusterbench export 1 --format json | grep '\"limit\": \"GPU memory peak: ' && '$python' -m clusterbench export 2 --format json | grep '\"limit\": \"PCIe Gen[0-9] x[0-9]* per direction: '"
# two ranks of a GPU step bound by default (a GPU each where the node has two, else one shared and said once)
step run_mpi_device bash -c "'$python' -m clusterbench run mpi --np 2 --buffer=device --op=pingpong,bw --sizes=8,4m && '$python' -m clusterbench show 3"
# the cluster suite's GPU parts on this one machine named twice (two "nodes"): every GPU its own launch
printf 'localhost\n127.0.0.1\n' >"$out/hosts"
step cluster_gpu timeout 300 "$python" -m clusterbench run cluster --hostfile "$out/hosts" --only=gpu-link,gpu-memory,gpu-peer \
  --repeat 1 --report "$out/cluster.html"
step bench "$python" bench/gpu_vs_reference --cbk "$cbk" --pairs "${PAIRS:-3}" --out "$out/bench"
echo "--- bench (cbk / reference, medians)"; tail -n 30 "$out/bench.txt"
echo "--- pytest"; tail -n 5 "$out/pytest.txt"
exit $failed
