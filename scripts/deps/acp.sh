#!/usr/bin/env bash
# What the ACP end-to-end tests need besides the Python dev dependencies:
#
# - the Python ACP SDK (`agent-client-protocol`, PyPI) is a runtime dependency of agentls
#   (pyproject.toml): `pip install -e '.[dev]'` installs it; checked here;
# - the TypeScript ACP SDK (`@agentclientprotocol/sdk`, npm), the second, independent client
#   (tests/acp_client.mjs), installed with `npm ci` from the committed lock file
#   scripts/deps/acp/package-lock.json into a folder of its own under
#   ${AGENTLS_TOOLS_DIR:-$HOME/.cache/agentls-tools}, keyed by the lock file's hash (a new
#   lock → a new folder; an unchanged one → a fast no-op). tests/acp_support.py finds it there.
#
#   bash scripts/deps/acp.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
here=scripts/deps/acp
tools="${AGENTLS_TOOLS_DIR:-$HOME/.cache/agentls-tools}"
key=$(cat "$here/package.json" "$here/package-lock.json" | sha256sum | cut -c1-12)
target="$tools/acp-$key"

if [ -f "$target/node_modules/@agentclientprotocol/sdk/package.json" ] && [ -f "$target/.complete" ]; then
  echo "acp: @agentclientprotocol/sdk already installed in $target"
else
  if ! command -v npm >/dev/null; then
    echo "acp: npm is needed for @agentclientprotocol/sdk (apt-get install nodejs npm)" >&2
    exit 1
  fi
  mkdir -p "$tools"
  staging=$(mktemp -d "$tools/.acp-XXXXXX")
  trap 'rm -rf "$staging"' EXIT
  cp "$here/package.json" "$here/package-lock.json" "$staging/"
  (cd "$staging" && npm ci --no-audit --no-fund --loglevel=error)
  touch "$staging/.complete"
  rm -rf "$target"
  mv "$staging" "$target"
  trap - EXIT
  echo "acp: installed @agentclientprotocol/sdk into $target"
fi

python=".venv/bin/python"
[ -x "$python" ] || python=$(command -v python3)
if version=$("$python" -c "from importlib.metadata import version; print(version('agent-client-protocol'))" 2>/dev/null); then
  echo "acp: agent-client-protocol $version present"
else
  echo "acp: agent-client-protocol missing; installing the pin of pyproject.toml"
  "$python" -m pip install -q 'agent-client-protocol>=0.12.1,<0.13'
fi
