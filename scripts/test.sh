#!/usr/bin/env bash
# Sets up (scripts/setup.sh --test) and runs the whole test suite on
# $CLUSTERBENCH_TEST_WORKERS pytest-xdist workers (default 4; one test file
# per worker, so a module's test cluster, Slurm or Grid Engine is brought up
# once; the modules marked long_module first, in the order conftest gives
# them). Prints the slowest tests and the wall time, set-up included.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS
bash scripts/setup.sh --test
export PATH="$PWD/.venv/bin:$PATH"
# four workers on the 2-core machines this runs on: a worker waiting on a
# daemon, a batch job, a shaped link or a stall bound leaves its core to the
# others (2026-12-08, 2,790 tests: 624 s with four against 701 and 739 s with
# three on the same VM, the CPUs 87 % busy with three; 2026-11-28: three
# 541 s, two 584 s)
workers=${CLUSTERBENCH_TEST_WORKERS:-4}
# pytest keeps its rewritten test modules in __pycache__ only when bytecode
# may be written: without that, each pytest process (the controller and
# every worker) rewrites all of them again, about 10 CPU-s each
unset PYTHONDONTWRITEBYTECODE
status=0
.venv/bin/python -m pytest -q --durations=30 -n "$workers" --dist loadfile --no-loadscope-reorder "$@" || status=$?
echo "test.sh: wall time $((SECONDS - start)) s, set-up included (pytest exit status $status)"
exit $status
