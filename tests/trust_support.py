"""Trusting a test workspace the way a user does: `agentls trust` with the server's env.

A workspace whose own settings loosen safety (allow rules, hooks, lint/tests commands,
language servers) has them held back until it is trusted (`agentls.agent.claude.trust`); tests
that exercise those settings trust it first, through the real CLI, in the same config
folder the server will read (`HOME` / `XDG_CONFIG_HOME` of `env`).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any


def trust_workspace(root: Path, env: dict[str, str], *, revoke: bool = False) -> dict[str, Any]:
    """Record the answer for `root`'s current settings; returns the trust payload."""
    argv = [sys.executable, "-m", "agentls", "trust", "-w", str(root), "--json"]
    if revoke:
        argv.append("--revoke")
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    payload: dict[str, Any] = json.loads(done.stdout)
    return payload
