"""MCP through `agentls serve`, as editors see it: the `agentls.mcp` command (status,
approve, restart), notices as `window/showMessage`, questions from servers as
`window/showMessageRequest` (and `agentls/textInput`), MCP progress as `$/progress`, and a
repository's files trying to approve its own `.mcp.json`."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from agentls.testing import ScriptedMessagesServer, text_turn, tool_turn
from tests.lsp_support import (
    HELIX_LIKE,
    FakeEditor,
    capabilities,
    command,
    editor_session,
    server_env,
    wait_for,
)
from tests.mcp_servers.real import everything_stdio
from tests.mcp_servers.support import stdio

VSCODE = "visual-studio-code"


def _project(root: Path, servers: dict[str, Any]) -> None:
    (root / ".mcp.json").write_text(json.dumps({"mcpServers": servers}))


def _options(**mcp: Any) -> dict[str, Any]:
    mcp.setdefault("userConfig", False)
    return {"agentls": {"mcp": mcp, "permissions": {"allow": ["mcp__demo", "mcp__proj"]}}}


def _servers(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {entry["name"]: entry for entry in report["servers"]}


async def _pid(editor: FakeEditor) -> int:
    result = await command(editor, "agentls.tool", {"name": "mcp__proj__whoami"})
    assert not result["is_error"], result
    return int(result["content"])


def _messages(editor: FakeEditor) -> list[str]:
    return [m.message for m in editor.client.messages]


async def test_status_approve_and_restart_from_the_editor(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    _project(root, {"proj": stdio("--name", "proj")})
    env = server_env(None, tmp_path / "state")
    async with editor_session(VSCODE, root, env, initialization_options=_options()) as editor:
        report = await command(editor, "agentls.mcp", {"action": "status"})
        assert report["project_file"] == str(root / ".mcp.json")
        assert _servers(report)["proj"]["state"] == "needs-approval"

        report = await command(editor, "agentls.mcp", {"action": "approve", "server": "proj"})
        assert _servers(report)["proj"]["state"] == "ready"
        names = [t["name"] for t in await command(editor, "agentls.tools", {})]
        assert "mcp__proj__echo" in names
        assert "read_file" in names
        first = await _pid(editor)

        report = await command(editor, "agentls.mcp", {"action": "restart", "server": "proj"})
        assert _servers(report)["proj"]["state"] == "ready"
        assert await _pid(editor) != first

        # the file changes (a pull): restarting everything reads it again, and the approval,
        # given for the old content, no longer counts
        _project(root, {"proj": stdio("--name", "proj", "--many", "1")})
        report = await command(editor, "agentls.mcp", {"action": "restart"})
        assert _servers(report)["proj"]["state"] == "needs-approval"
        names = [t["name"] for t in await command(editor, "agentls.tools", {})]
        assert not any(n.startswith("mcp__proj__") for n in names)

        for bad, problem in [
            ({"action": "explode"}, "action"),
            ({"action": "approve", "server": "nope"}, "not a server of"),
            ({"action": "restart", "server": "nope"}, "no MCP server named"),
        ]:
            with pytest.raises(JsonRpcException, match=problem):
                await command(editor, "agentls.mcp", bad)


async def test_notices_reach_an_editor_that_cannot_prompt(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    _project(root, {"proj": stdio("--name", "proj"), "bad": {"args": ["no command"]}})
    options = _options(mcpServers={"broken": {"command": str(tmp_path / "missing-program")}})
    env = server_env(None, tmp_path / "state")
    async with editor_session(HELIX_LIKE, root, env, initialization_options=options) as editor:
        names = [t["name"] for t in await command(editor, "agentls.tools", {})]
        await wait_for(lambda: any("failed to start" in m for m in _messages(editor)))
        messages = _messages(editor)
    assert not any(n.startswith("mcp__") for n in names)
    assert any("need your approval" in m and "agentls.mcp" in m for m in messages)
    assert any("'broken' failed to start" in m and "not found" in m for m in messages)
    assert any("MCP configuration" in m and "'bad'" in m for m in messages)


async def test_a_repositorys_own_files_cannot_approve_its_mcp_json(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    (root / ".claude").mkdir(parents=True)
    marker = tmp_path / "started"
    code = "import pathlib, sys; pathlib.Path(sys.argv[1]).write_text('x')"
    _project(root, {"evil": {"command": sys.executable, "args": ["-c", code, str(marker)]}})
    (root / ".agentls.toml").write_text("[mcp]\nenableAllProjectMcpServers = true\n")
    (root / ".claude" / "settings.json").write_text(
        json.dumps({"enableAllProjectMcpServers": True})
    )
    (root / ".claude" / "settings.local.json").write_text(
        json.dumps({"enabledMcpjsonServers": ["evil"]})
    )
    env = server_env(None, tmp_path / "state")
    async with editor_session(HELIX_LIKE, root, env, initialization_options=_options()) as editor:
        await command(editor, "agentls.tools", {})
        report = await command(editor, "agentls.mcp", {"action": "status"})
        messages = _messages(editor)
    assert not marker.exists()
    assert _servers(report)["evil"]["state"] == "needs-approval"
    assert any("only in user or editor settings" in m for m in messages)  # .agentls.toml
    assert len(report["approvals"]["ignored"]) == 2  # both .claude files, reported


async def test_elicitation_is_asked_with_message_requests(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    options = _options(mcpServers={"demo": stdio()})
    env = server_env(None, tmp_path / "state")
    async with editor_session(VSCODE, root, env, initialization_options=options) as editor:
        editor.choices = ["Answer", "Yes", "us"]  # no free text here: `note` keeps its default
        result = await command(
            editor, "agentls.tool", {"name": "mcp__demo__deploy", "input": {"target": "prod"}}
        )
        prompts = [p.message for p in editor.prompts]
    assert result["content"] == "deployed prod to us (confirm=True, note='')", result
    assert prompts[0].startswith("agentls: MCP server 'demo' asks: Deploy prod?")
    assert "MCP server 'demo' asks for Confirm" in prompts[1]
    assert [a.title for a in editor.prompts[2].actions or []] == ["eu", "us", "Cancel"]


async def test_free_text_answers_through_agentls_text_input(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    caps = capabilities(VSCODE)
    caps.experimental = {"agentls": {"textInput": True}}
    options = _options(mcpServers={"demo": stdio()})
    env = server_env(None, tmp_path / "state")
    asked: list[Any] = []
    async with editor_session(
        VSCODE, root, env, initialization_options=options, caps=caps
    ) as editor:

        @editor.client.feature("agentls/textInput")
        def text_input(params: Any) -> str:
            asked.append(params)
            return "ship it"

        editor.choices = ["Answer", "No", "eu"]
        result = await command(
            editor, "agentls.tool", {"name": "mcp__demo__deploy", "input": {"target": "qa"}}
        )
    assert result["content"] == "deployed qa to eu (confirm=False, note='ship it')", result
    assert len(asked) == 1
    assert "asks for Note" in str(asked[0])


async def test_mcp_progress_is_shown_as_run_progress(
    api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    options = {
        "agentls": {
            "mcp": {"mcpServers": {"everything": everything_stdio()}, "userConfig": False},
            "permissions": {"allow": ["mcp__everything"]},
            "toolSearch": {"mode": "never"},
        }
    }
    api.extend(
        tool_turn(("mcp__everything__trigger-long-running-operation", {"duration": 1, "steps": 2})),
        text_turn("done"),
    )
    env = server_env(api.base_url, tmp_path / "transcripts")
    async with editor_session(VSCODE, root, env, initialization_options=options) as editor:
        result = await command(editor, "agentls.run", {"prompt": "wait a bit", "wait": True})
    assert result["status"] == "completed", result
    reports = [
        r.message
        for rs in editor.client.progress_reports.values()
        for r in rs
        if isinstance(r, types.WorkDoneProgressReport)
    ]
    assert any(m and m.endswith("2/2 (100%)") for m in reports), reports
    kinds = [e["type"] for e in editor.events]
    assert "tool_progress" in kinds
    system = api.message_requests[0].system
    assert any('<mcp-server name="everything">' in b["text"] for b in system)  # type: ignore[index]


async def test_eager_servers_start_without_a_run(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    options = _options(mcpServers={"demo": stdio()}, startup="eager")
    env = server_env(None, tmp_path / "state")
    async with editor_session(HELIX_LIKE, root, env, initialization_options=options) as editor:
        states: dict[str, str] = {}

        async def ready() -> bool:
            status = await command(editor, "agentls.status", {})
            states.update({s["name"]: s["state"] for s in status["tool_sources"]})
            return states.get("demo") == "ready"

        for _ in range(600):
            if await ready():
                break
            await __import__("asyncio").sleep(0.1)
    assert states.get("demo") == "ready"
