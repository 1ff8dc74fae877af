#!/usr/bin/env bash
# The quality gates CI runs: ruff lint, ruff format check, mypy --strict.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/_venv.sh
ruff check server tests bench
ruff format --check server tests bench
mypy
