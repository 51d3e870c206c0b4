#!/usr/bin/env bash
# Sets up (scripts/setup.sh --test) and runs the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --test
export PATH="$PWD/.venv/bin:$PATH"
exec .venv/bin/python -m pytest -q --durations=30 "$@"   # the slowest 30: where CI time goes
