"""The `lint` / `tests` settings reach the tools through the host: from the project file,
replaced by the editor's settings (didChangeConfiguration), a bad entry reported."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from lsprotocol import types

from tests.lsp_support import command, editor_session, server_env, wait_for
from tests.trust_support import trust_workspace

pytestmark = pytest.mark.asyncio

LINTER = "import sys; [print(f'{n}:1:1: {sys.argv[1]} says hi') for n in sys.argv[2:]]"
PATTERN = r"regex:^(?P<file>[^:]+):(?P<line>\d+):(?P<column>\d+): (?P<message>.+)$"


def _entry(name: str) -> dict[str, object]:
    return {
        "name": name,
        "command": [sys.executable, "-c", LINTER, name, "{paths}"],
        "languages": ["sql"],
        "format": PATTERN,
    }


async def _lint(editor: object) -> dict[str, object]:
    arguments = {"name": "lint", "input": {"paths": ["q.sql"]}}
    result = await command(editor, "agentls.tool", arguments)  # type: ignore[arg-type]
    assert not result["is_error"], result
    parsed: dict[str, object] = json.loads(result["content"])
    return parsed


async def test_project_then_editor_lint_settings_apply(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "q.sql").write_text("select 1;\n")
    command_toml = json.dumps(_entry("project-lint")["command"])  # a JSON array is TOML too
    (root / ".agentls.toml").write_text(
        f"[[lint]]\nname = 'project-lint'\ncommand = {command_toml}\n"
        f"languages = ['sql']\nformat = '{PATTERN}'\n"
    )
    env = server_env(None, tmp_path / "state")
    trust_workspace(root, env)  # a project's commands run once the workspace is trusted
    async with editor_session("neovim", root, env) as editor:
        found = await _lint(editor)
        assert [d["source"] for d in found["diagnostics"]] == ["project-lint"]  # type: ignore[index]
        editor.client.workspace_did_change_configuration(
            types.DidChangeConfigurationParams(
                settings={
                    "agentls": {"lint": [_entry("editor-lint"), {"command": ["x"], "format": "?"}]}
                }
            )
        )
        await wait_for(lambda: any("`lint[1]" in m.message for m in editor.client.messages))
        found = await _lint(editor)
        assert [d["source"] for d in found["diagnostics"]] == ["editor-lint"]  # type: ignore[index]
        assert found["diagnostics"][0]["message"] == "editor-lint says hi"  # type: ignore[index]
