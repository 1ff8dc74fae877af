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
here=scripts/deps/codeintel
tools="${AGENTLS_TOOLS_DIR:-$HOME/.cache/agentls-tools}"
key=$(cat "$here/package.json" "$here/package-lock.json" | sha256sum | cut -c1-12)
target="$tools/codeintel-$key"

if [ -x "$target/node_modules/.bin/typescript-language-server" ] && [ -f "$target/.complete" ]; then
  echo "codeintel: typescript-language-server already installed in $target"
else
  if ! command -v npm >/dev/null; then
    echo "codeintel: npm is needed for typescript-language-server (apt-get install nodejs npm)" >&2
    exit 1
  fi
  mkdir -p "$tools"
  staging=$(mktemp -d "$tools/.codeintel-XXXXXX")
  trap 'rm -rf "$staging"' EXIT
  cp "$here/package.json" "$here/package-lock.json" "$staging/"
  (cd "$staging" && npm ci --no-audit --no-fund --loglevel=error)
  touch "$staging/.complete"
  rm -rf "$target"
  mv "$staging" "$target"
  trap - EXIT
  echo "codeintel: installed typescript-language-server + typescript into $target"
fi

python=".venv/bin/python"
[ -x "$python" ] || python=$(command -v python3)
if version=$("$python" -c "from importlib.metadata import version; print(version('basedpyright'))" 2>/dev/null); then
  echo "codeintel: basedpyright $version present"
else
  echo "codeintel: basedpyright missing; installing the dev dependencies' pin"
  "$python" -m pip install -q 'basedpyright>=1.40,<1.41'
fi
