#!/usr/bin/env bash
# Sets up (scripts/setup.sh --test) and runs the whole test suite; prints the
# slowest 30 tests (where CI time goes) and the wall time, set-up included.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS
bash scripts/setup.sh --test
export PATH="$PWD/.venv/bin:$PATH"
status=0
.venv/bin/python -m pytest -q --durations=30 "$@" || status=$?
echo "test.sh: wall time $((SECONDS - start)) s, set-up included (pytest exit status $status)"
exit $status
