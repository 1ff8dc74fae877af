#!/usr/bin/env bash
# Every language server of agentls's registry (server/agentls/codeintel/registry.py) that
# installs here, at the registry's pinned versions, for tests/test_langserver_registry_servers.py:
#
# - npm: `npm ci` of scripts/deps/langservers/package{,-lock}.json into
#   ${AGENTLS_TOOLS_DIR:-$HOME/.cache/agentls-tools}/langservers-<hash> (lib/install.sh);
# - PyPI: requirements/langservers.lock (hashes; scripts/lock.sh) into a virtualenv of its
#   own, langservers-py-<hash of the lock> beside it, so the servers' dependencies never mix
#   with agentls's;
# - Debian: clangd and gopls (lib/apt.sh), with the Go toolchain gopls runs, and shellcheck
#   (bash-language-server's diagnostics come from it).
#
# Idempotent: a second run is a fast no-op. A cold run takes about 2 minutes (npm ~60 s,
# pip ~40 s, apt ~30 s; they run one after another).
#
#   bash scripts/deps/langservers.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=scripts/deps/lib/install.sh
. scripts/deps/lib/install.sh
# shellcheck source=scripts/deps/lib/apt.sh
. scripts/deps/lib/apt.sh

npm_cached langservers node_modules/.bin/bash-language-server "the registry's npm language servers"

tools="${AGENTLS_TOOLS_DIR:-$HOME/.cache/agentls-tools}"
key=$(sha256sum requirements/langservers.lock | cut -c1-12)
venv="$tools/langservers-py-$key"
if [ -f "$venv/.complete" ]; then
  echo "langservers: PyPI servers already installed in $venv"
else
  rm -rf "$venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q --disable-pip-version-check --require-hashes --no-deps \
    -r requirements/langservers.lock
  touch "$venv/.complete"
  echo "langservers: installed the PyPI servers into $venv"
fi

missing=()
for tool in clangd gopls go shellcheck; do
  command -v "$tool" >/dev/null || missing+=("$tool")
done
if [ ${#missing[@]} -gt 0 ]; then
  packages=()
  for tool in "${missing[@]}"; do
    case $tool in
      go) packages+=(golang-go) ;;
      *) packages+=("$tool") ;;
    esac
  done
  apt_install "${packages[@]}"
  echo "langservers: installed ${packages[*]} (Debian)"
else
  echo "langservers: clangd, gopls, go and shellcheck present"
fi
