# Shared by the scripts/deps/*.sh install scripts (sourced, never run on its own: it lives
# in lib/ so that scripts/test-deps.sh, which runs every scripts/deps/*.sh, skips it).
# Callers run from the repository root with `set -euo pipefail`.

# npm_cached NAME PROBE LABEL
# `npm ci` of the committed scripts/deps/NAME/package{,-lock}.json into a folder of its own,
# ${AGENTLS_TOOLS_DIR:-$HOME/.cache/agentls-tools}/NAME-<hash of both files> (a new lock → a
# new folder; an unchanged one → a fast no-op). The install goes to a staging folder that is
# moved into place with a `.complete` marker only once it succeeded, so an interrupted run
# never leaves a half-installed folder that a later run would take as done. PROBE (a path
# inside the folder) must exist too; LABEL names what is installed in the messages.
npm_cached() {
  local name=$1 probe=$2 label=$3
  local here="scripts/deps/$name"
  local tools="${AGENTLS_TOOLS_DIR:-$HOME/.cache/agentls-tools}"
  local key target staging
  key=$(cat "$here/package.json" "$here/package-lock.json" | sha256sum | cut -c1-12)
  target="$tools/$name-$key"
  if [ -e "$target/$probe" ] && [ -f "$target/.complete" ]; then
    echo "$name: $label already installed in $target"
    return 0
  fi
  if ! command -v npm >/dev/null; then
    echo "$name: npm is needed for $label (apt-get install nodejs npm)" >&2
    return 1
  fi
  mkdir -p "$tools"
  staging=$(mktemp -d "$tools/.$name-XXXXXX")
  # shellcheck disable=SC2064 # expand now: $staging is local
  trap "rm -rf '$staging'" EXIT
  cp "$here/package.json" "$here/package-lock.json" "$staging/"
  (cd "$staging" && npm ci --no-audit --no-fund --loglevel=error)
  touch "$staging/.complete"
  rm -rf "$target"
  mv "$staging" "$target"
  trap - EXIT
  echo "$name: installed $label into $target"
}

# pip_pinned NAME DIST PIN
# Checks that the Python distribution DIST (a dependency in pyproject.toml, so normally
# installed by `pip install -e '.[dev]'`) is in the repository's .venv (else the python3 on
# PATH); installs PIN (e.g. 'basedpyright>=1.40,<1.41') when it is missing.
pip_pinned() {
  local name=$1 dist=$2 pin=$3
  local python=".venv/bin/python" version
  [ -x "$python" ] || python=$(command -v python3)
  if version=$("$python" -c "from importlib.metadata import version; print(version('$dist'))" 2>/dev/null); then
    echo "$name: $dist $version present"
  else
    echo "$name: $dist missing; installing the pin of pyproject.toml ($pin)"
    "$python" -m pip install -q "$pin"
  fi
}
