"""MCP servers configured in the editor's settings reach the model through `agentls serve`."""

from __future__ import annotations

import sys
from pathlib import Path

from agentls.testing import ScriptedMessagesServer, text_turn, tool_turn
from tests.lsp_support import command, editor_session, server_env

DEMO_SERVER = Path(__file__).parent / "mcp_servers" / "demo_server.py"


async def test_mcp_tool_from_settings_runs_in_a_real_session(
    api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    api.extend(tool_turn(("mcp__calc__add", {"a": 2, "b": 40})), text_turn("The sum is 42."))
    options = {
        "agentls": {
            "mcp": {
                "mcpServers": {"calc": {"command": sys.executable, "args": [str(DEMO_SERVER)]}},
                "userConfig": False,
            },
            "permissions": {"allow": ["mcp__calc"]},
            # offered directly whatever the number of built-in tools (deferral: test_tool_search)
            "toolSearch": {"mode": "never"},
        }
    }
    env = server_env(api.base_url, tmp_path / "transcripts")
    async with editor_session(
        "visual-studio-code", root, env, initialization_options=options
    ) as editor:
        result = await command(editor, "agentls.run", {"prompt": "add 2 and 40", "wait": True})
        status = await command(editor, "agentls.status", {})
    assert result["status"] == "completed"
    assert result["text"] == "The sum is 42."
    offered = api.message_requests[0].tool_names
    assert "mcp__calc__add" in offered
    assert "read_file" in offered
    assert "run_command" in offered
    tool_result = api.message_requests[1].tool_results()[0]
    assert not tool_result["is_error"], tool_result
    assert "42" in str(tool_result["content"])
    servers = {entry["name"]: entry for entry in status["tool_sources"]}
    assert servers["calc"]["state"] == "ready"
