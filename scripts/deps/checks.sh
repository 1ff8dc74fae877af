#!/usr/bin/env bash
# Installs the real linters, type checkers and test runners the `lint` / `run_tests` tests
# drive (tests/test_checks_*.py); a fast no-op when everything is there. Idempotent.
#
#   Go       Debian's golang-go (go vet, gofmt, go test), when `go` is not on PATH
#   Rust     Debian's cargo, only when no `cargo` is on PATH (rustup's has clippy; Debian's
#            may not, and the tools then fall back to `cargo check`)
#   Ruby     Debian's rubocop and ruby-rspec (with ruby), when not on PATH
#   npm      eslint, typescript, typescript-eslint and vitest from
#            tests/fixtures/checks/npm/package-lock.json, installed with `npm ci` into
#            $AGENTLS_TOOLS_DIR/checks-npm-<hash of the lock file>/node_modules (default
#            ~/.cache/agentls-tools): a new lock file means a new folder, the old one stays
#            untouched until removed. tests/checks_support.py finds it the same way.
#   Python   mypy and ruff come with agentls's dev dependencies (pyproject.toml).
#
# The apt and npm parts run in parallel. Needs root for apt-get (or sudo).
set -euo pipefail
cd "$(dirname "$0")/../.."

log() { echo "checks-deps: $*"; }
started=$SECONDS

TOOLS_DIR="${AGENTLS_TOOLS_DIR:-$HOME/.cache/agentls-tools}"
NPM_SRC=tests/fixtures/checks/npm
NPM_DIR="$TOOLS_DIR/checks-npm-$(sha256sum "$NPM_SRC/package-lock.json" | cut -c1-16)"

# shellcheck source=scripts/deps/lib/apt.sh
source scripts/deps/lib/apt.sh

# --- Debian packages -----------------------------------------------------------------------
apt_missing=()
command -v go >/dev/null || apt_missing+=(golang-go)
command -v cargo >/dev/null || apt_missing+=(cargo)
command -v rubocop >/dev/null || apt_missing+=(rubocop)
command -v rspec >/dev/null || apt_missing+=(ruby-rspec)

apt_part() {
  [ ${#apt_missing[@]} -eq 0 ] && return 0
  local t0=$SECONDS
  log "apt-get install ${apt_missing[*]}"
  apt_install "${apt_missing[@]}"
  log "apt packages installed in $((SECONDS - t0))s"
}

# --- npm tools into a folder keyed by the lock file ----------------------------------------
npm_part() {
  [ -e "$NPM_DIR/.complete" ] && return 0
  local t0=$SECONDS staging="$NPM_DIR.partial.$$"
  log "npm ci into $NPM_DIR"
  rm -rf "$staging"
  mkdir -p "$staging"
  cp "$NPM_SRC/package.json" "$NPM_SRC/package-lock.json" "$staging/"
  (cd "$staging" && npm ci --no-audit --no-fund --prefer-offline --loglevel=error >/dev/null)
  touch "$staging/.complete"
  rm -rf "$NPM_DIR"
  mv "$staging" "$NPM_DIR" # appears only when complete
  log "npm tools installed in $((SECONDS - t0))s"
}

apt_part &
apt_pid=$!
npm_part &
npm_pid=$!
failed=0
wait "$apt_pid" || { echo "checks-deps: the apt install failed" >&2; failed=1; }
wait "$npm_pid" || { echo "checks-deps: the npm install failed" >&2; failed=1; }
[ $failed -eq 0 ] || exit 1

# Warm Go's build cache for the standard library (shared across runs, as in the tools).
if command -v go >/dev/null && [ ! -e "$TOOLS_DIR/.go-warm-$(go env GOVERSION)" ]; then
  (cd "$(mktemp -d)" && printf 'package main\nimport "fmt"\nfunc main() { fmt.Println() }\n' >m.go &&
    go vet m.go >/dev/null 2>&1 || true)
  mkdir -p "$TOOLS_DIR" && touch "$TOOLS_DIR/.go-warm-$(go env GOVERSION)"
fi
log "ready in $((SECONDS - started))s (go: $(go version 2>/dev/null | cut -d' ' -f3), cargo: $(cargo --version 2>/dev/null | cut -d' ' -f2), npm tools: $NPM_DIR)"
