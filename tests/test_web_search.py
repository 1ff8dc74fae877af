"""web_search: Anthropic's server-side tool, through the real SDK and the scripted server.

The scripted server streams `server_tool_use` and `web_search_tool_result` blocks as the
API does; the history must send them back unchanged, the run shows the search while it
streams, the transcript lists it, and the tool is offered only where it can work.
"""

from __future__ import annotations

from pathlib import Path

from agentls.agent.persistence.transcript import read_records, render_tree
from agentls.agent.rules.rule import RuleSet, parse_rules
from agentls.config.web import WebSearchSettings
from agentls.testing import ScriptedMessagesServer, text_turn, web_search_turn
from agentls.tools import WebSearch
from tests.agent_support import EventLog, make_session

RESULTS = [
    ("https://docs.python.org/3/library/tomllib.html", "tomllib — Parse TOML files"),
    ("https://peps.python.org/pep-0680/", "PEP 680 – tomllib"),
]


def search_tool(**settings: object) -> WebSearch:
    return WebSearch(WebSearchSettings.model_validate({"enabled": "always", **settings}))


async def test_a_search_streams_and_its_blocks_stay_in_the_history_unchanged(
    api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    turn = web_search_turn("python toml parser", RESULTS, "Use tomllib (PEP 680).")
    api.extend(turn, text_turn("Anything else?"))
    events = EventLog()
    session = make_session(api, tmp_path, tools=[search_tool()])
    result = await session.run("which toml parser?", events=events)
    assert result.status == "completed"
    assert result.text == "Use tomllib (PEP 680)."
    # shown like a tool call while it ran
    [started] = events.of("tool_started")
    [finished] = events.of("tool_finished")
    use, answer = turn.content[0], turn.content[1]
    assert (started.tool_use_id, started.name) == (use.id, "web_search")  # type: ignore[union-attr]
    assert started.summary == "Searching the web: python toml parser"
    assert finished.tool_use_id == use.id  # type: ignore[union-attr]
    assert not finished.is_error  # type: ignore[union-attr]
    # the next request sends the blocks back exactly as they came
    await session.run("thanks", events=events)
    sent = api.requests[-1].json["messages"][1]["content"]
    assert sent[0] == {
        "type": "server_tool_use",
        "id": use.id,  # type: ignore[union-attr]
        "name": "web_search",
        "input": {"query": "python toml parser"},
    }
    assert sent[1] == answer.model_dump(exclude_none=True)  # type: ignore[union-attr]
    assert sent[1]["content"][0]["encrypted_content"].startswith("enc_")
    # offered with the API's definition
    tools = api.requests[0].json["tools"]
    assert tools == [
        {
            "type": "web_search_20250305",
            "name": "web_search",
            "max_uses": 5,
            "cache_control": {"type": "ephemeral"},
        }
    ]
    tree = render_tree(read_records(session.transcript.path))
    assert 'web_search (server) {"query": "python toml parser"}' in tree
    assert "✓ web_search: 2 results (docs.python.org, peps.python.org)" in tree


async def test_a_failed_search_is_shown_as_failed(
    api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    api.extend(web_search_turn("x", "max_uses_exceeded", "I could not search."))
    events = EventLog()
    session = make_session(api, tmp_path, tools=[search_tool()])
    await session.run("search", events=events)
    [finished] = events.of("tool_finished")
    assert finished.is_error
    tree = render_tree(read_records(session.transcript.path))
    assert "✗ web_search: max_uses_exceeded" in tree


async def test_pause_turn_continues_with_the_blocks(
    api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    api.extend(
        web_search_turn("long research", RESULTS, stop_reason="pause_turn"),
        text_turn("Done researching."),
    )
    session = make_session(api, tmp_path, tools=[search_tool()])
    result = await session.run("research", events=EventLog())
    assert result.status == "completed"
    assert result.text == "Done researching."
    last = api.requests[-1].json["messages"][-1]
    assert last["role"] == "assistant"  # the paused turn is sent back to be continued
    assert [b["type"] for b in last["content"]] == ["server_tool_use", "web_search_tool_result"]


def test_offered_only_where_it_can_work(tmp_path: Path) -> None:
    anthropic = WebSearch(WebSearchSettings(), None)
    assert anthropic.is_enabled()
    assert "is Anthropic's API" in anthropic.offered()[1]
    assert WebSearch(WebSearchSettings(), "https://api.anthropic.com").is_enabled()
    local = WebSearch(WebSearchSettings(), "http://localhost:11434")
    assert not local.is_enabled()
    assert "http://localhost:11434 is not Anthropic's API" in local.offered()[1]
    assert "webSearch.enabled" in local.offered()[1]
    forced = WebSearch(WebSearchSettings(enabled="always"), "http://proxy.internal")
    assert forced.is_enabled()
    assert not WebSearch(WebSearchSettings(enabled="never"), None).is_enabled()


def test_settings_and_rules_shape_the_definition(tmp_path: Path) -> None:
    rules, problems = parse_rules(
        {"deny": ["WebSearch(domain:spam.example)", "WebSearch(domain:*.ads.example)"]},
        "test",
        root=tmp_path,
    )
    assert not problems
    tool = WebSearch(
        WebSearchSettings(max_uses=2, blocked_domains=["tracker.example"]), None, RuleSet(rules)
    )
    assert tool.api_definition() == {
        "type": "web_search_20250305",
        "name": "web_search",
        "max_uses": 2,
        "blocked_domains": ["tracker.example", "spam.example", "ads.example"],
    }
    only = WebSearch(WebSearchSettings(allowed_domains=["docs.python.org"]), None, RuleSet(rules))
    assert only.api_definition() == {
        "type": "web_search_20250305",
        "name": "web_search",
        "max_uses": 5,
        "allowed_domains": ["docs.python.org"],
    }
    # an ask rule cannot be honoured for a server tool: not offered, and why
    asking, _ = parse_rules({"ask": ["WebSearch"]}, "user settings", root=tmp_path)
    asked = WebSearch(WebSearchSettings(), None, RuleSet(asking))
    assert not asked.is_enabled()
    assert "the rule `WebSearch` asks before each search" in asked.offered()[1]
