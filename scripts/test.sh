#!/usr/bin/env bash
# Sets up (scripts/setup.sh --test) and runs the whole test suite in two
# phases: every test but those marked `alone` on $CLUSTERBENCH_TEST_WORKERS
# pytest-xdist workers (default 2; one test file per worker, so a module's
# test cluster, Slurm or Grid Engine is brought up once), then the `alone`
# tests one after another (they judge CPU-bound figures of test hosts against
# each other, which the suite's own other tests would skew). Prints the
# slowest tests of each phase and the wall time, set-up included.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS
bash scripts/setup.sh --test
export PATH="$PWD/.venv/bin:$PATH"
workers=${CLUSTERBENCH_TEST_WORKERS:-2}
status=0
.venv/bin/python -m pytest -q --durations=30 -n "$workers" --dist loadfile -m "not alone" "$@" || status=$?
phase=0
.venv/bin/python -m pytest -q --durations=10 -m alone "$@" || phase=$?
# 5: no test selected (arguments that name no `alone` test)
[ "$phase" = 0 ] || [ "$phase" = 5 ] || status=$phase
echo "test.sh: wall time $((SECONDS - start)) s, set-up included (pytest exit status $status)"
exit $status
