"""`agentls serve` as a language server: start-up, configuration, commands and their errors."""

from __future__ import annotations

import asyncio
import json
import os
import stat
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import pytest_asyncio
from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams

from agentls.testing import ScriptedMessagesServer, text_turn, tool_turn
from tests.lsp_support import (
    HELIX_LIKE,
    FakeEditor,
    code_actions,
    command,
    editor_session,
    server_env,
    wait_for,
)

pytestmark = pytest.mark.asyncio(loop_scope="module")

COMMANDS = {
    "agentls.run",
    "agentls.ask",
    "agentls.cancel",
    "agentls.accept",
    "agentls.reject",
    "agentls.tool",
    "agentls.tools",
    "agentls.status",
}


@pytest.fixture(scope="module")
def api() -> Iterator[ScriptedMessagesServer]:
    with ScriptedMessagesServer([]) as server:
        yield server


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("ws")
    (root / ".agentls.toml").write_text('maxTurns = 7\nmode = "plan"\nbaseUrl = "http://evil"\n')
    (root / "seed.py").write_text("def seed():\n    pass\n")  # something to index at start
    return root


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def editor(
    api: ScriptedMessagesServer, root: Path, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[FakeEditor]:
    env = server_env(api.base_url, tmp_path_factory.mktemp("transcripts"))
    options = {"agentls": {"model": "claude-test-model", "maxTokens": "lots", "colour": "red"}}
    async with editor_session(
        "visual-studio-code", root, env, initialization_options=options
    ) as fake:
        yield fake


async def test_initialize_advertises_commands_and_incremental_sync(editor: FakeEditor) -> None:
    caps = editor.server_capabilities
    assert caps is not None
    assert caps.execute_command_provider is not None
    assert set(caps.execute_command_provider.commands) >= COMMANDS
    sync = caps.text_document_sync
    kind = sync.change if isinstance(sync, types.TextDocumentSyncOptions) else sync
    assert kind == types.TextDocumentSyncKind.Incremental


async def test_invalid_settings_are_reported_and_the_rest_applies(editor: FakeEditor) -> None:
    await wait_for(lambda: bool(editor.client.messages))
    shown = " ".join(m.message for m in editor.client.messages)
    assert "`maxTokens` = 'lots' is invalid" in shown
    assert "unknown setting `colour`" in shown
    assert "`baseUrl` cannot be set here" in shown  # a project file may not redirect the key
    status = await command(editor, "agentls.status")
    # project file < editor settings; valid fields of both apply
    assert status["model"] == "claude-test-model"
    assert status["mode"] == "plan"
    assert status["endpoint"].startswith("http://127.0.0.1")


async def test_did_change_configuration_updates_and_rejects_bad_values(
    editor: FakeEditor,
) -> None:
    editor.client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"agentls": {"mode": "auto", "maxTurns": 0}})
    )
    status = await command(editor, "agentls.status")
    assert status["mode"] == "auto"
    await wait_for(lambda: "`maxTurns` = 0" in editor.client.messages[-1].message)
    editor.client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"agentls": {"mode": "sideways"}})
    )
    status = await command(editor, "agentls.status")
    assert status["mode"] == "plan", "invalid mode → back to the project file's value"
    editor.client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"agentls": {"model": "claude-test-model"}})
    )


