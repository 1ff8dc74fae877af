#!/usr/bin/env bash
# Installs what the test suite needs beyond the Python dev dependencies: every
# `scripts/deps/*.sh` (language servers, toolchains, sandbox, fixtures' npm packages, …) and
# the editors (`scripts/editor-deps.sh`), all in parallel. Each script is idempotent and a
# fast no-op once its part is installed. Prints each script's log only when it fails.
#
#   bash scripts/test-deps.sh             # everything
set -euo pipefail
cd "$(dirname "$0")/.."
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
declare -A pids
for script in scripts/editor-deps.sh scripts/deps/*.sh; do
  [ -e "$script" ] || continue
  name=$(basename "$script" .sh)
  bash "$script" >"$logs/$name.log" 2>&1 &
  pids[$name]=$!
done
failed=0
for name in "${!pids[@]}"; do
  if wait "${pids[$name]}"; then
    tail -n 3 "$logs/$name.log" | sed "s/^/[$name] /"
  else
    cat "$logs/$name.log" | sed "s/^/[$name] /"
    echo "test-deps: $name failed" >&2
    failed=1
  fi
done
exit $failed
