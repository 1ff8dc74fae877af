#!/usr/bin/env bash
# Installs agentls with its dev dependencies into ./.venv, what the tests drive (editors,
# language servers, toolchains: scripts/test-deps.sh; a fast no-op once installed), and runs the
# whole test suite. Extra arguments go to pytest (e.g. `bash scripts/test.sh -k loop`).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/_venv.sh
if [ "${AGENTLS_SKIP_INSTALL:-}" != "1" ]; then
  bash scripts/test-deps.sh
fi
python -m pytest "$@"
