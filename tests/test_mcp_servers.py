"""MCP servers as tool sources, against real servers: two stdio servers started with the
test's Python, one streamable-HTTP server on a free port, one that fails to start and one
whose command does not exist. They share one manager for the module (server start-up is
the slow part); the crash test and the shutdown test come last because they end servers.
"""

from __future__ import annotations

import asyncio
import copy
import json
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from agentls.agent.framework.registry import PoolFilter, ToolSearchSettings
from agentls.agent.framework.requirement import Requirement
from agentls.agent.framework.tool import ToolError
from agentls.agent.permissions.approval import PendingCall, PermissionMode
from agentls.mcp import ApprovalStore, McpManager, rule_matches_tool
from agentls.mcp.naming import API_NAME
from agentls.mcp.processes import marked_processes
from agentls.testing import ScriptedMessagesServer, text_turn, tool_turn
from tests.mcp_servers.support import (
    HttpDemoServer,
    make_session,
    pid_alive,
    stdio,
    wait_until_dead,
)

pytestmark = pytest.mark.asyncio(loop_scope="module")
NEVER_DEFER = ToolSearchSettings(mode="never")


@pytest.fixture(scope="module")
def http_server() -> Iterator[HttpDemoServer]:
    with HttpDemoServer("web") as server:
        yield server


@pytest.fixture(scope="module")
def sse_server() -> Iterator[HttpDemoServer]:
    with HttpDemoServer("legacy", kind="sse") as server:
        yield server


