"""The MCP protocol features against real servers from the registries:
`@modelcontextprotocol/server-everything` (npm) over stdio and over streamable HTTP, and
`mcp-server-time` (PyPI). Installed by `scripts/deps/mcp.sh`; one manager for the module
(start-up is the slow part).

Covered: server instructions in the system prompt (capped, byte-stable across turns),
progress tokens and the progress the user sees, text blobs in embedded resources, roots
(the workspace folders), elicitation asked like a question to the user (and not offered
when nobody can answer), and a plain tool of a second real server.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from agentls.agent.framework.registry import ToolSearchSettings
from agentls.agent.protocol.events import AgentEvent, ToolProgress
from agentls.mcp import ApprovalStore, HostBridge, McpManager
from agentls.mcp.manager import MAX_SERVER_INSTRUCTIONS
from agentls.testing import ScriptedMessagesServer, text_turn, tool_turn
from tests.mcp_servers.questions import ScriptedUser
from tests.mcp_servers.real import EverythingHttp, everything_stdio, time_server
from tests.mcp_servers.support import make_session

pytestmark = pytest.mark.asyncio(loop_scope="module")
NEVER_DEFER = ToolSearchSettings(mode="never")
ELICIT = "mcp__everything__trigger-elicitation-request"


@pytest.fixture(scope="module")
def http_everything() -> Iterator[EverythingHttp]:
    with EverythingHttp() as server:
        yield server


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("workspace")


@pytest.fixture(scope="module")
def user() -> ScriptedUser:
    return ScriptedUser()


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def manager(
    http_everything: EverythingHttp,
    workspace: Path,
    user: ScriptedUser,
    tmp_path_factory: pytest.TempPathFactory,
) -> AsyncIterator[McpManager]:
    home = tmp_path_factory.mktemp("home")
    config = {
        "mcpServers": {
            "everything": everything_stdio(),
            "web": {"type": "http", "url": http_everything.url},
            "time": time_server(),
        },
        "startupTimeoutSeconds": 120,
        "startupWaitSeconds": 120,
    }
    bridge = HostBridge(roots=lambda: [workspace], questions=user, oauth_folder=home / "oauth")
    manager = McpManager.from_config(
        workspace,
        config,
        approvals=ApprovalStore(home / "approvals.json"),
        user_config=home / "user-mcp.json",
        home=home,
        bridge=bridge,
    )
    yield manager
    await manager.aclose()


def _results(api: ScriptedMessagesServer, request: int) -> list[dict[str, Any]]:
    return api.message_requests[request].tool_results()


async def test_real_servers_start_over_stdio_and_http(manager: McpManager) -> None:
    names = {t.name for t in await manager.tools()}
    states = {s["name"]: s for s in manager.status()}
    assert {states[n]["state"] for n in ("everything", "web", "time")} == {"ready"}, states
    assert states["web"]["transport"] == "http"
    for server in ("everything", "web"):
        assert f"mcp__{server}__get-sum" in names
        # offered because we declare roots and elicitation (a user can answer here)
        assert f"mcp__{server}__get-roots-list" in names
        assert f"mcp__{server}__trigger-elicitation-request" in names
    assert "mcp__time__get_current_time" in names


async def test_server_instructions_are_in_the_system_prompt_capped_and_stable(
    manager: McpManager, api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    api.extend(
        tool_turn(("mcp__everything__get-sum", {"a": 1, "b": 2})),
        tool_turn(("mcp__time__get_current_time", {"timezone": "UTC"})),
        text_turn("done"),
    )
    session = make_session(api, tmp_path, sources=[manager], search=NEVER_DEFER)
    assert (await session.run("add")).status == "completed"
    systems = [json.dumps(r.system) for r in api.message_requests]
    assert len(set(systems)) == 1  # byte-identical on every turn (prompt cache)
    blocks = api.message_requests[0].system
    instructions = blocks[1]["text"]  # type: ignore[index]
    assert "cache_control" in blocks[0]
    assert "cache_control" not in blocks[1]
    assert instructions.startswith("# MCP server instructions")
    assert '<mcp-server name="everything">' in instructions
    assert '<mcp-server name="web">' in instructions
    assert "Everything Server" in instructions  # the server's own text
    everything = instructions.split('<mcp-server name="everything">\n', 1)[1]
    everything = everything.split("\n</mcp-server>", 1)[0]
    assert len(everything) <= MAX_SERVER_INSTRUCTIONS
    assert "Server instructions are working!" in everything  # short enough: whole
    # the same tools give the same text: a second session's prompt is the same bytes
    second = make_session(api, tmp_path, sources=[manager], search=NEVER_DEFER)
    await second.load_tool_sources()
    assert second.source_instructions == session.source_instructions


async def test_progress_tokens_reach_the_user(
    manager: McpManager, api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    args = {"duration": 1, "steps": 4}
    api.extend(
        tool_turn(("mcp__everything__trigger-long-running-operation", args)),
        tool_turn(("mcp__web__trigger-long-running-operation", args)),
        text_turn("done"),
    )
    events: list[AgentEvent] = []
    session = make_session(api, tmp_path, sources=[manager], search=NEVER_DEFER)
    assert (await session.run("long", events=events.append)).status == "completed"
    progress = [e for e in events if isinstance(e, ToolProgress)]
    for server in ("everything", "web"):
        lines = [p.message for p in progress if f"on MCP server {server}" in p.message]
        assert lines, f"no progress from {server}: {progress}"
        assert lines[-1].endswith("4/4 (100%)")
    call_ids = {r["tool_use_id"] for r in _results(api, 1) + _results(api, 2)}
    assert {p.tool_use_id for p in progress} <= call_ids
    assert "Long running operation completed" in _results(api, 1)[0]["content"]


async def test_roots_are_the_workspace_folders(manager: McpManager, workspace: Path) -> None:
    tools = {t.name: t for t in await manager.tools()}
    expected = (await asyncio.to_thread(workspace.resolve)).as_uri()
    for server in ("everything", "web"):
        output = await _call(tools[f"mcp__{server}__get-roots-list"], {})
        assert expected in output
        assert "1 total" in output


async def test_text_blobs_in_embedded_resources_are_decoded(manager: McpManager) -> None:
    tools = {t.name: t for t in await manager.tools()}
    output = await _call(
        tools["mcp__everything__get-resource-reference"],
        {"resourceType": "Blob", "resourceId": 2},
    )
    assert "Resource 2: This is a base64 blob created at" in output
    assert "binary data not shown" not in output


async def test_elicitation_is_asked_field_by_field(manager: McpManager, user: ScriptedUser) -> None:
    user.choices.update(
        {
            "asks: Please provide": "Answer",
            "Boolean": "Yes",
            "Untitled Single Select Enum": "Joey",
            "Untitled Multiple Select Enum": ["Piano", "Drums", "Done"],
            "for Titled Single Select Enum": "Wonder Woman",
            "for Titled Multiple Select Enum": ["Salmon", "Done"],
            "Legacy Titled": "Dogs",
        }
    )
    user.texts.update(
        {
            "String with email format": ["not-an-email", "ada@example.com"],
            "Integer": ["500", "7"],
            "String with date format": "1815-12-10",
            "String with default": "",
            "String with uri format": "",
            "Number in range": "",
            "for String ": "Ada Lovelace",
        }
    )
    tools = {t.name: t for t in await manager.tools()}
    output = await _call(tools[ELICIT], {})
    assert "User provided the requested information" in output, output
    raw = json.loads(output.split("Raw result: ", 1)[1])
    assert raw["action"] == "accept"
    content = raw["content"]
    assert content["name"] == "Ada Lovelace"
    assert content["check"] is True
    assert content["email"] == "ada@example.com"  # asked again after a bad address
    assert content["integer"] == 7  # 500 is above the maximum: asked again
    assert content["birthdate"] == "1815-12-10"
    assert content["untitledSingleSelectEnum"] == "Joey"
    assert content["untitledMultipleSelectEnum"] == ["Piano", "Drums"]
    assert content["titledSingleSelectEnum"] == "hero-3"  # the value of the chosen title
    assert content["titledMultipleSelectEnum"] == ["fish-2"]
    assert content["legacyTitledEnum"] == "pet-2"
    assert "homepage" not in content
    assert "firstLine" not in content  # optional, left empty
    questions = [message for message, _ in user.asked]
    assert all("MCP server 'everything'" in q for q in questions)  # the user knows who asks
    assert any("try again" in q for q in questions)


async def test_declining_or_dismissing_an_elicitation(
    manager: McpManager, user: ScriptedUser
) -> None:
    tools = {t.name: t for t in await manager.tools()}
    user.choices.clear()
    user.texts.clear()
    user.choices["asks: Please provide"] = "Decline"
    declined = await _call(tools[ELICIT], {})
    assert "declined" in declined
    assert '"action": "decline"' in declined
    user.choices["asks: Please provide"] = "Answer"  # then the first field is dismissed
    cancelled = await _call(tools[ELICIT], {})
    assert '"action": "cancel"' in cancelled


async def test_elicitation_is_not_offered_when_nobody_can_answer(tmp_path: Path) -> None:
    manager = McpManager.from_config(
        tmp_path,
        {"mcpServers": {"everything": everything_stdio()}, "startupWaitSeconds": 120},
        approvals=ApprovalStore(tmp_path / "approvals.json"),
        user_config=tmp_path / "user.json",
        home=tmp_path,
        bridge=HostBridge(roots=lambda: [tmp_path], questions=None),
    )
    try:
        names = {t.name for t in await manager.tools()}
    finally:
        await manager.aclose()
    assert "mcp__everything__get-sum" in names
    assert ELICIT not in names  # the capability was not declared
    assert "mcp__everything__get-roots-list" in names


async def test_a_tool_of_mcp_server_time(manager: McpManager) -> None:
    tools = {t.name: t for t in await manager.tools()}
    output = await _call(
        tools["mcp__time__convert_time"],
        {"source_timezone": "UTC", "time": "12:00", "target_timezone": "Asia/Tokyo"},
    )
    converted = json.loads(output)
    assert converted["target"]["timezone"] == "Asia/Tokyo"
    assert converted["target"]["datetime"].split("T")[1].startswith("21:00")


async def _call(tool: Any, args: dict[str, Any]) -> str:
    from agentls.agent.framework.context import ToolContext
    from agentls.workspace import ChangeSet, Workspace

    ctx = ToolContext(session_id="t", workspace=Workspace([Path.cwd()]), changes=ChangeSet())
    output = await asyncio.wait_for(tool.call(tool.parse_input(args), ctx), 120)
    content = output.content
    if isinstance(content, str):
        return content
    return "\n".join(str(block.get("text", "")) for block in content)
