"""Problems an edit introduced, in the write tool's result (issue 30, `checks.afterEdit`),
checked by real basedpyright started headless by `agentls serve`."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio

from tests.codeintel_support import basedpyright_langserver, write_tree
from tests.lsp_support import FakeEditor, command, editor_session, server_env

pytestmark = pytest.mark.asyncio(loop_scope="module")

FILES = {
    "a.py": "def double(n: int) -> int:\n    return n * 2\n",
    "b.py": "from a import double\nvalue = double(2)\n",
    "c.py": "from a import double\nother = double(3)\n",
    "d.py": 'from a import double\nbroken = double("1")\n',
}


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def editor(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[FakeEditor]:
    basedpyright_langserver()
    root = tmp_path_factory.mktemp("proj")
    write_tree(root, FILES)
    env = server_env(None, tmp_path_factory.mktemp("transcripts"))
    # a generous bound: this test is about what is reported, not how fast (see bench/)
    options = {"checks": {"afterEditSeconds": 60}}
    async with editor_session("neovim", root, env, initialization_options=options) as fake:
        # warm the server up, as a session that read the file would have
        await tool(fake, "diagnostics", {"paths": ["a.py"]})
        yield fake


async def tool(editor: FakeEditor, name: str, input: dict[str, Any]) -> str:
    result = await command(editor, "agentls.tool", {"name": name, "input": input})
    assert not result["is_error"], result["content"]
    return str(result["content"])


async def test_a_str_passed_to_an_int_parameter_in_another_file_is_reported(
    editor: FakeEditor,
) -> None:
    content = await tool(
        editor,
        "edit_file",
        {"path": "b.py", "old_string": "double(2)", "new_string": 'double("2")'},
    )
    assert "1 new problem: b.py:2 error: Argument of type" in content, content
    assert "(checked by language server (basedpyright))" in content
    await command(editor, "agentls.reject", {"session": "tool"})


async def test_a_clean_edit_reports_nothing(editor: FakeEditor) -> None:
    content = await tool(
        editor, "edit_file", {"path": "c.py", "old_string": "double(3)", "new_string": "double(4)"}
    )
    assert "problem" not in content, content
    assert "not ready" not in content, content
    await command(editor, "agentls.reject", {"session": "tool"})


async def test_a_problem_that_was_there_before_is_not_new_and_a_fix_is_counted(
    editor: FakeEditor,
) -> None:
    content = await tool(
        editor, "edit_file", {"path": "d.py", "old_string": "broken", "new_string": "still"}
    )
    assert "new problem" not in content, content  # the old error moved with the rename
    content = await tool(
        editor,
        "edit_file",
        {"path": "d.py", "old_string": 'double("1")', "new_string": "double(1)"},
    )
    assert "1 problem resolved." in content, content
    await command(editor, "agentls.reject", {"session": "tool"})


async def test_checks_after_edit_off_reports_nothing(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    root = tmp_path_factory.mktemp("off")
    write_tree(root, FILES)
    env = server_env(None, tmp_path_factory.mktemp("transcripts"))
    options = {"checks": {"afterEdit": "off"}}
    async with editor_session("neovim", root, env, initialization_options=options) as fake:
        content = await tool(
            fake,
            "edit_file",
            {"path": "b.py", "old_string": "double(2)", "new_string": 'double("2")'},
        )
    assert "problem" not in content, content
