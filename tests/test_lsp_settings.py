"""Every documented editor setting over real stdio: alone, and beside its environment variable.

Issue 20 item 5: `initializationOptions {"baseUrl": …}` failed every run, and `model` /
`maxTurns` / … failed whenever the matching `AGENTLS_*` variable was set (`agentls.status`
answered -32603). Each case starts `agentls serve`, sends the one setting as the editor
would, and checks that nothing is reported, that `agentls.status` shows the setting in
effect (the editor's value wins over the environment's), and that a run works and sends
what the setting says to the Messages API.

The settings are checked alone on one server (each `didChangeConfiguration` replaces the
editor's section), and through `initializationOptions` beside their environment variable
on a server each (start-up dominates the time).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from lsprotocol import types

from agentls.testing import ScriptedMessagesServer, text_turn
from tests.lsp_support import FakeEditor, command, editor_session, server_env

pytestmark = pytest.mark.asyncio(loop_scope="module")

UNREACHABLE = "http://127.0.0.1:9"
"""An endpoint nothing listens on: a run that used it would fail."""
API = "<the scripted API>"

DOCUMENTED: list[tuple[str, Any]] = [
    ("model", "claude-from-editor"),
    ("maxTokens", 1234),
    ("maxTurns", 3),
    ("temperature", 0.25),
    ("requestTimeout", 42.0),
    ("baseUrl", API),
    ("mode", "plan"),
    ("instructions", "Answer in the voice of a lighthouse keeper."),
    ("allowedTools", ["run_command"]),
    ("askTools", ["read_file"]),
    ("permissions", {"deny": ["delete_file"], "defaultMode": "acceptEdits"}),
    ("permissionMode", "acceptEdits"),
    ("hooks", {"Stop": [{"hooks": [{"type": "command", "command": "true"}]}]}),
    ("secrets", {"extraPatterns": ["*.vault"]}),
    ("readClaudeSettings", False),
    ("trustProjectSettings", False),
    ("allowBypassPermissions", True),
    ("runCommand", {"where": "workspace", "timeout": 30}),
    ("mcp", {"startup": "lazy", "disabledServers": ["nothing"]}),
    ("toolSearch", {"mode": "never", "maxResults": 3}),
]
WITH_VARIABLE: list[tuple[str, Any, str, str]] = [
    ("model", "claude-from-editor", "AGENTLS_MODEL", "claude-from-env"),
    ("maxTokens", 1234, "AGENTLS_MAX_TOKENS", "999"),
    ("maxTurns", 3, "AGENTLS_MAX_TURNS", "9"),
    ("temperature", 0.25, "AGENTLS_TEMPERATURE", "0.9"),
    ("requestTimeout", 42.0, "AGENTLS_REQUEST_TIMEOUT", "77"),
    ("baseUrl", API, "ANTHROPIC_BASE_URL", UNREACHABLE),
]
SENT: dict[str, str] = {"model": "model", "maxTokens": "max_tokens", "temperature": "temperature"}
"""Settings the Messages API request carries, by request field."""


@pytest.fixture(scope="module")
def api() -> Iterator[ScriptedMessagesServer]:
    with ScriptedMessagesServer([]) as server:
        yield server


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def editor(
    api: ScriptedMessagesServer, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[FakeEditor]:
    env = server_env(api.base_url, tmp_path_factory.mktemp("transcripts"))
    root = tmp_path_factory.mktemp("ws")
    async with editor_session("visual-studio-code", root, env) as fake:
        yield fake


def _contains(actual: Any, expected: Any) -> bool:
    if isinstance(expected, dict):
        return isinstance(actual, dict) and all(
            k in actual and _contains(actual[k], v) for k, v in expected.items()
        )
    if isinstance(expected, list):
        return (
            isinstance(actual, list)
            and len(actual) == len(expected)
            and all(_contains(a, e) for a, e in zip(actual, expected, strict=True))
        )
    return bool(actual == expected)


async def _applies(editor: FakeEditor, api: ScriptedMessagesServer, key: str, value: Any) -> None:
    """`agentls.status` shows the setting in effect; a run works and sends what it says."""
    status = await command(editor, "agentls.status")
    assert _contains(status["settings"][key], value), (key, status["settings"][key])
    if key == "baseUrl":
        assert status["endpoint"] == value
    if key == "model":
        assert status["model"] == value
    before = len(api.message_requests)
    api.extend(text_turn("Done."))
    result = await command(editor, "agentls.run", {"prompt": "Say done.", "wait": True})
    assert result["status"] == "completed", result
    request = api.message_requests[before]
    if key in SENT:
        assert request.json[SENT[key]] == value
    if key == "instructions":
        assert value in request.system_text
    reported = [m.message for m in editor.client.messages if "configuration:" in m.message]
    assert not reported, reported


@pytest.mark.parametrize(("key", "value"), DOCUMENTED, ids=[k for k, _ in DOCUMENTED])
async def test_each_documented_setting_alone_applies(
    editor: FakeEditor, api: ScriptedMessagesServer, key: str, value: Any
) -> None:
    """The editor's section holds this one setting (each change replaces the section)."""
    value = api.base_url if value == API else value
    editor.client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"agentls": {key: value}})
    )
    await _applies(editor, api, key, value)


