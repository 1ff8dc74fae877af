#!/usr/bin/env bash
# Installs agentls with its dev dependencies into ./.venv, what the tests drive (editors,
# language servers, toolchains: scripts/test-deps.sh; a fast no-op once installed), and runs the
# whole test suite. Extra arguments go to pytest (e.g. `bash scripts/test.sh -k loop`).
# The suite runs on every core (pytest-xdist, `-n auto --dist loadfile`: each test file on one
# worker, in order, since many files share a module-scoped server or editor whose later tests
# build on the earlier ones' state); `-n 0` among the arguments, or AGENTLS_TEST_SERIAL=1, runs
# it in one process.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/_venv.sh
if [ "${AGENTLS_SKIP_INSTALL:-}" != "1" ]; then
  bash scripts/test-deps.sh
fi
parallel=(-n auto --dist loadfile)
for arg in "$@"; do
  case "$arg" in -n | -n* | --numprocesses*) parallel=() ;; esac
done
[ "${AGENTLS_TEST_SERIAL:-}" = "1" ] && parallel=()
# Byte-compile agentls and the test helpers, as `pip install` does for an installed copy: with
# PYTHONDONTWRITEBYTECODE=1 (set on CI's machine) every server, CLI and editor plugin process
# the suite spawns would otherwise compile ~360 modules from source (0.3-0.6 s CPU each).
python -m compileall -q -j 0 server/agentls tests >/dev/null
python -m pytest "${parallel[@]}" "$@"
