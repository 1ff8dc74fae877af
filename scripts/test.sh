#!/usr/bin/env bash
# Installs agentls with its dev dependencies into ./.venv, the editors the end-to-end tests
# drive (Neovim, Emacs, code-server + Chromium; a fast no-op once installed), and runs the
# whole test suite. Extra arguments go to pytest (e.g. `bash scripts/test.sh -k loop`).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/_venv.sh
if [ "${AGENTLS_SKIP_INSTALL:-}" != "1" ]; then
  bash scripts/editor-deps.sh
fi
python -m pytest "$@"