@pytest.fixture(scope="module")
def grandchild_pidfile(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("fragile") / "grandchild.pid"


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def manager(
    http_server: HttpDemoServer,
    sse_server: HttpDemoServer,
    grandchild_pidfile: Path,
    tmp_path_factory: pytest.TempPathFactory,
) -> AsyncIterator[McpManager]:
    home = tmp_path_factory.mktemp("mcp")
    config = {
        "mcpServers": {
            "demo": stdio("--many", "30"),
            "fragile": stdio("--name", "fragile", "--spawn-child", str(grandchild_pidfile)),
            "broken": stdio("--fail-start"),
            "missing": {"command": str(home / "no-such-program")},
            "web": {"type": "http", "url": http_server.url},
            "legacy": {"type": "sse", "url": sse_server.url},
        },
        "startupTimeoutSeconds": 60,
    }
    manager = McpManager.from_config(
        home,
        config,
        approvals=ApprovalStore(home / "approvals.json"),
        user_config=home / "user-mcp.json",
    )
    yield manager
    await manager.aclose()


def _results(api: ScriptedMessagesServer, request: int) -> list[dict[str, Any]]:
    return api.message_requests[request].tool_results()


async def test_servers_start_lazily_and_failures_are_reported(manager: McpManager) -> None:
    assert {s["state"] for s in manager.status()} == {"pending"}
    tools = await manager.tools()
    names = [t.name for t in tools]
    status = {s["name"]: s for s in manager.status()}
    assert status["demo"]["state"] == "ready"
    assert status["demo"]["tools"] == 41
    assert status["web"]["state"] == "ready"
    assert status["web"]["transport"] == "http"
    assert status["legacy"]["state"] == "ready"
    assert status["legacy"]["transport"] == "sse"
    assert status["fragile"]["state"] == "ready"
    assert status["broken"]["state"] == "failed"
    assert "refusing to start" in status["broken"]["error"]  # the server's stderr
    assert status["missing"]["state"] == "failed"
    assert "not found" in status["missing"]["error"]
    assert not any(n.startswith(("mcp__broken", "mcp__missing")) for n in names)
    assert {"mcp__demo__echo", "mcp__web__add", "list_mcp_resources", "read_mcp_resource"} <= set(
        names
    )
    # "get.weather v2" is not a valid API tool name; every pool name is
    assert "mcp__demo__get_weather_v2" in names
    assert all(API_NAME.match(n) for n in names)


async def test_schema_description_and_annotations_come_from_the_server(
    manager: McpManager,
) -> None:
    tools = {t.name: t for t in await manager.tools()}
    echo, add = tools["mcp__demo__echo"], tools["mcp__demo__add"]
    assert echo.description() == "Echo `text` back, repeated `times` times."
    schema = echo.input_schema()
    assert schema["type"] == "object"
    assert schema["required"] == ["text"]
    assert schema["properties"]["times"]["default"] == 1
    assert echo.is_read_only()
    assert echo.is_concurrency_safe({"text": "x"})
    assert not add.is_read_only()
    assert not add.is_concurrency_safe({"a": 1, "b": 2})


async def test_a_call_with_arguments_through_the_agent_loop(
    manager: McpManager, api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    api.extend(
        tool_turn(
            ("mcp__demo__add", {"a": 2, "b": 40}),
            ("mcp__web__echo", {"text": "ab", "times": 2}),
            ("mcp__demo__get_weather_v2", {"city": "Oslo"}),
            ("mcp__legacy__add", {"a": 1, "b": 1}),
        ),
        text_turn("done"),
    )
    session = make_session(api, tmp_path, sources=[manager], search=NEVER_DEFER)
    result = await session.run("use the servers")
    assert result.status == "completed"
    first = api.message_requests[0]
    assert first.tool_names == sorted(first.tool_names)
    add_schema = next(t for t in first.tools if t["name"] == "mcp__demo__add")["input_schema"]
    assert add_schema["required"] == ["a", "b"]
    assert "cache_control" in first.tools[-1]
    results = _results(api, 1)
    assert [r["content"] for r in results] == ["42", "abab", "sunny in Oslo", "2"]
    assert not any(r["is_error"] for r in results)


async def test_errors_invalid_input_and_result_shapes(
    manager: McpManager, api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    api.extend(
        tool_turn(
            ("mcp__demo__fail", {"message": "disk on fire"}),
            ("mcp__demo__add", {"a": "x"}),
            ("mcp__demo__pixel", {}),
            ("mcp__demo__attach", {}),
            ("mcp__web__big", {"size": 50_000}),
        ),
        text_turn("done"),
    )
    session = make_session(api, tmp_path, sources=[manager], search=NEVER_DEFER)
    assert (await session.run("break things")).status == "completed"
    failed, invalid, pixel, attach, big = _results(api, 1)
    assert failed["is_error"]
    assert "disk on fire" in failed["content"]
    assert invalid["is_error"]
    assert "InputValidationError" in invalid["content"]
    assert "`a`" in invalid["content"]
    assert "`b`: Field required" in invalid["content"]
    assert not pixel["is_error"]
    image = pixel["content"][0]
    assert image["type"] == "image"
    assert image["source"]["media_type"] == "image/png"
    assert [b["type"] for b in attach["content"]] == ["text", "text"]
    assert "demo://notes.txt" in attach["content"][1]["text"]
    assert "attached notes" in attach["content"][1]["text"]
    assert not big["is_error"]
    assert "Output truncated" in big["content"]
    assert len(big["content"]) < 31_000


async def test_resources_can_be_listed_and_read(
    manager: McpManager, api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    api.extend(
        tool_turn(
            ("list_mcp_resources", {"server": "demo"}),
            ("read_mcp_resource", {"server": "demo", "uri": "demo://readme"}),
            ("read_mcp_resource", {"server": "web", "uri": "demo://logo"}),
            ("read_mcp_resource", {"server": "nope", "uri": "demo://readme"}),
        ),
        text_turn("done"),
    )
    session = make_session(api, tmp_path, sources=[manager], search=NEVER_DEFER)
    await session.run("read resources")
    listing, readme, logo, unknown = _results(api, 1)
    entries = json.loads(listing["content"])
    assert {e["uri"] for e in entries} == {"demo://readme", "demo://logo"}
    assert all(e["server"] == "demo" for e in entries)
    assert not readme["is_error"]
    assert "# Demo" in readme["content"]
    assert logo["content"][0]["type"] == "image"
    assert unknown["is_error"]
    assert "No MCP server named 'nope'" in unknown["content"]
    pool = session.pool("plan")
    assert "list_mcp_resources" in pool.names
    assert "read_mcp_resource" in pool.names


async def test_deferred_tools_search_select_and_byte_stability(
    manager: McpManager, api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    api.extend(
        tool_turn(("mcp__demo__echo", {"text": "early"})),
        tool_turn(("tool_search", {"query": "select:mcp__demo__echo,mcp__demo__nope"})),
        tool_turn(("mcp__demo__echo", {"text": "hi"})),
        text_turn("done"),
    )
    session = make_session(api, tmp_path, sources=[manager])  # default: auto deferral
    assert (await session.run("echo hi")).status == "completed"
    requests = api.message_requests
    assert len(requests) == 4
    first = requests[0]
    assert "tool_search" in first.tool_names
    assert "mcp__demo__echo" not in first.tool_names
    assert not any(n.startswith("mcp__") for n in first.tool_names)
    reminder = first.system[-1]["text"]  # type: ignore[index]
    assert reminder.startswith("<system-reminder>")
    assert "- mcp__demo__echo: Echo" in reminder
    assert "cache_control" not in first.system[-1]  # type: ignore[index]
    # called before discovery: told to load it first
    early = _results(api, 1)[0]
    assert early["is_error"]
    assert 'tool_search with query "select:mcp__demo__echo"' in str(early["content"])
    search = _results(api, 2)[0]
    found = json.loads(search["content"])
    assert not search["is_error"]
    assert found["loaded"] == ["mcp__demo__echo"]
    assert "mcp__demo__nope" in found["not_found"]
    assert _results(api, 3)[0]["content"] == "hi"
    # the tools array is identical until the discovery, then grows once and is stable again
    tools = [json.dumps(r.tools) for r in requests]
    assert tools[0] == tools[1]
    assert tools[2] == tools[3]
    assert tools[1] != tools[2]
    assert set(requests[2].tool_names) - set(requests[1].tool_names) == {"mcp__demo__echo"}
    assert "cache_control" in requests[2].tools[-1]
    assert len({json.dumps(r.system) for r in requests}) == 1
    pool = session.pool("review")
    assert pool.api_tools() is pool.api_tools()

    # a resumed session (same history) keeps the loaded tool
    resumed = make_session(api, tmp_path, sources=[manager])
    resumed.messages = copy.deepcopy(session.messages)
    await resumed.load_tool_sources()
    request = resumed.build_request(resumed.pool("review"))
    assert "mcp__demo__echo" in [t["name"] for t in request.tools]


async def test_keyword_search_ranks_and_limits(
    manager: McpManager, api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    api.extend(
        tool_turn(("tool_search", {"query": "invoice", "max_results": 3})),
        tool_turn(("tool_search", {"query": "+weather city"})),
        text_turn("done"),
    )
    session = make_session(api, tmp_path, sources=[manager])
    await session.run("find tools")
    invoice = json.loads(_results(api, 1)[0]["content"])
    assert len(invoice["loaded"]) == 3
    assert all(n.startswith("mcp__demo__invoice_op_") for n in invoice["loaded"])
    assert "more matched" in invoice["note"]
    weather = json.loads(_results(api, 2)[0]["content"])
    servers = ("demo", "fragile", "legacy", "web")
    assert weather["loaded"] == [f"mcp__{s}__get_weather_v2" for s in servers]
    assert set(invoice["loaded"]) <= set(api.message_requests[1].tool_names)
    assert "mcp__demo__get_weather_v2" in api.message_requests[2].tool_names


async def test_server_side_tool_search_marks_deferred_tools(
    manager: McpManager, api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    api.extend(tool_turn(("mcp__demo__add", {"a": 1, "b": 2})), text_turn("done"))
    search = ToolSearchSettings(server_side=True)
    session = make_session(api, tmp_path, sources=[manager], search=search)
    await session.run("add")
    tools = {t["name"]: t for t in api.message_requests[0].tools}
    assert "tool_search" not in tools
    assert tools["tool_search_tool_bm25"]["type"] == "tool_search_tool_bm25_20251119"
    assert tools["mcp__demo__add"]["defer_loading"] is True
    assert "defer_loading" not in tools["list_mcp_resources"]
    assert _results(api, 1)[0]["content"] == "3"


class DenyByRule:
    """A permission policy with one deny rule, matched by MCP name."""

    mode: PermissionMode = "default"

    def __init__(self, rule: str) -> None:
        self.rule = rule

    def requirement(self, call: PendingCall) -> Requirement:
        if rule_matches_tool(self.rule, call.tool.name):
            return Requirement.forbidden(f"denied by rule {self.rule}")
        return Requirement.skip()

    async def approve(self, call: PendingCall, needed: Requirement) -> Requirement:
        return needed


async def test_permission_rules_apply_by_mcp_name(
    manager: McpManager, api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    api.extend(
        tool_turn(
            ("mcp__demo__add", {"a": 1, "b": 2}),
            ("mcp__web__echo", {"text": "x"}),
            ("mcp__demo__echo", {"text": "fine"}),
        ),
        text_turn("done"),
    )
    session = make_session(
        api,
        tmp_path,
        sources=[manager],
        search=NEVER_DEFER,
        pool_filter=PoolFilter(denied=lambda name: rule_matches_tool("mcp__web", name)),
        permissions=DenyByRule("mcp__demo__add"),
    )
    await session.run("try")
    assert not any(n.startswith("mcp__web__") for n in api.message_requests[0].tool_names)
    add, web, echo = _results(api, 1)
    assert add["is_error"]
    assert "denied by rule mcp__demo__add" in add["content"]
    assert web["is_error"]
    assert "No such tool available: mcp__web__echo" in web["content"]
    assert echo["content"] == "fine"


async def test_a_server_that_crashes_mid_call_is_an_error_naming_it(
    manager: McpManager, api: ScriptedMessagesServer, tmp_path: Path, grandchild_pidfile: Path
) -> None:
    grandchild = int(await asyncio.to_thread(grandchild_pidfile.read_text))
    assert pid_alive(grandchild)
    api.extend(
        tool_turn(("mcp__fragile__crash", {})),
        tool_turn(("mcp__fragile__echo", {"text": "again"}), ("mcp__demo__echo", {"text": "ok"})),
        text_turn("done"),
    )
    session = make_session(api, tmp_path, sources=[manager], search=NEVER_DEFER)
    assert (await session.run("crash it")).status == "completed"
    crashed = _results(api, 1)[0]
    assert crashed["is_error"]
    assert "MCP server 'fragile'" in crashed["content"]
    assert "crashed" in crashed["content"]
    after, other = _results(api, 2)
    assert after["is_error"]
    assert "'fragile' is not running" in after["content"]
    assert other["content"] == "ok"
    status = {s["name"]: s for s in manager.status()}
    assert status["fragile"]["state"] == "disconnected"
    # the crashed server's own child is swept up too
    assert await wait_until_dead(grandchild)


async def test_aclose_stops_every_server_and_leaves_no_process(
    manager: McpManager, api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    tools = {t.name: t for t in await manager.tools()}
    session = make_session(api, tmp_path)
    ctx = session.tool_context("review", asyncio.Event())
    pid = int(str((await tools["mcp__demo__whoami"].call({}, ctx)).content))  # type: ignore[union-attr]
    assert pid_alive(pid)
    await manager.aclose()
    assert await wait_until_dead(pid, within=1.0)
    for name in ("demo", "fragile", "web", "legacy"):
        connection = manager.connection(name)
        assert connection is not None
        assert connection.state in ("stopped", "disconnected")
        assert marked_processes(connection.marker) == []
    with pytest.raises(ToolError, match="'demo' is not running"):
        await tools["mcp__demo__echo"].call({"text": "x"}, ctx)
