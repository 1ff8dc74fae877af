"""Secret files and the agent's credentials, attacked through a bare `AgentHost` and the CLI.

A bare host (default `HostOptions`: no policy, no hooks, no settings) must still refuse
every trick for reading a secret file and still redact the API key from every tool result:
those are pipeline steps, not configuration. The LSP paths (normal and fallback) are in
`test_lsp_safety.py`.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from agentls.agent.framework.context import ToolContext
from agentls.agent.framework.registry import ToolPool
from agentls.agent.framework.requirement import Requirement
from agentls.agent.framework.tool import Tool, ToolInput, ToolOutput
from agentls.agent.hooks.runner import HookOutcome
from agentls.agent.run.pipeline import Pipeline, ToolCall
from agentls.host import AgentHost, HostOptions
from agentls.testing import ScriptedMessagesServer, text_turn, tool_turn
from agentls.tools import builtin_tools
from agentls.workspace import Workspace
from tests.cli_support import cli_env, run_cli
from tests.safety_support import API_KEY, hostile_workspace, leaked, secret_attacks


class Nothing(ToolInput):
    pass


class EchoesTheKey(Tool[Nothing]):
    """A tool (an MCP server, say) whose output contains the agent's key."""

    name = "echo_key"
    usage = "Prints diagnostics. For tests."
    input_model = Nothing

    def is_read_only(self, input: Nothing | None = None) -> bool:
        return True

    async def call(self, input: Nothing, ctx: ToolContext) -> ToolOutput:
        return ToolOutput(
            [
                {"type": "text", "text": f"config: key={API_KEY}"},
                {"type": "document", "source": {"type": "text", "data": f"x {API_KEY} y"}},
            ]
        )


class KeyAtTheCut(Tool[Nothing]):
    """Output whose truncation point falls inside the key."""

    name = "long_output"
    usage = "Prints a lot. For tests."
    input_model = Nothing
    max_result_chars = 1000

    def is_read_only(self, input: Nothing | None = None) -> bool:
        return True

    async def call(self, input: Nothing, ctx: ToolContext) -> str:
        return "x" * 990 + API_KEY + "y" * 5000


class FailsWithTheKey(Tool[Nothing]):
    name = "fails"
    usage = "Fails. For tests."
    input_model = Nothing

    def is_read_only(self, input: Nothing | None = None) -> bool:
        return True

    async def call(self, input: Nothing, ctx: ToolContext) -> str:
        raise RuntimeError(f"cannot connect with token {API_KEY}")


def _no_part_of_the_key(content: object) -> bool:
    """Not the key, nor any 12-character piece of it (a cut key is still a leak)."""
    text = json.dumps(content) if not isinstance(content, str) else content
    return not any(API_KEY[i : i + 12] in text for i in range(len(API_KEY) - 11))


