"""Neovim end to end: the Lua plugin in a real headless `nvim` against the scripted model.

Runs `editor-clients/neovim/test/run_e2e.py` (one subprocess per case) and asserts on the
JSON it prints. Skips only when no `nvim` can be found (install it with
`scripts/editor-deps.sh` or `apt-get install neovim`).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
RUNNER = ROOT / "editor-clients" / "neovim" / "test" / "run_e2e.py"
NVIM = os.environ.get("AGENTLS_NVIM") or shutil.which("nvim")

pytestmark = pytest.mark.skipif(
    NVIM is None, reason="nvim not installed (run scripts/editor-deps.sh or apt-get install neovim)"
)


def run_case(case: str) -> dict[str, Any]:
    assert NVIM is not None
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    proc = subprocess.run(
        [sys.executable, str(RUNNER), case, "--nvim", NVIM],
        capture_output=True,
        text=True,
        timeout=200,
        env=env,
        cwd=ROOT,
    )
    lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
    assert lines, f"runner printed no result (exit {proc.returncode}): {proc.stderr[-3000:]}"
    result: dict[str, Any] = json.loads(lines[-1])
    assert result.get("ok"), json.dumps(result, indent=1)[-6000:]
    assert proc.returncode == 0
    return result


def test_selection_ranges_and_fix_prompt() -> None:
    result = run_case("unit")
    assert all(result["checks"].values()), result["checks"]


def test_run_then_accept_changes_the_buffer() -> None:
    result = run_case("edit")
    assert result["buffer"] == [
        "def welcome(name):",
        '    return "Hello, " + name',
        "",
        "",
        'print(welcome("world"))',
    ]
    assert result["accepted"]["applied"] is True
    assert "they selected lines 1-2" in result["prompts"][0]  # :1,2AgentlsRun passed the range
    assert result["status_sessions"] == 1  # :AgentlsStatus
    assert "edit_file" in result["tools"]
    assert any(line.startswith("→ Editing hello.py") for line in result["log"])
    assert any(line.startswith("== completed") for line in result["log"])


def test_ask_shows_the_answer_and_changes_nothing() -> None:
    result = run_case("ask")
    assert result["status"] == "completed"
    assert "read_file" in result["tools"]
    assert "edit_file" not in result["tools"]  # :AgentlsAsk is a read-only (plan) run
    assert any("followed by name" in line for line in result["messages"])


def test_cancel_mid_run_changes_nothing() -> None:
    result = run_case("cancel")
    assert result["status"] == "cancelled"
    assert any(line.startswith("== cancelled") for line in result["log"])
