"""Pipeline steps that hosts plug into: permissions, hooks, schemas, settings."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic import Field

from agentls.agent.framework.context import ToolContext
from agentls.agent.framework.registry import PoolFilter, ToolPool
from agentls.agent.framework.requirement import Requirement
from agentls.agent.framework.schema import compact_json_schema
from agentls.agent.framework.tool import ToolInput, ToolOutput
from agentls.agent.hooks.runner import HookOutcome
from agentls.agent.permissions.approval import PendingCall, PermissionMode
from agentls.agent.run.model_client import AnthropicModelClient
from agentls.agent.run.pipeline import Pipeline, ToolCall
from agentls.agent.settings import AgentSettings, ConfigError
from agentls.workspace import ChangeSet, Workspace
from tests.agent_support import ProbeRead, ProbeWrite, all_test_tools


def _ctx(tmp_path: Path, **kw: Any) -> ToolContext:
    return ToolContext(session_id="s", workspace=Workspace([tmp_path]), changes=ChangeSet(), **kw)


class DenyWrites:
    mode: PermissionMode = "default"

    def requirement(self, call: PendingCall) -> Requirement:
        if call.tool.is_read_only(call.input):
            return Requirement.skip()
        return Requirement.forbidden("writes are not allowed by rule deny: probe_write")

    async def approve(self, call: PendingCall, needed: Requirement) -> Requirement:
        return needed


class RecordingHooks:
    def __init__(self, block: str | None = None, rewrite: dict[str, Any] | None = None) -> None:
        self.block, self.rewrite = block, rewrite
        self.post: list[tuple[str, ToolOutput]] = []

    async def pre_tool(
        self, tool_name: str, input: dict[str, Any], ctx: ToolContext
    ) -> HookOutcome:
        if self.block:
            return HookOutcome(block=True, message=self.block)
        return HookOutcome(updated_input=self.rewrite)

    async def post_tool(
        self, tool_name: str, input: dict[str, Any], output: ToolOutput, ctx: ToolContext
    ) -> HookOutcome:
        self.post.append((tool_name, output))
        return HookOutcome(additional_context="[post-hook saw it]")


async def test_permission_denial_tells_the_model_not_to_retry(tmp_path: Path) -> None:
    pipeline = Pipeline(ToolPool(all_test_tools()), permissions=DenyWrites())
    denied = await pipeline.execute(ToolCall("1", "probe_write", {"label": "x"}), _ctx(tmp_path))
    allowed = await pipeline.execute(ToolCall("2", "probe_read", {"label": "x"}), _ctx(tmp_path))
    assert denied.is_error
    assert "Permission denied" in str(denied.content)
    assert "Do not retry" in str(denied.content)
    assert "deny: probe_write" in str(denied.content)
    assert not allowed.is_error


async def test_an_unresolved_ask_fails_closed(tmp_path: Path) -> None:
    class LeavesItAsked:
        mode: PermissionMode = "default"

        def requirement(self, call: PendingCall) -> Requirement:
            return Requirement.needs_approval("reads a secret")

        async def approve(self, call: PendingCall, needed: Requirement) -> Requirement:
            return needed  # never resolved

    result = await Pipeline(ToolPool([ProbeRead()]), permissions=LeavesItAsked()).execute(
        ToolCall("1", "probe_read", {"label": "x"}), _ctx(tmp_path)
    )
    assert result.is_error
    assert "reads a secret" in str(result.content)


async def test_hooks_block_rewrite_and_annotate(tmp_path: Path) -> None:
    blocked = await Pipeline(
        ToolPool([ProbeRead()]), hooks=RecordingHooks(block="policy says no")
    ).execute(ToolCall("1", "probe_read", {"label": "x"}), _ctx(tmp_path))
    assert blocked.is_error
    assert "Blocked by hook: policy says no" in str(blocked.content)
    hooks = RecordingHooks(rewrite={"label": "rewritten"})
    result = await Pipeline(ToolPool([ProbeRead()]), hooks=hooks).execute(
        ToolCall("2", "probe_read", {"label": "x"}), _ctx(tmp_path)
    )
    assert result.content == "read:rewritten\n\n[post-hook saw it]"
    assert hooks.post[0][0] == "probe_read"


async def test_plan_mode_denies_writes_even_if_offered(tmp_path: Path) -> None:
    result = await Pipeline(ToolPool([ProbeWrite()])).execute(
        ToolCall("1", "probe_write", {"label": "x"}), _ctx(tmp_path, mode="plan")
    )
    assert result.is_error
    assert "plan mode" in str(result.content)


async def test_cancelled_before_start_does_not_call(tmp_path: Path) -> None:
    ctx = _ctx(tmp_path)
    ctx.cancelled.set()
    result = await Pipeline(ToolPool([ProbeWrite()])).execute(
        ToolCall("1", "probe_write", {"label": "x"}), ctx
    )
    assert result.is_error
    assert "Cancelled" in str(result.content)


async def test_deferred_tool_points_to_tool_search(tmp_path: Path) -> None:
    class Deferred(ProbeRead):
        name = "deferred_probe"
        should_defer = True

    pool = ToolPool([Deferred(), ProbeRead()])
    assert [t["name"] for t in pool.api_tools()] == ["probe_read"]
    result = await Pipeline(pool).execute(
        ToolCall("1", "deferred_probe", {"label": 1}), _ctx(tmp_path)
    )
    assert result.is_error
    assert 'tool_search with query "select:deferred_probe"' in str(result.content)


def test_pool_filters_dedupes_with_builtins_winning_and_sorts() -> None:
    class External(ProbeRead):
        usage = "external duplicate"

    class Disabled(ProbeRead):
        name = "disabled_probe"

        def is_enabled(self) -> bool:
            return False

    pool = ToolPool.assemble(
        [ProbeWrite(), ProbeRead(), Disabled()],
        [External()],
        PoolFilter(denied=lambda name: name == "boom"),
    )
    assert pool.names == ["probe_read", "probe_write"]
    assert pool.find("probe_read").description() != "external duplicate"  # type: ignore[union-attr]
    assert pool.find("probe_alias") is pool.find("probe_read")
    read_only = ToolPool.assemble(all_test_tools(), pool_filter=PoolFilter(read_only=True))
    assert "probe_write" not in read_only.names
    assert "boom" not in read_only.names
    assert pool.api_tools() is pool.api_tools()


def test_compact_schema_has_no_titles_or_refs() -> None:
    class Inner(ToolInput):
        title: str

    class Outer(ToolInput):
        inner: Inner
        items: list[Inner] = Field(default_factory=list)

    schema = compact_json_schema(Outer)
    text = str(schema)
    assert "$ref" not in text
    assert "$defs" not in text
    assert "'title': 'Inner'" not in text
    assert "'title': 'Outer'" not in text
    assert schema["properties"]["inner"]["properties"]["title"] == {"type": "string"}
    assert schema["additionalProperties"] is False


def test_missing_key_gives_one_clear_message() -> None:
    settings = AgentSettings.from_env({})
    with pytest.raises(ConfigError, match="ANTHROPIC_API_KEY"):
        AnthropicModelClient(settings)


def test_local_endpoint_needs_no_key() -> None:
    client = AnthropicModelClient(
        AgentSettings.from_env({"ANTHROPIC_BASE_URL": "http://127.0.0.1:9"})
    )
    assert client.base_url.startswith("http://127.0.0.1:9")


def test_settings_from_env_and_invalid_values() -> None:
    settings = AgentSettings.from_env(
        {
            "AGENTLS_MODEL": "claude-haiku-4-5",
            "AGENTLS_MAX_TURNS": "7",
            "AGENTLS_TEMPERATURE": "0.2",
            "ANTHROPIC_API_KEY": "sk-secret",
        }
    )
    assert (settings.model, settings.max_turns, settings.temperature) == (
        "claude-haiku-4-5",
        7,
        0.2,
    )
    assert "sk-secret" not in repr(settings)
    with pytest.raises(ConfigError, match="AGENTLS_MAX_TURNS='many'"):
        AgentSettings.from_env({"AGENTLS_MAX_TURNS": "many"})
    with pytest.raises(ConfigError, match="temperature"):
        AgentSettings.from_env({"AGENTLS_TEMPERATURE": "3"})
    assert AgentSettings.from_env({}).max_turns == 50


class RecordingSink:
    """The host's side of auto delivery: records each hand-over and what was staged."""

    def __init__(self) -> None:
        self.delivered: list[list[str]] = []

    async def staged(self, ctx: ToolContext) -> str:
        self.delivered.append([p.name for p in ctx.changes.changed_paths()])
        ctx.changes.discard(None)  # the editor applied everything
        return "The editor applied this change."


async def test_write_tools_hand_each_staged_change_to_the_edit_sink(tmp_path: Path) -> None:
    from agentls.tools import builtin_tools

    (tmp_path / "a.py").write_text("A = 1\n")
    sink = RecordingSink()
    ctx = ToolContext(
        session_id="s",
        workspace=Workspace([tmp_path]),
        changes=ChangeSet(),
        mode="auto",
        edits=sink,
    )
    pipeline = Pipeline(ToolPool(builtin_tools()))
    edit = {"path": "a.py", "old_string": "A = 1", "new_string": "A = 2"}
    edited = await pipeline.execute(ToolCall("1", "edit_file", edit), ctx)
    written = await pipeline.execute(
        ToolCall("2", "write_file", {"path": "b.py", "content": ""}), ctx
    )
    read = await pipeline.execute(ToolCall("3", "read_file", {"path": "a.py"}), ctx)
    assert sink.delivered == [["a.py"], ["b.py"]]  # one delivery per write, reads none
    for result in (edited, written):
        assert not result.is_error
        assert str(result.content).endswith("\n\nThe editor applied this change.")
    assert "The editor applied" not in str(read.content)