@pytest.mark.parametrize(
    ("key", "value", "variable", "env_value"), WITH_VARIABLE, ids=[v for *_, v, _ in WITH_VARIABLE]
)
async def test_initialization_options_win_over_the_environment_variable(
    api: ScriptedMessagesServer,
    tmp_path: Path,
    key: str,
    value: Any,
    variable: str,
    env_value: str,
) -> None:
    """The setting alone in `initializationOptions`, its variable set to something else."""
    value = api.base_url if value == API else value
    env = server_env(api.base_url, tmp_path / "transcripts", **{variable: env_value})
    root = tmp_path / "ws"
    root.mkdir()
    options = {"agentls": {key: value}}
    async with editor_session(
        "visual-studio-code", root, env, initialization_options=options
    ) as editor:
        await _applies(editor, api, key, value)


async def test_the_environment_variable_applies_when_the_editor_sets_nothing(
    api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    env = server_env(
        UNREACHABLE,
        tmp_path / "transcripts",
        ANTHROPIC_BASE_URL=api.base_url,
        AGENTLS_MODEL="claude-from-env",
        AGENTLS_MAX_TOKENS="999",
        AGENTLS_MAX_TURNS="9",
        AGENTLS_TEMPERATURE="0.9",
        AGENTLS_REQUEST_TIMEOUT="77",
    )
    root = tmp_path / "ws"
    root.mkdir()
    async with editor_session("visual-studio-code", root, env) as editor:
        status = await command(editor, "agentls.status")
        expected = {"model": "claude-from-env", "maxTokens": 999, "maxTurns": 9}
        assert _contains(status["settings"], {**expected, "temperature": 0.9})
        assert status["settings"]["requestTimeout"] == 77.0
        assert status["endpoint"] == api.base_url
        before = len(api.message_requests)
        api.extend(text_turn("Done."))
        result = await command(editor, "agentls.run", {"prompt": "Say done.", "wait": True})
        assert result["status"] == "completed", result
        sent = api.message_requests[before].json
        assert (sent["model"], sent["max_tokens"], sent["temperature"]) == (
            "claude-from-env",
            999,
            0.9,
        )


async def test_an_invalid_variable_is_reported_and_the_others_apply(
    api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    env = server_env(
        api.base_url, tmp_path / "transcripts", AGENTLS_MAX_TURNS="many", AGENTLS_MODEL="m-env"
    )
    root = tmp_path / "ws"
    root.mkdir()
    async with editor_session("visual-studio-code", root, env) as editor:
        status = await command(editor, "agentls.status")
        assert status["settings"]["maxTurns"] == 50
        assert status["model"] == "m-env"
        shown = " ".join(m.message for m in editor.client.messages)
        assert "AGENTLS_MAX_TURNS='many' is not a valid value for `maxTurns`" in shown
        assert "using 50" in shown
