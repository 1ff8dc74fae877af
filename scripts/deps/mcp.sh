#!/usr/bin/env bash
# Real MCP servers for the MCP tests (tests/mcp_servers/real.py finds them):
#
# - @modelcontextprotocol/server-everything (npm), run over stdio and over streamable HTTP,
#   installed with `npm ci` from the committed lock file scripts/deps/mcp/package-lock.json
#   into a folder of its own under ${AGENTLS_TOOLS_DIR:-$HOME/.cache/agentls-tools}, keyed by
#   the lock file's hash (a new lock → a new folder; an unchanged one → a fast no-op).
# - mcp-server-time (PyPI) is a dev dependency (pyproject.toml), so `pip install -e '.[dev]'`
#   installs it into the venv (it runs as `python -m mcp_server_time`); checked here.
#
#   bash scripts/deps/mcp.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
here=scripts/deps/mcp
tools="${AGENTLS_TOOLS_DIR:-$HOME/.cache/agentls-tools}"
key=$(cat "$here/package.json" "$here/package-lock.json" | sha256sum | cut -c1-12)
target="$tools/mcp-$key"
entry="$target/node_modules/@modelcontextprotocol/server-everything/dist/index.js"

if [ -f "$entry" ] && [ -f "$target/.complete" ]; then
  echo "mcp: server-everything already installed in $target"
else
  if ! command -v npm >/dev/null; then
    echo "mcp: npm is needed for @modelcontextprotocol/server-everything (apt-get install nodejs npm)" >&2
    exit 1
  fi
  mkdir -p "$tools"
  staging=$(mktemp -d "$tools/.mcp-XXXXXX")
  trap 'rm -rf "$staging"' EXIT
  cp "$here/package.json" "$here/package-lock.json" "$staging/"
  (cd "$staging" && npm ci --no-audit --no-fund --loglevel=error)
  touch "$staging/.complete"
  rm -rf "$target"
  mv "$staging" "$target"
  trap - EXIT
  echo "mcp: installed server-everything into $target"
fi

python=".venv/bin/python"
[ -x "$python" ] || python=$(command -v python3)
if version=$("$python" -c "from importlib.metadata import version; print(version('mcp-server-time'))" 2>/dev/null); then
  echo "mcp: mcp-server-time $version present"
else
  echo "mcp: mcp-server-time missing; installing the dev dependencies' pin"
  "$python" -m pip install -q 'mcp-server-time==2026.10.19'
fi