@pytest.mark.parametrize(
    ("name", "arguments", "problem"),
    [
        ("agentls.run", [{}], "`prompt` is required"),
        ("agentls.run", [{"prompt": 3}], "`prompt`: Input should be a valid string"),
        ("agentls.run", [{"prompt": "x", "mode": "yolo"}], "`mode`"),
        ("agentls.run", [{"prompt": "x", "session": "nope"}], "unknown session 'nope'"),
        (
            "agentls.run",
            [
                {
                    "prompt": "x",
                    "range": {
                        "start": {"line": 0, "character": 0},
                        "end": {"line": 0, "character": 1},
                    },
                }
            ],
            "`range` needs `uri`",
        ),
        ("agentls.run", ["just a string"], "the argument must be an object"),
        ("agentls.run", [{"prompt": "x"}, {}], "expected one argument object"),
        ("agentls.cancel", [{"session": "nope"}], "unknown session 'nope'"),
        ("agentls.accept", [{}], "`session` is required"),
        ("agentls.reject", [{"session": "nope"}], "unknown session 'nope'"),
        ("agentls.tool", [{"input": {}}], "`name` is required"),
        ("agentls.tool", [{"name": "read_file", "input": []}], "`input`"),
        ("agentls.status", [{"verbose": True}], "`verbose` is not a known argument"),
    ],
)
async def test_bad_arguments_get_an_error_naming_the_problem(
    editor: FakeEditor, name: str, arguments: list[object], problem: str
) -> None:
    with pytest.raises(JsonRpcInvalidParams) as raised:
        await command(editor, name, *arguments)
    assert problem in str(raised.value)
    assert name in str(raised.value)
    status = await command(editor, "agentls.status")  # the server stays up
    assert "sessions" in status


async def test_tools_are_listed_exactly_as_the_next_request_sends_them(
    editor: FakeEditor, api: ScriptedMessagesServer
) -> None:
    tools = await command(editor, "agentls.tools", {"mode": "review"})
    names = [t["name"] for t in tools]
    assert names == sorted(names)
    assert {"read_file", "edit_file", "write_file"} <= set(names)
    assert tools[-1]["cache_control"] == {"type": "ephemeral"}
    plan_tools = await command(editor, "agentls.tools", {"mode": "plan"})
    assert "write_file" not in [t["name"] for t in plan_tools]
    api.extend(text_turn("hi"))
    result = await command(editor, "agentls.run", {"prompt": "hi", "mode": "review", "wait": True})
    assert result["status"] == "completed"
    sent = api.message_requests[-1].json["tools"]
    assert json.dumps(sent, sort_keys=True) == json.dumps(tools, sort_keys=True)
    follow = await command(editor, "agentls.tools", {"session": result["session"]})
    assert follow == tools


async def test_tool_runs_one_call_through_the_pipeline_and_sees_unsaved_buffers(
    editor: FakeEditor, root: Path
) -> None:
    path = root / "direct.py"
    path.write_text("on_disk = 1\n")
    uri = editor.open(path)
    editor.type(uri, (0, 0), (0, 7), "in_buffer")
    result = await command(
        editor, "agentls.tool", {"name": "read_file", "input": {"path": "direct.py"}}
    )
    assert result["is_error"] is False
    assert "in_buffer = 1" in result["content"]
    bad = await command(editor, "agentls.tool", {"name": "read_file", "input": {"paht": "x"}})
    assert bad["is_error"] is True
    assert "paht" in bad["content"]
    unknown = await command(editor, "agentls.tool", {"name": "nope", "input": {}})
    assert unknown["is_error"] is True
    assert "read_file" in unknown["content"]
    escape = await command(editor, "agentls.tool", {"name": "read_file", "input": {"path": "../x"}})
    assert escape["is_error"] is True


async def test_ask_shows_a_short_answer_as_a_message(
    editor: FakeEditor, api: ScriptedMessagesServer, root: Path
) -> None:
    (root / "ask.py").write_text("X = 1\n")
    api.extend(tool_turn(("read_file", {"path": "ask.py"})), text_turn("X is one."))
    result = await command(editor, "agentls.ask", {"prompt": "what is X?", "wait": True})
    assert result["status"] == "completed"
    assert result["text"] == "X is one."
    assert editor.client.messages[-1].message == "X is one."
    assert "write_file" not in api.message_requests[-1].tool_names


