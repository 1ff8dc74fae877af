# Sourced by the scripts: creates ./.venv when missing and installs the project into it.
PYTHON="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
# shellcheck disable=SC1091
source .venv/bin/activate
if [ "${AGENTLS_SKIP_INSTALL:-}" != "1" ]; then
  python -m pip install --quiet --disable-pip-version-check -e '.[dev]'
fi
