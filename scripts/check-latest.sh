#!/usr/bin/env bash
# Runs the whole suite against the newest versions pyproject.toml allows, not the lock: an
# upstream release that breaks agentls (or a test that asserts a dependency's internals) is
# found here, by us, before a user meets it. A fresh clone, a new venv with
# `pip install -e '.[dev]'` (the resolver picks today's newest), the same system test
# dependencies as scripts/test.sh, then pytest. Prints the versions that differ from the
# lock, the result, and the line to record in the README ("Newest allowed versions").
#
#   bash scripts/check-latest.sh [pytest args]     # exit status: pytest's
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
git clone --quiet . "$work/agentls"
cd "$work/agentls"
python3 -m venv .venv
.venv/bin/pip install --quiet --disable-pip-version-check -e '.[dev]'
echo "check-latest: versions that differ from requirements/dev.lock:"
# names normalised as PEP 503 does (pip freeze says PyYAML, the lock pyyaml)
normalise() { awk -F'==' '{n = tolower($1); gsub(/[_.]/, "-", n); print n "==" $2}' | sort; }
.venv/bin/pip freeze --exclude-editable | normalise >"$work/now.txt"
grep -oE '^[A-Za-z0-9_.-]+==[^ ;]+' requirements/dev.lock | normalise >"$work/locked.txt"
comm -23 "$work/now.txt" "$work/locked.txt" | sed 's/^/  /' || true
bash scripts/test-deps.sh >/dev/null
status=0
AGENTLS_SKIP_INSTALL=1 bash scripts/test.sh -q "$@" | tee "$work/pytest.log" || status=$?
summary=$(grep -E '^=+ .*(passed|failed).* =+$' "$work/pytest.log" | tail -1 | tr -d '=' | xargs)
echo "check-latest: $(date -u +%Y-%m-%d): newest allowed versions: ${summary:-no summary} (exit $status)"
exit $status
