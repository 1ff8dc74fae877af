"""Source 1 in a real editor: headless Neovim with the agentls plugin, and basedpyright and
typescript-language-server attached as the user's own clients. The agent's
`find_references`, hover, diagnostics, `code_actions` and `call_hierarchy` (through
`agentls.tool`) are answered by basedpyright through Neovim, `find_implementations` (which
basedpyright does not answer) by typescript-language-server, and each result names it.

Needs `nvim` (scripts/editor-deps.sh), basedpyright and typescript-language-server
(scripts/deps/codeintel.sh); typescript-language-server is not on PATH, so agentls has no
headless TypeScript server of its own to answer instead of the editor.
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
    typescript_bin,
)

SCRIPT = Path(__file__).resolve().parent / "codeintel" / "nvim_bridge.lua"

pytestmark = pytest.mark.skipif(
    NVIM is None, reason="nvim not installed (run scripts/editor-deps.sh or apt-get install neovim)"
)


def _implementing(name: str, field: str, body: str) -> str:
    return f"""
        import type {{ Shape }} from "./shapes";

        export class {name} implements Shape {{
          constructor(private readonly {field}: number) {{}}

          area(): number {{
            return {body};
          }}
        }}
        """


FILES = {
    **PYTHON_SHOP,
    "tsconfig.json": '{"compilerOptions": {"strict": true, "target": "es2020"}, '
    '"include": ["web"]}\n',
    "web/shapes.ts": """
        export interface Shape {
          area(): number;
        }
        """,
    "web/circle.ts": _implementing("Circle", "r", "3 * this.r * this.r"),
    "web/square.ts": _implementing("Square", "side", "this.side * this.side"),
}
"""The Python shop, and a TypeScript interface method that two classes implement."""


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    tsls = typescript_bin() / "typescript-language-server"
    tmp_path = tmp_path_factory.mktemp("nvim")
    return run_neovim_script(tmp_path, FILES, SCRIPT, {"CI_TSLS": str(tsls)})


def test_neovim_answers_find_references_through_basedpyright(data: dict[str, Any]) -> None:
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


def test_neovim_answers_find_implementations_through_typescript_language_server(
    data: dict[str, Any],
) -> None:
    found = data["implementations"]
    assert not found["is_error"], found
    content = found["content"]
    source = "(source: editor (typescript-language-server))"
    assert f"2 implementations of `area` at web/shapes.ts:2 {source}:" in content
    assert "web/circle.ts:6:3" in content
    assert "web/square.ts:6:3" in content
    assert "return 3 * this.r * this.r;" in content
    assert "return this.side * this.side;" in content
