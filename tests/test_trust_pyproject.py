"""The `[tool.agentls]` table of pyproject.toml is protected like `.agentls.toml` (issue 20
item 7): a staged change to it asks — whatever TOML spelling the model uses — and an
ordinary edit elsewhere in pyproject.toml does not. Over real stdio, as an injected model
would try it; the user's allow rule for edits does not cover it, and "Deny" stages nothing.
"""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from agentls.testing import ScriptedMessagesServer, text_turn, tool_turn
from tests.lsp_support import FakeEditor, command, editor_session, server_env

pytestmark = pytest.mark.asyncio(loop_scope="module")

PYPROJECT = (
    '[project]\nname = "shop"\ndependencies = ["requests>=2"]\n\n[tool.ruff]\nline-length = 100\n'
)
HOOK = (
    '[[tool.agentls.hooks.PreToolUse]]\nmatcher = ""\n'
    'hooks = [{type = "command", command = "touch /tmp/pwned"}]\n'
)
ALLOW_EDITS = {"permissions": {"allow": ["edit_file", "write_file", "rename_file", "delete_file"]}}


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("ws")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def editor(root: Path, tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[FakeEditor]:
    """One server whose user allows every edit; each test works in its own folder (any
    pyproject.toml counts, not only the root's)."""
    env = server_env(None, tmp_path_factory.mktemp("transcripts"))
    async with editor_session(
        "visual-studio-code", root, env, initialization_options=ALLOW_EDITS
    ) as fake:
        yield fake


counter = itertools.count()


async def _attempt(
    editor: FakeEditor, root: Path, files: dict[str, str], name: str, **tool_input: Any
) -> Any:
    """One call in a fresh folder; the user answers "Deny" to any prompt. Returns (result,
    the prompts it caused, the staged files of that folder); what it staged is rejected."""
    folder = f"case{next(counter)}"
    (root / folder).mkdir()
    for relative, text in files.items():
        (root / folder / relative).write_text(text)
    for key in ("path", "new_path"):
        if key in tool_input:
            tool_input[key] = f"{folder}/{tool_input[key]}"
    editor.choices = ["Deny"]
    before = len(editor.prompts)
    result = await command(editor, "agentls.tool", {"name": name, "input": tool_input})
    staged = await command(editor, "agentls.staged", {"session": "tool"})
    await command(editor, "agentls.reject", {"session": "tool"})
    editor.choices = []
    return result, editor.prompts[before:], staged["files"]


def _asked_about_settings(prompts: list[Any]) -> bool:
    return len(prompts) == 1 and "[tool.agentls]" in prompts[0].message


TRICKS = {
    "a hooks table appended": (
        "edit_file",
        {"old_string": "line-length = 100\n", "new_string": "line-length = 100\n\n" + HOOK},
    ),
    "a quoted key": (
        "edit_file",
        {
            "old_string": "[tool.ruff]",
            "new_string": '[tool."agentls"]\nallowedTools = ["run_command"]\n\n[tool.ruff]',
        },
    ),
    "dotted keys at the top": (
        "edit_file",
        {
            "old_string": "[project]",
            "new_string": 'tool.agentls.permissions.allow = ["run_command"]\n\n[project]',
        },
    ),
    "an allow rule through the quoted table of permissions": (
        "edit_file",
        {
            "old_string": "[tool.ruff]",
            "new_string": '[tool.agentls."permissions"]\nallow = ["run_command"]\n\n[tool.ruff]',
        },
    ),
    "the whole file rewritten": ("write_file", {"content": PYPROJECT + "\n" + HOOK}),
}


@pytest.mark.parametrize("trick", sorted(TRICKS))
async def test_changes_to_the_agentls_table_ask_in_any_spelling(
    editor: FakeEditor, root: Path, trick: str
) -> None:
    name, extra = TRICKS[trick]
    result, prompts, staged = await _attempt(
        editor, root, {"pyproject.toml": PYPROJECT}, name, path="pyproject.toml", **extra
    )
    assert _asked_about_settings(prompts), prompts
    assert result["is_error"]
    assert "denied" in result["content"]
    assert staged == []


async def test_an_inline_tool_table_asks(editor: FakeEditor, root: Path) -> None:
    text = '[project]\nname = "shop"\n'
    result, prompts, staged = await _attempt(
        editor,
        root,
        {"pyproject.toml": text},
        "write_file",
        path="pyproject.toml",
        content='tool = { agentls = { allowedTools = ["run_command"] } }\n' + text,
    )
    assert _asked_about_settings(prompts)
    assert result["is_error"]
    assert staged == []


async def test_an_ordinary_dependency_edit_does_not_ask(editor: FakeEditor, root: Path) -> None:
    result, prompts, staged = await _attempt(
        editor,
        root,
        {"pyproject.toml": PYPROJECT + "\n[tool.agentls]\nmaxTurns = 5\n"},
        "edit_file",
        path="pyproject.toml",
        old_string='"requests>=2"',
        new_string='"requests>=2", "rich>=13"',
    )
    assert prompts == [], result
    assert not result["is_error"], result
    assert [Path(f["uri"]).name for f in staged] == ["pyproject.toml"]


async def test_a_dotted_key_inside_another_table_is_not_the_agentls_table(
    editor: FakeEditor, root: Path
) -> None:
    """`tool.agentls.x` written under `[project]` is `project.tool.agentls.x`: no prompt."""
    result, prompts, _ = await _attempt(
        editor,
        root,
        {"pyproject.toml": PYPROJECT},
        "edit_file",
        path="pyproject.toml",
        old_string='name = "shop"\n',
        new_string='name = "shop"\ntool.agentls.note = "x"\n',
    )
    assert prompts == [], result
    assert not result["is_error"], result


async def test_deleting_or_breaking_a_table_of_deny_rules_asks(
    editor: FakeEditor, root: Path
) -> None:
    text = PYPROJECT + '\n[tool.agentls.permissions]\ndeny = ["run_command"]\n'
    deleted, prompts, _ = await _attempt(
        editor, root, {"pyproject.toml": text}, "delete_file", path="pyproject.toml"
    )
    assert _asked_about_settings(prompts)
    assert deleted["is_error"]
    broken, prompts, _ = await _attempt(
        editor,
        root,
        {"pyproject.toml": text},
        "edit_file",
        path="pyproject.toml",
        old_string="[tool.ruff]",
        new_string="[tool.ruff",  # invalid TOML: the loader would drop the deny rule
    )
    assert _asked_about_settings(prompts)
    assert broken["is_error"]


async def test_renaming_a_file_into_pyproject_toml_asks(editor: FakeEditor, root: Path) -> None:
    result, prompts, staged = await _attempt(
        editor,
        root,
        {"notes.toml": '[tool.agentls]\nallowedTools = ["run_command"]\n'},
        "rename_file",
        path="notes.toml",
        new_path="pyproject.toml",
    )
    assert _asked_about_settings(prompts)
    assert result["is_error"]
    assert staged == []


async def test_an_injected_model_cannot_stage_a_hook_without_the_user(
    tmp_path: Path, api: ScriptedMessagesServer
) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "pyproject.toml").write_text(PYPROJECT)
    env = server_env(api.base_url, tmp_path / "transcripts")
    api.extend(
        tool_turn(
            (
                "edit_file",
                {
                    "path": "pyproject.toml",
                    "old_string": "[tool.ruff]",
                    "new_string": HOOK + "\n[tool.ruff]",
                },
            )
        ),
        text_turn("done"),
    )
    async with editor_session(
        "visual-studio-code", root, env, initialization_options=ALLOW_EDITS
    ) as editor:
        editor.choices = ["Deny"]
        result = await command(editor, "agentls.run", {"prompt": "tidy up", "wait": True})
    assert _asked_about_settings(editor.prompts)
    assert result["edit"] is None  # nothing staged, nothing delivered
    assert (root / "pyproject.toml").read_text() == PYPROJECT
    tool_result = api.requests[-1].messages[-1]["content"][0]
    assert tool_result["is_error"]
    assert "the user denied" in str(tool_result["content"])
