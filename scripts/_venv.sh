# Sourced by the scripts: creates ./.venv when missing and installs the project into it from
# the lock file (requirements/dev.lock, hash-checked: the versions every machine tests; see
# scripts/lock.sh), then agentls itself, editable. A fast no-op while the lock and
# pyproject.toml are unchanged (a stamp in .venv keyed by both).
PYTHON="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
# shellcheck disable=SC1091
source .venv/bin/activate
if [ "${AGENTLS_SKIP_INSTALL:-}" != "1" ]; then
  lock_key=$(cat requirements/dev.lock pyproject.toml | sha256sum | cut -c1-16)
  if [ ! -e ".venv/.agentls-lock-$lock_key" ]; then
    python -m pip install --quiet --disable-pip-version-check --require-hashes \
      -r requirements/dev.lock
    python -m pip install --quiet --disable-pip-version-check --no-deps \
      --no-build-isolation -e .
    rm -f .venv/.agentls-lock-*
    touch ".venv/.agentls-lock-$lock_key"
  fi
fi