async def test_ask_opens_a_long_answer_as_a_markdown_document(
    editor: FakeEditor, api: ScriptedMessagesServer
) -> None:
    answer = "# Answer\n\n" + "\n".join(f"- point {i}" for i in range(40))
    api.extend(text_turn(answer))
    result = await command(editor, "agentls.ask", {"prompt": "explain", "wait": True})
    shown = editor.client.shown_documents[-1]
    assert shown.uri == result["answer"]
    assert shown.uri.endswith(".md")
    saved_path = Path(shown.uri.removeprefix("file://"))
    saved = await asyncio.to_thread(saved_path.read_text)
    assert saved == answer + "\n"
    # the answer may hold the user's code: only its owner can read it
    modes = await asyncio.to_thread(lambda: [saved_path.stat(), saved_path.parent.stat()])
    assert [stat.S_IMODE(m.st_mode) for m in modes] == [0o600, 0o700]
    assert saved_path.parent.parent.name == f"agentls-{os.getuid()}"


async def test_selection_context_reaches_the_prompt(
    editor: FakeEditor, api: ScriptedMessagesServer, root: Path
) -> None:
    path = root / "sel.py"
    path.write_text("a = 1\nb = 2\nc = 3\n")
    uri = editor.open(path)
    api.extend(text_turn("ok"))
    selection = {"start": {"line": 1, "character": 0}, "end": {"line": 1, "character": 5}}
    await command(
        editor,
        "agentls.run",
        {"prompt": "explain", "uri": uri, "range": selection, "mode": "plan", "wait": True},
    )
    text = api.message_requests[-1].user_text()
    assert "sel.py" in text
    assert "b = 2" in text
    assert "a = 1" not in text


async def test_missing_api_key_fails_the_run_with_a_clear_message(
    root: Path, tmp_path: Path
) -> None:
    env = server_env(None, tmp_path)
    async with editor_session(HELIX_LIKE, root, env) as fake:
        result = await command(fake, "agentls.run", {"prompt": "hi", "wait": True})
        assert result["status"] == "failed"
        assert "ANTHROPIC_API_KEY" in result["error"]
        assert any("ANTHROPIC_API_KEY" in m.message for m in fake.client.messages)
        status = await command(fake, "agentls.status")
        assert status["credentials"] is False


