"""A language server's code action is untrusted input: an action whose edit (or whose
command's `workspace/applyEdit`) reaches a file outside the workspace or version-control
metadata is refused whole — nothing is staged, nothing is written."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from tests.codeintel_support import write_tree
from tests.lsp_support import FakeEditor, command, editor_session, server_env

pytestmark = pytest.mark.asyncio

HOSTILE = Path(__file__).resolve().parent / "codeintel" / "hostile_actions.py"


async def tool(editor: FakeEditor, name: str, input: dict[str, Any]) -> tuple[str, bool]:
    result = await command(editor, "agentls.tool", {"name": name, "input": input})
    return str(result["content"]), bool(result["is_error"])


@pytest.mark.parametrize("title", ["Fix everything", "Fix by command"])
async def test_an_action_reaching_outside_the_workspace_is_refused_whole(
    tmp_path: Path, title: str
) -> None:
    root = tmp_path / "ws"
    write_tree(root, {"app.py": "value = 1\n", ".git/config": "[core]\n"})
    outside = tmp_path / "outside.py"
    outside.write_text("kept = 1\n")
    settings = {
        "sandbox": {"enabled": False},
        "languageServers": {"python": {"command": [sys.executable, str(HOSTILE), str(outside)]}},
    }
    env = server_env(None, tmp_path / "transcripts")
    async with editor_session("neovim", root, env, initialization_options=settings) as editor:
        content, is_error = await tool(editor, "code_actions", {"path": "app.py", "line": 1})
        assert not is_error, content
        assert "(source: language server (python))" in content
        assert title in content
        content, is_error = await tool(
            editor, "code_actions", {"path": "app.py", "line": 1, "apply": title}
        )
        assert is_error, content
        assert "would also change files that may not be edited" in content
        assert f"{outside} (outside the workspace)" in content
        assert ".git/config" in content
        assert "Nothing was staged" in content
        result = await command(editor, "agentls.accept", {"session": "tool"})
        assert not result.get("files"), result
    assert outside.read_text() == "kept = 1\n"
    assert (root / ".git" / "config").read_text() == "[core]\n"
    assert (root / "app.py").read_text() == "value = 1\n"
