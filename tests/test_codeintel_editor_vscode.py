"""Source 1 in a real VS Code: code-server's built-in TypeScript features answer the agent's
`find_references`, `find_implementations` and `code_actions` through the extension's
`agentls/editorQuery` handler (`vscode.execute…Provider`), and each tool result names the
editor. An applied code action (`Add import from "./greeter"`, whose VS Code action also
carries the command `_typescript.applyCodeActionCommand`) is staged in review mode, not
written: the file on disk is unchanged while the edit waits in the Refactor Preview.

Runs `editor-clients/vscode/e2e/code-intel.mjs` (code-server + Playwright + Debian's
chromium), one session for all the calls. Skips, naming what is missing, when the editor
set-up is not installed (`bash scripts/editor-deps.sh vscode`), like tests/test_editor_vscode.py.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.vscode_support import missing_code_server, run_driver

EDITOR = "(source: editor (code-server: typescript))"

pytestmark = pytest.mark.skipif(
    missing_code_server() is not None, reason=str(missing_code_server())
)


@pytest.fixture(scope="module")
def run() -> dict[str, Any]:
    return run_driver("code-intel.mjs", timeout=400)


def content(result: dict[str, Any], key: str) -> str:
    block = result[key]
    assert block["is_error"] is False, block
    return str(block["content"])


def test_code_server_answers_find_references_through_the_extension(run: dict[str, Any]) -> None:
    found = content(run, "references")
    assert EDITOR in found
    assert "src/a.ts" in found
    assert "src/b.ts" in found
    assert 'export const b = hello("b");' in found  # through the alias import


def test_code_server_answers_find_implementations_through_the_extension(
    run: dict[str, Any],
) -> None:
    found = content(run, "implementations")
    assert f"2 implementations of `area` at src/shapes.ts:2 {EDITOR}:" in found
    assert "src/circle.ts:6:3" in found
    assert "src/square.ts:6:3" in found
    assert "return 3 * this.r * this.r;" in found
    assert "return this.side * this.side;" in found


def test_code_server_lists_and_stages_a_typescript_quick_fix(run: dict[str, Any]) -> None:
    listed = content(run, "actions")
    assert f"for src/c.ts:1 {EDITOR}:" in listed
    assert '  1. Add import from "./greeter" [quickfix] (preferred)' in listed
    assert "[source.organizeImports]" in listed  # the source actions are asked for too
    applied = content(run, "applied")
    assert applied.startswith(
        'Applied `Add import from "./greeter"` (source: editor (code-server: typescript); '
        "staged in this session"
    )
    assert "  src/c.ts: 1 change" in applied
    assert "`_typescript.applyCodeActionCommand` itself, outside this session" in applied
    staged = content(run, "staged")
    assert '1\timport { greet } from "./greeter";' in staged
    assert '3\texport const c = greet("c");' in staged
    assert "includes changes staged in this session" in staged
    assert run["previewShown"] is True
    assert run["cOnDisk"] == 'export const c = greet("c");\n'  # staged, not written
