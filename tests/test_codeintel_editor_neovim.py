"""Source 1 in a real editor: headless Neovim with the agentls plugin and basedpyright
attached as a second client. The agent's `find_references` (through `agentls.tool`) is
answered by basedpyright through Neovim, and the result names it.

Needs `nvim` (scripts/editor-deps.sh) and basedpyright (scripts/deps/codeintel.sh).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.codeintel_support import (
    CART_TOTAL_REFERENCES,
    NVIM,
    PYTHON_SHOP,
    reference_lines,
    run_neovim_script,
)

SCRIPT = Path(__file__).resolve().parent / "codeintel" / "nvim_bridge.lua"

pytestmark = pytest.mark.skipif(
    NVIM is None, reason="nvim not installed (run scripts/editor-deps.sh or apt-get install neovim)"
)


def run_neovim(tmp_path: Path) -> dict[str, Any]:
    return run_neovim_script(tmp_path, PYTHON_SHOP, SCRIPT)


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
