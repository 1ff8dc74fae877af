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
# shellcheck source=scripts/deps/lib/install.sh
. scripts/deps/lib/install.sh
npm_cached mcp node_modules/@modelcontextprotocol/server-everything/dist/index.js "@modelcontextprotocol/server-everything"
pip_pinned mcp mcp-server-time 'mcp-server-time==2026.10.19'
