#!/usr/bin/env bash
# The quality gates CI runs: ruff lint, ruff format check, mypy --strict, and deptry (every
# import is a declared dependency, every declared dependency is used or listed as used
# without an import in pyproject.toml).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/_venv.sh
ruff check server tests bench scripts
ruff format --check server tests bench scripts
mypy
deptry server
