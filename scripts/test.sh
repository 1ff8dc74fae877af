#!/usr/bin/env bash
# Installs agentls with its dev dependencies into ./.venv and runs the whole test suite.
# Extra arguments go to pytest (e.g. `bash scripts/test.sh -k loop`).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/_venv.sh
python -m pytest "$@"
