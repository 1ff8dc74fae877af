#!/usr/bin/env bash
# What the ACP end-to-end tests need besides the Python dev dependencies:
#
# - the Python ACP SDK (`agent-client-protocol`, PyPI) is a runtime dependency of agentls
#   (pyproject.toml): `pip install -e '.[dev]'` installs it; checked here;
# - the TypeScript ACP SDK (`@agentclientprotocol/sdk`, npm), the second, independent client
#   (tests/acp_client.mjs), and acpx, the ACP command-line client (tests/test_acp_acpx.py;
#   0.13.2: later releases depend on a package whose platform builds are missing from npm,
#   so no lock file of theirs installs with `npm ci`), installed with `npm ci` from the committed lock file
#   scripts/deps/acp/package-lock.json into a folder of its own under
#   ${AGENTLS_TOOLS_DIR:-$HOME/.cache/agentls-tools}, keyed by the lock file's hash (a new
#   lock → a new folder; an unchanged one → a fast no-op). tests/acp_support.py finds it there.
#
#   bash scripts/deps/acp.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=scripts/deps/lib/install.sh
. scripts/deps/lib/install.sh
npm_cached acp node_modules/@agentclientprotocol/sdk/package.json "@agentclientprotocol/sdk"
pip_pinned acp agent-client-protocol 'agent-client-protocol>=0.12.1,<0.13'