@pytest.fixture
async def host(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[AgentHost]:
    monkeypatch.setenv("ANTHROPIC_API_KEY", API_KEY)
    root = hostile_workspace(tmp_path / "ws")
    bare = AgentHost(Workspace([root]))  # default HostOptions: allow all, no hooks
    yield bare
    await bare.shutdown()


async def test_a_bare_host_refuses_every_secret_file_trick(host: AgentHost) -> None:
    root = host.workspace.roots[0]
    for name, tool_input in secret_attacks(root):
        result = await host.run_tool(name, tool_input)
        assert not leaked(result.content), (name, tool_input, result.content)


async def test_a_bare_host_does_not_leak_a_secret_through_a_staged_rename(
    host: AgentHost,
) -> None:
    moved = await host.run_tool("rename_file", {"path": ".env", "new_path": "innocent.txt"})
    assert moved.is_error
    assert "secret" in str(moved.content)
    read = await host.run_tool("read_file", {"path": "innocent.txt"})
    assert not leaked(read.content)


async def test_a_bare_host_redacts_the_key_from_every_result(
    host: AgentHost, monkeypatch: pytest.MonkeyPatch
) -> None:
    read = await host.run_tool("read_file", {"path": "pasted.md"})
    assert read.is_error
    assert _no_part_of_the_key(read.content)
    assert "REDACTED" in str(read.content)
    assert "(oops)" in str(read.content)
    found = await host.run_tool("grep", {"pattern": "sk-ant"})
    assert _no_part_of_the_key(found.content)
    assert "REDACTED" in str(found.content)


async def test_a_bare_hosts_custom_tools_are_redacted_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", API_KEY)
    tools = [EchoesTheKey(), KeyAtTheCut(), FailsWithTheKey()]
    host = AgentHost(Workspace([tmp_path]), options=HostOptions(tools=lambda ws: tools))
    try:
        for name in ("echo_key", "long_output", "fails"):
            result = await host.run_tool(name, {})
            assert result.is_error, (name, result)
            assert _no_part_of_the_key(result.content), (name, result)
    finally:
        await host.shutdown()


async def test_a_bare_host_keeps_the_key_from_the_model(
    host: AgentHost, api: ScriptedMessagesServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_BASE_URL", api.base_url)
    api.extend(
        tool_turn(("read_file", {"path": "pasted.md"}), ("read_file", {"path": "notes.txt"})),
        text_turn("read them"),
    )
    handle = host.start_run("what is in pasted.md and notes.txt?")
    assert handle.task is not None
    result = await handle.task
    assert result["status"] == "completed"
    for request in api.message_requests:
        body = request.body.decode()
        assert _no_part_of_the_key(body)
        assert not leaked(body)
    sent = api.message_requests[1].tool_results()
    assert "REDACTED" in str(sent[0]["content"])
    assert "secret" in str(sent[1]["content"])
    transcript = host.sessions[result["session"]].transcript.path.read_bytes().decode()
    assert _no_part_of_the_key(transcript)
    assert not leaked(transcript)


class _HooksThatAllowEverything:
    """Hooks cannot unlock the pipeline's own steps: they say "allow" and add the key."""

    async def pre_tool(
        self, tool_name: str, input: dict[str, Any], ctx: ToolContext
    ) -> HookOutcome:
        return HookOutcome(permission=Requirement.from_hook("allow", "trusted by a hook"))

    async def post_tool(
        self, tool_name: str, input: dict[str, Any], output: ToolOutput, ctx: ToolContext
    ) -> HookOutcome:
        return HookOutcome(additional_context=f"hook note: {API_KEY}")


async def test_hooks_cannot_unlock_secret_files_or_add_the_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", API_KEY)
    root = hostile_workspace(tmp_path / "ws")
    pipeline = Pipeline(ToolPool(builtin_tools()), hooks=_HooksThatAllowEverything())
    ctx = ToolContext(session_id="s", workspace=Workspace([root]), changes=_changes())
    secret = await pipeline.execute(ToolCall("1", "read_file", {"path": ".env"}), ctx)
    assert secret.is_error
    assert not leaked(secret.content)
    plain = await pipeline.execute(ToolCall("2", "read_file", {"path": "README.md"}), ctx)
    assert "hello" in str(plain.content)
    assert _no_part_of_the_key(plain.content)


def _changes() -> Any:
    from agentls.workspace import ChangeSet

    return ChangeSet()


def test_the_cli_tool_command_denies_secret_files_and_redacts_the_key(
    tmp_path: Path,
) -> None:
    root = hostile_workspace(tmp_path / "ws")
    env = cli_env(None, tmp_path / "state", ANTHROPIC_API_KEY=API_KEY)
    for name, tool_input in [
        ("read_file", {"path": ".ENV"}),
        ("document_symbols", {"path": ".env.py"}),
        ("read_file", {"path": "settings/credentials"}),
        ("read_file", {"path": "pasted.md"}),
    ]:
        done = run_cli("tool", name, json.dumps(tool_input), "-w", str(root), "--json", env=env)
        assert done.code == 1, (name, done.stdout, done.stderr)
        result = json.loads(done.stdout)
        assert result["is_error"], (name, result)
        assert not leaked(result["content"]), (name, result)
        assert _no_part_of_the_key(done.stdout + done.stderr), name
    assert "REDACTED" in result["content"]
