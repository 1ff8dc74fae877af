#!/usr/bin/env bash
# Regenerate docs/settings.schema.json and the VS Code extension's contributes.configuration
# from the settings model (agentls.config); `--check` only reports whether they are current.
set -euo pipefail
cd "$(dirname "$0")/.."
python="python3"
if [ -x .venv/bin/python ]; then python=.venv/bin/python; fi
exec "$python" -m agentls.config.schema --root . "${@:---write}"
