#!/usr/bin/env bash
# Runs the README's quick-start command exactly as written, in a fresh clone of the
# committed tree (a new venv, `pip install -e .`, `agentls demo`), so the first command a
# new user types is known to work on a clean machine. Exit status: the command's own (the
# demo exits non-zero unless the sample's tests end green).
set -euo pipefail
cd "$(dirname "$0")/.."
command=$(awk '/^## Quick start/{q=1} q&&/^```sh/{getline; print; exit}' README.md)
if [ -z "$command" ]; then
  echo "quickstart-check: no \`\`\`sh block under '## Quick start' in README.md" >&2
  exit 2
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
git clone --quiet . "$work/agentls"
cd "$work/agentls"
echo "quickstart-check: $command"
if ! bash -c "$command" >"$work/log" 2>&1; then
  tail -n 60 "$work/log"
  echo "quickstart-check: the README's quick-start command failed" >&2
  exit 1
fi
tail -n 5 "$work/log"
