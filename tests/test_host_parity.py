"""The same agent in every host: `agentls serve` (LSP) and `agentls acp` (ACP) side by side.

One workspace, one user settings section, one scripted model. Each host runs the same
prompt; what the model is offered (the `tools` array, byte for byte: every built-in with
its settings, the project's sub-agent types in `task`, `web_search` with its limits) and
the system prompt's skills must be identical, so must the custom commands (LSP's
`agentls.commands`, ACP's `available_commands_update`), and a settings key must have the same effect
in both (`webFetch.allowedPrivateAddresses` lets `web_fetch` reach the scripted server on
127.0.0.1 in both hosts, or in neither).

Both hosts build a session's parts through one `AgentRuntime` (`agentls.runtime`); this
test is what keeps them from drifting apart again.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentls.testing import ScriptedMessagesServer, text_turn, tool_turn
from tests.acp_support import (
    FakeEditor as AcpEditor,
)
from tests.acp_support import (
    acp_client,
    agent_env,
    initialize,
    new_session,
    prompt,
)
from tests.lsp_support import command, editor_session, server_env

STAGED = {"accept", "reject", "rewind"}
"""ACP's own commands for the session's staged edits and turns (not the runtime's)."""

pytestmark = pytest.mark.asyncio

SETTINGS: dict[str, Any] = {
    "webFetch": {"allowedPrivateAddresses": ["127.0.0.1"], "maxChars": 2000},
    "webSearch": {"enabled": "always", "maxUses": 3, "blockedDomains": ["example.org"]},
    "permissions": {"allow": ["WebFetch(domain:127.0.0.1)"]},
}
"""The user's `agentls` section: `initializationOptions` in the LSP, `--settings` in ACP."""

AGENT = """---
name: reviewer
description: Reviews a change for bugs.
tools: read_file, grep
---
You review changes.
"""
SKILL = "---\nname: release\ndescription: Write release notes.\n---\nList the changes.\n"
COMMAND = "---\ndescription: Ship the branch\n---\nShip $ARGUMENTS.\n"


@pytest.fixture
def api() -> Iterator[ScriptedMessagesServer]:
    with ScriptedMessagesServer([]) as server:
        yield server


def _project(root: Path) -> Path:
    files = {
        "app.py": "def main():\n    return 1\n",
        ".claude/agents/reviewer.md": AGENT,
        ".claude/skills/release/SKILL.md": SKILL,
        ".claude/commands/ship.md": COMMAND,
    }
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    return root


def _script(api: ScriptedMessagesServer) -> None:
    """One `web_fetch` of the scripted server itself (127.0.0.1), then an answer."""
    url = api.base_url + "/v1/models"
    api.extend(tool_turn(("web_fetch", {"url": url, "prompt": "what is it?"})), text_turn("ok"))


def _offered(api: ScriptedMessagesServer, first: int) -> dict[str, Any]:
    """What the host sent the model in this run (tools, skills) and whether `web_fetch`
    reached the scripted server (a GET of `/v1/models` from 127.0.0.1, told by web_fetch's
    user agent from the ACP host's own model listing for its model selector)."""
    fetched = [
        r
        for r in api.requests[first:]
        if r.method == "GET" and r.headers.get("user-agent", "").startswith("agentls-web-fetch")
    ]
    requests = [r for r in api.requests[first:] if r.route == "/v1/messages"]
    assert len(requests) == 2, [r.json for r in requests]
    opening, answer = requests[0].json, requests[1].json
    system = "\n".join(block["text"] for block in opening["system"])
    [result] = [
        block
        for block in answer["messages"][-1]["content"]
        if isinstance(block, dict) and block.get("type") == "tool_result"
    ]
    content = result["content"]
    text = content if isinstance(content, str) else json.dumps(content)
    return {
        "tools": json.dumps(opening["tools"], sort_keys=True),
        "skills": [line for line in system.splitlines() if line.startswith("- release")],
        "web_fetch_reached": [r.route for r in fetched],
        "web_fetch_refused_private": "allowedPrivateAddresses" in text,
    }


async def _lsp(api: ScriptedMessagesServer, root: Path, base: Path) -> dict[str, Any]:
    env = server_env(api.base_url, base / "lsp")
    first = len(api.requests)
    _script(api)
    async with editor_session(
        "visual-studio-code", root, env, initialization_options=SETTINGS
    ) as editor:
        result = await command(editor, "agentls.run", {"prompt": "fetch it", "wait": True})
        assert result["status"] == "completed", result
        listed = await command(editor, "agentls.commands", {})
    offered = _offered(api, first)
    offered["commands"] = [c["name"] for c in listed["commands"]]
    return offered


async def _acp(api: ScriptedMessagesServer, root: Path, base: Path) -> dict[str, Any]:
    home = base / "acp"
    home.mkdir()
    first = len(api.requests)
    _script(api)
    env = agent_env(api.base_url, home)
    editor = AcpEditor()
    async with acp_client("python", editor, env, home, SETTINGS) as client:
        await initialize(client)
        session = await new_session(client, root)
        answer = await prompt(client, session, "fetch it")
        assert answer["stopReason"] == "end_turn", answer
    offered = _offered(api, first)
    [update] = editor.session_updates(session, "available_commands_update")
    listed = [(c["name"], c["description"]) for c in update["availableCommands"]]
    offered["commands"] = [n for n, d in listed if n not in STAGED and not d.endswith("(skill)")]
    skills = [n for n, d in listed if d.endswith("(skill)")]
    assert skills == ["release"]  # the skill the system prompt names (`skills` above)
    return offered


async def test_lsp_and_acp_offer_the_same_agent(
    api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    root = _project(tmp_path / "ws")
    lsp = await _lsp(api, root, tmp_path)
    acp = await _acp(api, root, tmp_path)
    names = [tool["name"] for tool in json.loads(lsp["tools"])]
    assert "web_search" in names  # `webSearch.enabled: always`
    assert "reviewer: Reviews a change for bugs." in lsp["tools"]  # the project's agent
    assert lsp["skills"] == ["- release: Write release notes."]
    assert lsp["web_fetch_reached"] == ["/v1/models"]  # 127.0.0.1: allowed by the settings
    assert lsp["commands"] == ["ship"]  # the project's custom command, in both hosts
    assert acp == lsp