async def test_document_and_workspace_symbols_come_from_the_index(
    editor: FakeEditor, root: Path
) -> None:
    path = root / "symbols_mod.py"
    text = (
        "class Greeter:\n    def greet(self, who='😀'): return who\n"
        "\n\ndef farewell_all():\n    pass\n"
    )
    path.write_text(text, encoding="utf-8")
    uri = editor.open(path, text)
    outline = await editor.client.text_document_document_symbol_async(
        types.DocumentSymbolParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    assert outline is not None
    names = [s.name for s in outline]
    assert names == ["Greeter", "farewell_all"]
    greeter = outline[0]
    assert isinstance(greeter, types.DocumentSymbol)
    assert greeter.children
    method = greeter.children[0]
    assert method.name == "greet"
    # the method's range ends after the emoji: UTF-16 counts it as two units
    line = "    def greet(self, who='😀'): return who"
    assert method.range.end == types.Position(1, len(line.encode("utf-16-le")) // 2)

    found: list[types.SymbolInformation | types.WorkspaceSymbol] = []
    for _ in range(100):  # the background index may still be building
        result = await editor.client.workspace_symbol_async(
            types.WorkspaceSymbolParams(query="farew")
        )
        found = list(result or [])
        if found:
            break
        await asyncio.sleep(0.05)
    assert [s.name for s in found] == ["farewell_all"]
    location = found[0].location
    assert isinstance(location, types.Location)
    assert location.uri == uri
    assert location.range.start == types.Position(4, 4)
    status = await command(editor, "agentls.status")
    assert status["index"]["state"] in ("ready", "building")
    assert status["index"]["files"] >= 1


async def test_code_actions_offer_fix_and_ask_and_run_with_the_context(
    editor: FakeEditor, api: ScriptedMessagesServer, root: Path
) -> None:
    path = root / "broken.py"
    path.write_text("def f():\n    return undefined_name\n")
    uri = editor.open(path)
    diagnostic = types.Diagnostic(
        range=types.Range(types.Position(1, 11), types.Position(1, 25)),
        message="undefined name 'undefined_name'",
        source="pyflakes",
    )
    actions = await code_actions(
        editor,
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=types.Range(types.Position(1, 4), types.Position(1, 12)),
            context=types.CodeActionContext(diagnostics=[diagnostic]),
        ),
    )
    by_title = {a["title"]: a["command"] for a in actions}
    assert {"Fix with agentls", "Ask agentls about this selection"} <= set(by_title)
    fix = by_title["Fix with agentls"]
    assert fix["command"] == "agentls.run"
    assert by_title["Ask agentls about this selection"]["command"] == "agentls.ask"
    api.extend(text_turn("Defined it."))
    arguments = {**fix["arguments"][0], "wait": True, "mode": "plan"}
    result = await command(editor, fix["command"], arguments)
    assert result["status"] == "completed"
    sent = api.message_requests[-1].user_text()
    assert "undefined name 'undefined_name'" in sent
    assert "return undefined_name" in sent


async def test_a_direct_write_is_staged_under_the_tool_session_until_accepted(
    editor: FakeEditor, root: Path
) -> None:
    written = await command(
        editor,
        "agentls.tool",
        {"name": "write_file", "input": {"path": "direct_new.txt", "content": "hello\n"}},
    )
    assert written["is_error"] is False
    assert not (root / "direct_new.txt").exists()
    read = await command(
        editor, "agentls.tool", {"name": "read_file", "input": {"path": "direct_new.txt"}}
    )
    assert "hello" in read["content"], "later calls see the staged write"
    accepted = await command(editor, "agentls.accept", {"session": "tool"})
    assert accepted["applied"] is True
    assert editor.text(root / "direct_new.txt") == "hello\n"


async def test_a_follow_up_continues_the_session(
    editor: FakeEditor, api: ScriptedMessagesServer
) -> None:
    api.extend(text_turn("The answer is 4."), text_turn("Doubled: 8."))
    first = await command(editor, "agentls.run", {"prompt": "2+2?", "mode": "plan", "wait": True})
    second = await command(
        editor,
        "agentls.run",
        {"prompt": "double it", "session": first["session"], "mode": "plan", "wait": True},
    )
    assert second["session"] == first["session"]
    assert second["text"] == "Doubled: 8."
    history = api.message_requests[-1].messages
    assert [m["role"] for m in history] == ["user", "assistant", "user"]
    assert "The answer is 4." in str(history[1])


async def test_a_settings_change_without_values_pulls_the_agentls_section(
    editor: FakeEditor,
) -> None:
    editor.client.set_configuration({"mode": "review", "model": "claude-pulled"}, section="agentls")
    editor.client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings=None)
    )
    for _ in range(100):
        status = await command(editor, "agentls.status")
        if status["model"] == "claude-pulled":
            break
        await asyncio.sleep(0.05)
    assert status["model"] == "claude-pulled"
    assert status["mode"] == "review"
    editor.client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"agentls": {"model": "claude-test-model"}})
    )


async def test_workspace_symbols_in_a_workspace_that_starts_empty(
    api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    root = tmp_path / "empty"
    root.mkdir()
    async with editor_session("visual-studio-code", root, server_env(None, tmp_path)) as fake:
        status = await command(fake, "agentls.status")
        for _ in range(100):
            status = await command(fake, "agentls.status")
            if status["index"]["state"] == "ready":
                break
            await asyncio.sleep(0.05)
        path = root / "late.py"
        path.write_text("def late_comer():\n    pass\n")
        fake.open(path)
        found: list[object] = []
        for _ in range(40):
            found = list(
                await fake.client.workspace_symbol_async(types.WorkspaceSymbolParams(query="late"))
                or []
            )
            if found:
                break
            await asyncio.sleep(0.05)
        assert found
