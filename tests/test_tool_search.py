"""Deferral rules, `tool_search` ranking and selection, and discovery from the history."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agentls.agent.framework.context import ToolContext
from agentls.agent.framework.registry import ToolPool, ToolSearchSettings, discovered_tool_names
from agentls.agent.framework.tool import Tool, ToolInput
from agentls.agent.run.pipeline import Pipeline, ToolCall
from agentls.tools.tool_search import ToolSearch, ToolSearchInput, rank_tools
from agentls.workspace import ChangeSet, Workspace
from tests.agent_support import ProbeRead, ProbeWrite


class Args(ToolInput):
    item_id: str = ""


class Fake(Tool[Args]):
    """An MCP-like tool: deferred when the pool is large."""

    input_model = Args
    defer_when_large = True

    def __init__(self, name: str, usage: str) -> None:
        self.name = name
        self.usage = usage

    def is_read_only(self, input: Args | None = None) -> bool:
        return True

    async def call(self, input: Args, ctx: ToolContext) -> str:
        return f"{self.name}:{input.item_id}"


def _fakes(count: int) -> list[Tool[Any]]:
    topics = ["invoice", "calendar", "ticket"]
    return [
        Fake(f"mcp__svc__{topics[i % 3]}_{i:02d}", f"Look up a {topics[i % 3]} record.")
        for i in range(count)
    ]


def _ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(session_id="s", workspace=Workspace([tmp_path]), changes=ChangeSet())


def test_deferral_thresholds_and_modes() -> None:
    small = ToolPool.assemble([ProbeRead()], _fakes(5))
    assert small.deferred == frozenset()
    assert "tool_search" not in small.names
    large = ToolPool.assemble([ProbeRead()], _fakes(31))
    assert len(large.deferred) == 31
    assert "tool_search" in large.names
    assert [t["name"] for t in large.api_tools()] == ["probe_read", "tool_search"]
    by_chars = ToolPool.assemble(
        [ProbeRead()], _fakes(5), search=ToolSearchSettings(max_schema_chars=200)
    )
    assert len(by_chars.deferred) == 5
    always = ToolPool.assemble([ProbeRead()], _fakes(2), search=ToolSearchSettings(mode="always"))
    assert len(always.deferred) == 2
    never = ToolPool.assemble([ProbeRead()], _fakes(40), search=ToolSearchSettings(mode="never"))
    assert never.deferred == frozenset()
    assert len(never.api_tools()) == 41
    assert "tool_search" not in never.names


def test_tools_array_is_cached_per_discovered_set() -> None:
    pool = ToolPool.assemble([ProbeRead()], _fakes(31))
    before = pool.api_tools()
    pool.set_discovered({"not_a_tool", "probe_read"})  # nothing deferred: same array
    assert pool.api_tools() is before
    pool.set_discovered({"mcp__svc__invoice_00"})
    after = pool.api_tools()
    assert after is not before
    assert after is pool.api_tools()
    assert [t["name"] for t in after] == ["mcp__svc__invoice_00", "probe_read", "tool_search"]
    assert "cache_control" in after[-1]
    assert "cache_control" not in after[0]
    assert "cache_control" in before[-1]  # the earlier array is untouched


async def test_pipeline_accepts_a_deferred_tool_once_discovered(tmp_path: Path) -> None:
    pool = ToolPool.assemble([ProbeRead()], _fakes(31))
    call = ToolCall("1", "mcp__svc__ticket_02", {"item_id": "T-1"})
    refused = await Pipeline(pool).execute(call, _ctx(tmp_path))
    assert refused.is_error
    assert '"select:mcp__svc__ticket_02"' in str(refused.content)
    pool.set_discovered({"mcp__svc__ticket_02"})
    accepted = await Pipeline(pool).execute(call, _ctx(tmp_path))
    assert not accepted.is_error
    assert accepted.content == "mcp__svc__ticket_02:T-1"


def test_keyword_ranking_prefers_names_and_honours_required_terms() -> None:
    tools = [
        Fake("mcp__a__create_issue", "Create an issue in a repository."),
        Fake("mcp__a__list_repos", "List repositories; use before create_issue."),
        Fake("mcp__b__issue_comment", "Comment on an issue."),
        ProbeWrite(),
    ]
    ranked = [t.name for t, _ in rank_tools("create issue", tools)]
    assert ranked[0] == "mcp__a__create_issue"
    assert set(ranked) == {"mcp__a__create_issue", "mcp__a__list_repos", "mcp__b__issue_comment"}
    assert [t.name for t, _ in rank_tools("+comment issue", tools)] == ["mcp__b__issue_comment"]
    assert [t.name for t, _ in rank_tools("item_id", tools)][:1] == ["mcp__a__create_issue"]
    assert rank_tools("zebra", tools) == []


async def test_select_loads_exact_names_and_suggests_close_ones(tmp_path: Path) -> None:
    search = ToolSearch(_fakes(6))
    ok = await search.call(
        ToolSearchInput(query="select:mcp__svc__invoice_00, mcp__svc__calendr_01"), _ctx(tmp_path)
    )
    result = json.loads(str(ok.content))
    assert not ok.is_error
    assert result["loaded"] == ["mcp__svc__invoice_00"]
    assert result["not_found"]["mcp__svc__calendr_01"][0] == "mcp__svc__calendar_01"
    none = await search.call(ToolSearchInput(query="select:nothing"), _ctx(tmp_path))
    assert none.is_error
    assert json.loads(str(none.content))["loaded"] == []
    keywords = await search.call(ToolSearchInput(query="calendar"), _ctx(tmp_path))
    assert json.loads(str(keywords.content))["loaded"] == [
        "mcp__svc__calendar_01",
        "mcp__svc__calendar_04",
    ]
    limited = ToolSearch(_fakes(30), default_max_results=2)
    few = await limited.call(ToolSearchInput(query="invoice"), _ctx(tmp_path))
    assert len(json.loads(str(few.content))["loaded"]) == 2


def test_discovered_names_come_from_tool_search_results_in_the_history() -> None:
    loaded = json.dumps({"loaded": ["mcp__x__a"], "tools": []})
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": [{"type": "text", "text": "hi"}]},
        {
            "role": "assistant",
            "content": [
                {"type": "tool_use", "id": "t1", "name": "tool_search", "input": {}},
                {"type": "tool_use", "id": "t2", "name": "other", "input": {}},
                {"type": "tool_use", "id": "t3", "name": "tool_search", "input": {}},
            ],
        },
        {
            "role": "user",
            "content": [
                # a post-hook may append text after the JSON
                {"type": "tool_result", "tool_use_id": "t1", "content": loaded + "\n\nnote"},
                {"type": "tool_result", "tool_use_id": "t2", "content": '{"loaded": ["nope"]}'},
                {
                    "type": "tool_result",
                    "tool_use_id": "t3",
                    "content": [{"type": "text", "text": '{"loaded": ["mcp__x__b"]}'}],
                },
            ],
        },
    ]
    assert discovered_tool_names(messages) == {"mcp__x__a", "mcp__x__b"}


def test_settings_from_editor_config() -> None:
    settings = ToolSearchSettings.from_dict(
        {"mode": "always", "maxTools": 10, "serverSide": True, "maxResults": "x", "bogus": 1}
    )
    assert settings.mode == "always"
    assert settings.max_tools == 10
    assert settings.server_side
    assert settings.max_results == 5
    assert ToolSearchSettings.from_dict(None) == ToolSearchSettings()
