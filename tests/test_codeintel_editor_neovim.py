"""Source 1 in a real editor: headless Neovim with the agentls plugin and basedpyright
attached as a second client. The agent's `find_references` (through `agentls.tool`) is
answered by basedpyright through Neovim, and the result names it.

Needs `nvim` (scripts/editor-deps.sh) and basedpyright (scripts/deps/codeintel.sh).
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

from tests.codeintel_support import (
    CART_TOTAL_REFERENCES,
    PYTHON_SHOP,
    basedpyright_langserver,
    reference_lines,
    write_tree,
)

ROOT = Path(__file__).resolve().parent.parent
PLUGIN = ROOT / "editor-clients" / "neovim"
SCRIPT = Path(__file__).resolve().parent / "codeintel" / "nvim_bridge.lua"
NVIM = os.environ.get("AGENTLS_NVIM") or shutil.which("nvim")

pytestmark = pytest.mark.skipif(
    NVIM is None, reason="nvim not installed (run scripts/editor-deps.sh or apt-get install neovim)"
)


def run_neovim(tmp_path: Path) -> dict[str, Any]:
    assert NVIM is not None
    workspace = tmp_path / "shop"
    write_tree(workspace, PYTHON_SHOP)
    result = tmp_path / "result.json"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "AGENTLS_"))}
    env.update(
        {
            "CI_WORKSPACE": str(workspace),
            "CI_RESULT": str(result),
            "CI_PYRIGHT": str(basedpyright_langserver()),
            "CI_AGENTLS_CMD": json.dumps(
                [sys.executable, "-m", "agentls", "serve", "--log-file", str(tmp_path / "s.log")]
            ),
            "AGENTLS_TRANSCRIPT_DIR": str(tmp_path / "transcripts"),
            "XDG_STATE_HOME": str(tmp_path / "state"),
            "XDG_CACHE_HOME": str(tmp_path / "cache"),
            "XDG_DATA_HOME": str(tmp_path / "data"),
        }
    )
    argv = [NVIM, "--headless", "-u", "NONE", "-i", "NONE", "-n"]
    argv += ["--cmd", f"set rtp^={PLUGIN}", "-c", f"luafile {SCRIPT}"]
    proc = subprocess.run(
        argv, env=env, cwd=workspace, capture_output=True, text=True, timeout=240, check=False
    )
    assert result.exists(), f"nvim wrote no result: {proc.stdout[-2000:]} {proc.stderr[-2000:]}"
    data: dict[str, Any] = json.loads(result.read_text())
    log = tmp_path / "s.log"
    assert data.get("ok"), json.dumps(data, indent=1)[-4000:] + (
        log.read_text()[-3000:] if log.exists() else ""
    )
    return data


def test_neovim_answers_find_references_through_basedpyright(tmp_path: Path) -> None:
    data = run_neovim(tmp_path)
    references = data["references"]
    assert not references["is_error"], references
    content = references["content"]
    assert "(source: editor (basedpyright))" in content
    assert reference_lines(content) == CART_TOTAL_REFERENCES
    assert data["legacy_loaded_before"] == 0
    assert data["legacy_loaded_after"] == 1
    hover = data["hover"]
    assert "(source: editor (basedpyright))" in hover["content"]
    assert "def total(tax: float) -> float" in hover["content"]
    diagnostics = data["diagnostics"]["content"]
    assert "(source: editor (basedpyright))" in diagnostics
    assert "Argument of type \"Literal['x']\"" in diagnostics  # the unsaved buffer's error
    actions = data["code_actions"]
    assert not actions["is_error"], actions
    assert "(source: editor (basedpyright))" in actions["content"]
    assert "1. Add `# pyright: ignore[reportArgumentType]` [quickfix]" in actions["content"]
    applied = data["code_action_applied"]
    assert not applied["is_error"], applied
    assert (
        "Applied `Add `# pyright: ignore[reportArgumentType]`` (source: editor (basedpyright)"
        in (applied["content"])
    )
    assert "# pyright: ignore[reportArgumentType]" in data["after_action"]["content"]
    assert "pyright: ignore" not in data["buffer_after_action"]  # staged, not applied yet
    calls = data["calls"]
    assert not calls["is_error"], calls
    assert "Incoming calls of `total`" in calls["content"]
    assert "source: editor (basedpyright)" in calls["content"]
    assert "- `pay` (function) at shop/checkout.py:4" in calls["content"]
