"""The symbol-level edits and an applied code action are edits like edit_file's: a deny on
edit_file covers them, and a model session must read the file before changing a symbol in
it (`agentls.agent.framework.reads`). The index's outline gives the range (no language server)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from agentls.agent.rules.rule import parse_rules
from agentls.agent.run.conversation import SessionConfig
from agentls.agent.run.model_client import AnthropicModelClient
from agentls.agent.run.session import AgentSession
from agentls.agent.settings import AgentSettings
from agentls.testing import ScriptedMessagesServer, text_turn, tool_turn
from agentls.tools import builtin_tools
from agentls.workspace import Workspace
from tests.agent_support import close_at_loop_end

TOOL_RB = "def helper\n  1\nend\n\ndef main\n  2\nend\n"


def test_a_deny_on_edit_file_covers_the_symbol_edits_and_code_actions(tmp_path: Path) -> None:
    rules, problems = parse_rules({"deny": ["edit_file(src/**)"]}, "test", root=tmp_path)
    assert not problems
    for name in (
        "replace_symbol_body",
        "insert_before_symbol",
        "insert_after_symbol",
        "safe_delete_symbol",
        "code_actions",
    ):
        assert rules[0].covers_tool(name), name


@pytest.fixture
def api() -> Iterator[ScriptedMessagesServer]:
    with ScriptedMessagesServer([]) as server:
        yield server


@pytest.mark.asyncio
async def test_a_symbol_edit_needs_a_read_first(
    api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "tool.rb").write_text(TOOL_RB, encoding="utf-8")
    edit = (
        "insert_after_symbol",
        {"path": "tool.rb", "line": 5, "symbol": "main", "text": "def extra\nend"},
    )
    api.extend(
        tool_turn(edit),
        tool_turn(("read_file", {"path": "tool.rb"})),
        tool_turn(edit),
        text_turn("done"),
    )
    settings = AgentSettings.from_env(
        {"ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": api.base_url}, retry_base_delay=0.01
    )
    config = SessionConfig(
        settings=settings,
        workspace=Workspace([root]),
        tools=builtin_tools(),
        transcript_dir=tmp_path / "transcripts",
    )
    session = close_at_loop_end(AgentSession(AnthropicModelClient(settings), config))
    result = await session.run("add a function")
    assert result.status == "completed", result.error
    refused = api.message_requests[1].tool_results()[0]
    assert refused["is_error"]
    assert "tool.rb has not been read in this session" in str(refused["content"])
    applied = api.message_requests[3].tool_results()[0]
    assert not applied["is_error"], applied
    assert "range from index (tree-sitter outline)" in str(applied["content"])
    staged = session.changes.text(root / "tool.rb")
    assert staged == TOOL_RB + "def extra\nend\n"
    assert (root / "tool.rb").read_text(encoding="utf-8") == TOOL_RB  # staged, not written
