"""Files whose URIs are percent-encoded (spaces, non-ASCII: `my%20file.py`, as every
editor sends them): the agent reads the unsaved buffer, not the disk, and its edit reaches
the open buffer — across the four client presets of `test_lsp_edits`."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest
import pytest_asyncio

from agentls.testing import ScriptedMessagesServer, text_turn, tool_turn
from tests.lsp_support import (
    HELIX_LIKE,
    FakeEditor,
    command,
    editor_session,
    run_to_applied,
    server_env,
)

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest.fixture(scope="module")
def api() -> Iterator[ScriptedMessagesServer]:
    with ScriptedMessagesServer([]) as server:
        yield server


@pytest_asyncio.fixture(
    scope="module", loop_scope="module", params=["visual-studio-code", "neovim", HELIX_LIKE]
)
async def editor(
    request: pytest.FixtureRequest,
    api: ScriptedMessagesServer,
    tmp_path_factory: pytest.TempPathFactory,
) -> AsyncIterator[FakeEditor]:
    root = tmp_path_factory.mktemp("ws")
    env = server_env(api.base_url, tmp_path_factory.mktemp("transcripts"))
    async with editor_session(request.param, root, env) as fake:
        yield fake


@pytest.mark.parametrize("name", ["my file.py", "dossier é/naïve ü.py"])
async def test_unsaved_text_is_read_and_the_edit_reaches_the_buffer(
    editor: FakeEditor, api: ScriptedMessagesServer, name: str
) -> None:
    path = editor.root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("value = 1\n", encoding="utf-8")
    uri = editor.open(path, "value = 2  # unsaved\n")
    assert "%20" in uri or "%C3" in uri  # the editor's encoded form
    read = await command(editor, "agentls.tool", {"name": "read_file", "input": {"path": name}})
    assert not read["is_error"]
    assert "value = 2  # unsaved" in read["content"]  # the buffer, not the disk
    api.extend(
        tool_turn(("edit_file", {"path": name, "old_string": "value = 2", "new_string": "v = 3"})),
        text_turn("done"),
    )
    await run_to_applied(editor, "rename")
    assert editor.text(path) == "v = 3  # unsaved\n"  # the open buffer got the edit
    assert path.read_text(encoding="utf-8") == "value = 1\n"  # the disk is the editor's to save


@pytest.mark.asyncio(loop_scope="function")
async def test_a_file_opened_while_the_server_starts_keeps_the_uri_the_editor_sent(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """Editors reopen their tabs right after `initialized`, while the server still imports:
    those buffers are taken from pygls's table, keyed by the *unquoted* URI. Decoding that
    again turned a literal `%41` in a file name into `A`: the agent read the disk and
    edits went to the wrong path."""
    root = tmp_path_factory.mktemp("ws")
    env = server_env("http://127.0.0.1:9", tmp_path_factory.mktemp("transcripts"))
    name = "odd%41 naïve.py"
    path = root / name
    path.write_text("value = 1\n", encoding="utf-8")
    async with editor_session("visual-studio-code", root, env) as editor:
        uri = editor.open(path, "value = 2  # unsaved\n")  # before the server is ready
        assert "%2541" in uri
        read = await command(editor, "agentls.tool", {"name": "read_file", "input": {"path": name}})
        assert not read["is_error"], read["content"]
        assert "value = 2  # unsaved" in read["content"]
