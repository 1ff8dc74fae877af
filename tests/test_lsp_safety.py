"""Secret files and the agent's credentials, attacked through `agentls serve` over stdio.

Two servers: one with its safety settings loaded (the normal path) and one whose safety
settings fail to load (the fallback: no rules, no hooks). Both must refuse every trick
for reading a secret file and redact the API key from every tool result, for direct tool
calls (`agentls.tool`) and for a model's calls in a run; the fallback must fail closed.
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator, Iterator

import pytest
import pytest_asyncio

from agentls.testing import ScriptedMessagesServer, text_turn, tool_turn
from tests.lsp_support import FakeEditor, command, editor_session, server_env
from tests.safety_support import API_KEY, hostile_workspace, leaked, secret_attacks

pytestmark = pytest.mark.asyncio(loop_scope="module")

BROKEN_SETTINGS = '''"""Test only: the safety settings cannot be loaded (as with a settings file
that breaks the loader), so the server takes its fallback path."""
import agentls.agent.safety as settings_files


def _cannot_load(*args, **kwargs):
    raise RuntimeError("simulated: the safety settings cannot be read")


settings_files.load_safety = _cannot_load
'''


@pytest.fixture(scope="module")
def api() -> Iterator[ScriptedMessagesServer]:
    with ScriptedMessagesServer([]) as server:
        yield server


@pytest_asyncio.fixture(scope="module", loop_scope="module", params=["normal", "fallback"])
async def editor(
    request: pytest.FixtureRequest,
    api: ScriptedMessagesServer,
    tmp_path_factory: pytest.TempPathFactory,
) -> AsyncIterator[FakeEditor]:
    base = tmp_path_factory.mktemp(request.param)
    root = hostile_workspace(base / "ws")
    extra = {"ANTHROPIC_API_KEY": API_KEY}
    if request.param == "fallback":
        hooks = base / "site"
        hooks.mkdir()
        (hooks / "sitecustomize.py").write_text(BROKEN_SETTINGS)
        extra["PYTHONPATH"] = os.pathsep.join(
            p for p in (str(hooks), os.environ.get("PYTHONPATH", "")) if p
        )
    env = server_env(api.base_url, base / "transcripts", **extra)
    async with editor_session("visual-studio-code", root, env) as fake:
        await command(fake, "agentls.status")  # the host (and its settings) are ready
        fallback = any("could not be loaded" in m.message for m in fake.client.messages)
        assert fallback == (request.param == "fallback"), fake.client.messages
        yield fake


async def _tool(editor: FakeEditor, name: str, tool_input: dict[str, object]) -> dict[str, object]:
    result = await command(editor, "agentls.tool", {"name": name, "input": tool_input})
    assert isinstance(result, dict)
    return result


def _no_key(content: object) -> bool:
    text = json.dumps(content)
    return not any(API_KEY[i : i + 12] in text for i in range(len(API_KEY) - 11))


async def test_every_secret_file_trick_is_refused(editor: FakeEditor) -> None:
    for name, tool_input in secret_attacks(editor.root):
        result = await _tool(editor, name, tool_input)
        assert not leaked(result["content"]), (name, tool_input, result)


async def test_a_staged_rename_does_not_smuggle_a_secret_out(editor: FakeEditor) -> None:
    moved = await _tool(editor, "rename_file", {"path": ".env", "new_path": "innocent.txt"})
    assert moved["is_error"]
    assert "secret" in str(moved["content"])
    read = await _tool(editor, "read_file", {"path": "innocent.txt"})
    assert not leaked(read["content"])


async def test_the_key_is_redacted_from_tool_results(editor: FakeEditor) -> None:
    read = await _tool(editor, "read_file", {"path": "pasted.md"})
    assert read["is_error"]
    assert _no_key(read["content"])
    assert "REDACTED" in str(read["content"])
    found = await _tool(editor, "grep", {"pattern": "sk-ant"})
    assert _no_key(found["content"])
    assert "REDACTED" in str(found["content"])


async def test_a_models_calls_never_bring_secrets_or_the_key_back(
    editor: FakeEditor, api: ScriptedMessagesServer
) -> None:
    api.extend(
        tool_turn(
            ("read_file", {"path": "notes.txt"}),
            ("read_file", {"path": ".ENV"}),
            ("read_file", {"path": "pasted.md"}),
            ("grep", {"pattern": "DB_PASSWORD|aws_secret"}),
        ),
        text_turn("nothing to see"),
    )
    before = len(api.message_requests)
    result = await command(editor, "agentls.run", {"prompt": "find passwords", "wait": True})
    assert result["status"] == "completed"
    for request in api.message_requests[before:]:
        body = request.body.decode()
        assert not leaked(body)
        assert _no_key(body)
    sent = api.message_requests[-1].tool_results()
    assert [r["is_error"] for r in sent[:3]] == [True, True, True]


async def test_calls_that_need_approval_are_asked_for(editor: FakeEditor) -> None:
    """With or without loaded settings, run_command is asked about (never run unasked)."""
    editor.prompts.clear()
    editor.choices[:] = ["Deny"]
    result = await _tool(editor, "run_command", {"command": "touch ran-it"})
    assert len(editor.prompts) == 1
    assert "run_command" in editor.prompts[0].message
    assert result["is_error"]
    assert "denied" in str(result["content"])
