"""Source 1 in a real VS Code: code-server's built-in TypeScript features answer the agent's
`find_references` through the extension's `agentls/editorQuery` handler
(`vscode.executeReferenceProvider`), and the tool result names the editor.

Runs `editor-clients/vscode/e2e/code-intel.mjs` (code-server + Playwright + Debian's
chromium). Skips, naming what is missing, when the editor set-up is not installed
(`bash scripts/editor-deps.sh vscode`), like tests/test_editor_vscode.py.
"""

from __future__ import annotations

import pytest

from tests.vscode_support import missing_code_server, run_driver


@pytest.mark.skipif(missing_code_server() is not None, reason=str(missing_code_server()))
def test_code_server_answers_find_references_through_the_extension() -> None:
    result = run_driver("code-intel.mjs", timeout=280)
    tool_result = result["toolResult"]
    assert tool_result["is_error"] is False
    content = tool_result["content"]
    assert "(source: editor (code-server: typescript))" in content
    assert "src/a.ts" in content
    assert "src/b.ts" in content
    assert 'export const b = hello("b");' in content  # through the alias import
