"""`agentls run` on a terminal with a workspace `.mcp.json`: the approval of the file, the
permission for the call and the server's own questions (elicitation: choices, then free
text) are all answered at the keyboard."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from agentls.testing import ScriptedMessagesServer, text_turn, tool_turn
from tests.cli_support import cli_env, on_a_terminal
from tests.mcp_servers.support import stdio

CHOICES = [b"1\n", b"1\n", b"1\n", b"1\n", b"2\n"]
"""Allow the .mcp.json, allow the call once, answer the form, confirm: Yes, region: us."""


def test_mcp_questions_are_answered_on_the_terminal(
    api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / ".mcp.json").write_text(json.dumps({"mcpServers": {"demo": stdio()}}))
    api.extend(tool_turn(("mcp__demo__deploy", {"target": "prod"})), text_turn("done"))
    env = cli_env(api.base_url, tmp_path / "state", XDG_CONFIG_HOME=str(tmp_path / "config"))
    argv = [sys.executable, "-m", "agentls", "run", "deploy prod", "-w", str(workspace)]
    choices, typed = 0, False

    def respond(output: bytes) -> bytes | None:
        nonlocal choices, typed
        if output.count(b"choice [1]") > choices and choices < len(CHOICES):
            choices += 1
            return CHOICES[choices - 1]
        note = output.rpartition(b"asks for Note")
        if not typed and note[1] and b"answer" in note[2]:
            typed = True
            return b"from the tty\n"
        return None

    run = on_a_terminal(argv, env, respond, timeout=240)
    plain = run.plain
    assert run.code == 0, plain[-3000:]
    flat = " ".join(plain.split())  # the terminal wraps long lines
    assert "defines MCP servers that agentls would start" in flat
    assert "MCP server 'demo' asks: Deploy prod?" in flat
    assert typed
    assert choices == len(CHOICES)
    result = api.message_requests[1].tool_results()[0]
    assert result["content"] == "deployed prod to us (confirm=True, note='from the tty')", plain
