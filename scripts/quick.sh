#!/usr/bin/env bash
# Sets up (scripts/setup.sh) and runs the quick characterisation of this
# machine on the current directory (or --dir=DIR), printing the result tables.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
bash "$here/scripts/setup.sh"
export PATH="$here/.venv/bin:$PATH"
exec "$here/.venv/bin/clusterbench" run quick "$@"
