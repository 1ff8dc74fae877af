#!/usr/bin/env bash
# The real language servers the code-intelligence tests and bench/code_intel_bench.py drive:
#
# - basedpyright (PyPI) is a dev dependency (pyproject.toml), so `pip install -e '.[dev]'`
#   puts `basedpyright-langserver` next to the venv's python; checked here.
# - typescript-language-server + typescript (npm), installed with `npm ci` from the committed
#   lock file scripts/deps/codeintel/package-lock.json into a folder of their own under
#   ${AGENTLS_TOOLS_DIR:-$HOME/.cache/agentls-tools}, keyed by the lock file's hash (a new lock
#   → a new folder; an unchanged one → a fast no-op). tests/codeintel_support.py finds it there.
#
#   bash scripts/deps/codeintel.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=scripts/deps/lib/install.sh
. scripts/deps/lib/install.sh
npm_cached codeintel node_modules/.bin/typescript-language-server "typescript-language-server + typescript"
pip_pinned codeintel basedpyright 'basedpyright>=1.40,<1.41'
